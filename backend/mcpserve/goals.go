package mcpserve

import (
	"context"
	"encoding/json"

	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/tools"
)

type startGoalParams struct {
	PaneID string `json:"pane_id" desc:"The terminal pane the goal's agent works in (list_panes gives ids)."`
	Goal   string `json:"goal" desc:"What the goal is to achieve, in a sentence or a paragraph."`
	// The criterion: how "done" is checked. A shell check runs inside the goal's own boundary.
	CheckShell    string `json:"check_shell,omitempty" desc:"A shell command that exits 0 when the goal is met."`
	CheckQuestion string `json:"check_question,omitempty" desc:"Without check_shell: a yes/no question a judge model answers on the goal's evidence."`
	Risk          string `json:"risk,omitempty" desc:"The goal's risk ceiling: read_only, write_local (default), network_get, network_write; never above yours."`
}

type goalIDParams struct {
	GoalID string `json:"goal_id" desc:"The goal's id, as start_goal returned it."`
}

type reportParams struct {
	Text string `json:"text" desc:"What you did, found or need, in a few sentences."`
}

type completeParams struct {
	Summary string `json:"summary" desc:"What you did and how it can be checked."`
}

// goalTools are the tools only the MCP server has: goals started and followed from outside,
// and an agent in a pane talking to the goal that drives its pane (its fleet task's).
func (s *Service) goalTools() []tools.Tool {
	if s.deps.Goals == nil {
		return nil
	}
	return []tools.Tool{
		// write_local: it starts an agent on this machine, under a ceiling no higher than the caller's.
		tools.New("start_goal", "Start a goal: ClusterSpace's agent works in a terminal pane until the check passes "+
			"(check_shell, else check_question). Returns its id; follow it with goal_status.",
			tools.WriteLocal, func(ctx context.Context, call tools.Call, p startGoalParams) (tools.Result, error) {
				return s.startGoal(ctx, call, p)
			}),
		// Read-only: it shows a goal.
		tools.New("goal_status", "A goal's status, report and verifications (each check of its criterion: passed or failed, and why).",
			tools.ReadOnly, func(ctx context.Context, _ tools.Call, p goalIDParams) (tools.Result, error) {
				return s.goalStatus(ctx, p.GoalID)
			}),
		// Read-only: it only tells the goal that drives the caller's own pane.
		tools.New("report_progress", "Report progress on your task to the ClusterSpace goal (a fleet task's) that drives your pane: "+
			"it reads it on its next turn.",
			tools.ReadOnly, func(ctx context.Context, call tools.Call, p reportParams) (tools.Result, error) {
				return s.tellPaneGoal(ctx, call, "report_progress", "[Progress reported by the agent in your pane]: "+p.Text)
			}),
		// Read-only: like claim_complete, it only asks for the task's own verification.
		tools.New("complete_task", "Say your task is done: the ClusterSpace goal (a fleet task's) that drives your pane checks it "+
			"against its criterion, and completes only when that passes. Follow it with goal_status.",
			tools.ReadOnly, func(ctx context.Context, call tools.Call, p completeParams) (tools.Result, error) {
				return s.tellPaneGoal(ctx, call, "complete_task", "[The agent in your pane says its task is done]: "+p.Summary+
					"\nCheck its work against your criterion now, and call claim_complete if it holds; if not, tell the agent what is missing.")
			}),
	}
}

func (s *Service) startGoal(ctx context.Context, call tools.Call, p startGoalParams) (tools.Result, error) {
	risk := tools.WriteLocal
	if p.Risk != "" {
		r, err := tools.ParseRisk(p.Risk)
		if err != nil {
			return tools.Errorf("start_goal: risk: %v", err), nil
		}
		risk = r
	}
	// The caller's ceiling bounds the goal's: a client cannot start an agent freer than itself.
	if ceiling := clientCeiling(ctx); risk > ceiling {
		return tools.Errorf("start_goal: risk %s is above your own ceiling %s: ask for %s or less", risk, ceiling, ceiling), nil
	}
	crit := criterion.Spec{Kind: criterion.KindModelQuestion, Question: p.CheckQuestion, ByModel: true}
	if p.CheckShell != "" {
		crit = criterion.Spec{Kind: criterion.KindShell, Command: p.CheckShell, ByModel: true}
	} else if p.CheckQuestion == "" {
		return tools.Errorf("start_goal: give check_shell or check_question: how is done checked?"), nil
	}
	g, err := s.deps.Goals.Start(ctx, goal.Spec{PaneID: p.PaneID, Goal: p.Goal, Criterion: crit, Policy: policy.Policy{Ceiling: risk}})
	if err != nil {
		return tools.Errorf("start_goal: %v", err), nil
	}
	return tools.JSONResult(map[string]any{"goal_id": g.ID, "status": g.Status, "pane_id": p.PaneID, "risk_ceiling": risk.String()})
}

func (s *Service) goalStatus(ctx context.Context, id string) (tools.Result, error) {
	g, err := s.deps.Goals.Get(ctx, id)
	if err != nil {
		return tools.Errorf("goal_status: %v", err), nil
	}
	evs, err := s.deps.Goals.History(ctx, id, 0)
	if err != nil {
		return tools.Result{}, err
	}
	type verification struct {
		Passed bool            `json:"passed"`
		Data   json.RawMessage `json:"data"`
	}
	var checks []verification
	for _, e := range evs {
		if e.Type == goal.EventVerificationPassed || e.Type == goal.EventVerificationFailed {
			checks = append(checks, verification{Passed: e.Type == goal.EventVerificationPassed, Data: e.Data})
		}
	}
	return tools.JSONResult(map[string]any{"goal_id": g.ID, "goal": g.Spec.Goal, "pane_id": g.Spec.PaneID, "status": g.Status,
		"finished": g.Status.Finished(), "report": g.Report, "verifications": checks})
}

// tellPaneGoal hands text to the goal running in the caller's pane.
func (s *Service) tellPaneGoal(ctx context.Context, call tools.Call, tool, text string) (tools.Result, error) {
	if call.PaneID == "" {
		return tools.Errorf("%s: this client belongs to no pane, so it has no task: only an agent in a pane started from a template "+
			"(or with a token made with --pane) reports on its task", tool), nil
	}
	id, ok := s.deps.Goals.WorkingIn(call.PaneID)
	if !ok {
		return tools.Errorf("%s: no goal drives pane %s now: there is no task to report on", tool, call.PaneID), nil
	}
	if err := s.deps.Goals.ShareContext(ctx, id, "the agent in pane "+call.PaneID, text); err != nil {
		return tools.Errorf("%s: %v", tool, err), nil
	}
	return tools.JSONResult(map[string]any{"goal_id": id, "delivered": true,
		"note": "The goal reads it on its next turn; goal_status shows its verifications."})
}

// ceilingKey carries the calling client's ceiling to the tools that start work (start_goal).
type ceilingKey struct{}

func withCeiling(ctx context.Context, r tools.Risk) context.Context {
	return context.WithValue(ctx, ceilingKey{}, r)
}

func clientCeiling(ctx context.Context) tools.Risk {
	if r, ok := ctx.Value(ceilingKey{}).(tools.Risk); ok {
		return r
	}
	return tools.ReadOnly
}
