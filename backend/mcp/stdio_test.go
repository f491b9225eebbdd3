package mcp

import (
	"bufio"
	"strings"
	"testing"
)

// What passes to the SDK is a JSON-RPC message or a batch of them, nothing else.
func TestIsMessage(t *testing.T) {
	for line, want := range map[string]bool{
		`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n":         true,
		`  {"jsonrpc":"2.0","method":"x"}  `:                  true,
		`[{"jsonrpc":"2.0","id":1},{"jsonrpc":"2.0","id":2}]`: true,
		`{"level":"info","msg":"not a message"}`:              false,
		`[{"jsonrpc":"2.0","id":1},{"msg":"not a message"}]`:  false,
		`[INFO] server started`:                               false,
		`{banner}`:                                            false,
		`[]`:                                                  false,
		`Server v1.2 ready`:                                   false,
		"\n":                                                  false,
		`{"jsonrpc":"2.0","id":1,"result":{"text":"\u00e9\n"}}`: true,
	} {
		if got := isMessage([]byte(line)); got != want {
			t.Errorf("isMessage(%q) = %v, want %v", line, got, want)
		}
	}
	// A line longer than the bound ends the stream with an error that says so.
	l := &jsonLines{r: bufio.NewReader(strings.NewReader(strings.Repeat("x", maxLine+10) + "\n"))}
	if _, err := l.Read(make([]byte, 10)); err == nil || !strings.Contains(err.Error(), "a line of more than") {
		t.Fatalf("long line: %v", err)
	}
}
