package goal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"
)

// AutoAnswer answers approvals without a person (the CLI's --approve allow|deny). It returns
// false to leave the request to the user.
type AutoAnswer func(Approval) (status ApprovalStatus, reason string, ok bool)

// approvals holds the requests goals are blocked on until someone answers.
type approvals struct {
	repo    Repo
	auto    AutoAnswer
	mu      sync.Mutex
	waiting map[string]chan Approval
}

func newApprovals(repo Repo, auto AutoAnswer) *approvals {
	return &approvals{repo: repo, auto: auto, waiting: map[string]chan Approval{}}
}

// open records the request and makes it answerable, so that it can be announced; wait then
// blocks until it is answered or ctx ends. There is no silent auto-deny timer: only a person,
// an explicit AutoAnswer, or the goal stopping ends the wait.
func (a *approvals) open(ctx context.Context, req Approval) (wait func(context.Context) (Approval, error), err error) {
	if err := a.repo.SaveApproval(context.WithoutCancel(ctx), req); err != nil {
		return nil, fmt.Errorf("could not record the approval request: %w", err)
	}
	if a.auto != nil {
		if status, reason, ok := a.auto(req); ok {
			ans, err := a.answer(ctx, req, status, reason)
			return func(context.Context) (Approval, error) { return ans, err }, nil
		}
	}
	ch := make(chan Approval, 1)
	a.mu.Lock()
	a.waiting[req.ID] = ch
	a.mu.Unlock()
	return func(ctx context.Context) (Approval, error) {
		defer func() {
			a.mu.Lock()
			delete(a.waiting, req.ID)
			a.mu.Unlock()
		}()
		select {
		case ans := <-ch:
			return ans, nil
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), errShutdown) {
				// The app is stopping: the request stays pending and is asked again on resume.
				return req, context.Cause(ctx)
			}
			// The goal paused or stopped: close the request so no stale question stays on screen.
			req.Status, req.AnswerReason = ApprovalDeny, "withdrawn: the goal stopped waiting"
			now := time.Now().UTC()
			req.AnsweredAt = &now
			a.repo.SaveApproval(context.WithoutCancel(ctx), req) // Best effort: the goal's own events say what happened.
			return req, context.Cause(ctx)
		}
	}, nil
}

func (a *approvals) answer(ctx context.Context, req Approval, status ApprovalStatus, reason string) (Approval, error) {
	now := time.Now().UTC()
	req.Status, req.AnswerReason, req.AnsweredAt = status, reason, &now
	return req, a.repo.SaveApproval(context.WithoutCancel(ctx), req)
}

// Answer resolves a waiting request.
func (a *approvals) Answer(ctx context.Context, id string, status ApprovalStatus, reason string) (Approval, error) {
	if status != ApprovalAllowOnce && status != ApprovalAllowGoal && status != ApprovalDeny {
		return Approval{}, &FieldError{"status", fmt.Sprintf("%q is not an answer; use allow_once, allow_goal or deny", status)}
	}
	a.mu.Lock()
	ch, ok := a.waiting[id]
	if ok {
		delete(a.waiting, id)
	}
	a.mu.Unlock()
	if !ok {
		return Approval{}, fmt.Errorf("approval %q is not waiting for an answer (answered already, or its goal stopped): %w", id, ErrNotFound)
	}
	pending, err := a.repo.Approvals(ctx, true)
	if err != nil {
		return Approval{}, err
	}
	var req Approval
	for _, p := range pending {
		if p.ID == id {
			req = p
		}
	}
	if req.ID == "" {
		req = Approval{ID: id}
	}
	ans, err := a.answer(ctx, req, status, reason)
	ch <- ans
	return ans, err
}

// FieldError names the field of a request that is wrong.
type FieldError struct{ Field, Msg string }

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func newID(prefix string) string {
	var b [6]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
