package criterion

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestPredicateOnTheClaim(t *testing.T) {
	t.Parallel()
	type claimed struct{ expr, rationale string }
	checkVerdicts(t, []verdictCase[claimed]{
		{name: "top-level field", in: claimed{"errorCount == 0", `{"errorCount": 0}`}, pass: true},
		{name: "false lists the values", in: claimed{"errorCount == 0", `{"errorCount": 3}`},
			holds: []string{"The expression `errorCount == 0` is false for the claim's rationale.", "Values: errorCount = 3"}},
		{name: "JavaScript === on the whole document", in: claimed{"response.status === 200 && response.body.ok === true", `{"status": 200, "body": {"ok": true}}`}, pass: true},
		{name: "JavaScript === on a response field", in: claimed{"response.status === 200 && response.body.ok === true", `{"response": {"status": 200, "body": {"ok": true}}, "other": 1}`}, pass: true},
		{name: "member paths are explained", in: claimed{"response.status === 200 && response.body.ok === true", `{"status": 404, "body": {"ok": false}}`},
			holds: []string{"response.status = 404", "response.body.ok = false"}},
		{name: "!== as in JavaScript", in: claimed{"state !== 'failed'", `{"state": "done"}`}, pass: true},
		{name: "=== inside a string is kept", in: claimed{`name === "a===b" && other != 'x!==y'`, `{"name": "a===b", "other": "x!==y"}`},
			holds: []string{"name = \"a===b\"", "other = \"x!==y\""}},
		{name: "=== inside a string is kept (match)", in: claimed{`name === "a===b"`, `{"name": "a===b"}`}, pass: true},
		{name: "the whole document as json", in: claimed{`json.errorCount == 0 && json["error-rate"] < 0.5`, `{"errorCount": 0, "error-rate": 0.1}`}, pass: true},
		{name: "a list document", in: claimed{`json.length === 2 && json.every(x => x.ok)`, `[{"ok": true}, {"ok": true}]`}, pass: true},
		{name: "indexes", in: claimed{`items[1].ok`, `{"items": [{"ok": true}, {"ok": false}]}`},
			holds: []string{"items[1].ok = false"}},
		{name: "methods and let", in: claimed{`let n = tests.filter(t => t.passed).length; n === tests.length`, `{"tests": [{"passed": true}, {"passed": false}]}`},
			holds: []string{"tests = [{\"passed\":true},{\"passed\":false}], tests.length = 2"}},
		{name: "a field named like a former built-in", in: claimed{`status === "ok" && count >= 3`, `{"status": "ok", "count": 2}`},
			holds: []string{"is false for the claim's rationale", "status = \"ok\"", "count = 2"}},
		{name: "fields named like built-ins", in: claimed{`count === 3 && len > 0 && max >= min && type === "x" && all && !any && keys.includes("a") && filter === null && map.a === 1`, `{"count": 3, "len": 1, "max": 2, "min": 1, "type": "x", "all": true, "any": false, "keys": ["a"], "filter": null, "map": {"a": 1}}`}, pass: true},
		{name: "string methods", in: claimed{`name.includes("ild") && name.startsWith("bu") && name.endsWith("d") && name.trim() === name`, `{"name": "build"}`}, pass: true},
		{name: "optional chaining on a missing field", in: claimed{`report?.errors === undefined`, `{}`}, pass: true},
		{name: "typeof a missing field", in: claimed{`typeof report === "undefined"`, `{}`}, pass: true},
		{name: "a missing field is undefined", in: claimed{`report === undefined && report == null`, `{}`}, pass: true},
		{name: "a non-object document", in: claimed{`json === 7 && response > 6`, `7`}, pass: true},
		{name: "a field named JSON", in: claimed{`JSON === 1 && json.JSON === 1`, `{"JSON": 1}`}, pass: true},
		{name: "a field named undefined keeps undefined", in: claimed{`undefined === void 0 && json["undefined"] === 1`, `{"undefined": 1}`}, pass: true},
		{name: "a field named json is json.json", in: claimed{`json.json === 1 && json !== 1`, `{"json": 1}`}, pass: true},
		{name: "JSON's key order", in: claimed{`Object.keys(json).join() === "b,a"`, `{"b": 1, "a": 2}`}, pass: true},
		{name: "no host objects", in: claimed{`typeof require === "undefined" && typeof console === "undefined" && typeof setTimeout === "undefined" && typeof process === "undefined" && typeof fetch === "undefined"`, `{}`}, pass: true},
		{name: "truthiness is not enough", in: claimed{`items.length`, `{"items": [1, 2]}`},
			holds: []string{"gave a number (2), not true or false", "items.length = 2"}},
		{name: "an array result", in: claimed{`items`, `{"items": [1, 2]}`},
			holds: []string{"gave an array ([1,2]), not true or false"}},
		{name: "a runaway recursion", in: claimed{`function f(n) { return f(n + 1) } f(0)`, `{}`},
			holds: []string{"could not be evaluated", "RangeError"}},
		{name: "a thrown error", in: claimed{`(() => { throw new Error("boom") })()`, `{}`},
			holds: []string{"could not be evaluated on the claim's rationale: Error: boom"}},
		{name: "a runaway loop", in: claimed{`while (true) {}`, `{}`},
			holds: []string{"took longer than 2s to evaluate, so it was stopped"}},
		{name: "fenced JSON", in: claimed{"errorCount == 0", "```json\n{\"errorCount\": 0}\n```"}, pass: true},
		{name: "null is nil", in: claimed{"error === null", `{"error": null}`}, pass: true},
		{name: "non-boolean number", in: claimed{"errorCount", `{"errorCount": 3}`},
			holds: []string{"gave a number (3), not true or false", "errorCount = 3"}},
		{name: "non-boolean string", in: claimed{"status", `{"status": "ok"}`},
			holds: []string{`gave a string ("ok"), not true or false`}},
		{name: "non-boolean object", in: claimed{"response", `{"a": 1}`},
			holds: []string{`gave an object ({"a":1}), not true or false`}},
		{name: "missing identifier", in: claimed{"errorCount == 0", `{"errors": 0}`},
			holds: []string{"errorCount = undefined (not in the JSON)"}},
		{name: "missing identifier as result", in: claimed{"done", `{"finished": true}`},
			holds: []string{"gave undefined", "done = undefined (not in the JSON)"}},
		{name: "member of a missing identifier", in: claimed{"report.errors == 0", `{"errors": 0}`},
			holds: []string{"could not be evaluated on the claim's rationale: TypeError", "report.errors = undefined (not in the JSON)"}},
		{name: "bad JSON", in: claimed{"errorCount == 0", "All done! errorCount is 0."},
			holds: []string{"The claim's rationale is not valid JSON", `it starts: "All done! errorCount is 0."`}},
		{name: "empty claim", in: claimed{"ok", "  "},
			holds: []string{"The claim's rationale is empty: it must be a JSON document"}},
	}, func(t *testing.T, in claimed) Verdict {
		c := mustParse(t, Spec{Kind: KindJSONPredicate, Expr: in.expr}, Deps{})
		return verify(t, c, Evidence{Rationale: in.rationale, WorkDir: t.TempDir()})
	})
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
	checkVerdicts(t, []verdictCase[onFile]{
		{in: onFile{"file:report.json", "errorCount == 0 && warnings < 5"}, pass: true},
		{in: onFile{"file:report.json", "warnings == 0"}, holds: []string{"warnings = 2"}},
		{in: onFile{"file: out/nested.json", "ok"}, pass: true},
		{in: onFile{"file:inner-link.json", "ok"}, pass: true},
		{in: onFile{"file:missing.json", "ok"}, holds: []string{"The file missing.json does not exist in " + dir}},
		{in: onFile{"file:broken.json", "ok"}, holds: []string{"The file broken.json is not valid JSON"}},
		{in: onFile{"file:out", "ok"}, holds: []string{"out is a directory, not a JSON file."}},
		{in: onFile{"file:link.json", "ok"}, holds: []string{"The file link.json leads outside the working dir"}},
	}, func(t *testing.T, in onFile) Verdict {
		c := mustParse(t, Spec{Kind: KindJSONPredicate, Expr: in.expr, Source: in.source}, Deps{})
		return verify(t, c, Evidence{WorkDir: dir, Rationale: "not JSON at all"})
	})
}

// onFile is a predicate on a file of the working dir, named as its subtest.
type onFile struct{ source, expr string }

func (f onFile) String() string { return f.source + " " + f.expr }

func TestPredicateOnACommand(t *testing.T) {
	t.Parallel()
	type onCommand struct {
		source, expr string
		timeout      time.Duration
	}
	checkVerdicts(t, []verdictCase[onCommand]{
		{name: "stdout is the document", in: onCommand{`command:printf '{"status": 200, "body": {"ok": true}}'`, "response.status === 200 && response.body.ok === true", 0}, pass: true},
		{name: "runs in the work dir", in: onCommand{"command:cat data.json", "n == 7", 0}, pass: true},
		{name: "a non-zero exit still reads stdout", in: onCommand{`command:echo '{"errorCount": 2}'; exit 1`, "errorCount == 0", 0}, holds: []string{"errorCount = 2"}},
		{name: "no stdout", in: onCommand{"command:echo oops >&2; exit 3", "ok", 0},
			holds: []string{"printed nothing on stdout (exit 3); it must print a JSON document. Output tail:\noops"}},
		{name: "not JSON", in: onCommand{"command:echo hello", "ok", 0},
			holds: []string{"The output of `echo hello` is not valid JSON"}},
		{name: "timeout", in: onCommand{"command:sleep 300", "ok", time.Second},
			holds: []string{"The command `sleep 300` timed out after 1s"}},
	}, func(t *testing.T, in onCommand) Verdict {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "data.json"), []byte(`{"n": 7}`), 0o644); err != nil {
			t.Fatal(err)
		}
		c := mustParse(t, Spec{Kind: KindJSONPredicate, Expr: in.expr, Source: in.source, Timeout: Duration(in.timeout)}, Deps{})
		return verify(t, c, Evidence{WorkDir: dir})
	})
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
		{"JavaScript syntax", Spec{Expr: "status === 'ok' and count > 1"}, "criterion.expr", "SyntaxError"},
		{"certainly not boolean", Spec{Expr: "1 + 2"}, "criterion.expr", "gives a number or a string, never true or false"},
		{"certainly a string", Spec{Expr: "typeof x"}, "criterion.expr", "gives a string, never true or false"},
		{"unknown function", Spec{Expr: "exec('rm -rf /') == 0"}, "criterion.expr", "calls exec, which is no function here"},
		{"expr's len", Spec{Expr: "len(items) > 0"}, "criterion.expr", "calls len, which is no function here"},
		{"assignment for comparison", Spec{Expr: "ok = true"}, "criterion.expr", "assigns to ok with `=`"},
		{"too big", Spec{Expr: strings.Repeat("a && ", 2000) + "a"}, "criterion.expr", "syntax nodes, over the limit of 1000"},
		{"too long", Spec{Expr: strings.Repeat("(", 20000) + "a" + strings.Repeat(")", 20000)}, "criterion.expr", "bytes, over the limit"},
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

// TestPredicateEvaluationsAreIsolated runs a predicate that changes the global scope and
// Object.prototype many times, at once and in turn: each evaluation has a runtime of its own,
// so none sees another's changes.
func TestPredicateEvaluationsAreIsolated(t *testing.T) {
	t.Parallel()
	expr := `const fresh = ({}).polluted === undefined && typeof seen === "undefined"; Object.prototype.polluted = true; globalThis.seen = 1; fresh`
	c := mustParse(t, Spec{Kind: KindJSONPredicate, Expr: expr}, Deps{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 3 {
				if v := verify(t, c, Evidence{Rationale: `{}`}); !v.Passed {
					t.Errorf("an evaluation saw another's changes: %s", v.Detail)
				}
			}
		})
	}
	wg.Wait()
}

// TestPredicateStopsWithTheGoal cancels the check while the predicate loops: Verify returns
// at once with the context's error, not after evalTimeout.
func TestPredicateStopsWithTheGoal(t *testing.T) {
	t.Parallel()
	c := mustParse(t, Spec{Kind: KindJSONPredicate, Expr: "while (true) {}"}, Deps{})
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Verify(ctx, Evidence{Rationale: `{}`})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "the check was stopped") {
		t.Errorf("err = %v, want the check stopped by its context", err)
	}
	if took := time.Since(start); took > evalTimeout {
		t.Errorf("Verify took %s after its context ended", took)
	}
}

// TestPredicateReadsNoSourceMap gives goja's parser a sourceMappingURL comment naming a FIFO,
// in the predicate and in code it evals: a parser that honoured it would open the FIFO and
// block, since nothing writes to it. A predicate reads its document and nothing else.
func TestPredicateReadsNoSourceMap(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "map.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	url := "file://" + fifo // absolute: the parser resolves a bare path against the file name
	inner := "1\n//# sourceMappingURL=" + url
	expr := fmt.Sprintf("eval(%q) === 1 && new Function(%q)() === 1\n//# sourceMappingURL=%s", inner, "return "+inner, url)
	done := make(chan Verdict, 1)
	go func() {
		c, err := Parse(Spec{Kind: KindJSONPredicate, Expr: expr}, Deps{})
		if err != nil {
			t.Errorf("Parse: %v", err)
			done <- Verdict{}
			return
		}
		v, err := c.Verify(t.Context(), Evidence{Rationale: `{}`})
		if err != nil {
			t.Errorf("Verify: %v", err)
		}
		done <- v
	}()
	select {
	case v := <-done:
		if !v.Passed {
			t.Errorf("verdict = %+v, want a pass", v)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the predicate is blocked, opening the FIFO its source map comment names")
	}
}

// TestCompilePredicateReads checks what the syntax scan finds: the free names a predicate
// reads (bound to the document, or to undefined, at evaluation) and the paths a failure lists.
func TestCompilePredicateReads(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr         string
		names, paths string
	}{
		{`status === "ok" && count >= 3`, "status count", "status count"},
		{`items.every(i => i.ok) && items.length > 0`, "items", "items items.length"},
		{`let n = tests.filter(t => t.passed).length; n === tests.length`, "tests", "tests tests.length"},
		{`response?.body?.ok === true && json["error-rate"] < 1`, "response json", `response.body.ok json["error-rate"]`},
		{`items[0].name.startsWith("x") && items[i] !== null`, "items i", "items[0].name i"},
		{`Math.max(...values) > 1 && typeof x === "undefined"`, "Math values x", "Math values x"},
		{`const {a, b: [c = d]} = doc; a === c`, "d doc", "d doc"},
		{`({count}).count === 1`, "count", "count"},
		{`function ok(x) { return x.ok } items.every(ok)`, "items", "items"},
	}
	for _, tt := range tests {
		c, err := compilePredicate(tt.expr)
		if err != nil {
			t.Errorf("compilePredicate(%q): %v", tt.expr, err)
			continue
		}
		var paths []string
		for _, p := range c.paths {
			paths = append(paths, formatPath(p.parts))
		}
		if got := strings.Join(c.names, " "); got != tt.names {
			t.Errorf("%s: names %q, want %q", tt.expr, got, tt.names)
		}
		if got := strings.Join(paths, " "); got != tt.paths {
			t.Errorf("%s: paths %q, want %q", tt.expr, got, tt.paths)
		}
	}
}
