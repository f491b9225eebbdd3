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
//   - json_predicate {expr, source=claim}: an expression (see below) must be true of a JSON
//     document: the claim's rationale, a file in the working dir, or a command's stdout.
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
// Expressions are github.com/expr-lang/expr: sandboxed (no side effects, no access to the
// machine), compiled at Parse (a call to anything but a built-in function is refused there),
// run with expr's memory budget and a 2 s time limit, on at most 4 MiB of JSON. They are written JavaScript-style: `===` and `!==` (outside string
// literals) are rewritten to `==` and `!=` before compiling, and &&, ||, !, ?., [i] and
// ["key"] work as in JavaScript. A name the document does not hold evaluates to nil, so
// `x == null` holds when x is absent.
//
// The parsed document is the environment twice over:
//   - each top-level field of a JSON object is a name of its own: `errorCount == 0`;
//   - the whole document is `json`, and also `response` unless the document has a top-level
//     field of that name: `response.status === 200 && response.body.ok === true` works on
//     the output of `curl` printing {"status": 200, "body": {"ok": true}}.
//
// A field whose name is no identifier is reached by index: json["error-count"].
// The result must be a boolean. When it is false (or not a boolean, or evaluation fails) the
// detail lists each name and member path in the expression with its actual value:
// `errorCount = 3`, `response.body.ok = false`, `missing = undefined (not in the JSON)`.
package criterion
