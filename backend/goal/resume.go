package goal

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/llm"
)

// Resume continues a paused goal, or restarts an interrupted (or paused-before-a-restart) one
// from the store with its conversation and every runtime setting.
func (s *Service) Resume(ctx context.Context, id string) error {
	s.mu.Lock()
	r, ok := s.runs[id]
	s.mu.Unlock()
	if ok {
		r.resume()
		return nil
	}
	// The store is read and the conversation repaired outside the lock (decide under it, act
	// outside it); the lock is taken again only to launch.
	g, err := s.repo.Goal(ctx, id)
	if err != nil {
		return err
	}
	switch g.Status {
	case StatusInterrupted, StatusPaused, StatusBudgetExceeded, StatusAwaitingApproval, StatusRunning:
	default:
		return fmt.Errorf("goal %s is %s; only paused or interrupted goals resume (re-open a finished one)", id, g.Status)
	}
	conv, stored, redo, err := s.conversationToRun(ctx, g, true)
	if err != nil {
		return err
	}
	if len(redo) == 0 {
		conv = append(conv, llm.UserText(resumeMarkerText))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.runs[id]; ok {
		r.resume() // resumed by another caller meanwhile
		return nil
	}
	return s.launch(g, conv, stored, redo...)
}

// conversationToRun reads a goal's stored conversation for another run, once the goal can
// run at all, and repairs it (see repairConversation); stored is how many of its messages
// are in the store.
func (s *Service) conversationToRun(ctx context.Context, g Goal, askAgain bool) (conv []llm.Message, stored int, redo []resumeCall, err error) {
	if conv, err = s.repo.GoalMessages(ctx, g.ID); err != nil {
		return nil, 0, nil, err
	}
	if err := s.canRun(ctx, g); err != nil {
		return nil, 0, nil, err
	}
	stored = len(conv)
	conv, redo, err = s.repairConversation(ctx, g.ID, conv, askAgain)
	return conv, stored, redo, err
}

// repairConversation answers tool calls the last run left without results: from the step
// log when the step finished before the crash (nothing acknowledged is lost), else with
// "interrupted by restart". A call that was waiting for the user's approval is not answered
// but returned in redo when askAgain: the resumed run asks for approval again before
// anything else; otherwise (a re-opened goal) it is answered "not run".
func (s *Service) repairConversation(ctx context.Context, id string, conv []llm.Message, askAgain bool) ([]llm.Message, []resumeCall, error) {
	if len(conv) == 0 {
		return conv, nil, fmt.Errorf("goal %s has no stored conversation to resume from", id)
	}
	last := conv[len(conv)-1]
	calls := last.ToolCalls()
	if last.Role != llm.RoleAssistant || len(calls) == 0 {
		return conv, nil, nil
	}
	steps, err := s.repo.GoalSteps(ctx, id, 0, 1<<30)
	if err != nil {
		return nil, nil, err
	}
	byCall := map[string]Step{}
	for _, st := range steps {
		byCall[st.CallID] = st
	}
	pending, err := s.approvals.Stored(ctx, func(a agent.Approval) bool { return a.GoalID == id })
	if err != nil {
		return nil, nil, err
	}
	waiting := map[string]agent.Approval{}
	for _, a := range pending {
		waiting[a.CallID] = a
	}
	var results []llm.ToolResult
	var redo []resumeCall
	asking := false
	for _, c := range calls {
		st, done := byCall[c.ID]
		a, asked := waiting[c.ID]
		switch {
		case done && c.ID != "":
			r := llm.ToolResult{CallID: c.ID, Name: c.Name, Text: cutResult(st.Result, st.Index), IsError: st.IsError}
			results = append(results, r)
			redo = append(redo, resumeCall{call: c, result: &r})
		case asked && !askAgain:
			now := time.Now().UTC()
			a.Status, a.AnswerReason, a.AnsweredAt = agent.ApprovalDeny, "the goal ended while this waited for an answer", &now
			if err := s.approvals.Save(ctx, a); err != nil {
				return nil, nil, err
			}
			r := llm.ToolResult{CallID: c.ID, Name: c.Name, IsError: true, Text: "not run: the goal ended while this call waited for the person's approval"}
			results = append(results, r)
			redo = append(redo, resumeCall{call: c, result: &r})
		case asked:
			// The old request dies with the old process; the resumed run asks anew.
			now := time.Now().UTC()
			a.Status, a.AnswerReason, a.AnsweredAt = agent.ApprovalDeny, "superseded: asked again after a restart", &now
			if err := s.approvals.Save(ctx, a); err != nil {
				return nil, nil, err
			}
			redo = append(redo, resumeCall{call: c})
			asking = true
		default:
			r := llm.ToolResult{CallID: c.ID, Name: c.Name, IsError: true, Text: "interrupted by restart"}
			results = append(results, r)
			redo = append(redo, resumeCall{call: c, result: &r})
		}
	}
	if asking {
		// The batch is finished by the resumed run: stored results replayed, the rest asked again.
		return conv, redo, nil
	}
	return append(conv, llm.ToolMessage(results...)), nil, nil
}

// resumeCall is a tool call of an unfinished batch: replayed from its stored result, or (nil
// result) taken through the policy again, which asks the user again.
type resumeCall struct {
	call   llm.ToolCall
	result *llm.ToolResult
}

// Reopen continues a finished goal with the user's feedback (how a manual criterion is
// reviewed, or a "not quite" after completion).
func (s *Service) Reopen(ctx context.Context, id, feedback string) error {
	feedback = strings.TrimSpace(feedback)
	if feedback == "" {
		return &FieldError{"feedback", "say what is still wrong, so the agent knows what to do"}
	}
	g, err := s.repo.Goal(ctx, id)
	if err != nil {
		return err
	}
	if !g.Status.Finished() {
		return fmt.Errorf("goal %s is %s; only finished goals re-open", id, g.Status)
	}
	if err := s.awaitGone(ctx, id); err != nil {
		return err
	}
	// Repaired as a resume is: every call the last run left open gets its answer, so the
	// provider never sees a call without a result.
	conv, stored, _, err := s.conversationToRun(ctx, g, false)
	if err != nil {
		return err
	}
	conv = append(conv, llm.UserText(steerPrefix+"The goal was re-opened: "+feedback))
	g.EndedAt, g.Report, g.State.Bounces = nil, "", 0
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.runs[id]; ok {
		return fmt.Errorf("goal %s was re-opened meanwhile", id)
	}
	return s.launch(g, conv, stored)
}

// awaitGone waits for a goal whose end is stored but whose run is still winding down (its
// OnEnd hooks: worktree, fleet, notifications), so that a person who re-opens a goal the
// moment it shows as finished is not refused.
func (s *Service) awaitGone(ctx context.Context, id string) error {
	s.mu.Lock()
	r, ok := s.runs[id]
	s.mu.Unlock()
	if !ok {
		return nil
	}
	wait := time.NewTimer(30 * time.Second)
	defer wait.Stop()
	select {
	case <-r.gone:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-wait.C:
		return fmt.Errorf("goal %s has finished but its run is still ending after 30 s; try re-opening it again", id)
	}
}
