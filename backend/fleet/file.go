// Package fleet runs many goals as one job: a fleet is a named set of tasks, each a real goal
// of the Goal Runner in its own pane, started only once every task it depends on has
// verified complete, with those tasks' reports in its first prompt. A failed or aborted
// task blocks its dependants; a concurrency cap and a queue (priority, then age) pace the
// rest. Fleets and their tasks are stored, so a fleet survives a restart without redoing
// verified work. The orchestration tools (tools.go) let one agent hand work to others.
package fleet

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/policy"
)

// Limits of a fleet file.
const (
	DefaultConcurrency = 3
	MaxConcurrency     = 20
	MaxTasks           = 200
)

// TaskSpec is one task as the file (or assign_task) gives it.
type TaskSpec struct {
	ID      string `json:"id"`
	Goal    string `json:"goal"`
	Pane    string `json:"pane"`
	Role    string `json:"role,omitempty"`
	Persona string `json:"persona,omitempty"` // a persona id of the config dir (checked when the fleet is created)
	// Template is the pane launch template (claude, codex, shell, a config dir's templates/
	// id) the task's pane starts as when the fleet makes it; checked when the fleet is created.
	Template  string         `json:"template,omitempty"`
	Priority  int            `json:"priority,omitempty"`
	DependsOn []string       `json:"dependsOn,omitempty"`
	Criterion criterion.Spec `json:"criterion"`
	// Isolation is IsolationWorktree to give the task its own git worktree and branch ("":
	// the fleet's setting).
	Isolation string `json:"isolation,omitempty"`
	// SSH names a stored SSH server: the task's pane is a terminal on that host, so its agent
	// works there.
	SSH string `json:"ssh,omitempty"`
	// AssignedBy is who handed the task out with assign_task (a goal id, or chat:<workspace>):
	// it may end the task with fail_task.
	AssignedBy string `json:"assignedBy,omitempty"`
	// StartsPast lists the dependencies the person let the task start without (steering it
	// while it was blocked): it no longer waits for them, nor is blocked by them.
	StartsPast []string `json:"startsPast,omitempty"`
	// Policy and Settings replace the fleet's for this task: a task assigned by an agent runs
	// under its caller's (never above it). nil: the fleet's.
	Policy   *policy.Policy `json:"policy,omitempty"`
	Settings *goal.Settings `json:"settings,omitempty"`
}

// File is a fleet as its YAML file describes it.
type File struct {
	Name        string `json:"name"`
	Concurrency int    `json:"concurrency"`
	// Isolation is IsolationWorktree to give every task its own git worktree ("" none).
	Isolation string `json:"isolation,omitempty"`
	// Setup is a shell command run in each new worktree before its task starts (npm ci…).
	Setup string `json:"setup,omitempty"`
	// Copy lists untracked files and dirs of the person's checkout (.env), relative to the
	// repository's top-level dir, copied into each new worktree before setup runs.
	Copy []string `json:"copy,omitempty"`
	// Land is how the tasks' work lands on the target branch (`land:`), nil for the
	// repository's remembered choice.
	Land  *LandSpec  `json:"land,omitempty"`
	Tasks []TaskSpec `json:"tasks"`
}

// LandSpec is a fleet file's `land:`: the repository's own check run on the target with a
// task's work on it before the target moves (its test command), and rebase or merge.
type LandSpec struct {
	Check    string `json:"check,omitempty"`
	Strategy string `json:"strategy,omitempty"` // "rebase" | "merge" ("": the repository's remembered choice, else rebase)
}

// parseLand reads `land:`, a mapping of check and strategy.
func parseLand(v any) (*LandSpec, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &FieldError{Field: "land", Msg: "is a mapping: land: {check: \"make test\", strategy: rebase}"}
	}
	var l LandSpec
	for _, k := range sortedKeys(m) {
		var dst *string
		switch k {
		case "check":
			dst = &l.Check
		case "strategy":
			dst = &l.Strategy
		default:
			return nil, &FieldError{Field: "land." + k, Msg: "unknown field; land has check and strategy"}
		}
		s, err := str(m[k])
		if err != nil {
			return nil, &FieldError{Field: "land." + k, Msg: err.Error()}
		}
		*dst = strings.TrimSpace(s)
		if err := goal.CheckText(*dst, k == "check"); err != nil {
			return nil, &FieldError{Field: "land." + k, Msg: err.Error()}
		}
	}
	if l.Strategy != "" && l.Strategy != "rebase" && l.Strategy != "merge" {
		return nil, &FieldError{Field: "land.strategy", Msg: fmt.Sprintf("%q is not a strategy; use rebase (the task's commits replayed on the target) or merge (a merge commit)", l.Strategy)}
	}
	if l.Check != "" {
		if err := criterion.CheckShellSyntax(l.Check); err != nil {
			return nil, &FieldError{Field: "land.check", Msg: err.Error()}
		}
	}
	return &l, nil
}

// IsolationWorktree gives a task its own git worktree on its own branch.
const IsolationWorktree = "worktree"

func checkIsolation(v string) error {
	if v != "" && v != IsolationWorktree && v != "none" {
		return fmt.Errorf("%q is not an isolation; use worktree (each task in its own git worktree and branch) or none", v)
	}
	return nil
}

// FieldError is a mistake in a fleet file, naming the task (if any) and the field.
type FieldError struct {
	Task  string // the task's id, or its position when it has none
	Field string
	Msg   string
	// Line is the file's line the mistake is on (0: not known, e.g. a task built by a tool).
	Line int
}

func (e *FieldError) Error() string {
	at := ""
	if e.Line > 0 {
		at = fmt.Sprintf("line %d: ", e.Line)
	}
	if e.Task == "" {
		return at + e.Field + ": " + e.Msg
	}
	return fmt.Sprintf("%stask %s: %s: %s", at, e.Task, e.Field, e.Msg)
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

var fileKeys = []string{"name", "concurrency", "isolation", "setup", "copy", "land", "tasks"}

var taskKeys = append([]string{"id", "goal", "pane", "role", "persona", "template", "priority", "depends_on", "isolation", "ssh"}, criterion.Keys...)

// Parse reads and validates a fleet file. Every mistake is a *FieldError naming the task and
// the field: unknown or duplicate ids, a missing goal, two criteria on one task, a cycle.
func Parse(data []byte) (File, error) {
	f, err := parse(data)
	var fe *FieldError
	if errors.As(err, &fe) && fe.Line == 0 {
		fe.Line = lineOf(data, fe)
	}
	return f, err
}

// MaxFileBytes bounds a fleet file: 200 tasks of a long goal each fit with room to spare.
const MaxFileBytes = 4 << 20

func parse(data []byte) (File, error) {
	if len(data) > MaxFileBytes {
		return File{}, &FieldError{Field: "file", Msg: fmt.Sprintf("is %d bytes; at most %d (4 MiB)", len(data), MaxFileBytes)}
	}
	var raw map[string]any
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return File{}, &FieldError{Field: "file", Msg: "not valid YAML: " + oneLine(err.Error())}
	}
	if raw == nil {
		return File{}, &FieldError{Field: "file", Msg: "is empty: give name and tasks"}
	}
	var f File
	for _, k := range sortedKeys(raw) {
		if !slices.Contains(fileKeys, k) {
			return File{}, &FieldError{Field: k, Msg: fmt.Sprintf("unknown field; a fleet file has %s", strings.Join(fileKeys, ", "))}
		}
	}
	name, err := str(raw["name"])
	if err != nil {
		return File{}, &FieldError{Field: "name", Msg: err.Error()}
	}
	f.Name = strings.TrimSpace(name)
	if f.Name == "" {
		return File{}, &FieldError{Field: "name", Msg: "must not be empty: name the fleet"}
	}
	if err := goal.CheckText(f.Name, false); err != nil {
		return File{}, &FieldError{Field: "name", Msg: err.Error()}
	}
	f.Concurrency = DefaultConcurrency
	if v, ok := raw["concurrency"]; ok {
		n, err := integer(v)
		if err != nil || n < 1 || n > MaxConcurrency {
			return File{}, &FieldError{Field: "concurrency", Msg: fmt.Sprintf("must be a whole number from 1 to %d (how many tasks run at once; default %d)", MaxConcurrency, DefaultConcurrency)}
		}
		f.Concurrency = n
	}
	for _, fld := range []struct {
		key string
		dst *string
	}{{"isolation", &f.Isolation}, {"setup", &f.Setup}} {
		v, err := str(raw[fld.key])
		if err != nil {
			return File{}, &FieldError{Field: fld.key, Msg: err.Error()}
		}
		*fld.dst = strings.TrimSpace(v)
		if err := goal.CheckText(*fld.dst, fld.key == "setup"); err != nil {
			return File{}, &FieldError{Field: fld.key, Msg: err.Error()}
		}
	}
	if err := checkIsolation(f.Isolation); err != nil {
		return File{}, &FieldError{Field: "isolation", Msg: err.Error()}
	}
	if f.Land, err = parseLand(raw["land"]); err != nil {
		return File{}, err
	}
	if f.Copy, err = parseCopy(data, raw["copy"]); err != nil {
		return File{}, err
	}
	if (f.Setup != "" || f.Copy != nil) && f.Isolation != IsolationWorktree {
		isolated := false
		for _, item := range asList(raw["tasks"]) {
			if m, ok := item.(map[string]any); ok && m["isolation"] == IsolationWorktree {
				isolated = true
			}
		}
		if !isolated && f.Setup != "" {
			return File{}, &FieldError{Field: "setup", Msg: "runs in each new worktree, and no task has isolation: worktree; add it or remove setup"}
		}
		if !isolated {
			return File{}, &FieldError{Field: "copy", Msg: "copies files into each new worktree, and no task has isolation: worktree; add it or remove copy"}
		}
	}
	list, ok := raw["tasks"].([]any)
	if !ok || len(list) == 0 {
		return File{}, &FieldError{Field: "tasks", Msg: "give a list of tasks, each with an id and a goal"}
	}
	if len(list) > MaxTasks {
		return File{}, &FieldError{Field: "tasks", Msg: fmt.Sprintf("%d tasks; at most %d", len(list), MaxTasks)}
	}
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return File{}, &FieldError{Task: fmt.Sprintf("#%d", i+1), Field: "tasks", Msg: "a task is a mapping with id, goal and a criterion"}
		}
		t, err := parseTask(i, m)
		if err != nil {
			return File{}, err
		}
		f.Tasks = append(f.Tasks, t)
	}
	if err := Validate(f.Tasks); err != nil {
		return File{}, err
	}
	return f, nil
}

func parseTask(i int, m map[string]any) (TaskSpec, error) {
	var t TaskSpec
	label := fmt.Sprintf("#%d", i+1)
	id, err := str(m["id"])
	if err != nil {
		return t, &FieldError{Task: label, Field: "id", Msg: err.Error()}
	}
	t.ID = strings.TrimSpace(id)
	if t.ID != "" {
		label = strconv.Quote(t.ID)
	}
	fe := func(field, format string, args ...any) error {
		return &FieldError{Task: label, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	for _, k := range sortedKeys(m) {
		if !slices.Contains(taskKeys, k) {
			return t, fe(k, "unknown field; a task has %s", strings.Join(taskKeys, ", "))
		}
	}
	if t.ID == "" {
		return t, fe("id", "every task needs an id (letters, digits, - _ .), for depends_on to name it")
	}
	if !idPattern.MatchString(t.ID) {
		return t, fe("id", "use letters, digits, - _ . (at most 64, starting with a letter or digit)")
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"goal", &t.Goal}, {"pane", &t.Pane}, {"role", &t.Role}, {"persona", &t.Persona}, {"template", &t.Template}, {"isolation", &t.Isolation}, {"ssh", &t.SSH}} {
		v, err := str(m[f.key])
		if err != nil {
			return t, fe(f.key, "%v", err)
		}
		*f.dst = strings.TrimSpace(v)
		if err := goal.CheckText(*f.dst, f.key == "goal"); err != nil {
			return t, fe(f.key, "%v", err)
		}
	}
	if t.Goal == "" {
		return t, fe("goal", "must not be empty: say what the task should achieve")
	}
	if err := checkIsolation(t.Isolation); err != nil {
		return t, fe("isolation", "%v", err)
	}
	if t.Role != "" {
		role, err := NormalizeRole(t.Role)
		if err != nil {
			return t, fe("role", "%v", err)
		}
		t.Role = role
	}
	if t.Template != "" && !idPattern.MatchString(t.Template) {
		return t, fe("template", "a pane template id such as claude, codex or shell (letters, digits, - _ .)")
	}
	if t.Pane == "" {
		t.Pane = t.ID + "-term"
	} else if !idPattern.MatchString(t.Pane) {
		return t, fe("pane", "a pane id uses letters, digits, - _ .")
	}
	if v, ok := m["priority"]; ok {
		if t.Priority, err = integer(v); err != nil {
			return t, fe("priority", "a whole number (higher starts first when tasks queue)")
		}
	}
	if v, ok := m["depends_on"]; ok {
		if t.DependsOn, err = strList(v); err != nil {
			return t, fe("depends_on", "a list of task ids, such as [build]")
		}
	}
	var b criterion.Builder
	for _, k := range criterion.Keys {
		v, ok := m[k]
		if !ok {
			continue
		}
		s, err := scalar(v)
		if err != nil {
			return t, fe(k, "%v", err)
		}
		if err := goal.CheckText(s, true); err != nil {
			return t, fe(k, "%v", err)
		}
		if err := b.Set(k, s); err != nil {
			return t, fe(k, "%v", err)
		}
		if b.Kinds() > 1 {
			given := b.Given()
			return t, fe(given[len(given)-1], "conflicts with %s: a task has one criterion", given[0])
		}
	}
	t.Criterion, _ = b.Spec()
	if b.Kinds() == 0 {
		for _, k := range []string{criterion.KeyExitCode, criterion.KeyCheckTimeout, criterion.KeyThreshold, criterion.KeyJSONSource, criterion.KeyVisualPane} {
			if _, ok := m[k]; ok {
				return t, fe(k, "qualifies a check the task does not have: add check_shell, check_question, check_json or check_visual, or remove it")
			}
		}
		t.Criterion = DefaultCriterion(t.Goal)
	}
	// Kinds that need a model or a browser are checked in full when the fleet is created.
	switch c := t.Criterion; c.Kind {
	case criterion.KindModelQuestion, criterion.KindVisual:
		if strings.TrimSpace(c.Question) == "" {
			return t, fe(b.Given()[0], "ask a question the judge answers yes or no")
		}
	default:
		if _, err := criterion.Parse(c, criterion.Deps{}); err != nil {
			return t, fe(criterionField(err), "%v", err)
		}
	}
	return t, nil
}

// DefaultCriterion is a task's criterion when it names none: a strict judge question on the
// evidence.
func DefaultCriterion(goalText string) criterion.Spec {
	return criterion.Spec{Kind: criterion.KindModelQuestion, Threshold: criterion.ThresholdHighConfidence,
		Question: "Judging strictly by the evidence, was this task achieved? TASK: " + goalText}
}

// criterionField maps a criterion field error to the file's key.
func criterionField(err error) string {
	fe, ok := err.(*criterion.FieldError)
	if !ok {
		return "criterion"
	}
	switch strings.TrimPrefix(fe.Field, "criterion.") {
	case "command":
		return criterion.KeyCheckShell
	case "exitCode":
		return criterion.KeyExitCode
	case "timeout":
		return criterion.KeyCheckTimeout
	case "question":
		return criterion.KeyCheckQuestion
	case "threshold":
		return criterion.KeyThreshold
	case "expr":
		return criterion.KeyCheckJSON
	case "source":
		return criterion.KeyJSONSource
	case "paneId":
		return criterion.KeyVisualPane
	}
	return "criterion"
}

// Validate checks the tasks as one graph: unique ids, dependencies that exist, no cycle.
func Validate(tasks []TaskSpec) error {
	byID := map[string]int{}
	for i, t := range tasks {
		if _, dup := byID[t.ID]; dup {
			return &FieldError{Task: strconv.Quote(t.ID), Field: "id", Msg: "another task has this id; ids must be unique"}
		}
		byID[t.ID] = i
	}
	for _, t := range tasks {
		seen := map[string]bool{}
		for _, d := range t.DependsOn {
			switch _, ok := byID[d]; {
			case d == t.ID:
				return &FieldError{Task: strconv.Quote(t.ID), Field: "depends_on", Msg: "a task cannot depend on itself"}
			case !ok:
				return &FieldError{Task: strconv.Quote(t.ID), Field: "depends_on", Msg: fmt.Sprintf("no task has id %q", d)}
			case seen[d]:
				return &FieldError{Task: strconv.Quote(t.ID), Field: "depends_on", Msg: fmt.Sprintf("%q is listed twice", d)}
			}
			seen[d] = true
		}
	}
	// Depth-first search; a task met again while on the path closes a cycle.
	const (
		unseen = iota
		onPath
		done
	)
	state := make([]int, len(tasks))
	var path []string
	var visit func(i int) error
	visit = func(i int) error {
		state[i] = onPath
		path = append(path, tasks[i].ID)
		for _, d := range tasks[i].DependsOn {
			j := byID[d]
			switch state[j] {
			case onPath:
				start := slices.Index(path, d)
				cycle := append(slices.Clone(path[start:]), d)
				return &FieldError{Task: strconv.Quote(tasks[i].ID), Field: "depends_on",
					Msg: "a dependency cycle: " + strings.Join(cycle, " → ") + "; no task of it could ever start"}
			case unseen:
				if err := visit(j); err != nil {
					return err
				}
			}
		}
		path = path[:len(path)-1]
		state[i] = done
		return nil
	}
	for i := range tasks {
		if state[i] == unseen {
			if err := visit(i); err != nil {
				return err
			}
		}
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func str(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	}
	return "", fmt.Errorf("must be text, got %v", v)
}

// scalar is a criterion key's value as its flag would take it.
func scalar(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case int, int64, uint64, float64:
		return fmt.Sprint(x), nil
	}
	return "", fmt.Errorf("must be a single value, got %v", v)
}

func integer(v any) (int, error) {
	switch x := v.(type) {
	case int:
		return x, nil
	case int64:
		return int(x), nil
	case uint64:
		return int(x), nil
	case float64:
		if x == float64(int(x)) {
			return int(x), nil
		}
	}
	return 0, fmt.Errorf("not a whole number: %v", v)
}

func strList(v any) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		if s, ok := v.(string); ok && strings.TrimSpace(s) != "" {
			return []string{strings.TrimSpace(s)}, nil
		}
		return nil, fmt.Errorf("not a list")
	}
	var out []string
	for _, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("not a list of ids")
		}
		out = append(out, strings.TrimSpace(s))
	}
	return out, nil
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
