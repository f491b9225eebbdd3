package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/clusterspace/clusterspace/backend/llm"
)

const (
	// defaultMaxTokens is sent when nothing sets a limit: the API requires one, and 4096
	// holds a long answer or a large tool call.
	defaultMaxTokens = 4096
	// minThinkingBudget is the smallest thinking budget the API accepts.
	minThinkingBudget = 1024
	// minThinkingMaxTokens keeps room for an answer after the smallest thinking budget.
	minThinkingMaxTokens = 2 * minThinkingBudget
	// emptyToolResult stands in for a tool result with neither text nor images.
	emptyToolResult = "(no output)"
)

// params builds the Messages request for req.
func (p *Provider) params(req llm.Request) (anthropic.MessageNewParams, llm.StreamInfo, error) {
	info := llm.StreamInfo{Model: p.conn.Cfg.ModelFor(req), MaxTokens: req.MaxTokens}
	if info.MaxTokens == 0 {
		info.MaxTokens = p.conn.Cfg.MaxTokens
	}
	if info.MaxTokens == 0 {
		info.MaxTokens = defaultMaxTokens
	}
	thinking := req.Thinking || p.conn.Cfg.Thinking
	if thinking && info.MaxTokens < minThinkingMaxTokens {
		info.MaxTokens = minThinkingMaxTokens
	}
	msgs, err := messages(req)
	if err != nil {
		return anthropic.MessageNewParams{}, info, &llm.Error{Kind: llm.BadRequest, Message: err.Error()}
	}
	if req.CacheKey != "" {
		markCache(msgs, req)
	}
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(info.Model),
		MaxTokens: int64(info.MaxTokens),
		Messages:  msgs,
	}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	if thinking {
		// Half the limit thinks and half answers. Temperature is left out: the API accepts
		// only its default while thinking.
		budget := max(minThinkingBudget, info.MaxTokens/2)
		params.Thinking = anthropic.ThinkingConfigParamOfEnabled(int64(budget))
	} else if t := req.Temperature; t != nil {
		params.Temperature = anthropic.Float(*t)
	} else if t := p.conn.Cfg.Temperature; t != nil {
		params.Temperature = anthropic.Float(*t)
	}
	for _, t := range req.Tools {
		schema, err := inputSchema(t.Schema)
		if err != nil {
			return params, info, &llm.Error{Kind: llm.BadRequest, Message: fmt.Sprintf("the schema of tool %q is not a JSON object (%v): fix the tool's definition", t.Name, err)}
		}
		tool := anthropic.ToolParam{Name: t.Name, InputSchema: schema}
		if t.Description != "" {
			tool.Description = anthropic.String(t.Description)
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	if req.CacheKey != "" {
		// The stable head: tools come first in the cached prefix, then the system prompt.
		if n := len(params.Tools); n > 0 {
			params.Tools[n-1].OfTool.CacheControl = anthropic.NewCacheControlEphemeralParam()
		}
		if len(params.System) > 0 {
			params.System[len(params.System)-1].CacheControl = anthropic.NewCacheControlEphemeralParam()
		}
	}
	return params, info, nil
}

// markCache puts the moving cache breakpoint on the last block of the newest stable message
// (the one before req.Volatile per-turn messages): this request writes the cache there and
// the next one, which repeats everything up to it, reads it. With the two head breakpoints
// that makes three of the four the API allows.
func markCache(msgs []anthropic.MessageParam, req llm.Request) {
	stable := len(req.Messages) - req.Volatile
	if stable <= 0 {
		return
	}
	// Count the blocks the stable messages produced: merging of same-role messages means a
	// stable message's blocks may share a MessageParam with volatile ones.
	blocks := 0
	for _, m := range req.Messages[:stable] {
		one, err := messages(llm.Request{Messages: []llm.Message{m}})
		if err == nil && len(one) > 0 {
			blocks += len(one[0].Content)
		}
	}
	for i := range msgs {
		if blocks <= len(msgs[i].Content) {
			// The breakpoint goes on the last stable block that can carry one (thinking cannot).
			for j := blocks - 1; j >= 0; j-- {
				if cc := msgs[i].Content[j].GetCacheControl(); cc != nil {
					*cc = anthropic.NewCacheControlEphemeralParam()
					return
				}
			}
			return
		}
		blocks -= len(msgs[i].Content)
	}
}

// inputSchema splits a JSON Schema object into the SDK's fields; the rest rides along.
func inputSchema(raw json.RawMessage) (anthropic.ToolInputSchemaParam, error) {
	var s anthropic.ToolInputSchemaParam
	if len(raw) == 0 {
		return s, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return s, err
	}
	s.Properties = m["properties"]
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				s.Required = append(s.Required, name)
			}
		}
	}
	delete(m, "properties")
	delete(m, "required")
	delete(m, "type")
	if len(m) > 0 {
		s.ExtraFields = m
	}
	return s, nil
}

// messages converts the conversation. Tool results travel in user messages, and messages
// of the same role next to each other are merged, so the results of parallel calls share
// one message, as the API wants.
func messages(req llm.Request) ([]anthropic.MessageParam, error) {
	var out []anthropic.MessageParam
	for _, m := range req.Messages {
		var blocks []anthropic.ContentBlockParamUnion
		role := anthropic.MessageParamRoleUser
		switch m.Role {
		case llm.RoleUser:
			for _, p := range m.Parts {
				switch {
				case p.Kind == llm.PartText && p.Text != "":
					blocks = append(blocks, anthropic.NewTextBlock(p.Text))
				case p.Kind == llm.PartImage && p.Image != nil:
					b, err := imageBlock(*p.Image)
					if err != nil {
						return nil, err
					}
					blocks = append(blocks, anthropic.ContentBlockParamUnion{OfImage: &b})
				}
			}
		case llm.RoleAssistant:
			role = anthropic.MessageParamRoleAssistant
			blocks = assistantBlocks(m)
		case llm.RoleTool:
			for _, r := range m.ToolResults() {
				b, err := toolResultBlock(r)
				if err != nil {
					return nil, err
				}
				blocks = append(blocks, anthropic.ContentBlockParamUnion{OfToolResult: &b})
			}
		default:
			return nil, fmt.Errorf("message role %q is not user, assistant or tool", m.Role)
		}
		if len(blocks) == 0 {
			continue // the API refuses empty messages
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			continue
		}
		out = append(out, anthropic.MessageParam{Role: role, Content: blocks})
	}
	return out, nil
}

// assistantBlocks keeps thinking only where it carries a signature: the API checks it, and
// reasoning from other sources (a <think> tag) has none.
func assistantBlocks(m llm.Message) []anthropic.ContentBlockParamUnion {
	var blocks []anthropic.ContentBlockParamUnion
	for _, p := range m.Parts {
		switch {
		case p.Kind == llm.PartReasoning && p.Signature != "":
			blocks = append(blocks, anthropic.NewThinkingBlock(p.Signature, p.Text))
		case p.Kind == llm.PartText && p.Text != "":
			blocks = append(blocks, anthropic.NewTextBlock(p.Text))
		case p.Kind == llm.PartToolCall && p.ToolCall != nil:
			c := p.ToolCall
			// Unusable arguments go back as {}: the input must be an object, and the tool
			// result that follows tells the model what was wrong.
			input := json.RawMessage("{}")
			if c.ArgsError == "" && len(c.Args) > 0 {
				input = c.Args
			}
			blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, input, c.Name))
		}
	}
	return blocks
}

func toolResultBlock(r llm.ToolResult) (anthropic.ToolResultBlockParam, error) {
	b := anthropic.ToolResultBlockParam{ToolUseID: r.CallID}
	if r.IsError {
		b.IsError = anthropic.Bool(true)
	}
	text := r.Text
	if text == "" && len(r.Images) == 0 {
		text = emptyToolResult
	}
	if text != "" {
		b.Content = append(b.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: text}})
	}
	for _, img := range r.Images {
		ib, err := imageBlock(img)
		if err != nil {
			return b, err
		}
		b.Content = append(b.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: &ib})
	}
	return b, nil
}

func imageBlock(img llm.Image) (anthropic.ImageBlockParam, error) {
	mt, err := img.ContentType()
	if err != nil {
		return anthropic.ImageBlockParam{}, err
	}
	return anthropic.ImageBlockParam{Source: anthropic.ImageBlockParamSourceUnion{
		OfBase64: &anthropic.Base64ImageSourceParam{
			Data:      base64.StdEncoding.EncodeToString(img.Data),
			MediaType: anthropic.Base64ImageSourceMediaType(mt),
		},
	}}, nil
}
