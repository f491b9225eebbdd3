package goal

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/clusterspace/clusterspace/backend/policy"
)

// The texts the model reads. Where the product description fixes a wording, it is used as is.
const (
	nudgeText = "You must continue the loop. Call a tool — either work toward the goal, claim_complete if you believe it is achieved, or abort_with_report if you cannot make progress."

	verificationFailedText = "Verification failed: %s. Keep working — either fix the underlying issue and call claim_complete again, or abort_with_report if you can't make further progress."

	finalTurnText = "Stopping now: %s. This is your final turn: no tools will run. Summarize what you accomplished, what remains undone, and what you learned, for the person who set this goal."

	criticSystemPrompt = "You are a critic evaluating an autonomous AI agent's progress toward a goal. Reply with EXACTLY ONE of these tokens on the first line: PROGRESSING — clear forward movement / STUCK — repeating or thrashing / ACHIEVED — goal appears complete, ready for verification / MISLED — drifted away from the goal. On the second line, give a one-sentence reason. Nothing else."

	criticStuckText = "CRITIC: You appear to be stuck. Reason: %s. Step back and try a different approach. Consider: are you using the right tool? Is the assumption you've been operating under wrong? Could a simpler or different angle work? If you've genuinely exhausted ideas, call abort_with_report."

	criticMisledText = "CRITIC: You've drifted from the goal. Reason: %s. ORIGINAL GOAL: %s. Refocus on the goal. Ignore tangents."

	criticAchievedClaim = "Critic believes goal achieved: %s"

	finalizeSystemPrompt = "You review an autonomous agent's claim that it achieved a goal. Reply with EXACTLY ONE of these tokens on the first line: APPROVE — the evidence shows the goal is achieved / REJECT — it is not, or the evidence does not show it. On the second line, give a one-sentence reason. Nothing else."

	resumeMarkerText = "[The app restarted and this goal was resumed. Tool calls that were in flight were interrupted; check the current state before continuing.]"

	steerPrefix = "[From user]: "

	toolResultHead = 2000
	toolResultTail = 500
)

// goalPrompt is the one user message that starts a goal.
func goalPrompt(spec Spec, criterionWords string, p policy.Policy) string {
	sandbox := "none"
	if p.SandboxDir != "" {
		sandbox = p.SandboxDir
	}
	var b strings.Builder
	fmt.Fprintf(&b, "You are working in pane %s.\n\n", spec.PaneID)
	fmt.Fprintf(&b, "GOAL: %s\n\n", spec.Goal)
	fmt.Fprintf(&b, "SUCCESS CRITERION: %s\n\n", criterionWords)
	if h := strings.TrimSpace(spec.Handoff); h != "" {
		fmt.Fprintf(&b, "HANDOFF (what the work before yours reported; build on it):\n%s\n\n", h)
	}
	b.WriteString("RULES:\n")
	b.WriteString("- You cannot stop on your own. Keep working with the tools until the goal is achieved.\n")
	b.WriteString("- When you believe the goal is achieved, call claim_complete with a rationale. The claim is verified against the success criterion; if verification fails you are told why and must continue.\n")
	b.WriteString("- If you truly cannot make progress, call abort_with_report with the reason and what you learned.\n")
	b.WriteString("- For a goal with several phases, call write_todos with a checklist and complete_todo as you finish items.\n")
	b.WriteString("- For non-trivial actions use declare_step → the action → verify_step.\n")
	if p.RequireStepProtocol {
		b.WriteString("- This goal requires the step protocol: a tool that changes anything is refused unless a step is declared first.\n")
	}
	fmt.Fprintf(&b, "\nPOLICY: risk=%s, sandbox=%s", p.Ceiling, sandbox)
	return b.String()
}

// systemPrompt frames every turn. It never changes during a goal, so the provider's prompt
// cache keeps it; what changes (the checklist, the declared step) rides in turnContext.
const systemPrompt = "You are ClusterSpace's agent. You work in terminal and browser panes through tools, as a careful engineer would: look before you act, check results, and prefer small verifiable steps."

// turnContext is the per-turn context message: the model's checklist and declared step as
// they are now, sent as the newest message of each request and never stored ("" if none).
func turnContext(todos []Todo, active int, declared *DeclaredStep) string {
	var b strings.Builder
	if len(todos) > 0 {
		b.WriteString("CURRENT CHECKLIST:\n")
		for i, t := range todos {
			mark := " "
			if t.Done {
				mark = "x"
			}
			cur := ""
			if i == active && !t.Done {
				cur = "  ← working on this"
			}
			fmt.Fprintf(&b, "%d. [%s] %s%s\n", i, mark, t.Text, cur)
		}
	}
	if declared != nil {
		fmt.Fprintf(&b, "\nDECLARED STEP %d: %s — action: %s — success when: %s", declared.Number, declared.Title, declared.Action, declared.SuccessCriteria)
	}
	return strings.TrimSpace(b.String())
}

// cutResult keeps the head and tail of a long tool result, with a note of what was cut, so
// one huge output cannot crowd out the conversation. step (if not 0) is the step the whole
// output is kept as, which read_step_output reads back.
func cutResult(s string, step int) string {
	if len(s) <= toolResultHead+toolResultTail+200 {
		return s
	}
	// Cut on rune boundaries so the kept text stays valid UTF-8.
	h, t := toolResultHead, len(s)-toolResultTail
	for h > 0 && !utf8.RuneStart(s[h]) {
		h--
	}
	for t < len(s) && !utf8.RuneStart(s[t]) {
		t++
	}
	head, tail := s[:h], s[t:]
	if step > 0 {
		return fmt.Sprintf("%s\n[… %d characters cut; the whole output is in the step log: read_step_output {\"step\": %d, \"offset\": %d} …]\n%s", head, t-h, step, h, tail)
	}
	return fmt.Sprintf("%s\n[… %d characters cut; read the output again with a narrower query if you need them …]\n%s", head, t-h, tail)
}
