package goal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/llm"
)

// criticTimeout bounds one critic or finalize-critic call.
const criticTimeout = 2 * time.Minute

// evidence is what the criterion gets to judge a claim by.
// A check the model wrote runs inside a confined goal's sandbox, like everything else it does.
func (r *run) evidence(rationale string) criterion.Evidence {
	ev := criterion.Evidence{Goal: r.g.Spec.Goal, Rationale: rationale, Steps: r.recentSummaries(evidenceSteps),
		Screenshot: r.lastImage, WorkDir: r.workDir(), CacheKey: r.g.ID,
		Env: r.g.Spec.Settings.Env}
	if r.g.Spec.Criterion.ByModel && r.policy.SandboxDir != "" {
		g := r.g
		ev.Confine = func(argv []string) ([]string, []string, error) {
			if r.svc.opts.Confine == nil {
				return nil, nil, errors.New("this app cannot confine checks")
			}
			return r.svc.opts.Confine(g, argv)
		}
	}
	return ev
}

// recentSummaries returns the last n steps as one-line summaries, from the store.
func (r *run) recentSummaries(n int) []string {
	after := max(r.g.State.Steps-n, 0)
	steps, err := r.svc.repo.GoalSteps(context.WithoutCancel(r.ctx), r.g.ID, after, n)
	if err != nil {
		return nil
	}
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = s.Summary()
	}
	return out
}

// verify runs the done-gate chain on a claim: the criterion, then (if enabled) the finalize
// critic. It returns true if the goal ended (completed, or failed with the bounce budget
// spent).
func (r *run) verify(rationale string) bool {
	ctx, done := r.checkContext()
	defer done()
	v, err := r.crit.Verify(ctx, r.evidence(rationale))
	if err != nil {
		v = criterion.Verdict{Detail: "verification could not run: " + err.Error()}
	}
	gate := "criterion"
	if v.Passed && r.g.Spec.Settings.FinalizeCritic {
		gate = "finalize_critic"
		v = r.finalize(ctx, rationale)
	}
	if r.ctx.Err() != nil {
		return false // aborted or shutting down during verification: the loop ends the goal
	}
	if ctx.Err() != nil {
		// Paused while it checked: the claim is verified again once the goal goes on.
		r.g.State.Verifying = &rationale
		r.event(EventNotice, map[string]string{"message": "the pause cut the verification of the claim off: it runs again when the goal resumes"})
		r.commit()
		return false
	}
	if v.Passed {
		r.event(EventVerificationPassed, map[string]any{"detail": v.Detail, "rationale": rationale})
		r.finish(StatusCompleted, rationale)
		return true
	}
	r.g.State.Bounces++
	budget := r.g.Spec.Settings.BounceBudget
	r.event(EventVerificationFailed, map[string]any{"gate": gate, "detail": v.Detail, "bounces": r.g.State.Bounces, "budget": budget})
	if r.g.State.Bounces >= budget {
		r.finish(StatusFailed, fmt.Sprintf("Verification failed %d times, using up the bounce budget. Last failure: %s", r.g.State.Bounces, v.Detail))
		return true
	}
	r.append(r.userText(fmt.Sprintf(verificationFailedText, strings.TrimRight(v.Detail, ". \n"))))
	r.commit()
	return false
}

// finalize asks a tool-less model, in a fresh context, whether the claim holds.
func (r *run) finalize(ctx context.Context, rationale string) criterion.Verdict {
	var b strings.Builder
	fmt.Fprintf(&b, "GOAL: %s\n\nSUCCESS CRITERION: %s\n\nTHE AGENT'S CLAIM: %s\n\nRECENT STEPS:\n%s",
		r.g.Spec.Goal, r.crit.Describe(), rationale, strings.Join(r.recentSummaries(evidenceSteps), "\n"))
	verdict, reason, err := r.askCritic(ctx, finalizeSystemPrompt, b.String(), []string{"APPROVE", "REJECT"})
	if err != nil {
		return criterion.Verdict{Detail: "the finalize critic could not be asked: " + err.Error()}
	}
	if verdict != "APPROVE" {
		return criterion.Verdict{Detail: "the finalize critic rejected the claim: " + orDefault(reason, "no reason given")}
	}
	return criterion.Verdict{Passed: true, Detail: "the finalize critic approved: " + reason}
}

func orDefault(s, d string) string {
	if strings.TrimSpace(s) == "" {
		return d
	}
	return s
}

// criticDue reports whether enough work steps passed since the last critic.
func (r *run) criticDue() bool {
	n := r.g.Spec.Settings.criticInterval()
	return n > 0 && r.g.State.StepsSinceCritic >= n
}

// runCritic asks the critic about progress and acts on its verdict. It returns true if the
// goal ended (an ACHIEVED verdict that verified, or one that spent the bounce budget).
func (r *run) runCritic() bool {
	n := r.g.Spec.Settings.criticInterval()
	r.g.State.StepsSinceCritic = 0
	ctx, done := r.checkContext()
	var b strings.Builder
	fmt.Fprintf(&b, "GOAL: %s\n\nSUCCESS CRITERION: %s\n\nLAST STEPS:\n%s", r.g.Spec.Goal, r.crit.Describe(),
		strings.Join(r.recentSummaries(2*n), "\n"))
	verdict, reason, err := r.askCritic(ctx, criticSystemPrompt, b.String(), []string{"PROGRESSING", "STUCK", "ACHIEVED", "MISLED"})
	done()
	if err != nil {
		// A failing critic is news, never the end of a goal.
		r.event(EventCritic, map[string]any{"error": err.Error()})
		r.commit()
		return false
	}
	if verdict == "" {
		verdict = "PROGRESSING" // an unrecognised reply counts as progress
	}
	reason = strings.TrimRight(reason, ". ") // the templates add their own full stop
	r.g.State.LastCritic = verdict
	r.event(EventCritic, map[string]any{"verdict": verdict, "reason": reason})
	switch verdict {
	case "STUCK":
		r.append(r.userText(fmt.Sprintf(criticStuckText, orDefault(reason, "no reason given"))))
	case "MISLED":
		r.append(r.userText(fmt.Sprintf(criticMisledText, orDefault(reason, "no reason given"), r.g.Spec.Goal)))
	case "ACHIEVED":
		r.commit()
		return r.verify(fmt.Sprintf(criticAchievedClaim, orDefault(reason, "no reason given")))
	}
	r.commit()
	return false
}

// askCritic makes one tool-less call to the critic model and reads its first-line token
// (one of tokens, or "" if none) and second-line reason.
func (r *run) askCritic(ctx context.Context, system, prompt string, tokens []string) (string, string, error) {
	cctx, cancel := context.WithTimeout(ctx, criticTimeout)
	defer cancel()
	reply, err := r.critic.Provider.Complete(cctx, llm.Request{System: system, Messages: []llm.Message{llm.UserText(prompt)},
		MaxTokens: r.critic.MaxTokens, CacheKey: r.g.ID})
	if err != nil {
		return "", "", err
	}
	r.addUsage(r.critic, reply.Usage)
	return parseVerdict(reply.Message.Text(), tokens)
}

// parseVerdict reads "TOKEN\nreason" leniently: the token may carry punctuation or markdown
// and the reason may follow on the same line.
func parseVerdict(text string, tokens []string) (string, string, error) {
	text = strings.TrimSpace(text)
	first, rest, _ := strings.Cut(text, "\n")
	word := strings.ToUpper(strings.Trim(strings.TrimSpace(first), "*_`#:.!- "))
	for _, t := range tokens {
		if word == t || strings.HasPrefix(word, t+" ") || strings.HasPrefix(word, t+":") || strings.HasPrefix(word, t+" —") {
			reason := strings.TrimSpace(rest)
			if reason == "" {
				// "STUCK: reason" on one line: the reason follows the token.
				i := strings.Index(strings.ToUpper(first), t)
				reason = strings.TrimSpace(strings.TrimLeft(first[i+len(t):], ":—-*_. "))
			}
			return t, reason, nil
		}
	}
	return "", text, nil
}
