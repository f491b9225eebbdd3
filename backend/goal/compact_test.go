package goal_test

import (
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// contextLimit is the scripted server's window in tokens: it answers a longer request with
// HTTP 400 "context length exceeded" in each API's own words, as the real services do.
const contextLimit = 6000

// A 500-step goal against a server that refuses requests past its window, on a model whose
// window nobody set: the first refusal teaches the window, the conversation is compacted
// (summarised, not dropped) and the same turn sent again, and the goal completes. Every
// request still opens with the goal and its criterion verbatim, and between compactions each
// request repeats the one before it.
func TestContextLimitMakesA500StepGoalCompactAndComplete(t *testing.T) {
	t.Parallel()
	for _, kind := range wireFormats {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			r := newLongRig(t, kind, llmtest.Script{Replies: probeSteps(500), Roles: []llmtest.Role{summaryRole()}, ContextLimit: contextLimit})
			g, evs := r.run(nil)
			if g.Status != goal.StatusCompleted || g.State.Steps != 500 {
				t.Fatalf("status %s after %d steps: %s", g.Status, g.State.Steps, g.Report)
			}
			main := r.mainRequests()
			refused := 0
			for _, q := range main {
				if q.Answer == "context_length_exceeded" {
					refused++
				}
			}
			if refused == 0 || refused > 3 {
				t.Fatalf("%d requests were refused as too long; want the first to teach the window and few after", refused)
			}
			compactions := findEvents(evs, goal.EventCompaction)
			if len(compactions) == 0 {
				t.Fatal("no compaction on the goal's rail")
			}
			breaks := 0
			sent := answered(main)
			for i, q := range sent {
				body := string(q.Body)
				if !strings.Contains(body, "GOAL: "+longGoalText) || !strings.Contains(body, "SUCCESS CRITERION: the shell command `"+longCriterion+"`") {
					t.Fatalf("request %d lost the goal or its criterion", i)
				}
				if q.Usage.Input > contextLimit {
					t.Fatalf("request %d was %d tokens, past the window of %d", i, q.Usage.Input, contextLimit)
				}
				if i > 0 {
					if segs, _ := llmtest.CommonPrefix(sent[i-1], q); segs < sent[i-1].Segments()-1 {
						breaks++
					}
				}
			}
			if breaks > len(compactions) {
				t.Fatalf("the prefix changed %d times but the conversation was compacted only %d times", breaks, len(compactions))
			}
			t.Logf("%s: %d requests, %d refused, %d compactions", kind, len(main), refused, len(compactions))
		})
	}
}

// A long output is cut in the conversation with a note naming its step; read_step_output
// reads the cut part back from the step log.
func TestReadStepOutputReadsWhatWasCut(t *testing.T) {
	t.Parallel()
	r := newLongRig(t, "openai", llmtest.Script{Replies: []llmtest.Reply{
		call("dump", map[string]any{}),
		call("read_step_output", map[string]int{"step": 1, "offset": 2400, "limit": 200}),
		claim("read it"),
	}})
	g, _ := r.run(nil)
	if g.Status != goal.StatusCompleted {
		t.Fatalf("status %s: %s", g.Status, g.Report)
	}
	main := r.mainRequests()
	second, third := string(main[1].Body), string(main[2].Body)
	if strings.Contains(second, "THE MIDDLE LINE") || !strings.Contains(second, `read_step_output {\"step\": 1, \"offset\": 2000}`) {
		t.Fatalf("the cut output or its note is wrong in the conversation")
	}
	if !strings.Contains(third, "THE MIDDLE LINE SAYS 42") || !strings.Contains(third, "[step 1 (dump), characters 2400–2600 of 5024]") {
		t.Fatalf("read_step_output did not bring the middle back")
	}
}
