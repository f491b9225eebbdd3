package criterion

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/llm"
)

// verdictCase is one row of a Verify table: what goes in (a judge's reply, an expression on a
// claim, a command), and the verdict wanted.
type verdictCase[In any] struct {
	name  string // the subtest's name; In printed when empty
	in    In
	pass  bool
	exact string   // the whole detail, when set
	holds []string // parts the detail must hold
}

// checkVerdicts runs each case as a parallel subtest: run turns its In into a verdict (it
// parses a criterion and verifies it), which must pass or fail as the case wants, with the
// detail it wants.
func checkVerdicts[In any](t *testing.T, cases []verdictCase[In], run func(t *testing.T, in In) Verdict) {
	t.Helper()
	for _, tc := range cases {
		name := tc.name
		if name == "" {
			name = fmt.Sprint(tc.in)
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			v := run(t, tc.in)
			if v.Passed != tc.pass {
				t.Fatalf("%#v: Passed = %v, want %v (detail %q)", tc.in, v.Passed, tc.pass, v.Detail)
			}
			if tc.exact != "" && v.Detail != tc.exact {
				t.Errorf("detail:\n%q\nwant\n%q", v.Detail, tc.exact)
			}
			for _, want := range tc.holds {
				if !strings.Contains(v.Detail, want) {
					t.Errorf("detail lacks %q:\n%s", want, v.Detail)
				}
			}
		})
	}
}

func TestParseErrorsNameTheField(t *testing.T) {
	t.Parallel()
	_, judge := judgeRig(t, llm.KindOpenAI)
	visualFn := func(context.Context, string, string) (Verdict, error) { return Verdict{}, nil }
	tests := []struct {
		name  string
		spec  Spec
		deps  Deps
		field string
		msg   string
	}{
		{"no kind", Spec{}, Deps{}, "criterion.kind", "needs a success criterion"},
		{"unknown kind", Spec{Kind: "regex"}, Deps{}, "criterion.kind", `unknown criterion kind "regex": use one of shell, model_question, json_predicate, manual`},

		{"shell without command", Spec{Kind: KindShell}, Deps{}, "criterion.command", "needs a command"},
		{"shell blank command", Spec{Kind: KindShell, Command: "   "}, Deps{}, "criterion.command", "needs a command"},
		{"shell syntax error", Spec{Kind: KindShell, Command: "echo 'unterminated"}, Deps{}, "criterion.command", "bash cannot parse the command"},
		{"shell negative exit code", Spec{Kind: KindShell, Command: "true", ExitCode: -1}, Deps{}, "criterion.exitCode", "from 0 to 255"},
		{"shell exit code too big", Spec{Kind: KindShell, Command: "true", ExitCode: 256}, Deps{}, "criterion.exitCode", "from 0 to 255"},
		{"shell negative timeout", Spec{Kind: KindShell, Command: "true", Timeout: Duration(-time.Second)}, Deps{}, "criterion.timeout", "negative"},
		{"shell huge timeout", Spec{Kind: KindShell, Command: "true", Timeout: Duration(2 * time.Hour)}, Deps{}, "criterion.timeout", "longer than 1h0m0s"},
		{"shell with a question", Spec{Kind: KindShell, Command: "true", Question: "done?"}, Deps{}, "criterion.question", "question does not apply to a shell criterion"},

		{"question missing", Spec{Kind: KindModelQuestion}, Deps{Judge: judge}, "criterion.question", "needs a yes/no question"},
		{"question bad threshold", Spec{Kind: KindModelQuestion, Question: "done?", Threshold: "maybe"}, Deps{Judge: judge}, "criterion.threshold", `unknown threshold "maybe"`},
		{"question without judge", Spec{Kind: KindModelQuestion, Question: "done?"}, Deps{}, "criterion.kind", "needs a judge model"},
		{"question with a command", Spec{Kind: KindModelQuestion, Question: "done?", Command: "make"}, Deps{Judge: judge}, "criterion.command", "does not apply to a model_question"},

		{"predicate without expr", Spec{Kind: KindJSONPredicate}, Deps{}, "criterion.expr", "needs an expression"},
		{"predicate bad expr", Spec{Kind: KindJSONPredicate, Expr: "a ==="}, Deps{}, "criterion.expr", "does not compile"},
		{"predicate bad source", Spec{Kind: KindJSONPredicate, Expr: "a", Source: "stdin"}, Deps{}, "criterion.source", "unknown source"},

		{"manual with a command", Spec{Kind: KindManual, Command: "make"}, Deps{}, "criterion.command", "does not apply to a manual criterion"},
		{"manual with a threshold", Spec{Kind: KindManual, Threshold: "yes"}, Deps{}, "criterion.threshold", "does not apply"},

		{"visual without browser", Spec{Kind: KindVisual, Question: "shown?", PaneID: "web-1"}, Deps{}, "criterion.kind", "visual checks need the browser engine"},
		{"visual without question", Spec{Kind: KindVisual, PaneID: "web-1"}, Deps{Visual: visualFn}, "criterion.question", "needs a yes/no question"},
		{"visual without pane", Spec{Kind: KindVisual, Question: "shown?"}, Deps{Visual: visualFn}, "criterion.paneId", "needs the pane"},
		{"visual with expr", Spec{Kind: KindVisual, Question: "shown?", PaneID: "web-1", Expr: "x"}, Deps{Visual: visualFn}, "criterion.expr", "does not apply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := Parse(tt.spec, tt.deps)
			if c != nil {
				t.Errorf("Parse returned a criterion with an error")
			}
			checkFieldError(t, err, tt.field, tt.msg)
		})
	}
}

func TestParseAcceptsEveryKind(t *testing.T) {
	t.Parallel()
	_, judge := judgeRig(t, llm.KindOpenAI)
	visualFn := func(context.Context, string, string) (Verdict, error) { return Verdict{}, nil }
	deps := Deps{Judge: judge, Visual: visualFn}
	for _, spec := range []Spec{
		{Kind: KindShell, Command: "make test"},
		{Kind: KindShell, Command: "grep -q ok log", ExitCode: 1, Timeout: Duration(time.Minute)},
		{Kind: KindModelQuestion, Question: "Done?"},
		{Kind: KindModelQuestion, Question: "Done?", Threshold: ThresholdYes},
		{Kind: KindModelQuestion, Question: "Done?", Threshold: ThresholdHighConfidence},
		{Kind: KindJSONPredicate, Expr: "ok", Source: "claim"},
		{Kind: KindJSONPredicate, Expr: "ok", Source: "file:r.json"},
		{Kind: KindJSONPredicate, Expr: "ok", Source: "command:./check", Timeout: Duration(time.Minute)},
		{Kind: KindManual},
		{Kind: KindVisual, Question: "Shown?", PaneID: "web-1"},
	} {
		c, err := Parse(spec, deps)
		if err != nil {
			t.Errorf("Parse(%+v): %v", spec, err)
			continue
		}
		if c.Kind() != spec.Kind {
			t.Errorf("Kind() = %q, want %q", c.Kind(), spec.Kind)
		}
		if c.Describe() == "" {
			t.Errorf("%s: empty Describe()", spec.Kind)
		}
	}
}

func TestManualAlwaysPasses(t *testing.T) {
	t.Parallel()
	c := mustParse(t, Spec{Kind: KindManual}, Deps{})
	v := verify(t, c, Evidence{})
	want := Verdict{Passed: true, Detail: "manual review: the claim is accepted; re-open the goal with feedback if it is not done"}
	if v != want {
		t.Errorf("verdict = %+v, want %+v", v, want)
	}
}

func TestVisualGoesThroughDeps(t *testing.T) {
	t.Parallel()
	var gotPane, gotQuestion string
	deps := Deps{Visual: func(_ context.Context, paneID, question string) (Verdict, error) {
		gotPane, gotQuestion = paneID, question
		return Verdict{Detail: "the page shows an error"}, nil
	}}
	c := mustParse(t, Spec{Kind: KindVisual, Question: "Is the dashboard shown?", PaneID: "web-1"}, deps)
	v := verify(t, c, Evidence{})
	if v.Passed || v.Detail != "the page shows an error" || gotPane != "web-1" || gotQuestion != "Is the dashboard shown?" {
		t.Errorf("verdict %+v, pane %q, question %q", v, gotPane, gotQuestion)
	}
	if d := c.Describe(); !strings.Contains(d, "web-1") || !strings.Contains(d, "Is the dashboard shown?") {
		t.Errorf("Describe() = %q", d)
	}
}

func TestDurationJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want time.Duration
	}{
		{`"90s"`, 90 * time.Second},
		{`"2m"`, 2 * time.Minute},
		{`"1h30m"`, 90 * time.Minute},
		{`90`, 90 * time.Second},
		{`1.5`, 1500 * time.Millisecond},
		{`"45"`, 45 * time.Second},
		{`null`, 0},
	}
	for _, tt := range tests {
		var d Duration
		if err := json.Unmarshal([]byte(tt.in), &d); err != nil {
			t.Errorf("Unmarshal(%s): %v", tt.in, err)
			continue
		}
		if time.Duration(d) != tt.want {
			t.Errorf("Unmarshal(%s) = %s, want %s", tt.in, time.Duration(d), tt.want)
		}
	}
	for _, bad := range []string{`"soon"`, `"5 minutes"`, `true`, `{}`} {
		var d Duration
		if err := json.Unmarshal([]byte(bad), &d); err == nil {
			t.Errorf("Unmarshal(%s) = %s, want an error", bad, time.Duration(d))
		}
	}
	b, err := json.Marshal(Duration(2 * time.Minute))
	if err != nil || string(b) != `"2m0s"` {
		t.Errorf("Marshal = %s, %v; want \"2m0s\"", b, err)
	}
}

func TestSpecJSONRoundTrip(t *testing.T) {
	t.Parallel()
	in := `{"kind":"shell","command":"make test","exitCode":2,"timeout":"90s"}`
	var spec Spec
	if err := json.Unmarshal([]byte(in), &spec); err != nil {
		t.Fatal(err)
	}
	want := Spec{Kind: KindShell, Command: "make test", ExitCode: 2, Timeout: Duration(90 * time.Second)}
	if spec != want {
		t.Errorf("spec = %+v, want %+v", spec, want)
	}
	out, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"kind":"shell","command":"make test","exitCode":2,"timeout":"1m30s"}` {
		t.Errorf("marshalled = %s", out)
	}
	// Empty fields stay out of the stored JSON.
	out, _ = json.Marshal(Spec{Kind: KindManual})
	if string(out) != `{"kind":"manual"}` {
		t.Errorf("marshalled = %s, want {\"kind\":\"manual\"}", out)
	}
	// A number of seconds is read too.
	if err := json.Unmarshal([]byte(`{"kind":"shell","command":"x","timeout":30}`), &spec); err != nil || spec.Timeout != Duration(30*time.Second) {
		t.Errorf("timeout = %s, %v", spec.Timeout, err)
	}
}

func TestDurationIsAFlag(t *testing.T) {
	t.Parallel()
	var d Duration
	fs := flag.NewFlagSet("goal run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(&d, "check-timeout", "shell check timeout")
	if err := fs.Parse([]string{"--check-timeout", "5m"}); err != nil || d != Duration(5*time.Minute) {
		t.Errorf("--check-timeout 5m = %s, %v", d, err)
	}
	if err := fs.Parse([]string{"--check-timeout", "later"}); err == nil || !strings.Contains(err.Error(), "not a duration") {
		t.Errorf("--check-timeout later: err = %v", err)
	}
}
