package fleet

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Roles are the built-in agent roles; any other name that reads as a role is the user's own.
var Roles = []string{"Builder", "Monitor", "Tester", "Deployer", "Reviewer", "General"}

// Limits of an agent's record.
const (
	// MaxInbox is how many shared-context items an agent keeps: the undelivered ones always,
	// then the newest delivered ones, for its card.
	MaxInbox = 20
	// MaxHistory is how many ended tasks an agent's card lists, newest first.
	MaxHistory = 20
	// maxPurpose bounds a purpose: it goes into every task prompt in the pane.
	maxPurpose = 2000
)

var rolePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9 _-]{0,39}$`)

// NormalizeRole returns a built-in role's canonical spelling (tester → Tester), or a
// user-defined role as given; a name that cannot be a role is an error saying what can.
func NormalizeRole(role string) (string, error) {
	role = strings.TrimSpace(role)
	for _, r := range Roles {
		if strings.EqualFold(r, role) {
			return r, nil
		}
	}
	if !rolePattern.MatchString(role) {
		return "", fmt.Errorf("%q is not a role: use %s, or a name of your own (a letter, then up to 39 letters, digits, spaces, - or _)",
			role, strings.Join(Roles, ", "))
	}
	return role, nil
}

// InboxItem is context another agent shared with a pane's agent.
type InboxItem struct {
	From string    `json:"from"`
	Text string    `json:"text"`
	At   time.Time `json:"at"`
	// Delivered: the agent has it (its running goal got it on its next turn, or a task
	// started with it in its first prompt). Undelivered items wait for the next task there.
	Delivered bool `json:"delivered"`
}

// AgentRecord is what is stored of a pane's agent; the rest of Agent is read from the fleets.
type AgentRecord struct {
	PaneID    string      `json:"paneId"`
	Role      string      `json:"role"`
	Purpose   string      `json:"purpose"`
	Inbox     []InboxItem `json:"inbox"`
	UpdatedAt time.Time   `json:"updatedAt"`
}

// AgentStatus is what a pane's agent is doing.
type AgentStatus string

const (
	AgentIdle    AgentStatus = "idle"    // no task runs or waits in its pane
	AgentWorking AgentStatus = "working" // a fleet task's goal runs in its pane
	AgentWaiting AgentStatus = "waiting" // its next task waits for dependencies or a slot
	AgentBlocked AgentStatus = "blocked" // its latest task is blocked by a failed dependency
)

// AgentTask is a fleet task as an agent's card lists it.
type AgentTask struct {
	FleetID   string     `json:"fleetId"`
	FleetName string     `json:"fleetName"`
	TaskID    string     `json:"taskId"`
	Goal      string     `json:"goal"`
	Status    TaskStatus `json:"status"`
	GoalID    string     `json:"goalId,omitempty"`
	Reason    string     `json:"reason,omitempty"`
	Priority  int        `json:"priority,omitempty"`
	Branch    string     `json:"branch,omitempty"`
	// Persona is the persona id its goal works as (the goal's spec), for the current task.
	Persona string     `json:"persona,omitempty"`
	EndedAt *time.Time `json:"endedAt,omitempty"`
}

// Progress is how far an agent's current task's goal has come.
type Progress struct {
	Steps      int     `json:"steps"`
	MaxSteps   int     `json:"maxSteps,omitempty"`
	TodosDone  int     `json:"todosDone"`
	TodosTotal int     `json:"todosTotal"`
	CostUSD    float64 `json:"costUsd"`
	Tokens     int     `json:"tokens"`
	GoalStatus string  `json:"goalStatus,omitempty"`
}

// Agent is a pane's agent as the Fleet Dashboard's card and get_fleet_status show it.
type Agent struct {
	PaneID      string      `json:"paneId"`
	Role        string      `json:"role"`
	Purpose     string      `json:"purpose"`
	Status      AgentStatus `json:"status"`
	CurrentTask *AgentTask  `json:"currentTask,omitempty"`
	Queue       []AgentTask `json:"queue"`
	History     []AgentTask `json:"history"`
	Progress    *Progress   `json:"progress,omitempty"`
	Inbox       []InboxItem `json:"inbox"`
	UpdatedAt   time.Time   `json:"updatedAt"`
}

// Agents returns every pane's agent: each pane a fleet task names or that has a role or an
// inbox, with its status, current task and its progress, queue and history, by pane id.
func (s *Service) Agents(ctx context.Context) ([]Agent, error) {
	recs, err := s.repo.AgentRecords(ctx)
	if err != nil {
		return nil, err
	}
	fs, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	byPane := map[string]*Agent{}
	get := func(pane string) *Agent {
		a, ok := byPane[pane]
		if !ok {
			a = &Agent{PaneID: pane, Status: AgentIdle, Queue: []AgentTask{}, History: []AgentTask{}, Inbox: []InboxItem{}}
			byPane[pane] = a
		}
		return a
	}
	for _, r := range recs {
		a := get(r.PaneID)
		a.Role, a.Purpose, a.UpdatedAt = r.Role, r.Purpose, r.UpdatedAt
		if r.Inbox != nil {
			a.Inbox = r.Inbox
		}
	}
	// Oldest fleet first, so the newest ended task ends up first in a history.
	for i := len(fs) - 1; i >= 0; i-- {
		f := fs[i]
		for _, t := range f.Tasks {
			a := get(t.Pane)
			at := AgentTask{FleetID: f.ID, FleetName: f.Name, TaskID: t.ID, Goal: t.Goal, Status: t.Status, GoalID: t.GoalID,
				Reason: t.Reason, Priority: t.Priority, EndedAt: t.EndedAt}
			if t.Worktree != nil {
				at.Branch = t.Worktree.Branch
			}
			switch {
			case t.Status == TaskRunning:
				a.CurrentTask = &at
			case t.Status == TaskWaiting && f.Status == StatusRunning:
				a.Queue = append(a.Queue, at)
			case t.Status.Ended():
				a.History = append([]AgentTask{at}, a.History...)
			}
			if a.Role == "" && t.Role != "" {
				a.Role = t.Role
			}
		}
	}
	out := make([]Agent, 0, len(byPane))
	for _, a := range byPane {
		if len(a.History) > MaxHistory {
			a.History = a.History[:MaxHistory]
		}
		slices.SortStableFunc(a.Queue, func(x, y AgentTask) int { return y.Priority - x.Priority })
		switch {
		case a.CurrentTask != nil:
			a.Status = AgentWorking
			if g, err := s.goals.Get(ctx, a.CurrentTask.GoalID); err == nil {
				p := &Progress{Steps: g.State.Steps, MaxSteps: g.Spec.Settings.MaxSteps, CostUSD: g.State.CostUSD,
					Tokens: g.State.Usage.InputTokens + g.State.Usage.OutputTokens, GoalStatus: string(g.Status), TodosTotal: len(g.State.Todos)}
				for _, td := range g.State.Todos {
					if td.Done {
						p.TodosDone++
					}
				}
				a.Progress = p
				a.CurrentTask.Persona = g.Spec.Persona
			}
		case len(a.Queue) > 0:
			a.Status = AgentWaiting
		case len(a.History) > 0 && a.History[0].Status == TaskBlocked:
			a.Status = AgentBlocked
		}
		out = append(out, *a)
	}
	slices.SortFunc(out, func(x, y Agent) int { return strings.Compare(x.PaneID, y.PaneID) })
	return out, nil
}

// agentRecord returns the stored record of a pane's agent (a fresh one if none). Called with
// s.mu held.
func (s *Service) agentRecord(ctx context.Context, pane string) (AgentRecord, error) {
	recs, err := s.repo.AgentRecords(ctx)
	if err != nil {
		return AgentRecord{}, err
	}
	for _, r := range recs {
		if r.PaneID == pane {
			return r, nil
		}
	}
	return AgentRecord{PaneID: pane}, nil
}

func (s *Service) saveAgent(ctx context.Context, r AgentRecord) error {
	r.UpdatedAt = time.Now().UTC()
	// Keep every undelivered item, then the newest delivered ones, up to MaxInbox.
	if len(r.Inbox) > MaxInbox {
		keep := make([]bool, len(r.Inbox))
		n := 0
		for i, it := range r.Inbox {
			if !it.Delivered {
				keep[i] = true
				n++
			}
		}
		for i := len(r.Inbox) - 1; i >= 0 && n < MaxInbox; i-- {
			if !keep[i] {
				keep[i] = true
				n++
			}
		}
		var kept []InboxItem
		for i, it := range r.Inbox {
			if keep[i] {
				kept = append(kept, it)
			}
		}
		r.Inbox = kept
	}
	if err := s.repo.SaveAgent(ctx, r); err != nil {
		return err
	}
	// The dashboard's agent cards read the agents again on this.
	s.events.Publish(EventAgent, Event{Type: EventAgent, Pane: r.PaneID, At: r.UpdatedAt})
	return nil
}

// SetRole gives a pane's agent a role (built-in or the user's own) and a purpose. A goal
// working there now is told on its next turn; later tasks there start with it.
func (s *Service) SetRole(ctx context.Context, c Caller, pane, role, purpose string) (AgentRecord, error) {
	pane = strings.TrimSpace(pane)
	if pane == "" || !idPattern.MatchString(pane) {
		return AgentRecord{}, &FieldError{Field: "pane_id", Msg: "name the pane whose agent gets the role (list_panes shows them)"}
	}
	if s.opts.PaneExists != nil && !s.opts.PaneExists(pane) && !s.fleetPane(pane) {
		return AgentRecord{}, &FieldError{Field: "pane_id", Msg: fmt.Sprintf("there is no pane %s; list_panes shows the panes", pane)}
	}
	role, err := NormalizeRole(role)
	if err != nil {
		return AgentRecord{}, &FieldError{Field: "role", Msg: err.Error()}
	}
	purpose = strings.TrimSpace(purpose)
	if len(purpose) > maxPurpose {
		return AgentRecord{}, &FieldError{Field: "purpose", Msg: fmt.Sprintf("%d characters; at most %d", len(purpose), maxPurpose)}
	}
	s.mu.Lock()
	r, err := s.agentRecord(ctx, pane)
	if err == nil {
		r.Role, r.Purpose = role, purpose
		err = s.saveAgent(ctx, r)
	}
	s.mu.Unlock()
	if err != nil {
		return AgentRecord{}, err
	}
	if id, ok := s.goals.WorkingIn(pane); ok {
		// Best effort: the goal may end between the check and the delivery.
		_ = s.goals.ShareContext(ctx, id, c.label(), roleLine(role, purpose))
	}
	return r, nil
}

// fleetPane reports whether a fleet task names the pane. Takes s.mu.
func (s *Service) fleetPane(pane string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.active {
		for _, t := range l.f.Tasks {
			if t.Pane == pane {
				return true
			}
		}
	}
	return false
}

func roleLine(role, purpose string) string {
	line := "Your role in this fleet: " + role + "."
	if purpose != "" {
		line += " Your purpose: " + purpose
	}
	return line
}

// startBriefing is what a task's agent learns at its start besides the dependencies'
// reports: its role and purpose, and the context shared with its pane while no goal ran
// there (now marked delivered). A task's own role becomes the pane's. Called with s.mu held.
func (s *Service) startBriefing(ctx context.Context, t *Task) string {
	r, err := s.agentRecord(ctx, t.Pane)
	if err != nil {
		s.log.Warn("fleet: read the pane's agent", "pane", t.Pane, "err", err)
		return ""
	}
	changed := false
	if t.Role != "" && r.Role != t.Role {
		r.Role, changed = t.Role, true
	}
	var b strings.Builder
	if r.Role != "" {
		fmt.Fprintf(&b, "%s\n\n", roleLine(r.Role, r.Purpose))
	}
	for i := range r.Inbox {
		if !r.Inbox[i].Delivered {
			fmt.Fprintf(&b, "[Context shared by %s]: %s\n\n", r.Inbox[i].From, r.Inbox[i].Text)
			r.Inbox[i].Delivered, changed = true, true
		}
	}
	if changed {
		if err := s.saveAgent(ctx, r); err != nil {
			s.log.Warn("fleet: save the pane's agent", "pane", t.Pane, "err", err)
		}
	}
	return b.String()
}

// addToInbox keeps shared context with a pane's agent. Called with s.mu held.
func (s *Service) addToInbox(ctx context.Context, pane string, item InboxItem) error {
	r, err := s.agentRecord(ctx, pane)
	if err != nil {
		return err
	}
	r.Inbox = append(r.Inbox, item)
	return s.saveAgent(ctx, r)
}
