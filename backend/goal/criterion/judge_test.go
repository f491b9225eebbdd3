package criterion

import (
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/llm/providers"
)

// judgeRig starts a scripted model server answering replies in order, and a judge provider
// of kind pointed at it.
func judgeRig(t *testing.T, kind string, replies ...llmtest.Reply) (*llmtest.Server, llm.Provider) {
	t.Helper()
	srv := llmtest.New(t, llmtest.Script{Replies: replies})
	base := srv.URL
	if kind == llm.KindOpenAI {
		base = srv.OpenAIURL()
	}
	p, err := providers.New(llm.Config{Name: "judge", Kind: kind, BaseURL: base, Model: "m", Timeout: 10 * time.Second, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return srv, p
}

// testEvidence is a claim with every kind of evidence a judge reads.
func testEvidence() Evidence {
	return Evidence{
		Goal:      "Make the unit tests of package calc pass.",
		Rationale: "Fixed the off-by-one in Sum; go test ./calc passes.",
		Steps: []string{
			"[1] terminal_run(go test ./calc) → err: FAIL TestSum",
			"[2] edit_file(calc/sum.go) → ok: 1 line changed",
			"[3] terminal_run(go test ./calc) → ok: PASS",
		},
	}
}

// pngPixel is a 1×1 PNG.
var pngPixel = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82")

func TestModelQuestionAnswers(t *testing.T) {
	t.Parallel()
	checkVerdicts(t, []verdictCase[string]{
		{in: "YES", pass: true},
		{in: "Yes.", pass: true},
		{in: "  yes!\n", pass: true},
		{in: "NO", exact: `The judge replied NO to "Do the tests pass?".`},
		{in: "No.", exact: `The judge replied No. to "Do the tests pass?".`},
		{in: "Yes, but the linter still fails", exact: `The judge replied Yes, but the linter still fails to "Do the tests pass?".`},
		{in: "I cannot tell from this.", exact: `The judge replied I cannot tell from this. to "Do the tests pass?".`},
		{in: "YES YES", exact: `The judge replied YES YES to "Do the tests pass?".`},
		{in: "", exact: `The judge replied (an empty reply) to "Do the tests pass?".`},
	}, func(t *testing.T, reply string) Verdict {
		srv, judge := judgeRig(t, llm.KindOpenAI, llmtest.Text(reply))
		c := mustParse(t, Spec{Kind: KindModelQuestion, Question: "Do the tests pass?"}, Deps{Judge: judge})
		v := verify(t, c, testEvidence())
		if n := len(srv.ChatRequests()); n != 1 {
			t.Errorf("%d judge calls, want 1", n)
		}
		return v
	})
}

func TestModelQuestionJudgeSeesTheEvidence(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{llm.KindOpenAI, llm.KindAnthropic} {
		for _, vision := range []bool{true, false} {
			name := kind + "/vision"
			if !vision {
				name = kind + "/no-vision"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				srv, judge := judgeRig(t, kind, llmtest.Text("YES"))
				c := mustParse(t, Spec{Kind: KindModelQuestion, Question: "Do the tests pass?"}, Deps{Judge: judge, JudgeVision: vision})
				ev := testEvidence()
				ev.Screenshot = &llm.Image{MediaType: "image/png", Data: pngPixel}
				if v := verify(t, c, ev); !v.Passed {
					t.Fatalf("failed: %s", v.Detail)
				}
				reqs := srv.ChatRequests()
				if len(reqs) != 1 {
					t.Fatalf("%d judge calls, want 1", len(reqs))
				}
				r := reqs[0]
				if r.System != JudgeSystemPrompt {
					t.Errorf("system prompt = %q, want %q", r.System, JudgeSystemPrompt)
				}
				for _, want := range append([]string{ev.Goal, "Do the tests pass?", ev.Rationale}, ev.Steps...) {
					if !strings.Contains(r.LastUser, want) {
						t.Errorf("the judge's message lacks %q:\n%s", want, r.LastUser)
					}
				}
				body := string(r.Body)
				imageMark := `"image_url"`
				if kind == llm.KindAnthropic {
					imageMark = `"type":"image"`
				}
				hasImage := strings.Contains(body, imageMark) && strings.Contains(body, "iVBORw0KGgo") // base64 of the PNG signature
				if hasImage != vision {
					t.Errorf("image part sent = %v, want %v (vision %v):\n%s", hasImage, vision, vision, body)
				}
				if strings.Contains(r.LastUser, skepticInstruction) {
					t.Error("a plain judge call was told to be skeptical")
				}
			})
		}
	}
}

func TestModelQuestionNoScreenshotNoImage(t *testing.T) {
	t.Parallel()
	srv, judge := judgeRig(t, llm.KindOpenAI, llmtest.Text("YES"))
	c := mustParse(t, Spec{Kind: KindModelQuestion, Question: "Done?"}, Deps{Judge: judge, JudgeVision: true})
	if v := verify(t, c, testEvidence()); !v.Passed {
		t.Fatalf("failed: %s", v.Detail)
	}
	if body := string(srv.ChatRequests()[0].Body); strings.Contains(body, "image_url") {
		t.Errorf("an image part was sent without a screenshot:\n%s", body)
	}
}

func TestModelQuestionHighConfidence(t *testing.T) {
	t.Parallel()
	type judged struct {
		replies []string
		calls   int // how many judges are asked
	}
	checkVerdicts(t, []verdictCase[judged]{
		{name: "two YES pass", in: judged{[]string{"YES", "YES"}, 2}, pass: true,
			exact: `Two independent judges answered YES to "Do the tests pass?".`},
		{name: "YES then NO fails", in: judged{[]string{"YES", "NO"}, 2},
			exact: `The second, skeptical judge replied NO to "Do the tests pass?".`},
		{name: "a first NO fails at once", in: judged{[]string{"NO"}, 1},
			exact: `The judge replied NO to "Do the tests pass?".`},
	}, func(t *testing.T, in judged) Verdict {
		var replies []llmtest.Reply
		for _, r := range in.replies {
			replies = append(replies, llmtest.Text(r))
		}
		srv, judge := judgeRig(t, llm.KindOpenAI, replies...)
		c := mustParse(t, Spec{Kind: KindModelQuestion, Question: "Do the tests pass?", Threshold: ThresholdHighConfidence}, Deps{Judge: judge})
		v := verify(t, c, testEvidence())
		reqs := srv.ChatRequests()
		if len(reqs) != in.calls {
			t.Fatalf("%d judge calls, want %d", len(reqs), in.calls)
		}
		if strings.Contains(reqs[0].LastUser, skepticInstruction) {
			t.Error("the first judge was told to be skeptical")
		}
		if in.calls == 2 {
			second := reqs[1]
			if !strings.Contains(second.LastUser, skepticInstruction) {
				t.Errorf("the second judge was not told to look for reasons the claim is false:\n%s", second.LastUser)
			}
			if !strings.Contains(second.LastUser, testEvidence().Rationale) || second.System != JudgeSystemPrompt {
				t.Error("the second judge did not get the evidence and the judge prompt")
			}
			// A fresh context: the second request carries no trace of the first exchange.
			if strings.Count(string(second.Body), `"role"`) != 2 { // system + one user message
				t.Errorf("the second judge call is not a fresh context:\n%s", second.Body)
			}
		}
		return v
	})
}

func TestModelQuestionJudgeErrorIsAnError(t *testing.T) {
	t.Parallel()
	_, judge := judgeRig(t, llm.KindOpenAI, llmtest.Failing(401))
	c := mustParse(t, Spec{Kind: KindModelQuestion, Question: "Done?"}, Deps{Judge: judge})
	_, err := c.Verify(testCtx(t), testEvidence())
	if err == nil || !strings.Contains(err.Error(), "judge") {
		t.Fatalf("err = %v, want the judge call's error", err)
	}
}

func TestModelQuestionBoundsTheEvidence(t *testing.T) {
	t.Parallel()
	srv, judge := judgeRig(t, llm.KindOpenAI, llmtest.Text("NO"))
	c := mustParse(t, Spec{Kind: KindModelQuestion, Question: "Done?"}, Deps{Judge: judge})
	ev := testEvidence()
	ev.Steps = nil
	for i := range 50 {
		ev.Steps = append(ev.Steps, "[step-"+string(rune('A'+i%26))+"] "+strings.Repeat("x", 2000))
	}
	ev.Rationale = strings.Repeat("r", 20000)
	verify(t, c, ev)
	msg := srv.ChatRequests()[0].LastUser
	if !strings.Contains(msg, "(30 earlier steps not shown)") {
		t.Errorf("older steps were not summarised:\n%.300s", msg)
	}
	if len(msg) > maxRationaleChars+maxJudgeSteps*(maxStepChars+20)+2000 {
		t.Errorf("the judge's message is %d bytes; evidence must be bounded", len(msg))
	}
}

func TestModelQuestionDescribe(t *testing.T) {
	t.Parallel()
	_, judge := judgeRig(t, llm.KindOpenAI)
	c := mustParse(t, Spec{Kind: KindModelQuestion, Question: "Is it done?"}, Deps{Judge: judge})
	if d := c.Describe(); !strings.Contains(d, `a judge model answers YES to: "Is it done?"`) {
		t.Errorf("Describe() = %q", d)
	}
	c = mustParse(t, Spec{Kind: KindModelQuestion, Question: "Is it done?", Threshold: ThresholdHighConfidence}, Deps{Judge: judge})
	if d := c.Describe(); !strings.Contains(d, "two independent judge models") {
		t.Errorf("Describe() = %q", d)
	}
}
