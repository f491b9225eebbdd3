package agent

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/llm/providers"
)

func TestWindowInRefusals(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]int{
		"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.": 8192,
		"prompt is too long: 210000 tokens > 200000 maximum":                                                  200000,
		"the request exceeds the available context size (4096 tokens), try increasing it":                     4096,
		"input is too long": 0,
	} {
		if got := windowIn(msg); got != want {
			t.Errorf("windowIn(%q) = %d, want %d", msg, got, want)
		}
	}
}

// A server that refuses every request as too long, even the smallest: the turn is compacted
// and sent again a bounded number of times, then the refusal is returned. It never loops.
// (The summariser is refused too, so a plain digest stands in for its summary.)
func TestContextRefusalsNeverLoop(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t, llmtest.Script{ContextLimit: 10, Roles: []llmtest.Role{{Name: "summary", Match: llmtest.Match{System: "You compact"}, Reply: llmtest.Text("summary")}}})
	prov, err := providers.New(llm.Config{Name: "s", Kind: llm.KindOpenAI, BaseURL: srv.OpenAIURL(), Model: "m", APIKey: "k", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	a := &Agent{Model: Model{Provider: prov, Name: "s", ModelID: "m"}}
	var conv []llm.Message
	conv = append(conv, llm.UserText("GOAL: keep going"))
	for i := range 12 {
		conv = append(conv, llm.AssistantText(strings.Repeat("thinking ", 50+i)), llm.UserText("continue"))
	}
	_, err = a.Stream(context.Background(), Turn{System: "sys", Messages: conv})
	if !errors.Is(err, llm.ContextTooLong) {
		t.Fatalf("err %v", err)
	}
	refused := 0
	for _, q := range srv.ChatRequests() {
		if q.Answer == "context_length_exceeded" {
			refused++
		}
	}
	if refused > 1+maxContextRetries {
		t.Fatalf("%d refused requests for one turn: it looped", refused)
	}
	if a.Compaction == nil || a.Compaction.Head != 1 {
		t.Fatalf("compaction %+v: the goal prompt is not kept as the head", a.Compaction)
	}
	view := a.Compaction.View(conv, nil)
	if view[0].Text() != "GOAL: keep going" || !strings.HasPrefix(view[1].Text(), "[Earlier in this session") || view[len(view)-1].Text() != "continue" {
		t.Fatalf("view %v", view)
	}
}

// Between compactions the view only grows at its end: appending to the conversation never
// changes what was sent before.
func TestCompactedViewIsAppendOnly(t *testing.T) {
	t.Parallel()
	c := &Compaction{Head: 1, Through: 3, Summary: "S", StubThrough: 5}
	conv := []llm.Message{llm.UserText("goal"), llm.AssistantText("a"), llm.UserText("b"), llm.AssistantText("c"),
		llm.ToolMessage(llm.ToolResult{CallID: "x", Name: "t", Text: strings.Repeat("o", 2*stubChars)}), llm.UserText("d")}
	stub := func(r llm.ToolResult) (llm.ToolResult, bool) { r.Text = "stub"; return r, true }
	before := c.View(conv, stub)
	after := c.View(append(conv, llm.AssistantText("e")), stub)
	for i := range before {
		if before[i].Text() != after[i].Text() || len(before[i].ToolResults()) != len(after[i].ToolResults()) {
			t.Fatalf("message %d changed", i)
		}
	}
	if len(after) != len(before)+1 || before[3].ToolResults()[0].Text != "stub" || before[1].Text() != "S" {
		t.Fatalf("view %+v", before)
	}
}
