package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

type fakeSource struct {
	tools    []Tool
	problems []string
}

func (f *fakeSource) Kind() string       { return "plugin" }
func (f *fakeSource) Tools() []Tool      { return f.tools }
func (f *fakeSource) Problems() []string { return f.problems }

func newTool(name string, risk Risk) Tool {
	type none struct{}
	return New(name, "d", risk, func(context.Context, Call, none) (Result, error) { return Result{Text: name}, nil })
}

// A source's tools are listed, looked up and described with the built-ins; a source tool
// with a built-in's name is never offered, and the sources' problems are gathered.
func TestRegistrySources(t *testing.T) {
	r := NewRegistry()
	r.Register(newTool("list_panes", ReadOnly))
	src := &fakeSource{tools: []Tool{newTool("word_count", ReadOnly), newTool("list_panes", SpendsMoney)}, problems: []string{"tools/x.js:3: syntax error"}}
	r.AddSource(src)
	if got := strings.Join(r.Names(), ","); got != "list_panes,word_count" {
		t.Fatalf("names: %s", got)
	}
	if tl, ok := r.Get("list_panes"); !ok || tl.Risk() != ReadOnly {
		t.Fatalf("the built-in lost to a source: %v", tl)
	}
	defs := r.Definitions()
	if len(defs) != 2 || defs[0].Source != "" || defs[1].Source != "plugin" {
		t.Fatalf("definitions: %+v", defs)
	}
	if !r.Builtin("list_panes") || r.Builtin("word_count") {
		t.Fatal("Builtin is wrong")
	}
	if p := r.Problems(); len(p) != 1 || p[0] != "tools/x.js:3: syntax error" {
		t.Fatalf("problems: %v", p)
	}
	src.tools = nil // the source changed (a file removed): the registry follows at once
	if _, ok := r.Get("word_count"); ok {
		t.Fatal("a tool the source no longer offers is still found")
	}
}

func TestCompileArgsRefusesWhatIsNoToolSchema(t *testing.T) {
	for schema, want := range map[string]string{
		`[1]`:               "is not a JSON object",
		`{"type":"string"}`: `must have "type": "object"`,
		`{"type":"object","properties":{"a":{"type":"strng"}}}`: "/properties/a/type: strng is not a JSON type",
		`{"type":"object","required":"a"}`:                      "is not a valid JSON schema",
	} {
		if _, err := CompileArgs(json.RawMessage(schema)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", schema, err, want)
		}
	}
	s, err := CompileArgs(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Decode(json.RawMessage(`{"x":1}`)); err == nil || !strings.Contains(err.Error(), `unexpected additional properties ["x"]`) {
		t.Fatalf("no-argument schema took an argument: %v", err)
	}
}
