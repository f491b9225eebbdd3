// Package llm is how ClusterSpace talks to language models: the messages of a conversation
// (text, images, tool calls and results, reasoning), a request, the Provider interface with
// its stream of events, typed errors that tell a person what to do, and the pure pieces every
// caller shares: tool-argument salvage, <think> splitting, the context budget, and usage/cost.
//
// There is no HTTP here. Each wire protocol lives in its own sub-package (openai, anthropic);
// providers.New picks one from a Config; llmtest is a scripted model server for tests.
package llm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Role says who wrote a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleTool messages carry the results of the assistant's tool calls.
	RoleTool Role = "tool"
)

// PartKind says what a Part holds.
type PartKind string

const (
	PartText       PartKind = "text"
	PartImage      PartKind = "image"
	PartToolCall   PartKind = "tool_call"
	PartToolResult PartKind = "tool_result"
	PartReasoning  PartKind = "reasoning"
)

// Image is a picture: PNG or JPEG bytes and their media type ("image/png", "image/jpeg").
type Image struct {
	MediaType string `json:"mediaType"`
	Data      []byte `json:"data"`
}

// ContentType is the image's media type, sniffed from its bytes when MediaType is empty.
// Both protocols take PNG, JPEG, GIF and WebP; anything else is an error saying so.
func (img Image) ContentType() (string, error) {
	mt := img.MediaType
	if mt == "" {
		mt = http.DetectContentType(img.Data)
	}
	switch mt {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		if len(img.Data) == 0 {
			return "", fmt.Errorf("an %s image has no data: attach the picture's bytes", mt)
		}
		return mt, nil
	}
	return "", fmt.Errorf("images must be PNG or JPEG (GIF and WebP also work), not %q: convert the picture first", mt)
}

// ToolCall is one call the model asked for.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Args is the JSON object of arguments, salvaged if the model wrapped or over-closed it
	// (see SalvageArgs); nil when ArgsError is set.
	Args json.RawMessage `json:"args,omitempty"`
	// RawArgs is the argument text exactly as the model sent it, kept when it differs from
	// Args so the transcript sent back stays honest.
	RawArgs string `json:"rawArgs,omitempty"`
	// ArgsError is set when the arguments could not be read without guessing. The tool must
	// not run: hand this text back to the model as an error result (see ArgsErrorResult).
	ArgsError string `json:"argsError,omitempty"`
}

// ArgsErrorResult is the tool result that tells the model its arguments for c were unusable.
func (c ToolCall) ArgsErrorResult() ToolResult {
	return ToolResult{CallID: c.ID, Name: c.Name, Text: c.ArgsError, IsError: true}
}

// ToolResult is what a tool call produced, as the model will read it.
type ToolResult struct {
	CallID string  `json:"callId"`
	Name   string  `json:"name"`
	Text   string  `json:"text"`
	Images []Image `json:"images,omitempty"`
	// IsError marks a mistake the model can act on (bad arguments, element not found).
	IsError bool `json:"isError,omitempty"`
}

// Part is one piece of a message; Kind says which field is set.
type Part struct {
	Kind       PartKind    `json:"kind"`
	Text       string      `json:"text,omitempty"` // text and reasoning
	Image      *Image      `json:"image,omitempty"`
	ToolCall   *ToolCall   `json:"toolCall,omitempty"`
	ToolResult *ToolResult `json:"toolResult,omitempty"`
	// Signature is the provider's opaque seal on a reasoning part (Anthropic thinking
	// blocks): it must be sent back unchanged with the reasoning, or not at all.
	Signature string `json:"signature,omitempty"`
}

// Text returns a text part.
func Text(s string) Part { return Part{Kind: PartText, Text: s} }

// ImagePart returns an image part.
func ImagePart(img Image) Part { return Part{Kind: PartImage, Image: &img} }

// ReasoningPart returns a reasoning part; signature may be empty.
func ReasoningPart(text, signature string) Part {
	return Part{Kind: PartReasoning, Text: text, Signature: signature}
}

// ToolCallPart returns a tool-call part.
func ToolCallPart(c ToolCall) Part { return Part{Kind: PartToolCall, ToolCall: &c} }

// ToolResultPart returns a tool-result part.
func ToolResultPart(r ToolResult) Part { return Part{Kind: PartToolResult, ToolResult: &r} }

// Message is one turn of a conversation.
type Message struct {
	Role  Role   `json:"role"`
	Parts []Part `json:"parts"`
}

// UserMessage returns a user message of text and image parts.
func UserMessage(parts ...Part) Message { return Message{Role: RoleUser, Parts: parts} }

// UserText returns a user message of text followed by images.
func UserText(text string, images ...Image) Message {
	m := UserMessage(Text(text))
	for _, img := range images {
		m.Parts = append(m.Parts, ImagePart(img))
	}
	return m
}

// AssistantMessage returns an assistant message (reasoning, text and tool-call parts).
func AssistantMessage(parts ...Part) Message { return Message{Role: RoleAssistant, Parts: parts} }

// AssistantText returns an assistant message of plain text.
func AssistantText(text string) Message { return AssistantMessage(Text(text)) }

// ToolMessage returns a message carrying the results of one or more tool calls, in the
// order of the calls.
func ToolMessage(results ...ToolResult) Message {
	m := Message{Role: RoleTool}
	for _, r := range results {
		m.Parts = append(m.Parts, ToolResultPart(r))
	}
	return m
}

// Text joins the message's text parts.
func (m Message) Text() string { return m.join(PartText) }

// Reasoning joins the message's reasoning parts.
func (m Message) Reasoning() string { return m.join(PartReasoning) }

func (m Message) join(kind PartKind) string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Kind == kind {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// ToolCalls lists the message's tool calls in order.
func (m Message) ToolCalls() []ToolCall {
	return partsOf(m, PartToolCall, func(p Part) *ToolCall { return p.ToolCall })
}

// ToolResults lists the message's tool results in order.
func (m Message) ToolResults() []ToolResult {
	return partsOf(m, PartToolResult, func(p Part) *ToolResult { return p.ToolResult })
}

// partsOf lists, in order, what field holds in the message's parts of the kind (where set).
func partsOf[T any](m Message, kind PartKind, field func(Part) *T) []T {
	var out []T
	for _, p := range m.Parts {
		if v := field(p); p.Kind == kind && v != nil {
			out = append(out, *v)
		}
	}
	return out
}

// HasImages reports whether the message holds an image, directly or in a tool result.
func (m Message) HasImages() bool {
	for _, p := range m.Parts {
		if p.Kind == PartImage || (p.Kind == PartToolResult && p.ToolResult != nil && len(p.ToolResult.Images) > 0) {
			return true
		}
	}
	return false
}

// ToolDef tells the model about one tool. A tools.Definition d converts in one line:
// llm.ToolDef{Name: d.Name, Description: d.Description, Schema: d.Schema}.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"` // JSON Schema of the arguments (an object)
}

// Request is one call to a model.
type Request struct {
	System   string
	Messages []Message
	Tools    []ToolDef
	// MaxTokens caps the reply; 0 uses the provider's configured limit.
	MaxTokens int
	// Temperature overrides the provider's configured temperature when set.
	Temperature *float64
	// Thinking asks for extended reasoning even when the provider's config does not.
	Thinking bool
	// Model overrides the provider's configured model (and its vision model).
	Model string
	// CacheKey names the conversation for the provider's prompt cache (a goal's or chat's
	// id). With one, OpenAI-compatible requests carry it as prompt_cache_key, and Anthropic
	// requests carry cache_control breakpoints on the tools, the system prompt and the newest
	// stable message. "" sends neither.
	CacheKey string
	// Volatile is how many of the last messages are rebuilt for every request (the per-turn
	// context message): the moving cache breakpoint goes on the message before them, whose
	// prefix the next request repeats.
	Volatile int
}

// HasImages reports whether any message holds an image.
func (r Request) HasImages() bool {
	for _, m := range r.Messages {
		if m.HasImages() {
			return true
		}
	}
	return false
}

// ContextHeader opens the per-turn context message an agent sends as the newest message of a
// request (the goal's checklist, the live pane list): state the app refreshes every turn and
// never stores, so it is told apart from what the person wrote.
const ContextHeader = "[Current state, refreshed by the app every turn — not a message from the user]"

// ContextText is the per-turn context message's text for the state s.
func ContextText(s string) string { return ContextHeader + "\n" + s }
