package criterion

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clusterspace/clusterspace/backend/llm"
)

// The kinds of criterion.
const (
	KindShell         = "shell"
	KindModelQuestion = "model_question"
	KindJSONPredicate = "json_predicate"
	KindManual        = "manual"
	KindVisual        = "visual"
)

// The thresholds of a model_question.
const (
	ThresholdYes            = "yes"
	ThresholdHighConfidence = "high_confidence"
)

const (
	// DefaultTimeout bounds a shell check (and a json_predicate's command): long enough for a
	// real test suite, short enough that a hung check does not eat the goal's wall clock.
	DefaultTimeout = 120 * time.Second
	// maxTimeout refuses checks longer than the runner's default wall clock (1 h): such a
	// check could never finish inside the goal it verifies.
	maxTimeout = time.Hour
)

// Spec is a criterion as the user gives it (JSON in the store and the API; CLI flags map to it).
type Spec struct {
	Kind      string   `json:"kind"`                // "shell" | "model_question" | "json_predicate" | "manual" | "visual"
	Command   string   `json:"command,omitempty"`   // shell
	ExitCode  int      `json:"exitCode,omitempty"`  // shell, default 0
	Timeout   Duration `json:"timeout,omitempty"`   // shell and json_predicate's command source, default 120s
	Question  string   `json:"question,omitempty"`  // model_question and visual
	Threshold string   `json:"threshold,omitempty"` // model_question: "yes" (default) | "high_confidence"
	Expr      string   `json:"expr,omitempty"`      // json_predicate
	Source    string   `json:"source,omitempty"`    // json_predicate: "claim" (default) | "file:PATH" | "command:CMD"
	PaneID    string   `json:"paneId,omitempty"`    // visual
	// ByModel marks a check the model wrote (assign_task, create_goal): its commands run
	// inside the goal's sandbox, never outside it. Checks the person wrote (--check-shell, a
	// fleet file) run as the person's own commands, and the goal's story says so.
	ByModel bool `json:"byModel,omitempty"`
}

// Evidence is what a verification may look at.
type Evidence struct {
	Goal       string
	Rationale  string     // the claim_complete rationale (or the critic's ACHIEVED reason)
	Steps      []string   // recent step summaries, "[i] tool(args…) → ok|err: preview"
	Screenshot *llm.Image // latest screenshot, nil if none
	WorkDir    string     // the sandbox dir if set, else the goal's working dir (absolute)
	CacheKey   string     // the goal's id, naming its conversation for the prompt cache
	// Env is added to the environment the check's commands run with (the goal's own, such
	// as a fleet task's PORT), overriding it.
	Env []string
	// Confine, when set, wraps a check's command line in the goal's sandbox and gives the
	// environment it runs with (the app's keys left out). A check that must be confined and
	// cannot be does not run: the error says why.
	Confine func(argv []string) (confined, env []string, err error)
}

// Verdict is the outcome of a verification.
type Verdict struct {
	Passed bool
	// Detail is shown to the model on failure and in events.
	Detail string
}

// Criterion is a parsed, valid success criterion.
type Criterion interface {
	Kind() string
	// Describe says in words what must hold, for the goal prompt and the UI.
	Describe() string
	// Verify checks the criterion against the evidence. The error is only for a
	// verification that could not run; a criterion that does not hold is a failed Verdict.
	Verify(ctx context.Context, ev Evidence) (Verdict, error)
}

// Deps are what some kinds need from the runner.
type Deps struct {
	Judge       llm.Provider // model_question; required for it
	JudgeVision bool         // the judge model accepts images
	// Visual is supplied later by the browser work; nil → Parse refuses kind "visual".
	Visual func(ctx context.Context, paneID, question string) (Verdict, error)
}

// FieldError is a problem with one field of a Spec.
type FieldError struct {
	Field string // "criterion.command", "criterion.expr", …
	Msg   string // what is wrong and what to do
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: "criterion." + field, Msg: fmt.Sprintf(format, args...)}
}

// Parse validates a Spec at goal start and returns its Criterion. Bad input is a *FieldError
// naming the field.
func Parse(spec Spec, deps Deps) (Criterion, error) {
	c, fe := parse(spec, deps)
	if fe != nil {
		return nil, fe
	}
	return c, nil
}

func parse(spec Spec, deps Deps) (Criterion, *FieldError) {
	switch spec.Kind {
	case KindShell:
		return parseShell(spec)
	case KindModelQuestion:
		return parseModelQuestion(spec, deps)
	case KindJSONPredicate:
		return parsePredicate(spec)
	case KindManual:
		if fe := onlyFields(spec); fe != nil {
			return nil, fe
		}
		return manual{}, nil
	case KindVisual:
		return parseVisual(spec, deps)
	case "":
		return nil, fieldErr("kind", "the goal needs a success criterion: pick a kind (%s)", kindList)
	}
	return nil, fieldErr("kind", "unknown criterion kind %q: use one of %s", spec.Kind, kindList)
}

const kindList = "shell, model_question, json_predicate, manual; visual arrives with browser panes"

// onlyFields refuses a field set on a kind that does not use it: a stray field usually means
// the user picked the wrong kind or flag, and ignoring it would verify something else.
func onlyFields(spec Spec, allowed ...string) *FieldError {
	set := []struct {
		name string
		used bool
	}{
		{"command", spec.Command != ""},
		{"exitCode", spec.ExitCode != 0},
		{"timeout", spec.Timeout != 0},
		{"question", spec.Question != ""},
		{"threshold", spec.Threshold != ""},
		{"expr", spec.Expr != ""},
		{"source", spec.Source != ""},
		{"paneId", spec.PaneID != ""},
	}
	for _, f := range set {
		if f.used && !slices.Contains(allowed, f.name) {
			return fieldErr(f.name, "%s does not apply to a %s criterion: remove it, or pick the kind it belongs to", f.name, spec.Kind)
		}
	}
	return nil
}

// checkTimeout validates a timeout and fills in the default.
func checkTimeout(d Duration) (time.Duration, *FieldError) {
	t := time.Duration(d)
	switch {
	case t < 0:
		return 0, fieldErr("timeout", "timeout %s is negative: leave it out for the default (%s) or give e.g. \"5m\"", t, DefaultTimeout)
	case t == 0:
		return DefaultTimeout, nil
	case t > maxTimeout:
		return 0, fieldErr("timeout", "timeout %s is longer than %s, the goal's default wall clock: make the check faster or split it", t, maxTimeout)
	}
	return t, nil
}

// Duration is a time.Duration that reads and writes JSON as "90s" or "2m0s", and also reads a
// number of seconds (90, 1.5).
type Duration time.Duration

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration as a string such as "2m0s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads "90s", "2m", "90" or 90 (seconds).
func (d *Duration) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		return nil
	}
	if strings.HasPrefix(s, `"`) {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	}
	return d.Set(s)
}

// Set parses a duration such as "90s", "2m" or "90" (seconds); it makes *Duration a
// flag.Value for --check-timeout.
func (d *Duration) Set(s string) error {
	s = strings.TrimSpace(s)
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		*d = Duration(secs * float64(time.Second))
		return nil
	}
	t, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("timeout %q is not a duration: write e.g. \"90s\", \"2m\" or a number of seconds", s)
	}
	*d = Duration(t)
	return nil
}

// manual accepts the claim: a person reviews the result and can re-open the goal.
type manual struct{}

const manualDetail = "manual review: the claim is accepted; re-open the goal with feedback if it is not done"

func (manual) Kind() string { return KindManual }

func (manual) Describe() string {
	return "a person reviews the result: your claim is accepted, and the goal may be re-opened with feedback"
}

func (manual) Verify(context.Context, Evidence) (Verdict, error) {
	return Verdict{Passed: true, Detail: manualDetail}, nil
}

// visual asks Deps.Visual, which judges a screenshot of a pane.
type visual struct {
	paneID, question string
	judge            func(ctx context.Context, paneID, question string) (Verdict, error)
}

func parseVisual(spec Spec, deps Deps) (Criterion, *FieldError) {
	if deps.Visual == nil {
		return nil, fieldErr("kind", "visual checks need the browser engine, and this runner has none: run the goal in the app, serve or the CLI")
	}
	if fe := onlyFields(spec, "question", "paneId"); fe != nil {
		return nil, fe
	}
	if strings.TrimSpace(spec.Question) == "" {
		return nil, fieldErr("question", "a visual check needs a yes/no question about the screen, e.g. \"Does the page show the dashboard?\"")
	}
	if strings.TrimSpace(spec.PaneID) == "" {
		return nil, fieldErr("paneId", "a visual check needs the pane to look at: give its id")
	}
	return visual{paneID: spec.PaneID, question: spec.Question, judge: deps.Visual}, nil
}

func (v visual) Kind() string { return KindVisual }

func (v visual) Describe() string {
	return fmt.Sprintf("a vision model looking at pane %s answers YES to: %q", v.paneID, v.question)
}

func (v visual) Verify(ctx context.Context, _ Evidence) (Verdict, error) {
	return v.judge(ctx, v.paneID, v.question)
}
