package land

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/worktree"
)

// OnRefuse is where refused work goes.
type OnRefuse string

const (
	ToAgent  OnRefuse = "agent"  // reopened with the conflict or the failing output: "resolve and verify again"
	ToPerson OnRefuse = "person" // left as it is, refused, for the person to decide
)

// Prefs is what is remembered about landing per repository.
type Prefs struct {
	Repo     string   `json:"repo"`
	Strategy Strategy `json:"strategy"`
	Check    string   `json:"check"` // the repository's own check, used when a fleet file names none
	OnRefuse OnRefuse `json:"onRefuse"`
	// FileCheck is the fleet file's `land: check:`, which wins over Check (answered by
	// Service.Prefs, never stored).
	FileCheck string `json:"fileCheck,omitempty"`
}

// PrefsRepo stores Prefs.
type PrefsRepo interface {
	LandPrefs(ctx context.Context, repo string) (Prefs, error) // zero Prefs (with Repo) when none
	SaveLandPrefs(ctx context.Context, p Prefs) error
}

// Fleets is what landing needs of the fleets.
type Fleets interface {
	Get(ctx context.Context, id string) (fleet.Fleet, error)
	Note(ctx context.Context, fleetID, taskID string, note fleet.StoryNote, status fleet.LandStatus) (fleet.Fleet, error)
	SetWorktree(ctx context.Context, fleetID, taskID string, wt fleet.Worktree) (fleet.Fleet, error)
	Reopen(ctx context.Context, fleetID, taskID, feedback string, now bool) (fleet.Fleet, error)
}

// Service lands fleet tasks' work, and goals' run in their own worktrees.
type Service struct {
	fleets Fleets
	goals  Goals
	prefs  PrefsRepo
	// reopenNow: refused work sent back to its agent goes on at once (a door that drives
	// fleets); else it waits for `fleet resume`.
	reopenNow bool
}

// NewService returns the service; reopenNow as in Service.
func NewService(fleets Fleets, goals Goals, prefs PrefsRepo, reopenNow bool) *Service {
	return &Service{fleets: fleets, goals: goals, prefs: prefs, reopenNow: reopenNow}
}

// Args is what to land and how. Strategy, OnRefuse and Check, when given, are remembered for
// the repository.
type Args struct {
	Ref      string `json:"ref"`                // FLEET (every task, in dependency order), FLEET/TASK, or GOAL (run with its own worktree)
	Strategy string `json:"strategy,omitempty"` // "rebase" | "merge"
	OnRefuse string `json:"onRefuse,omitempty"` // "agent" | "person"
	Check    string `json:"check,omitempty"`    // the repository's check, when the fleet file has none
}

// Outcome statuses.
const (
	OutcomeLanded  = "landed"
	OutcomeRefused = "refused"
	OutcomeSkipped = "skipped" // not verified, or a dependency has not landed
	OutcomeAlready = "already" // landed before
)

// Outcome is what became of one task.
type Outcome struct {
	Ref      string  `json:"ref"`
	TaskID   string  `json:"taskId"`
	Status   string  `json:"status"`
	Commit   string  `json:"commit,omitempty"` // the target's tip with the work on it
	Detail   string  `json:"detail,omitempty"`
	SentBack bool    `json:"sentBack"` // refused and reopened with the detail for its agent
	Result   *Result `json:"result,omitempty"`
}

// Report is a landing's outcomes, in the order tried, and what it used.
type Report struct {
	Outcomes []Outcome `json:"outcomes"`
	Strategy Strategy  `json:"strategy"`
	Check    string    `json:"check"`
	OnRefuse OnRefuse  `json:"onRefuse"`
	// Note tells the person what to do next: their checkout of the target left behind, a
	// task waiting for `fleet resume`.
	Note string `json:"note,omitempty"`
}

// Refused reports whether any task was refused.
func (r Report) Refused() bool {
	return slices.ContainsFunc(r.Outcomes, func(o Outcome) bool { return o.Status == OutcomeRefused })
}

// Land lands a fleet's verified tasks in dependency order, or one task.
func (s *Service) Land(ctx context.Context, a Args) (Report, error) {
	fleetID, taskID, _ := strings.Cut(a.Ref, "/")
	if strings.TrimSpace(fleetID) == "" {
		return Report{}, &FieldError{Field: "ref", Msg: "name a fleet (every verified task lands) or FLEET/TASK"}
	}
	strategy, err := ParseStrategy(a.Strategy)
	if err != nil {
		return Report{}, &FieldError{Field: "strategy", Msg: err.Error()}
	}
	onRefuse := OnRefuse(a.OnRefuse)
	if onRefuse != "" && onRefuse != ToAgent && onRefuse != ToPerson {
		return Report{}, &FieldError{Field: "onRefuse", Msg: fmt.Sprintf("%q: use agent (refused work goes back to its agent to resolve and verify again) or person", a.OnRefuse)}
	}
	f, err := s.fleets.Get(ctx, fleetID)
	if errors.Is(err, fleet.ErrNotFound) && taskID == "" && s.goals != nil {
		return s.landGoal(ctx, fleetID, strategy, onRefuse, a.Check)
	}
	if err != nil {
		return Report{}, err
	}
	order, err := landOrder(f, taskID)
	if err != nil {
		return Report{}, err
	}
	prefs, err := s.remember(ctx, order[0].Worktree.Repo, strategy, onRefuse, a.Check)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Strategy: first(Strategy(f.Spec.LandStrategy), strategy, prefs.Strategy, Rebase),
		Check: first(f.Spec.LandCheck, prefs.Check), OnRefuse: first(prefs.OnRefuse, ToAgent)}
	if strategy != "" {
		rep.Strategy = strategy // the person's choice now wins over the file's
	}
	landed := map[string]bool{}
	for _, t := range f.Tasks {
		if t.Review != nil && t.Review.Land == fleet.LandLanded {
			landed[t.ID] = true
		}
	}
	var checkedOut string
	for _, t := range order {
		o := s.landTask(ctx, f, t, landed, rep)
		if o.Result != nil && o.Result.CheckedOut != "" && o.Status == OutcomeLanded {
			checkedOut = o.Result.CheckedOut
		}
		if o.Status == OutcomeLanded || o.Status == OutcomeAlready {
			landed[t.ID] = true
		}
		rep.Outcomes = append(rep.Outcomes, o)
	}
	rep.Note = nextSteps(rep, f, checkedOut, s.reopenNow)
	return rep, nil
}

// remember returns the repository's landing choices, with those given now (remembered).
func (s *Service) remember(ctx context.Context, repo string, strategy Strategy, onRefuse OnRefuse, check string) (Prefs, error) {
	prefs, err := s.prefs.LandPrefs(ctx, repo)
	if err != nil {
		return Prefs{}, err
	}
	prefs.Repo = repo
	changed := false
	if strategy != "" {
		changed, prefs.Strategy = prefs.Strategy != strategy, strategy
	}
	if onRefuse != "" {
		changed, prefs.OnRefuse = changed || prefs.OnRefuse != onRefuse, onRefuse
	}
	if c := strings.TrimSpace(check); c != "" {
		if _, err := repoCheck(c); err != nil {
			return Prefs{}, &FieldError{Field: "check", Msg: err.Error()}
		}
		changed, prefs.Check = changed || prefs.Check != c, c
	}
	if changed {
		if err := s.prefs.SaveLandPrefs(ctx, prefs); err != nil {
			return Prefs{}, err
		}
	}
	return prefs, nil
}

// Prefs is what is remembered about landing in the repository of a fleet (FLEET or
// FLEET/TASK) or of a goal run in its own worktree, with a fleet file's land: choices.
func (s *Service) Prefs(ctx context.Context, ref string) (Prefs, error) {
	fleetID, taskID, _ := strings.Cut(ref, "/")
	if fleetID == "" {
		return Prefs{}, &FieldError{Field: "ref", Msg: "name a fleet or FLEET/TASK"}
	}
	f, err := s.fleets.Get(ctx, fleetID)
	if errors.Is(err, fleet.ErrNotFound) && taskID == "" && s.goals != nil {
		g, gerr := s.goals.Get(ctx, fleetID)
		if gerr != nil || g.Spec.Worktree == nil {
			return Prefs{}, err
		}
		return s.prefsOf(ctx, g.Spec.Worktree.Repo, "", "")
	}
	if err != nil {
		return Prefs{}, err
	}
	order, err := landOrder(f, taskID)
	if err != nil {
		return Prefs{}, err
	}
	return s.prefsOf(ctx, order[0].Worktree.Repo, Strategy(f.Spec.LandStrategy), f.Spec.LandCheck)
}

// prefsOf is a repository's remembered choices, a fleet file's strategy over them, and the
// defaults where nothing was chosen.
func (s *Service) prefsOf(ctx context.Context, repo string, fileStrategy Strategy, fileCheck string) (Prefs, error) {
	p, err := s.prefs.LandPrefs(ctx, repo)
	if err != nil {
		return Prefs{}, err
	}
	p.Repo, p.FileCheck = repo, fileCheck
	p.Strategy = first(fileStrategy, p.Strategy, Rebase)
	p.OnRefuse = first(p.OnRefuse, ToAgent)
	return p, nil
}

// landTask lands one task on top of what landed before it.
func (s *Service) landTask(ctx context.Context, f fleet.Fleet, t fleet.Task, landed map[string]bool, rep Report) Outcome {
	o := Outcome{Ref: f.ID + "/" + t.ID, TaskID: t.ID}
	if landed[t.ID] {
		o.Status, o.Detail = OutcomeAlready, "its work landed before"
		if t.Review != nil {
			o.Commit = t.Review.LandCommit
		}
		return o
	}
	if t.Status != fleet.TaskCompleted {
		o.Status, o.Detail = OutcomeSkipped, fmt.Sprintf("it is %s; only work that verified lands", t.Status)
		return o
	}
	for _, d := range t.DependsOn {
		if dt, ok := f.Task(d); ok && dt.Worktree != nil && !landed[d] {
			o.Status, o.Detail = OutcomeSkipped, fmt.Sprintf("it depends on task %s, whose work has not landed: it lands after %s", d, d)
			return o
		}
	}
	wt := *t.Worktree
	msg := fmt.Sprintf("Land task %s of fleet %s\n\n%s", t.ID, f.Name, firstLine(t.Goal))
	o, failed := attempt(ctx, o, wt, first(wt.Target, f.Spec.Target), rep, f.Spec.Setup, t.Criterion, msg)
	if o.Status == OutcomeRefused {
		return s.refuse(ctx, f, t, o, rep, failed)
	}
	if _, err := s.fleets.Note(ctx, f.ID, t.ID, fleet.StoryNote{Kind: "landed", Text: o.Detail, Commit: o.Commit}, fleet.LandLanded); err != nil {
		o.Detail += " (its story could not be written: " + err.Error() + ")"
	}
	if err := s.removeLanded(ctx, wt, func(w worktree.Worktree) error {
		_, err := s.fleets.SetWorktree(ctx, f.ID, t.ID, w)
		return err
	}); err != nil {
		o.Detail += "; its worktree was kept: " + err.Error()
	}
	return o
}

// attempt lands one piece of work's branch with its criterion and the repository's check:
// the outcome is landed (or already), or refused with why; failed names a check that failed.
func attempt(ctx context.Context, o Outcome, wt worktree.Worktree, target string, rep Report, setup string, crit criterion.Spec, message string) (Outcome, string) {
	refused := func(detail string, res *Result) (Outcome, string) {
		o.Status, o.Detail, o.Result = OutcomeRefused, detail, res
		if res != nil {
			return o, res.Failed
		}
		return o, ""
	}
	req := Request{Repo: wt.Repo, Target: target, Branch: wt.Branch, Strategy: rep.Strategy, Setup: setup, Message: message}
	if rel, err := filepath.Rel(wt.Dir, wt.WorkDir); err == nil && !strings.HasPrefix(rel, "..") {
		req.SubDir = rel
	}
	check, note, err := criterionCheck(crit)
	if err != nil {
		return refused(err.Error(), nil)
	}
	if check != nil {
		req.Checks = append(req.Checks, *check)
	}
	if rep.Check != "" {
		rc, err := repoCheck(rep.Check)
		if err != nil {
			return refused(err.Error(), nil)
		}
		req.Checks = append(req.Checks, rc)
	}
	res, err := Land(ctx, req)
	switch {
	case err != nil:
		return refused("landing could not run: "+err.Error(), &res)
	case res.Conflict != nil:
		return refused(fmt.Sprintf("replaying branch %s onto %s (%s) conflicts in %s. Nothing landed.",
			wt.Branch, target, rep.Strategy, strings.Join(res.Conflict, ", ")), &res)
	case res.Failed != "":
		return refused(fmt.Sprintf("on %s with this work on it (%s), %s failed. Nothing landed. Its output:\n%s",
			target, short(res.Old), res.Failed, strings.TrimSpace(res.Detail)), &res)
	}
	o.Result, o.Status, o.Commit = &res, OutcomeLanded, res.New
	if res.Already {
		o.Status, o.Detail = OutcomeAlready, "its work is on "+target+" already"
		return o, ""
	}
	o.Detail = fmt.Sprintf("landed on %s at %s (%s), verified there: %s", target, short(res.New), rep.Strategy, strings.Join(res.Passed, "; "))
	if len(res.Passed) == 0 {
		o.Detail = fmt.Sprintf("landed on %s at %s (%s); no check to run on it", target, short(res.New), rep.Strategy)
	}
	if note != "" {
		o.Detail += "; " + note
	}
	return o, ""
}

// sendBackText is what refused work's agent is told.
func sendBackText(detail, failed string) string {
	what := "Your work verified on its own branch, but it does not land: " + detail
	if failed != "" {
		what += "\n\nMake it pass there too: the target now has the work that landed before yours."
	}
	return what + "\nResolve this in your worktree and verify again; it lands only once it verifies on top of the target."
}

// refuse records a refusal in the task's story and, if the person chose so, sends it back
// to its agent with the detail.
func (s *Service) refuse(ctx context.Context, f fleet.Fleet, t fleet.Task, o Outcome, rep Report, failed string) Outcome {
	if _, err := s.fleets.Note(ctx, f.ID, t.ID, fleet.StoryNote{Kind: "refused", Text: o.Detail}, fleet.LandRefused); err != nil {
		o.Detail += "\n(its story could not be written: " + err.Error() + ")"
	}
	if rep.OnRefuse == ToPerson {
		return o
	}
	if _, err := s.fleets.Reopen(ctx, f.ID, t.ID, sendBackText(o.Detail, failed), s.reopenNow); err != nil {
		o.Detail += "\n(it could not be sent back to its agent: " + err.Error() + ")"
		return o
	}
	o.SentBack = true
	return o
}

// removeLanded removes landed work's worktree and branch: its work is on the target now.
// The record (saved by save) keeps the branch's last commit, so its changes can still be shown.
func (s *Service) removeLanded(ctx context.Context, wt worktree.Worktree, save func(worktree.Worktree) error) error {
	if !wt.Pruned {
		if _, err := worktree.Git(ctx, wt.Repo, "worktree", "remove", "--force", wt.Dir); err != nil {
			return err
		}
	}
	if _, err := worktree.Git(ctx, wt.Repo, "branch", "-D", wt.Branch); err != nil {
		return err
	}
	wt.Pruned, wt.SetupDone = true, false
	return save(wt)
}

// landOrder is the tasks to land: the one named, or every task of the fleet with a branch,
// dependencies first (then in file order).
func landOrder(f fleet.Fleet, taskID string) ([]fleet.Task, error) {
	if taskID != "" {
		t, ok := f.Task(taskID)
		if !ok {
			return nil, &FieldError{Field: "ref", Msg: fmt.Sprintf("fleet %s has no task %q", f.ID, taskID)}
		}
		if t.Worktree == nil {
			return nil, &FieldError{Field: "ref", Msg: fmt.Sprintf("task %s of fleet %s ran without a worktree, so it has no branch to land: its changes are in the working dir already", taskID, f.ID)}
		}
		return []fleet.Task{*t}, nil
	}
	var out []fleet.Task
	placed := map[string]bool{}
	var visit func(t fleet.Task)
	visit = func(t fleet.Task) {
		if placed[t.ID] {
			return
		}
		placed[t.ID] = true
		for _, d := range t.DependsOn {
			if dt, ok := f.Task(d); ok {
				visit(*dt)
			}
		}
		if t.Worktree != nil {
			out = append(out, t)
		}
	}
	for _, t := range f.Tasks {
		visit(t)
	}
	if len(out) == 0 {
		return nil, &FieldError{Field: "ref", Msg: fmt.Sprintf("fleet %s has no task with a branch to land: its tasks ran without isolation: worktree", f.ID)}
	}
	return out, nil
}

// nextSteps is what the person should know after a landing.
func nextSteps(rep Report, f fleet.Fleet, checkedOut string, reopenNow bool) string {
	var notes []string
	if checkedOut != "" {
		target := ""
		for _, o := range rep.Outcomes {
			if o.Status == OutcomeLanded {
				t, _ := f.Task(o.TaskID)
				target = first(t.Worktree.Target, f.Spec.Target)
			}
		}
		notes = append(notes, checkoutNote(checkedOut, target))
	}
	sent := 0
	for _, o := range rep.Outcomes {
		if o.SentBack {
			sent++
		}
	}
	if sent > 0 && !reopenNow {
		notes = append(notes, fmt.Sprintf("%d refused task(s) went back to their agents: run `clusterspace fleet resume %s` to let them resolve and verify again, then land again.", sent, f.ID))
	}
	return strings.Join(notes, "\n")
}

// checkoutNote tells the person whose checkout has the target that its files stayed, and how
// to bring them forward.
func checkoutNote(checkedOut, target string) string {
	note := fmt.Sprintf("%s is checked out at %s: its files, index and your uncommitted work were left as they were, so git there now shows the landed work as undone.", target, checkedOut)
	if base := CheckoutBase(context.Background(), checkedOut, target); base != "" {
		return note + fmt.Sprintf(" To bring the files forward, keeping your uncommitted changes: git -C %s read-tree -m -u %s %s", checkedOut, short(base), target)
	}
	return note + " Bring the files forward as you would after a pull (your index has staged changes, so no single command is safe to suggest)."
}

// FieldError is a landing asked for wrongly, naming the argument.
type FieldError struct{ Field, Msg string }

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func first[T comparable](vs ...T) T {
	var zero T
	for _, v := range vs {
		if v != zero {
			return v
		}
	}
	return zero
}

func short(sha string) string {
	if len(sha) > 10 {
		return sha[:10]
	}
	return sha
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
