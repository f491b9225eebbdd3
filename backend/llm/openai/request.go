package openai

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/clusterspace/clusterspace/backend/llm"
)

// emptyToolResult stands in for a tool result with no text: the protocol requires content.
const emptyToolResult = "(no output)"

// params builds the Chat Completions request for req.
func (p *Provider) params(req llm.Request) (openai.ChatCompletionNewParams, llm.StreamInfo, error) {
	info := llm.StreamInfo{Model: p.conn.Cfg.ModelFor(req), MaxTokens: req.MaxTokens}
	if info.MaxTokens == 0 {
		info.MaxTokens = p.conn.Cfg.MaxTokens
	}
	msgs, err := messages(req)
	if err != nil {
		return openai.ChatCompletionNewParams{}, info, &llm.Error{Kind: llm.BadRequest, Message: err.Error()}
	}
	params := openai.ChatCompletionNewParams{Model: info.Model, Messages: msgs}
	if req.CacheKey != "" {
		// One key per conversation routes its requests to the same cache; the prefix itself
		// is kept stable by the caller (nothing volatile before the newest message).
		params.PromptCacheKey = openai.String(req.CacheKey)
	}
	if info.MaxTokens > 0 {
		// OpenAI's reasoning models refuse max_tokens and want max_completion_tokens; many
		// compatible servers know only max_tokens. So the official service gets the new
		// name and every other server the old one.
		if p.conn.Cfg.Official() {
			params.MaxCompletionTokens = openai.Int(int64(info.MaxTokens))
		} else {
			params.MaxTokens = openai.Int(int64(info.MaxTokens))
		}
	}
	if t := req.Temperature; t != nil {
		params.Temperature = openai.Float(*t)
	} else if t := p.conn.Cfg.Temperature; t != nil {
		params.Temperature = openai.Float(*t)
	}
	// The thinking toggle is not sent: Chat Completions has no portable switch for it, and
	// servers that do not know a field may refuse the request. Reasoning is read whenever a
	// server sends it.
	for _, t := range req.Tools {
		def := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			def.Description = openai.String(t.Description)
		}
		if len(t.Schema) > 0 {
			var schema map[string]any
			if err := json.Unmarshal(t.Schema, &schema); err != nil {
				return params, info, &llm.Error{Kind: llm.BadRequest, Message: fmt.Sprintf("the schema of tool %q is not a JSON object (%v): fix the tool's definition", t.Name, err)}
			}
			def.Parameters = schema
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(def))
	}
	return params, info, nil
}

// messages converts the conversation. Reasoning parts are left out: the protocol has no
// place for them and some servers (DeepSeek) reject reasoning sent back.
func messages(req llm.Request) ([]openai.ChatCompletionMessageParamUnion, error) {
	var out []openai.ChatCompletionMessageParamUnion
	if req.System != "" {
		out = append(out, openai.SystemMessage(req.System))
	}
	// pending holds the images of tool results until the run of tool messages ends.
	var pending []openai.ChatCompletionContentPartUnionParam
	flush := func() {
		if len(pending) > 0 {
			out = append(out, openai.UserMessage(pending))
			pending = nil
		}
	}
	for _, m := range req.Messages {
		if m.Role != llm.RoleTool {
			flush()
		}
		switch m.Role {
		case llm.RoleUser:
			um, err := userMessage(m)
			if err != nil {
				return nil, err
			}
			out = append(out, um)
		case llm.RoleAssistant:
			out = append(out, assistantMessage(m))
		case llm.RoleTool:
			for _, r := range m.ToolResults() {
				text := r.Text
				if r.IsError {
					text = "Error: " + text
				}
				if text == "" {
					text = emptyToolResult
				}
				// A tool message holds text only, so a tool's images (screenshots) go into a
				// user message right after the run of tool messages — a user message between
				// them would break the pairing of calls and results — with a line naming the call.
				if len(r.Images) > 0 {
					text += fmt.Sprintf("\n[%d image(s) from this call follow in the next message.]", len(r.Images))
					pending = append(pending, openai.TextContentPart(fmt.Sprintf("Image(s) returned by tool call %s (%s):", r.CallID, r.Name)))
					for _, img := range r.Images {
						part, err := imagePart(img)
						if err != nil {
							return nil, err
						}
						pending = append(pending, part)
					}
				}
				out = append(out, openai.ToolMessage(text, r.CallID))
			}
		default:
			return nil, fmt.Errorf("message role %q is not user, assistant or tool", m.Role)
		}
	}
	flush()
	return out, nil
}

func userMessage(m llm.Message) (openai.ChatCompletionMessageParamUnion, error) {
	if !m.HasImages() {
		return openai.UserMessage(m.Text()), nil
	}
	var parts []openai.ChatCompletionContentPartUnionParam
	for _, p := range m.Parts {
		switch p.Kind {
		case llm.PartText:
			parts = append(parts, openai.TextContentPart(p.Text))
		case llm.PartImage:
			part, err := imagePart(*p.Image)
			if err != nil {
				return openai.ChatCompletionMessageParamUnion{}, err
			}
			parts = append(parts, part)
		}
	}
	return openai.UserMessage(parts), nil
}

func imagePart(img llm.Image) (openai.ChatCompletionContentPartUnionParam, error) {
	mt, err := img.ContentType()
	if err != nil {
		return openai.ChatCompletionContentPartUnionParam{}, err
	}
	url := "data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(img.Data)
	return openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: url}), nil
}

func assistantMessage(m llm.Message) openai.ChatCompletionMessageParamUnion {
	a := openai.ChatCompletionAssistantMessageParam{}
	if text := m.Text(); text != "" {
		a.Content.OfString = openai.String(text)
	}
	for _, c := range m.ToolCalls() {
		args := string(c.Args)
		if c.RawArgs != "" {
			args = c.RawArgs // send back what the model wrote, so its transcript stays true
		}
		a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID:       c.ID,
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: args},
			},
		})
	}
	if len(a.ToolCalls) == 0 && !a.Content.OfString.Valid() {
		a.Content.OfString = openai.String("")
	}
	return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
}
