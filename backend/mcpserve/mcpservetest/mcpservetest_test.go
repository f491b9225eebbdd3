package mcpservetest

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// Post sends the headers an MCP client sends and the Authorization asked for, none when
// empty; Bearer adds the token without changing the caller's request.
func TestPostAndBearerSendWhatAClientSends(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	if resp := Post(t, srv.URL, "", "{}"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d, want the server's 401", resp.StatusCode)
	}
	if got.Get("Content-Type") != "application/json" || got.Get("Accept") != "application/json, text/event-stream" || got.Get("Authorization") != "" {
		t.Errorf("without auth the headers were %v", got)
	}
	Post(t, srv.URL, "Basic eDp5", "{}")
	if got.Get("Authorization") != "Basic eDp5" {
		t.Errorf("Authorization %q, want Basic eDp5", got.Get("Authorization"))
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	resp, err := (&http.Client{Transport: Bearer("csmcp_1")}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got.Get("Authorization") != "Bearer csmcp_1" || req.Header.Get("Authorization") != "" {
		t.Errorf("Bearer sent %q and left the request with %q", got.Get("Authorization"), req.Header.Get("Authorization"))
	}
}
