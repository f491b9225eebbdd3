package criterion

import (
	"context"
	"fmt"
	"strings"

	"github.com/clusterspace/clusterspace/backend/llm"
)

// JudgeSystemPrompt is the judge's whole instruction on how to answer.
const JudgeSystemPrompt = "You are a strict yes/no judge. Reply with exactly one token: YES or NO — nothing else."

const (
	// maxJudgeSteps is how many of the most recent step summaries the judge reads: the end
	// of the work is what shows whether it is done.
	maxJudgeSteps = 20
	// maxStepChars and maxRationaleChars keep one runaway summary from crowding the rest.
	maxStepChars      = 500
	maxRationaleChars = 4000
	// maxReplyChars cuts a judge that ignored "one token" before its reply becomes a detail.
	maxReplyChars = 500
)

// skepticInstruction turns the second high_confidence call into a search for reasons the
// claim is false, so two YES answers mean more than one asked twice.
const skepticInstruction = "Be skeptical: look for reasons the claim is false — a step that failed or was never checked, a result the claim does not account for, a part of the goal nothing shows was done. Answer YES only if you find no such reason."

// modelQuestion asks a judge model a yes/no question about the evidence.
type modelQuestion struct {
	question       string
	highConfidence bool
	judge          llm.Provider
	vision         bool
}

func parseModelQuestion(spec Spec, deps Deps) (Criterion, *FieldError) {
	if fe := onlyFields(spec, "question", "threshold"); fe != nil {
		return nil, fe
	}
	if strings.TrimSpace(spec.Question) == "" {
		return nil, fieldErr("question", "a model_question check needs a yes/no question whose YES means the goal is done, e.g. \"Does the README document every CLI flag?\"")
	}
	high := false
	switch spec.Threshold {
	case "", ThresholdYes:
	case ThresholdHighConfidence:
		high = true
	default:
		return nil, fieldErr("threshold", "unknown threshold %q: use %q (one judge says YES) or %q (two independent judges say YES)", spec.Threshold, ThresholdYes, ThresholdHighConfidence)
	}
	if deps.Judge == nil {
		return nil, fieldErr("kind", "a model_question check needs a judge model, and none is configured: set up a provider, or use a shell or json_predicate check")
	}
	return modelQuestion{question: spec.Question, highConfidence: high, judge: deps.Judge, vision: deps.JudgeVision}, nil
}

func (m modelQuestion) Kind() string { return KindModelQuestion }

func (m modelQuestion) Describe() string {
	if m.highConfidence {
		return fmt.Sprintf("two independent judge models (the second looking for reasons your claim is false) both answer YES to: %q, judging from the goal, your claim's rationale and your recent steps", m.question)
	}
	return fmt.Sprintf("a judge model answers YES to: %q, judging from the goal, your claim's rationale and your recent steps", m.question)
}

func (m modelQuestion) Verify(ctx context.Context, ev Evidence) (Verdict, error) {
	v, err := m.ask(ctx, ev, false)
	if err != nil || !v.Passed || !m.highConfidence {
		return v, err
	}
	second, err := m.ask(ctx, ev, true)
	if err != nil || !second.Passed {
		return second, err
	}
	return Verdict{Passed: true, Detail: fmt.Sprintf("Two independent judges answered YES to %q.", m.question)}, nil
}

// ask makes one judge call in a fresh context.
func (m modelQuestion) ask(ctx context.Context, ev Evidence, skeptic bool) (Verdict, error) {
	var images []llm.Image
	if ev.Screenshot != nil && m.vision {
		images = append(images, *ev.Screenshot)
	}
	req := llm.Request{
		System:   JudgeSystemPrompt,
		Messages: []llm.Message{llm.UserText(judgePrompt(ev, m.question, len(images) > 0, skeptic), images...)},
		CacheKey: ev.CacheKey,
	}
	reply, err := m.judge.Complete(ctx, req)
	if err != nil {
		return Verdict{}, fmt.Errorf("the judge model could not answer: %w", err)
	}
	text := reply.Message.Text()
	if isYes(text) {
		return Verdict{Passed: true, Detail: "The judge answered YES."}, nil
	}
	who := "The judge"
	if skeptic {
		who = "The second, skeptical judge"
	}
	answer := strings.TrimSpace(text)
	if answer == "" {
		answer = "(an empty reply)"
	}
	return Verdict{Detail: fmt.Sprintf("%s replied %s to %q.", who, clip(answer, maxReplyChars), m.question)}, nil
}

// isYes accepts YES in any case, trimmed, with trailing punctuation stripped; anything else
// (NO, "yes, but…", an empty reply) is not a YES.
func isYes(reply string) bool {
	s := strings.TrimRight(strings.TrimSpace(reply), ".!?,;: \t\r\n")
	return strings.EqualFold(s, "YES")
}

// judgePrompt lays out the evidence for one judge call.
func judgePrompt(ev Evidence, question string, image, skeptic bool) string {
	var b strings.Builder
	b.WriteString("An autonomous AI agent claims it has achieved a goal. Judge the claim from the evidence below, not from the agent's confidence.\n\n")
	fmt.Fprintf(&b, "GOAL:\n%s\n\n", strings.TrimSpace(ev.Goal))
	fmt.Fprintf(&b, "QUESTION:\n%s\n\n", strings.TrimSpace(question))
	rationale := strings.TrimSpace(ev.Rationale)
	if rationale == "" {
		rationale = "(none given)"
	}
	fmt.Fprintf(&b, "THE AGENT'S CLAIM (its rationale):\n%s\n\n", clip(rationale, maxRationaleChars))
	b.WriteString("RECENT STEPS (oldest first):\n")
	steps := ev.Steps
	if len(steps) > maxJudgeSteps {
		fmt.Fprintf(&b, "(%d earlier steps not shown)\n", len(steps)-maxJudgeSteps)
		steps = steps[len(steps)-maxJudgeSteps:]
	}
	if len(steps) == 0 {
		b.WriteString("(none recorded)\n")
	}
	for _, s := range steps {
		b.WriteString(clip(strings.TrimSpace(s), maxStepChars))
		b.WriteByte('\n')
	}
	if image {
		b.WriteString("\nA screenshot of the latest state is attached.\n")
	}
	b.WriteByte('\n')
	if skeptic {
		b.WriteString(skepticInstruction)
		b.WriteByte('\n')
	}
	b.WriteString("Answer the QUESTION with YES or NO.")
	return b.String()
}

// clip cuts s to at most n runes, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "… (cut)"
}
