package chat

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// Limits of the tool loop, from the product description.
const (
	// maxToolTurns is how many automatic tool turns one user-role message may set off.
	maxToolTurns = 20
	// maxFailingBatches in a row stop the loop: the model is flailing.
	maxFailingBatches = 3
	// toolResultChars bounds one tool result as stored and sent to the model; longer output
	// keeps its head and tail.
	toolResultChars = 16_000
)

// offered says which tools the chat offers: the goal's tools minus the goal tools, which
// steer a goal and mean nothing here.
func offered(name string) bool { return !tools.IsGoalTool(name) }

// newAgent is the turn engine of one side of the conversation (the actor, or the critic,
// which is offered no tools), with the chat's hooks: the conversation's ask-above level decides
// calls, and every call shows as a collapsed item.
func (r *run) newAgent(src Source, m agent.Model) *agent.Agent {
	home, _ := os.UserHomeDir() // Best effort: without one, relative paths are refused.
	a := &agent.Agent{
		Scope: "chat", WorkDir: home, AskHint: "the user", Model: m, Registry: r.svc.registry, Offer: offered,
		Approvals: r.svc.approvals, Owner: agent.Approval{WorkspaceID: r.ss.wsID, ConversationID: r.ss.id}, WorkspaceID: r.ss.wsID,
		Decider: r.decider(), ApprovalPrefix: "chat-appr-",
		Screenshot: r.svc.shot, Tasks: &r.svc.wg, ByNeed: true, // tools by need (agent/offer.go)
		Hooks: agent.Hooks{
			Grant:   r.ss.grant,
			Finish:  r.finishCall,
			Publish: func(e agent.Event) { r.onAgentEvent(src, e) },
			Compacted: func(c agent.Compaction) {
				r.ss.setCompacted(r.ctx, src, c)
				r.publish(Event{Type: EventNotice, Source: src, Text: fmt.Sprintf(
					"the conversation outgrew the model's window: its older part was summarised (compaction %d, about %d → %d tokens)", c.Count, c.TokensBefore, c.TokensAfter)})
			},
		},
		// One cache key per conversation: the actor's and the critic's differ in every message.
		ConversationID: conversationID(r.ss.id, src),
		Compaction:     r.ss.compaction(src),
	}
	if src == SourceActor {
		a.Guard = agent.NewGuard() // begin gives the next chain a fresh one
	}
	return a
}

// decider decides the chat's calls. Chat has no goal ceiling: it asks for calls a tool raises
// itself (tools.CallRisk: acting on a page that looks like payment) whatever the
// conversation's ask-above level, for calls a tool wants the person to see first
// (tools.Confirmer: typing a password, uploading files), and for calls above that level, read
// anew at every call since the person may change it between turns.
func (r *run) decider() policy.Decider {
	return policy.Decider{Rules: []policy.Rule{r.confirmations, r.askAbove}}
}

func (r *run) confirmations(ctx context.Context, tool tools.Tool, call tools.Call) (policy.Verdict, bool) {
	if _, why := tools.RiskOf(tool, call.Args); why != "" {
		return policy.Verdict{Decision: policy.Ask, Reason: why}, true
	}
	if c, ok := tool.(tools.Confirmer); ok {
		if why := c.Confirm(ctx, call.Args); why != "" {
			return policy.Verdict{Decision: policy.Ask, Reason: why}, true
		}
	}
	return policy.Verdict{}, false
}

func (r *run) askAbove(_ context.Context, tool tools.Tool, call tools.Call) (policy.Verdict, bool) {
	risk, _ := tools.RiskOf(tool, call.Args)
	askAbove := r.cfg.Settings.AskAbove
	if v := (policy.Policy{Ceiling: askAbove}).Check(riskAt{tool, risk}, call, r.ss.grants()); v.Decision != policy.Allow {
		return policy.Verdict{Decision: policy.Ask, Reason: fmt.Sprintf("%s is %s, above this conversation's ask-above level %s", call.Name, risk, askAbove)}, true
	}
	return policy.Verdict{Decision: policy.Allow}, true
}

// riskAt is a tool seen at the risk of one particular call.
type riskAt struct {
	tools.Tool
	risk tools.Risk
}

func (t riskAt) Risk() tools.Risk { return t.risk }

// finishCall publishes a finished call as a collapsed item and returns its result as the
// model and the store keep it (long output cut).
func (r *run) finishCall(rec agent.CallRecord) llm.ToolResult {
	res := rec.Result
	res.Text = clip(res.Text, toolResultChars)
	item := ToolRun{CallID: rec.Call.ID, Name: rec.Call.Name, Args: rec.Args, Result: res.Text, IsError: res.IsError,
		Images: len(res.Images), DurationMS: time.Since(rec.Start).Milliseconds()}
	r.publish(Event{Type: EventToolFinished, Source: SourceActor, Tool: &item})
	return res
}

// onAgentEvent turns the agent's events into the chat's.
func (r *run) onAgentEvent(src Source, e agent.Event) {
	switch e.Kind {
	case agent.EventDelta:
		r.publish(Event{Type: EventMessageDelta, Source: src, Turn: r.turnID, Text: e.Text, Reasoning: e.Reasoning})
	case agent.EventNotice:
		r.publish(Event{Type: EventNotice, Source: src, Text: e.Text})
	case agent.EventToolStarted:
		r.publish(Event{Type: EventToolStarted, Source: SourceActor, Tool: &ToolRun{CallID: e.Call.ID, Name: e.Call.Name, Args: e.Call.Args}})
	case agent.EventGuard:
		r.publish(Event{Type: EventGuard, Source: SourceActor, Guard: e.Guard, Text: e.Guard.Message})
	case agent.EventApprovalRequested:
		r.publish(Event{Type: EventApprovalRequested, Source: SourceActor, Approval: e.Approval})
	case agent.EventApprovalResolved:
		r.publish(Event{Type: EventApprovalResolved, Source: SourceActor, Approval: e.Approval})
	}
}

// AnswerApproval answers a chat tool call waiting for the user: allow_once, allow_goal (this
// tool for the rest of the conversation's session) or deny.
func (s *Service) AnswerApproval(ctx context.Context, id string, status agent.ApprovalStatus, reason string) (agent.Approval, error) {
	return s.approvals.Answer(ctx, id, status, reason)
}

// pendingApprovals lists the requests a conversation waits on, oldest first.
func (s *Service) pendingApprovals(id string) []agent.Approval {
	return s.approvals.Waiting(func(a agent.Approval) bool { return a.ConversationID == id })
}

func (ss *session) grant(tool string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if !slices.Contains(ss.granted, tool) {
		ss.granted = append(ss.granted, tool)
	}
}

// conversationID names a side of a conversation for the provider's prompt cache.
func conversationID(id string, src Source) string {
	if src == SourceCritic {
		return "chat:" + id + "/critic"
	}
	return "chat:" + id
}

func (ss *session) compaction(src Source) *agent.Compaction {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.compacted[src]
}

// setCompacted keeps src's new compaction for the session's next chains and stores it, so an
// app started again sends the conversation exactly as this one would (the prompt cache's
// prefix holds) without paying for the summary again.
func (ss *session) setCompacted(ctx context.Context, src Source, c agent.Compaction) {
	ss.mu.Lock()
	if ss.compacted == nil {
		ss.compacted = map[Source]*agent.Compaction{}
	}
	ss.compacted[src], ss.restored = &c, true // newer than anything stored: never read over it
	ss.mu.Unlock()
	if ss.svc.compactions == nil {
		return
	}
	// Stored even when the turn is being stopped: the summary covers messages already stored.
	if err := ss.svc.compactions.SaveChatCompaction(context.WithoutCancel(ctx), ss.id, src, c); err != nil {
		// Best effort: this process keeps it; only a restart would summarise again.
		ss.svc.log.Warn("chat: could not store the compaction", "conversation", ss.id, "source", src, "err", err)
	}
}

// restoreCompacted reads the compactions a previous process stored, once per session, so the
// first chain after a restart starts from them. Called under ops while the chat is idle.
func (ss *session) restoreCompacted(ctx context.Context) {
	ss.mu.Lock()
	done := ss.restored
	ss.mu.Unlock()
	if done || ss.svc.compactions == nil {
		return
	}
	stored, err := ss.svc.compactions.ChatCompactions(ctx, ss.id)
	if err != nil {
		// Best effort: without them the conversation is compacted anew (and stored again);
		// the next chain tries to read them once more.
		ss.svc.log.Warn("chat: could not read the stored compaction", "conversation", ss.id, "err", err)
		return
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.restored {
		return
	}
	ss.compacted = map[Source]*agent.Compaction{}
	for src, c := range stored {
		ss.compacted[src] = &c
	}
	ss.restored = true
}

func (ss *session) grants() []string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return slices.Clone(ss.granted)
}
