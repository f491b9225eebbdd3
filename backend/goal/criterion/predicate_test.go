package criterion

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPredicateOnTheClaim(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		expr      string
		rationale string
		pass      bool
		detail    []string // substrings the detail must hold
	}{
		{name: "top-level field", expr: "errorCount == 0", rationale: `{"errorCount": 0}`, pass: true},
		{name: "false lists the values", expr: "errorCount == 0", rationale: `{"errorCount": 3}`,
			detail: []string{"The expression `errorCount == 0` is false for the claim's rationale.", "Values: errorCount = 3"}},
		{name: "JavaScript === on the whole document", expr: "response.status === 200 && response.body.ok === true",
			rationale: `{"status": 200, "body": {"ok": true}}`, pass: true},
		{name: "JavaScript === on a response field", expr: "response.status === 200 && response.body.ok === true",
			rationale: `{"response": {"status": 200, "body": {"ok": true}}, "other": 1}`, pass: true},
		{name: "member paths are explained", expr: "response.status === 200 && response.body.ok === true",
			rationale: `{"status": 404, "body": {"ok": false}}`,
			detail:    []string{"response.status = 404", "response.body.ok = false"}},
		{name: "!== is rewritten", expr: "state !== 'failed'", rationale: `{"state": "done"}`, pass: true},
		{name: "=== inside a string is kept", expr: `name === "a===b" && other != 'x!==y'`, rationale: `{"name": "a===b", "other": "x!==y"}`,
			detail: []string{"name = \"a===b\"", "other = \"x!==y\""}},
		{name: "=== inside a string is kept (match)", expr: `name === "a===b"`, rationale: `{"name": "a===b"}`, pass: true},
		{name: "the whole document as json", expr: `json.errorCount == 0 && json["error-rate"] < 0.5`, rationale: `{"errorCount": 0, "error-rate": 0.1}`, pass: true},
		{name: "a list document", expr: `len(json) == 2 && all(json, .ok)`, rationale: `[{"ok": true}, {"ok": true}]`, pass: true},
		{name: "indexes", expr: `items[1].ok`, rationale: `{"items": [{"ok": true}, {"ok": false}]}`,
			detail: []string{"items[1].ok = false"}},
		{name: "builtins and let", expr: `let n = len(filter(tests, .passed)); n == len(tests)`, rationale: `{"tests": [{"passed": true}, {"passed": false}]}`,
			detail: []string{"tests = [{\"passed\":true},{\"passed\":false}]"}},
		{name: "fenced JSON", expr: "errorCount == 0", rationale: "```json\n{\"errorCount\": 0}\n```", pass: true},
		{name: "null is nil", expr: "error === null", rationale: `{"error": null}`, pass: true},
		{name: "non-boolean number", expr: "errorCount", rationale: `{"errorCount": 3}`,
			detail: []string{"gave a number (3), not true or false", "errorCount = 3"}},
		{name: "non-boolean string", expr: "status", rationale: `{"status": "ok"}`,
			detail: []string{`gave a string ("ok"), not true or false`}},
		{name: "non-boolean object", expr: "response", rationale: `{"a": 1}`,
			detail: []string{`gave an object ({"a":1}), not true or false`}},
		{name: "missing identifier", expr: "errorCount == 0", rationale: `{"errors": 0}`,
			detail: []string{"errorCount = undefined (not in the JSON)"}},
		{name: "missing identifier as result", expr: "done", rationale: `{"finished": true}`,
			detail: []string{"gave nil", "done = undefined (not in the JSON)"}},
		{name: "member of a missing identifier", expr: "report.errors == 0", rationale: `{"errors": 0}`,
			detail: []string{"could not be evaluated on the claim's rationale", "report.errors = undefined (not in the JSON)"}},
		{name: "bad JSON", expr: "errorCount == 0", rationale: "All done! errorCount is 0.",
			detail: []string{"The claim's rationale is not valid JSON", `it starts: "All done! errorCount is 0."`}},
		{name: "empty claim", expr: "ok", rationale: "  ",
			detail: []string{"The claim's rationale is empty: it must be a JSON document"}},
		{name: "memory budget", expr: "len(1..100000000) > 0", rationale: `{}`,
			detail: []string{"could not be evaluated", "memory budget exceeded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := mustParse(t, Spec{Kind: KindJSONPredicate, Expr: tt.expr}, Deps{})
			v := verify(t, c, Evidence{Rationale: tt.rationale, WorkDir: t.TempDir()})
			if v.Passed != tt.pass {
				t.Fatalf("Passed = %v, want %v (detail %q)", v.Passed, tt.pass, v.Detail)
			}
			for _, want := range tt.detail {
				if !strings.Contains(v.Detail, want) {
					t.Errorf("detail lacks %q:\n%s", want, v.Detail)
				}
			}
		})
	}
}

func TestPredicateBadJSONPreviewIsCut(t *testing.T) {
	t.Parallel()
	c := mustParse(t, Spec{Kind: KindJSONPredicate, Expr: "ok"}, Deps{})
	v := verify(t, c, Evidence{Rationale: "{" + strings.Repeat("z", 1000)})
	if v.Passed || !strings.Contains(v.Detail, strings.Repeat("z", 199)+"… (cut)") || strings.Contains(v.Detail, strings.Repeat("z", 201)) {
		t.Errorf("detail does not show exactly the first 200 chars:\n%s", v.Detail)
	}
}

func TestPredicateClaimTooBig(t *testing.T) {
	t.Parallel()
	c := mustParse(t, Spec{Kind: KindJSONPredicate, Expr: "ok"}, Deps{})
	v := verify(t, c, Evidence{Rationale: `{"pad": "` + strings.Repeat("x", maxJSONBytes) + `"}`})
	if v.Passed || !strings.Contains(v.Detail, "is over") {
		t.Errorf("verdict = %+v, want a size refusal", v)
	}
}

func TestPredicateOnAFile(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.json"), []byte(`{"ok": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string]string{
		"report.json":     `{"errorCount": 0, "warnings": 2}`,
		"out/nested.json": `{"ok": true}`,
		"broken.json":     `{"ok": tru`,
	}
	for name, body := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(outside, "secret.json"), filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("out/nested.json", filepath.Join(dir, "inner-link.json")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		source, expr string
		pass         bool
		detail       string
	}{
		{source: "file:report.json", expr: "errorCount == 0 && warnings < 5", pass: true},
		{source: "file:report.json", expr: "warnings == 0", detail: "warnings = 2"},
		{source: "file: out/nested.json", expr: "ok", pass: true},
		{source: "file:inner-link.json", expr: "ok", pass: true},
		{source: "file:missing.json", expr: "ok", detail: "The file missing.json does not exist in " + dir},
		{source: "file:broken.json", expr: "ok", detail: "The file broken.json is not valid JSON"},
		{source: "file:out", expr: "ok", detail: "out is a directory, not a JSON file."},
		{source: "file:link.json", expr: "ok", detail: "The file link.json leads outside the working dir"},
	}
	for _, tt := range tests {
		t.Run(tt.source+" "+tt.expr, func(t *testing.T) {
			t.Parallel()
			c := mustParse(t, Spec{Kind: KindJSONPredicate, Expr: tt.expr, Source: tt.source}, Deps{})
			v := verify(t, c, Evidence{WorkDir: dir, Rationale: "not JSON at all"})
			if v.Passed != tt.pass || !strings.Contains(v.Detail, tt.detail) {
				t.Errorf("verdict = %+v, want Passed %v and detail with %q", v, tt.pass, tt.detail)
			}
		})
	}
}

func TestPredicateOnACommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, source, expr string
		timeout            time.Duration
		pass               bool
		detail             string
	}{
		{name: "stdout is the document", source: `command:printf '{"status": 200, "body": {"ok": true}}'`,
			expr: "response.status === 200 && response.body.ok === true", pass: true},
		{name: "runs in the work dir", source: "command:cat data.json", expr: "n == 7", pass: true},
		{name: "a non-zero exit still reads stdout", source: `command:echo '{"errorCount": 2}'; exit 1`,
			expr: "errorCount == 0", detail: "errorCount = 2"},
		{name: "no stdout", source: "command:echo oops >&2; exit 3", expr: "ok",
			detail: "printed nothing on stdout (exit 3); it must print a JSON document. Output tail:\noops"},
		{name: "not JSON", source: "command:echo hello", expr: "ok",
			detail: "The output of `echo hello` is not valid JSON"},
		{name: "timeout", source: "command:sleep 300", expr: "ok", timeout: time.Second,
			detail: "The command `sleep 300` timed out after 1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "data.json"), []byte(`{"n": 7}`), 0o644); err != nil {
				t.Fatal(err)
			}
			c := mustParse(t, Spec{Kind: KindJSONPredicate, Expr: tt.expr, Source: tt.source, Timeout: Duration(tt.timeout)}, Deps{})
			v := verify(t, c, Evidence{WorkDir: dir})
			if v.Passed != tt.pass || !strings.Contains(v.Detail, tt.detail) {
				t.Errorf("verdict = %+v, want Passed %v and detail with %q", v, tt.pass, tt.detail)
			}
		})
	}
}

func TestPredicateCommandOutputIsBounded(t *testing.T) {
	t.Parallel()
	c := mustParse(t, Spec{Kind: KindJSONPredicate, Expr: "ok", Source: "command:yes '{}' | head -c 10000000"}, Deps{})
	v := verify(t, c, Evidence{WorkDir: t.TempDir()})
	if v.Passed || !strings.Contains(v.Detail, "printed more than") {
		t.Errorf("verdict = %+v, want a size refusal", v)
	}
}

func TestPredicateParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		spec Spec
		want string // field
		msg  string // substring of the message
	}{
		{"no expr", Spec{Expr: "  "}, "criterion.expr", "needs an expression"},
		{"does not compile", Spec{Expr: "errorCount =="}, "criterion.expr", "does not compile"},
		{"unbalanced", Spec{Expr: "(a && b"}, "criterion.expr", "does not compile"},
		{"certainly not boolean", Spec{Expr: "1 + 2"}, "criterion.expr", "expected bool"},
		{"unknown function", Spec{Expr: "exec('rm -rf /') == 0"}, "criterion.expr", "calls exec, which is no function here"},
		{"method call", Spec{Expr: "name.trim() == 'x'"}, "criterion.expr", "calls name.trim"},
		{"too big", Spec{Expr: strings.Repeat("a && ", 2000) + "a"}, "criterion.expr", "does not compile"},
		{"unknown source", Spec{Expr: "ok", Source: "url:http://x"}, "criterion.source", "unknown source"},
		{"file without path", Spec{Expr: "ok", Source: "file:"}, "criterion.source", "needs a path"},
		{"file escaping with ..", Spec{Expr: "ok", Source: "file:../x.json"}, "criterion.source", "leaves the working dir"},
		{"file escaping deeper", Spec{Expr: "ok", Source: "file:a/../../x.json"}, "criterion.source", "leaves the working dir"},
		{"absolute file", Spec{Expr: "ok", Source: "file:/etc/passwd"}, "criterion.source", "leaves the working dir"},
		{"command without command", Spec{Expr: "ok", Source: "command: "}, "criterion.source", "needs a command"},
		{"command bash cannot parse", Spec{Expr: "ok", Source: "command:if then"}, "criterion.source", "bash cannot parse"},
		{"timeout without command", Spec{Expr: "ok", Timeout: Duration(time.Second)}, "criterion.timeout", "only with a command: source"},
		{"negative command timeout", Spec{Expr: "ok", Source: "command:true", Timeout: Duration(-time.Second)}, "criterion.timeout", "negative"},
		{"stray field", Spec{Expr: "ok", Command: "make"}, "criterion.command", "does not apply to a json_predicate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.spec.Kind = KindJSONPredicate
			_, err := Parse(tt.spec, Deps{})
			checkFieldError(t, err, tt.want, tt.msg)
		})
	}
}

func checkFieldError(t *testing.T, err error, field, msg string) {
	t.Helper()
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v (%T), want a *FieldError", err, err)
	}
	if fe.Field != field {
		t.Errorf("Field = %q, want %q (msg %q)", fe.Field, field, fe.Msg)
	}
	if !strings.Contains(fe.Msg, msg) {
		t.Errorf("Msg = %q, want it to hold %q", fe.Msg, msg)
	}
	if !strings.HasPrefix(err.Error(), field+": ") {
		t.Errorf("Error() = %q, want it to start with the field", err.Error())
	}
}

func TestRewriteJSOperators(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"a === 1":                     "a == 1",
		"a !== 1 && b===2":            "a != 1 && b==2",
		`a == "x === y"`:              `a == "x === y"`,
		`a === 'it\'s === ok' !== b`:  `a == 'it\'s === ok' != b`,
		"a === `raw\\` !== b":         "a == `raw\\` != b",
		`a === "esc\"===" && b !== 1`: `a == "esc\"===" && b != 1`,
		"a == 1 && b != 2":            "a == 1 && b != 2",
	}
	for in, want := range tests {
		if got := rewriteJSOperators(in); got != want {
			t.Errorf("rewriteJSOperators(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPredicateDescribe(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec Spec
		want string
	}{
		{Spec{Expr: "errorCount == 0"}, "the expression `errorCount == 0` is true of your claim_complete rationale, which must be a JSON document"},
		{Spec{Expr: "ok", Source: "file:out/r.json"}, "the expression `ok` is true of the JSON in the file out/r.json (relative to the working dir)"},
		{Spec{Expr: "ok", Source: "command:./status.sh", Timeout: Duration(time.Minute)}, "the expression `ok` is true of the JSON printed by the command `./status.sh` (timeout 1m0s)"},
	}
	for _, tt := range tests {
		tt.spec.Kind = KindJSONPredicate
		c := mustParse(t, tt.spec, Deps{})
		if got := c.Describe(); got != tt.want {
			t.Errorf("Describe() = %q, want %q", got, tt.want)
		}
		if c.Kind() != KindJSONPredicate {
			t.Errorf("Kind() = %q", c.Kind())
		}
	}
}
