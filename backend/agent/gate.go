package agent

import (
	"context"
	"errors"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// gate decides a call a running tool makes on the model's behalf (a plugin's ctx.fetch) as a
// call of its own: the caller's check, and the person when it asks. It runs on the tool's
// goroutine while the loop waits for the batch, as the approvals of decide run on the loop's.
func (a *Agent) gate(ctx context.Context, tool tools.Tool, call tools.Call) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	call.GoalID, call.Dir, call.Sandbox, call.PaneID, call.WorkspaceID = a.Owner.GoalID, a.WorkDir, a.Sandbox, a.PaneID, a.WorkspaceID
	v := a.Hooks.Check(ctx, tool, call)
	switch v.Decision {
	case policy.Deny:
		return errors.New(v.Reason)
	case policy.Ask:
		answer, err := a.ask(ctx, llm.ToolCall{ID: call.ID, Name: call.Name, Args: call.Args}, call.Args, v)
		if err != nil {
			return err
		}
		switch answer.Status {
		case ApprovalDeny:
			msg := "the user denied " + call.Name
			if answer.AnswerReason != "" {
				msg += " (" + answer.AnswerReason + ")"
			}
			return errors.New(msg)
		case ApprovalAllowScope:
			if a.Hooks.Grant != nil {
				a.Hooks.Grant(call.Name)
			}
		}
	}
	return nil
}

// noteProblems puts each problem the tool sources report (a plugin that did not load, an MCP
// server that did not start) before the person once per agent, as a notice on the goal's
// rail or in the chat: the tool is missing and they should know why.
func (a *Agent) noteProblems() {
	if a.Registry == nil || a.Hooks.Publish == nil {
		return
	}
	for _, p := range a.Registry.Problems() {
		if a.told[p] {
			continue
		}
		if a.told == nil {
			a.told = map[string]bool{}
		}
		a.told[p] = true
		a.publish(Event{Kind: EventNotice, Text: p})
	}
}
