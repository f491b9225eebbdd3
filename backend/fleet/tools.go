package fleet

import (
	"context"
	"fmt"
	"time"

	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// Limits of the waiting tools.
const (
	MaxWaitForAgent     = 30 * time.Minute
	DefaultWaitForAgent = 10 * time.Minute
	MaxWait             = 120 * time.Second
)

type statusParams struct {
	FleetID string `json:"fleet_id,omitempty" desc:"A fleet's id; default your own fleet and every running one."`
}

type assignParams struct {
	PaneID      string           `json:"pane_id" desc:"The pane the task's agent works in (from list_panes); a new terminal pane is made if none has this id."`
	Description string           `json:"description" desc:"What the task must achieve: the goal the agent there is given."`
	Priority    int              `json:"priority,omitempty" desc:"Higher starts first when tasks queue for a free slot." default:"0"`
	DependsOn   []string         `json:"depends_on,omitempty" desc:"Ids of tasks (from get_fleet_status or earlier assign_task calls) that must verify complete first; their reports go into this task's first prompt."`
	Criterion   *criterionParams `json:"criterion,omitempty" desc:"How the task is verified: one of check_shell (with exit_code, check_timeout), check_question (with threshold), check_json (with json_source), check_manual. Default: a strict judge question on the evidence."`
}

// criterionParams are the criterion keys of a fleet file, as assign_task takes them.
type criterionParams struct {
	CheckShell    string `json:"check_shell,omitempty" desc:"A shell command that must exit with exit_code (default 0) in the sandbox."`
	ExitCode      *int   `json:"exit_code,omitempty"`
	CheckTimeout  string `json:"check_timeout,omitempty" desc:"How long the check may run, such as 90s or 5m."`
	CheckQuestion string `json:"check_question,omitempty" desc:"A yes/no question a judge model answers from the evidence."`
	Threshold     string `json:"threshold,omitempty" enum:"yes|high_confidence"`
	CheckJSON     string `json:"check_json,omitempty" desc:"A predicate over JSON, such as .passed == true."`
	JSONSource    string `json:"json_source,omitempty" desc:"claim, file:PATH or command:CMD."`
	CheckManual   bool   `json:"check_manual,omitempty" desc:"A person reviews the result."`
}

func (c *criterionParams) keys() map[string]any {
	if c == nil {
		return nil
	}
	m := map[string]any{}
	set := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	set(criterion.KeyCheckShell, c.CheckShell)
	set(criterion.KeyCheckTimeout, c.CheckTimeout)
	set(criterion.KeyCheckQuestion, c.CheckQuestion)
	set(criterion.KeyThreshold, c.Threshold)
	set(criterion.KeyCheckJSON, c.CheckJSON)
	set(criterion.KeyJSONSource, c.JSONSource)
	if c.ExitCode != nil {
		m[criterion.KeyExitCode] = *c.ExitCode
	}
	if c.CheckManual {
		m[criterion.KeyCheckManual] = true
	}
	return m
}

type createGoalParams struct {
	Description string           `json:"description" desc:"What each pane's agent must achieve."`
	PaneIDs     []string         `json:"pane_ids" desc:"The panes to run it in, one goal each (from list_panes; missing ones are made)."`
	Criterion   *criterionParams `json:"criterion,omitempty" desc:"How each goal is verified (as assign_task's); default a strict judge question on the evidence."`
}

type waitForAgentParams struct {
	PaneID   string `json:"pane_id" desc:"The pane whose agent you wait for."`
	TimeoutS int    `json:"timeout_s,omitempty" desc:"Give up after this many seconds (at most 1800)." default:"600"`
}

type shareParams struct {
	ToPaneID  string `json:"to_pane_id,omitempty" desc:"The pane whose agent gets the context (or set broadcast instead)."`
	Broadcast bool   `json:"broadcast,omitempty" desc:"Send it to every other agent of your fleet instead of one pane."`
	Context   string `json:"context" desc:"What that agent should know: findings, paths, decisions."`
}

type roleParams struct {
	PaneID  string `json:"pane_id" desc:"The pane whose agent gets the role (from list_panes)."`
	Role    string `json:"role" desc:"Builder, Monitor, Tester, Deployer, Reviewer, General, or a role of your own (a short name)."`
	Purpose string `json:"purpose,omitempty" desc:"What this agent is for, in a sentence; it starts each of its tasks with it."`
}

type completeTaskParams struct {
	TaskID  string `json:"task_id,omitempty" desc:"Your own task's id (default: the task you work on); only a task's own agent can complete it."`
	Summary string `json:"summary" desc:"What was done and the evidence; it is verified against your task's criterion before the task completes."`
}

type failTaskParams struct {
	TaskID string `json:"task_id,omitempty" desc:"A task you assigned, to end it; default your own task, to give it up."`
	Reason string `json:"reason" desc:"Why the task failed; its dependants are blocked with it."`
}

type waitParams struct {
	MS int `json:"ms" desc:"How long to wait, in milliseconds (at most 120000)."`
}

// Tools are the orchestration tools, answered by s: one agent sees the fleet, hands tasks
// to other panes, waits for them and passes them context.
func Tools(s *Service) []tools.Tool {
	return []tools.Tool{
		// Read-only: it shows the fleets.
		tools.New("get_fleet_status", "Show the fleet you belong to (or start) and every running fleet: each task's id, pane, role, status "+
			"(waiting, running, completed, failed, aborted, blocked and why), goal id and report, the concurrency cap and the queue.",
			tools.ReadOnly, func(ctx context.Context, call tools.Call, p statusParams) (tools.Result, error) {
				return s.statusResult(ctx, callerOf(call), p.FleetID)
			}).Parallel(),
		// write_local: it starts an agent on this machine, under the caller's own policy.
		tools.New("assign_task", "Hand a task to the agent in another pane: it starts as a goal there (or queues behind its dependencies), "+
			"with your risk ceiling and sandbox, never more. Returns the task id; follow it with wait_for_agent or get_fleet_status.",
			tools.WriteLocal, func(ctx context.Context, call tools.Call, p assignParams) (tools.Result, error) {
				t, f, err := s.Assign(ctx, callerOf(call), Assignment{PaneID: p.PaneID, Description: p.Description,
					Priority: p.Priority, DependsOn: p.DependsOn, Criterion: p.Criterion.keys()})
				if err != nil {
					return tools.Errorf("assign_task: %v", err), nil
				}
				return tools.JSONResult(map[string]any{"task_id": t.ID, "fleet_id": f.ID, "pane_id": t.Pane, "status": t.Status,
					"goal_id": t.GoalID, "risk_ceiling": t.Policy.Ceiling.String(), "sandbox": t.Policy.SandboxDir})
			}),
		// write_local: like assign_task, once per pane.
		tools.New("create_goal", "Start one goal per pane, all in your fleet, under your risk ceiling and sandbox: the same description and criterion in each. "+
			"Returns their task ids.",
			tools.WriteLocal, func(ctx context.Context, call tools.Call, p createGoalParams) (tools.Result, error) {
				if len(p.PaneIDs) == 0 {
					return tools.Errorf("create_goal: pane_ids: name at least one pane"), nil
				}
				var started []map[string]any
				for _, pane := range p.PaneIDs {
					t, f, err := s.Assign(ctx, callerOf(call), Assignment{PaneID: pane, Description: p.Description, Criterion: p.Criterion.keys()})
					if err != nil {
						return tools.Errorf("create_goal: pane %s: %v (started before it: %v)", pane, err, started), nil
					}
					started = append(started, map[string]any{"task_id": t.ID, "fleet_id": f.ID, "pane_id": pane, "status": t.Status, "goal_id": t.GoalID})
				}
				return tools.JSONResult(started)
			}),
		// Read-only: it only waits.
		tools.New("wait_for_agent", "Wait until the goal of the agent in a pane ends (at most 30 minutes), then get its status and report.",
			tools.ReadOnly, func(ctx context.Context, call tools.Call, p waitForAgentParams) (tools.Result, error) {
				timeout := DefaultWaitForAgent
				if p.TimeoutS > 0 {
					timeout = time.Duration(p.TimeoutS) * time.Second
				}
				if timeout > MaxWaitForAgent {
					return tools.Errorf("wait_for_agent: timeout_s %d is over 1800 (30 minutes); wait in parts", p.TimeoutS), nil
				}
				g, ok, err := s.WaitForPane(ctx, p.PaneID, timeout)
				if err != nil {
					return tools.Result{}, err
				}
				if !ok {
					return tools.Errorf("wait_for_agent: no agent works in pane %s now: nothing to wait for", p.PaneID), nil
				}
				if !g.Status.Finished() {
					return tools.JSONResult(map[string]any{"pane_id": p.PaneID, "goal_id": g.ID, "status": g.Status, "ended": false,
						"message": fmt.Sprintf("still %s after %s", g.Status, timeout)})
				}
				return tools.JSONResult(map[string]any{"pane_id": p.PaneID, "goal_id": g.ID, "status": g.Status, "ended": true, "report": s.report(g)})
			}),
		// write_local: it changes what another agent reads.
		tools.New("share_context", "Pass context to the agent in another pane, or with broadcast to every agent of your fleet: it reads it on its next turn (or, if its task has not started, in its first prompt).",
			tools.WriteLocal, func(ctx context.Context, call tools.Call, p shareParams) (tools.Result, error) {
				return answer("share_context")(s.Share(ctx, callerOf(call), p.ToPaneID, p.Context, p.Broadcast))
			}),
		// write_local: it changes what another agent is told it is for.
		tools.New("set_agent_role", "Give the agent in a pane a role (Builder, Monitor, Tester, Deployer, Reviewer, General or your own) and a purpose. "+
			"It is told on its next turn, and each task it starts begins with it.",
			tools.WriteLocal, func(ctx context.Context, call tools.Call, p roleParams) (tools.Result, error) {
				r, err := s.SetRole(ctx, callerOf(call), p.PaneID, p.Role, p.Purpose)
				if err != nil {
					return tools.Errorf("set_agent_role: %v", err), nil
				}
				return tools.JSONResult(map[string]any{"pane_id": r.PaneID, "role": r.Role, "purpose": r.Purpose})
			}),
		// Read-only: like claim_complete, it only asks for the task's own verification.
		tools.New("complete_task", "Say your fleet task is done. Like claim_complete, the claim is verified against your task's criterion; "+
			"only when it passes does the task complete and its dependants start.",
			tools.ReadOnly, func(ctx context.Context, call tools.Call, p completeTaskParams) (tools.Result, error) {
				gc, _ := tools.GoalFrom(ctx)
				return answer("complete_task")(s.CompleteTask(ctx, callerOf(call), gc, p.TaskID, p.Summary))
			}),
		// write_local: it can stop another agent's goal (one the caller assigned).
		tools.New("fail_task", "End a fleet task as failed with a reason: your own (you cannot finish it) or one you assigned. "+
			"The tasks that depend on it are blocked.",
			tools.WriteLocal, func(ctx context.Context, call tools.Call, p failTaskParams) (tools.Result, error) {
				gc, _ := tools.GoalFrom(ctx)
				return answer("fail_task")(s.FailTask(ctx, callerOf(call), gc, p.TaskID, p.Reason))
			}),
		// Read-only: it only waits.
		tools.New("wait", "Wait a while (at most 120 s), e.g. before checking get_fleet_status again.",
			tools.ReadOnly, func(ctx context.Context, call tools.Call, p waitParams) (tools.Result, error) {
				d := time.Duration(p.MS) * time.Millisecond
				if d <= 0 || d > MaxWait {
					return tools.Errorf("wait: ms must be from 1 to 120000, got %d", p.MS), nil
				}
				select {
				case <-time.After(d):
					return tools.Result{Text: fmt.Sprintf("waited %s", d)}, nil
				case <-ctx.Done():
					return tools.Result{}, ctx.Err()
				}
			}),
	}
}

// answer turns a service's answer to a tool into its result: the message, or its error,
// named by the tool, for the model to act on.
func answer(tool string) func(msg string, err error) (tools.Result, error) {
	return func(msg string, err error) (tools.Result, error) {
		if err != nil {
			return tools.Errorf("%s: %v", tool, err), nil
		}
		return tools.Result{Text: msg}, nil
	}
}

// taskView is a task as get_fleet_status shows it.
type taskView struct {
	ID        string   `json:"id"`
	Pane      string   `json:"pane"`
	Role      string   `json:"role,omitempty"`
	Status    string   `json:"status"`
	Priority  int      `json:"priority,omitempty"`
	DependsOn []string `json:"depends_on,omitempty"`
	GoalID    string   `json:"goal_id,omitempty"`
	Reason    string   `json:"blocked_because,omitempty"`
	Report    string   `json:"report,omitempty"`
	Goal      string   `json:"goal"`
}

type fleetView struct {
	ID          string     `json:"id"`
	Name        string     `json:"name"`
	Status      string     `json:"status"`
	Concurrency int        `json:"concurrency"`
	Running     int        `json:"running"`
	Queue       []string   `json:"queue"` // ready tasks in the order they start
	Tasks       []taskView `json:"tasks"`
}

// agentView is an agent as get_fleet_status shows it: short, for the model.
type agentView struct {
	PaneID   string    `json:"pane_id"`
	Role     string    `json:"role,omitempty"`
	Purpose  string    `json:"purpose,omitempty"`
	Status   string    `json:"status"`
	Current  string    `json:"current_task,omitempty"`
	Queue    []string  `json:"queue,omitempty"`
	Done     int       `json:"tasks_ended"`
	Progress *Progress `json:"progress,omitempty"`
	Inbox    int       `json:"inbox_undelivered,omitempty"`
}

func viewAgent(a Agent) agentView {
	v := agentView{PaneID: a.PaneID, Role: a.Role, Purpose: a.Purpose, Status: string(a.Status), Done: len(a.History), Progress: a.Progress}
	if a.CurrentTask != nil {
		v.Current = a.CurrentTask.FleetID + "/" + a.CurrentTask.TaskID
	}
	for _, q := range a.Queue {
		v.Queue = append(v.Queue, q.FleetID+"/"+q.TaskID)
	}
	for _, it := range a.Inbox {
		if !it.Delivered {
			v.Inbox++
		}
	}
	return v
}

func (s *Service) statusResult(ctx context.Context, c Caller, id string) (tools.Result, error) {
	fs, err := s.List(ctx)
	if err != nil {
		return tools.Result{}, err
	}
	s.mu.Lock()
	mine := s.fleetOf(c)
	s.mu.Unlock()
	var out []fleetView
	for _, f := range fs {
		switch {
		case id != "" && f.ID != id:
			continue
		case id == "" && f.Status != StatusRunning && (mine == nil || mine.f.ID != f.ID):
			continue
		}
		v := fleetView{ID: f.ID, Name: f.Name, Status: string(f.Status), Concurrency: f.Spec.Concurrency, Queue: s.queueOf(&f)}
		for _, t := range f.Tasks {
			if t.Status == TaskRunning {
				v.Running++
			}
			v.Tasks = append(v.Tasks, taskView{ID: t.ID, Pane: t.Pane, Role: t.Role, Status: string(t.Status), Priority: t.Priority,
				DependsOn: t.DependsOn, GoalID: t.GoalID, Reason: t.Reason, Report: t.Report, Goal: t.Goal})
		}
		out = append(out, v)
	}
	if id != "" && len(out) == 0 {
		return tools.Errorf("get_fleet_status: no fleet %s", id), nil
	}
	if out == nil {
		return tools.Result{Text: "No fleet is running. assign_task starts one."}, nil
	}
	// The agents of the panes these fleets use: role, status, current task, queue, inbox.
	panes := map[string]bool{}
	for _, v := range out {
		for _, t := range v.Tasks {
			panes[t.Pane] = true
		}
	}
	all, err := s.Agents(ctx)
	if err != nil {
		return tools.Result{}, err
	}
	var agents []agentView
	for _, a := range all {
		if panes[a.PaneID] {
			agents = append(agents, viewAgent(a))
		}
	}
	return tools.JSONResult(map[string]any{"fleets": out, "agents": agents})
}
