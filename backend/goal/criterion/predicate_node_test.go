package criterion

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// jsResult is what a predicate gave, in terms both engines can state: the result's type and
// JSON text, or the name of what it threw.
type jsResult struct {
	Kind   string `json:"kind,omitempty"`
	Value  string `json:"value,omitempty"`
	Thrown string `json:"thrown,omitempty"`
}

// nodeHarness evaluates each case as our predicate does: the document parsed with JSON.parse,
// its top-level fields global names, the whole document json (and response unless a field has
// that name). The names listed as undeclared are defined as undefined: that is our one
// deliberate difference from a bare script, where reading them throws a ReferenceError.
const nodeHarness = `
const vm = require('vm');
const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = cases.map(c => {
  const sandbox = {__text: c.doc};
  const ctx = vm.createContext(sandbox);
  const doc = vm.runInContext('JSON.parse(__text)', ctx);
  delete sandbox.__text;
  const define = (k, v) => Object.defineProperty(sandbox, k, {value: v, writable: true, enumerable: true, configurable: true});
  const fields = doc !== null && typeof doc === 'object' && !Array.isArray(doc) ? Object.keys(doc) : [];
  for (const k of fields) define(k, doc[k]);
  if (!fields.includes('response')) define('response', doc);
  define('json', doc);
  for (const k of c.undeclared || []) define(k, undefined);
  let r;
  try {
    r = vm.runInContext(c.expr, ctx, {timeout: 2000});
  } catch (e) {
    return {thrown: e !== null && typeof e === 'object' && typeof e.name === 'string' ? e.name : 'a thrown value'};
  }
  const s = JSON.stringify(r);
  return {kind: r === null ? 'null' : Array.isArray(r) ? 'array' : typeof r, value: s === undefined ? String(r) : s};
});
process.stdout.write(JSON.stringify(out));
`

// TestPredicateAgreesWithNode evaluates predicates a JavaScript user writes with our engine
// and with node, on the same documents, and wants the same result from both: the same type
// and value, or an error of the same name where node throws. node is required to build this
// project (scripts/setup.sh checks it), so its absence fails the test.
func TestPredicateAgreesWithNode(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not on PATH (%v): this test compares predicates with it; install it (scripts/setup.sh checks for it)", err)
	}
	docs := map[string]string{
		// Fields named like expr's built-ins, which the expr engine took for its functions.
		"report": `{"status": "ok", "count": 2, "len": 5, "max": 10, "min": 1, "sum": 15, "type": "report",
			"now": "2024-01-01T10:00:00Z", "date": "2024-05-06", "first": "a", "last": "z",
			"keys": ["k1", "k2"], "values": [1, 2, 3], "all": true, "any": false, "filter": "none",
			"map": {"b": 2, "a": 1},
			"items": [{"name": "alpha", "ok": true, "tags": ["x"]}, {"name": "beta", "ok": false, "tags": []}],
			"name": "build-xyz", "nested": {"deep": {"value": 42, "list": [1, null]}}, "error": null,
			"tests": {"passed": 10, "failed": 0}, "emoji": "😀", "big": 9007199254740993, "ratio": 0.1}`,
		"http":    `{"status": 200, "body": {"ok": true, "errors": []}}`,
		"wrapped": `{"response": {"code": 1}, "json": "a field"}`,
		"list":    `[{"ok": true}, {"ok": true}]`,
		"number":  `7`,
		"string":  `"hello"`,
		"null":    `null`,
		"odd":     `{"a": 1, "a": 2, "error-rate": 0.25, "Math": 3}`,
	}
	cases := []struct {
		doc, expr  string
		undeclared []string
	}{
		// The report of issue 15: a field named count.
		{doc: "report", expr: `status === "ok" && count >= 3`},
		{doc: "report", expr: `status === "ok" && count >= 2`},
		{doc: "report", expr: `len === 5 && sum === 15`},
		{doc: "report", expr: `max > min && max - min === 9`},
		{doc: "report", expr: `type === "report" && first < last`},
		{doc: "report", expr: `now.startsWith("2024") && date.endsWith("06")`},
		{doc: "report", expr: `new Date(date).getUTCFullYear() === 2024 && Date.parse(now) > 0`},
		{doc: "report", expr: `keys.length === 2 && keys.includes("k2")`},
		{doc: "report", expr: `values.reduce((a, b) => a + b, 0) === 6 && values.at(-1) === 3`},
		{doc: "report", expr: `all === true && any === false`},
		{doc: "report", expr: `filter !== "none"`},
		{doc: "report", expr: `map.a === 1 && Object.keys(map).join(",") === "b,a"`},
		{doc: "report", expr: `JSON.stringify(map) === '{"b":2,"a":1}'`},
		// Arrays, members, methods.
		{doc: "report", expr: `items.length`},
		{doc: "report", expr: `items.length > 1`},
		{doc: "report", expr: `items[0].name.includes("alp") && items[1].tags.length === 0`},
		{doc: "report", expr: `items[1].ok`},
		{doc: "report", expr: `items.every(i => i.ok)`},
		{doc: "report", expr: `items.some(i => i.ok) && items.find(i => i.name === "beta")?.ok === false`},
		{doc: "report", expr: `items.filter(i => i.ok).map(i => i.name).join(",") === "alpha"`},
		{doc: "report", expr: `items[5] === undefined && items[5]?.name === undefined`},
		{doc: "report", expr: `items[5].name`},
		{doc: "report", expr: `Array.isArray(values) && values.indexOf(2) === 1 && Math.max(...values) === 3`},
		{doc: "report", expr: `name.toUpperCase().startsWith("BUILD") && /^build-\w+$/.test(name)`},
		{doc: "report", expr: "`${status}-${count}` === \"ok-2\""},
		{doc: "report", expr: `emoji.length === 2 && [...emoji].length === 1`},
		{doc: "report", expr: `big === 9007199254740992 && ratio * 3 !== 0.3`},
		{doc: "report", expr: `tests.passed > 0 && tests.failed === 0`},
		// Nested paths and optional chaining.
		{doc: "report", expr: `nested.deep.value === 42 && nested?.deep?.value === 42`},
		{doc: "report", expr: `nested.missing?.value === undefined`},
		{doc: "report", expr: `nested.missing.value === undefined`},
		{doc: "report", expr: `nested.deep.list[1] === null && nested.deep.list[1] == undefined`},
		{doc: "report", expr: `nested.deep.list[1] === undefined`},
		// null, undefined and loose equality.
		{doc: "report", expr: `error === null && error == undefined && typeof error === "object"`},
		{doc: "report", expr: `count == "2" && count !== "2" && null >= 0 && undefined == null`},
		{doc: "report", expr: `[1, 2] == "1,2"`},
		{doc: "report", expr: `typeof missing === "undefined"`},
		{doc: "report", expr: `missing === undefined && missing == null`, undeclared: []string{"missing"}},
		{doc: "report", expr: `missing?.field === undefined`, undeclared: []string{"missing"}},
		{doc: "report", expr: `missing.field`, undeclared: []string{"missing"}},
		{doc: "report", expr: `!missing && !!name`, undeclared: []string{"missing"}},
		// Results that are no boolean, and statements.
		{doc: "report", expr: `status.concat(count)`},
		{doc: "report", expr: `nested.deep`},
		{doc: "report", expr: `error`},
		{doc: "report", expr: `let n = items.filter(i => i.ok).length; n === 1`},
		{doc: "report", expr: `count > 1 ? status === "ok" : false`},
		{doc: "report", expr: `this.count === 2 && globalThis.status === "ok"`},
		{doc: "report", expr: `json.count === count && response === json && json["status"] === "ok"`},
		{doc: "report", expr: `count / 0 === Infinity && Number.isNaN(count / "x")`},
		{doc: "report", expr: `(() => { throw new RangeError("no") })()`},
		// Documents shaped otherwise.
		{doc: "http", expr: `response.status === 200 && response.body.ok === true`},
		{doc: "http", expr: `json.body.ok && status === 200 && body.errors.length === 0`},
		{doc: "wrapped", expr: `response.code === 1 && json.response.code === 1 && json.json === "a field"`},
		{doc: "list", expr: `json.length === 2 && json.every(x => x.ok)`},
		{doc: "list", expr: `response[0].ok === true && json[2] === undefined`},
		{doc: "number", expr: `json === 7 && typeof response === "number"`},
		{doc: "string", expr: `json.includes("ell") && json.length === 5`},
		{doc: "null", expr: `json === null && response === null`},
		{doc: "odd", expr: `a === 2 && json["error-rate"] < 0.5 && Math === 3`},
		// Syntax errors: refused at start by us, thrown by node.
		{doc: "report", expr: `status ===`},
		{doc: "report", expr: `(count > 1`},
		{doc: "report", expr: `status === "ok" and count > 1`},
	}

	type nodeCase struct {
		Doc        string   `json:"doc"`
		Expr       string   `json:"expr"`
		Undeclared []string `json:"undeclared,omitempty"`
	}
	var input []nodeCase
	for _, c := range cases {
		input = append(input, nodeCase{Doc: docs[c.doc], Expr: c.expr, Undeclared: c.undeclared})
	}
	stdin, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "-e", nodeHarness)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var want []jsResult
	if err := json.Unmarshal(out, &want); err != nil || len(want) != len(cases) {
		t.Fatalf("node printed %d results for %d cases (%v):\n%s", len(want), len(cases), err, out)
	}

	agree := 0
	for i, c := range cases {
		got := evaluateLikeNode(t, c.expr, docs[c.doc])
		if got != want[i] {
			t.Errorf("%s on %s:\n  ours %+v\n  node %+v", c.expr, c.doc, got, want[i])
			continue
		}
		agree++
	}
	t.Logf("%d of %d predicates agree with node", agree, len(cases))
}

// evaluateLikeNode evaluates a predicate with our engine and states the result as the harness
// does; it also checks that Verify passes exactly when the result is true.
func evaluateLikeNode(t *testing.T, expr, doc string) jsResult {
	t.Helper()
	c, err := Parse(Spec{Kind: KindJSONPredicate, Expr: expr}, Deps{})
	if err != nil {
		var fe *FieldError
		if errors.As(err, &fe) && fe.Field == "criterion.expr" && strings.Contains(fe.Msg, "SyntaxError") {
			return jsResult{Thrown: "SyntaxError"}
		}
		t.Fatalf("Parse(%q): %v", expr, err)
	}
	p := c.(predicate)
	o := p.evaluate(t.Context(), doc)
	var got jsResult
	switch {
	case o.timedOut:
		t.Fatalf("%s timed out", expr)
	case o.thrown != "":
		got = jsResult{Thrown: o.thrown}
	case o.err != nil:
		t.Fatalf("%s: the engine failed: %v", expr, o.err)
	case o.kind == "boolean":
		got = jsResult{Kind: o.kind, Value: map[bool]string{true: "true", false: "false"}[o.boolean]}
	default:
		got = jsResult{Kind: o.kind, Value: o.shown}
	}
	v := verify(t, c, Evidence{Rationale: doc, WorkDir: t.TempDir()})
	if wantPass := got == (jsResult{Kind: "boolean", Value: "true"}); v.Passed != wantPass {
		t.Errorf("%s: Verify passed = %v, but the result is %+v (detail %q)", expr, v.Passed, got, v.Detail)
	}
	return got
}
