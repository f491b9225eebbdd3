// Package mcpservetest is for the tests of MCP over HTTP (mcpserve's handler, serve's /mcp):
// a request sent as an MCP client sends it, with or without a token, and a transport that
// sends a token with every request.
package mcpservetest

import (
	"net/http"
	"strings"
	"testing"
)

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
