package llm

import (
	"strings"
	"testing"
)

// runSplitter feeds deltas and joins what comes out.
func runSplitter(deltas []string) (text, reasoning string) {
	var s ThinkSplitter
	var tb, rb strings.Builder
	take := func(ps []Piece) {
		for _, p := range ps {
			if p.Reasoning {
				rb.WriteString(p.Text)
			} else {
				tb.WriteString(p.Text)
			}
		}
	}
	for _, d := range deltas {
		take(s.Feed(d))
	}
	take(s.Flush())
	return tb.String(), rb.String()
}

func TestThinkSplitter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		deltas          []string
		text, reasoning string
	}{
		{"no tags", []string{"hello ", "world"}, "hello world", ""},
		{"whole tags", []string{"<think>plan</think>answer"}, "answer", "plan"},
		{"open tag split", []string{"<thi", "nk>plan</think>ok"}, "ok", "plan"},
		{"close tag split", []string{"<think>pl", "an</thi", "nk>ok"}, "ok", "plan"},
		{"one char at a time", strings.Split("<think>ab</think>cd", ""), "cd", "ab"},
		{"unclosed think stays reasoning", []string{"<think>still thinking"}, "", "still thinking"},
		{"a lone < is text", []string{"a <", "b"}, "a <b", ""},
		{"held tail flushed as text", []string{"x <thi"}, "x <thi", ""},
		{"two think blocks", []string{"<think>a</think>b<think>c</think>d"}, "bd", "ac"},
		{"other tags untouched", []string{"<b>bold</b>"}, "<b>bold</b>", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			text, reasoning := runSplitter(tc.deltas)
			if text != tc.text || reasoning != tc.reasoning {
				t.Fatalf("got text %q reasoning %q, want %q and %q", text, reasoning, tc.text, tc.reasoning)
			}
		})
	}
}

// TestThinkSplitterEverySplit cuts the content at every pair of positions.
func TestThinkSplitterEverySplit(t *testing.T) {
	t.Parallel()
	const content = "<think>reason here</think>The answer."
	for i := 0; i <= len(content); i++ {
		for j := i; j <= len(content); j++ {
			text, reasoning := runSplitter([]string{content[:i], content[i:j], content[j:]})
			if text != "The answer." || reasoning != "reason here" {
				t.Fatalf("split at %d,%d: text %q reasoning %q", i, j, text, reasoning)
			}
		}
	}
}

func TestThinkSplitterKeepsOrder(t *testing.T) {
	t.Parallel()
	var s ThinkSplitter
	got := s.Feed("before<think>mid</think>after")
	want := []Piece{{"before", false}, {"mid", true}, {"after", false}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("piece %d = %v, want %v", i, got[i], want[i])
		}
	}
}
