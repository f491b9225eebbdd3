// Package criterion holds the success criteria of the Goal Runner: what must verify before a
// goal counts as completed. A user gives a Spec (JSON in the store and the API; the CLI's
// --check-* flags map to it); Parse validates it at goal start — nothing wrong with it is
// discovered only at claim time — and returns a Criterion, whose Verify the runner calls on
// every claim_complete (and on a critic's ACHIEVED).
//
// Verify returns a Verdict. A failed Verdict's Detail goes back to the model ("Verification
// failed: <detail>"), so it says what was wrong in terms the model can act on. Verify returns
// an error only when the verification itself could not run (the working dir is gone, the
// judge's service failed, the goal was aborted).
//
// # Kinds
//
//   - shell {command, exitCode=0, timeout=120s}: `bash -c command` in Evidence.WorkDir, in a
//     process group of its own. It passes when bash exits with exitCode. A timeout kills the
//     whole group, and so does the end of the check: a verification leaves no process behind.
//     Only the tail of the output is kept in memory.
//   - model_question {question, threshold=yes}: a strict yes/no judge model reads the
//     evidence — the goal, the question, the claim's rationale, the recent step summaries, and
//     the latest screenshot when there is one and the judge has vision — and must reply YES.
//     Anything else fails, with the judge's reply as the detail.
//   - json_predicate {expr, source=claim}: a JavaScript expression (see below) must be true
//     of a JSON document: the claim's rationale, a file in the working dir, or a command's
//     stdout.
//   - manual: the claim is accepted; a person reviews the result and can re-open the goal
//     with feedback.
//   - visual {question, paneId}: a screenshot of a pane judged by a vision model, through
//     Deps.Visual. Until browser panes supply it, Parse refuses the kind.
//
// # high_confidence
//
// threshold "high_confidence" means two independent judge calls, each in a fresh context
// (its own request with no shared conversation), must both answer YES. The first is the plain
// judge. The second sees the same evidence but is told to look for reasons the claim is false
// and to answer YES only if it finds none. The second call is made only after a first YES (a
// first NO already fails), so a passing verification always costs exactly two calls.
//
// # json_predicate expressions
//
// A predicate is JavaScript, run by github.com/dop251/goja (an ECMAScript engine in pure Go): `===`,
// `?.`, `items.length`, `name.includes("x")`, `items.every(i => i.ok)`, template literals and
// the rest mean what they mean in node. It may be one expression or a few statements
// (`let n = items.filter(i => i.ok).length; n === items.length`): the value of the last one
// counts. It is parsed and compiled at Parse, where a syntax error, an assignment with `=` to
// a name it does not declare (a typo for `===`), a call of a name that is no JavaScript
// function (`len(x)`: JSON holds no functions), a result that can never be a boolean (`a + 1`)
// and a predicate over 16 KiB or 1000 syntax nodes are refused.
//
// Each evaluation runs in a runtime of its own with only what ECMAScript defines (no
// require, console, timers, file or network access; source map comments are not followed),
// on at most 4 MiB of JSON read with JSON.parse. The predicate then runs for at most 2 s (a
// longer one is interrupted and fails with a detail saying it took too long) and 10,000 nested
// calls. It is not bounded in memory: a predicate is written by the goal's author, who can run
// any shell check anyway.
//
// The document's names:
//   - each top-level field of a JSON object is a global name, and wins over JavaScript's own
//     (a field named count, max or Math is that field); undefined, NaN and Infinity keep their
//     meaning, and such a field is read as json["NaN"];
//   - the whole document is `json`, and also `response` unless the document has a top-level
//     field of that name: `response.status === 200 && response.body.ok === true` works on
//     the output of `curl` printing {"status": 200, "body": {"ok": true}}. An array, number,
//     string or null document is reached through them only;
//   - any other name the predicate reads is undefined, as a missing field reads in
//     JavaScript: `report === undefined`, `report?.errors` and `typeof report` work on a
//     document without report, where a bare script would throw a ReferenceError.
//
// A field whose name is no identifier is reached by index: json["error-count"].
// The result must be the boolean true. false fails; so does any other value (a number, a
// string, undefined): truthiness does not count, so `items.length` or `errorCount` cannot pass
// by accident; write `items.length > 0`, or `!!x` to mean "x is truthy". When the check fails
// (false, not a boolean, or an exception) the detail lists each name and member path in the
// expression with its value in the document: `errorCount = 3`, `response.body.ok = false`,
// `missing = undefined (not in the JSON)`; the receiver of a method call is listed whole
// (`items = [...]` for items.every(…)).
package criterion
