package llm

import (
	"strings"
	"testing"
)

func TestSalvageArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		raw    string
		want   string // "" means an error is expected
		errHas string
	}{
		{name: "valid object as is", raw: `{"path":"a.txt","n":2}`, want: `{"path":"a.txt","n":2}`},
		{name: "valid object with spaces", raw: "  {\"a\": 1}\n", want: `{"a": 1}`},
		{name: "empty means no arguments", raw: "", want: `{}`},
		{name: "blank means no arguments", raw: " \n ", want: `{}`},
		{name: "one extra closing brace", raw: `{"a":{"b":1}}}`, want: `{"a":{"b":1}}`},
		{name: "several extra closers", raw: `{"a":1}}]}`, want: `{"a":1}`},
		{name: "code fence", raw: "```json\n{\"path\": \"b\"}\n```", want: `{"path": "b"}`},
		{name: "bare code fence", raw: "```\n{\"x\":[1,2]}\n```", want: `{"x":[1,2]}`},
		{name: "prose around one object", raw: `Sure, calling it with {"q": "go"} now.`, want: `{"q": "go"}`},
		{name: "brace inside a string value", raw: `Here: {"text": "a } b { c"}`, want: `{"text": "a } b { c"}`},
		{name: "double encoded", raw: `"{\"a\":1}"`, want: `{"a":1}`},
		{name: "fence plus stray closer", raw: "```json\n{\"a\":1}}\n```", want: `{"a":1}`},
		{name: "two objects are ambiguous", raw: `{"a":1} {"b":2}`, errHas: "2 JSON objects"},
		{name: "two objects in prose", raw: `first {"a":1} or maybe {"a":2}`, errHas: "unclear"},
		{name: "cut off", raw: `{"path": "a.txt", "content": "hel`, errHas: "cut off"},
		{name: "cut off inside prose", raw: "ok: {\"a\": 1", errHas: "cut off"},
		{name: "brace region that is not JSON", raw: `{path: a.txt}`, errHas: "not valid JSON"},
		{name: "invalid region beside a valid one", raw: `use {x} then {"a":1}`, errHas: "not valid JSON"},
		{name: "trailing comma is not guessed away", raw: `{"a":1,}`, errHas: "not valid JSON"},
		{name: "array", raw: `[1,2]`, errHas: "not an object"},
		{name: "number", raw: `42`, errHas: "not an object"},
		{name: "plain prose", raw: `I cannot do that`, errHas: "not a JSON object"},
		{name: "double encoded non-object", raw: `"hello"`, errHas: "not an object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := SalvageArgs(tc.raw)
			if tc.want != "" {
				if err != nil {
					t.Fatalf("SalvageArgs(%q) error %v, want %s", tc.raw, err, tc.want)
				}
				if string(got) != tc.want {
					t.Fatalf("SalvageArgs(%q) = %s, want %s", tc.raw, got, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("SalvageArgs(%q) = %s, want an error", tc.raw, got)
			}
			if !strings.Contains(err.Error(), tc.errHas) {
				t.Fatalf("SalvageArgs(%q) error %q, want it to mention %q", tc.raw, err, tc.errHas)
			}
			if !strings.Contains(err.Error(), "send") {
				t.Errorf("error %q does not tell the model what to send", err)
			}
		})
	}
}
