// Package mcpservetest is for the tests of ClusterSpace's MCP server (mcpserve, serve's /mcp,
// `clusterspace mcp`): a tool called as a client calls it and the text it answered, a request
// sent as an MCP client sends it, with or without a token, and a transport that sends a token
// with every request.
package mcpservetest

import (
	"context"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Call calls the tool name with args over the client session, failing the test when the call
// itself fails (a tool's refusal is a result, with IsError set).
func Call(t testing.TB, ctx context.Context, cs *sdk.ClientSession, name string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// Text is the text of a tool result, its text parts joined.
func Text(r *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// Post sends body to url as an MCP client does (JSON, accepting an event stream), with the
// Authorization header auth ("" for none), and returns the answer, its body closed.
func Post(t testing.TB, url, auth, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// Bearer is a transport that sends the MCP token it is with every request (on a copy: a
// RoundTripper must not change the request it is given).
type Bearer string

func (b Bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}
