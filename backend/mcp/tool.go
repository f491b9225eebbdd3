package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clusterspace/clusterspace/backend/tools"
)

// maxToolName is the longest tool name both model APIs accept.
const maxToolName = 64

var notNameChar = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// tool is one tool of a server, offered as mcp__SERVER__TOOL.
type tool struct {
	srv  *server
	name string // offered
	orig string // the server's
	desc string
	risk tools.Risk
	args *tools.ArgSchema
}

func (s *server) newTool(t *sdk.Tool) (*tool, error) {
	raw, err := json.Marshal(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("its input schema is not JSON (%v)", err)
	}
	args, err := tools.CompileArgs(raw)
	if err != nil {
		return nil, fmt.Errorf("its input schema %v", err)
	}
	name := "mcp__" + s.name + "__" + notNameChar.ReplaceAllString(t.Name, "_")
	if len(name) > maxToolName {
		return nil, fmt.Errorf("mcp__%s__%s is longer than %d characters, which model APIs refuse", s.name, t.Name, maxToolName)
	}
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = t.Title
	}
	desc = fmt.Sprintf("%s (tool %q of the MCP server %s)", desc, t.Name, s.name)
	return &tool{srv: s, name: name, orig: t.Name, desc: desc, risk: s.cfg.riskOf(t.Name), args: args}, nil
}

func (t *tool) Name() string            { return t.name }
func (t *tool) Description() string     { return t.desc }
func (t *tool) Schema() json.RawMessage { return t.args.JSON() }
func (t *tool) Risk() tools.Risk        { return t.risk }

// Run checks the arguments, calls the tool within CallTimeout and returns its text, with its
// pictures attached as a screenshot is. A call whose server is not running, or is found gone
// by the call, gets why and what to do.
func (t *tool) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	sess, ended := t.srv.current()
	if sess == nil {
		return t.srv.notRunning(t.name), nil
	}
	args, err := t.args.Decode(call.Args)
	if err != nil {
		return tools.Errorf("%s: %v. Call it again with arguments that match its schema.", t.name, err), nil
	}
	cctx, cancel := context.WithTimeout(ctx, t.srv.m.opts.CallTimeout)
	defer cancel()
	res, err := sess.CallTool(cctx, &sdk.CallToolParams{Name: t.orig, Arguments: args})
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return tools.Result{}, context.Cause(ctx)
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return tools.Errorf("the MCP server %s did not answer %s within %s; it may be stuck", t.srv.name, t.orig, t.srv.m.opts.CallTimeout), nil
	case gone(err):
		return t.srv.lost(sess, ended, err, t.name), nil
	default:
		return tools.Errorf("the MCP server %s failed on %s: %s", t.srv.name, t.orig, t.srv.redact(err.Error())), nil
	}
	return resultOf(res), nil
}

// resultOf turns a tool's content into what the model reads: text as text, pictures
// attached, anything else described.
func resultOf(res *sdk.CallToolResult) tools.Result {
	var out tools.Result
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			out.Images = append(out.Images, tools.Image{MediaType: c.MIMEType, Data: c.Data})
			parts = append(parts, fmt.Sprintf("[picture %s attached]", c.MIMEType))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s %s]", c.URI, c.Name))
		case *sdk.EmbeddedResource:
			if r := c.Resource; r != nil && r.Text != "" {
				parts = append(parts, r.Text)
			} else if r != nil {
				parts = append(parts, fmt.Sprintf("[resource %s, %s, %d bytes]", r.URI, r.MIMEType, len(r.Blob)))
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	out.Text = strings.Join(parts, "\n")
	if out.Text == "" {
		out.Text = "(the tool returned nothing)"
	}
	out.IsError = res.IsError
	return out
}
