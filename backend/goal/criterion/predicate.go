package criterion

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const (
	// maxJSONBytes bounds the document a predicate reads: far above any status report, well
	// below what would strain memory once parsed.
	maxJSONBytes = 4 << 20
	// maxExprNodes bounds an expression's size; a predicate is a line, not a program.
	maxExprNodes = 1000
	// maxExprBytes bounds its text before it is parsed, which also bounds how deep the
	// parser's recursion goes on nested parentheses.
	maxExprBytes = 16 << 10
	// maxCallDepth bounds the predicate's call stack: a runaway recursion fails with a
	// RangeError, as in node, instead of growing the Go stack until the process dies.
	maxCallDepth = 10_000
	// evalTimeout is the wall-clock bound on one evaluation; a true/false check of a parsed
	// document takes microseconds, so hitting it means a pathological expression.
	evalTimeout = 2 * time.Second
	// interruptGrace is how long an interrupted evaluation is waited for before it is
	// abandoned: JavaScript code stops at once, a long native built-in only when it returns.
	interruptGrace = 250 * time.Millisecond
	// jsonPreviewChars is how much of an unparseable document the detail quotes.
	jsonPreviewChars = 200
	// maxListedValues and maxValueChars bound the "values involved" part of a detail.
	maxListedValues = 12
	maxValueChars   = 160
)

// The names under which the whole document is in the environment.
const (
	wholeName    = "json"
	responseName = "response"
)

// The sources a predicate reads.
const (
	sourceClaim   = "claim"
	sourceFile    = "file"
	sourceCommand = "command"
)

// predicate is a json_predicate: a JavaScript expression that must be true of a JSON document.
type predicate struct {
	expr string // as the user wrote it
	compiled
	source  string // sourceClaim, sourceFile or sourceCommand
	arg     string // the file path or command
	timeout time.Duration
}

func parsePredicate(spec Spec) (Criterion, *FieldError) {
	source, arg := sourceClaim, ""
	switch s := strings.TrimSpace(spec.Source); {
	case s == "" || s == sourceClaim:
	case strings.HasPrefix(s, sourceFile+":"):
		source, arg = sourceFile, strings.TrimSpace(strings.TrimPrefix(s, sourceFile+":"))
	case strings.HasPrefix(s, sourceCommand+":"):
		source, arg = sourceCommand, strings.TrimSpace(strings.TrimPrefix(s, sourceCommand+":"))
	default:
		return nil, fieldErr("source", "unknown source %q: use \"claim\" (the claim's rationale is JSON), \"file:PATH\" (relative to the working dir) or \"command:CMD\" (its stdout is JSON)", spec.Source)
	}
	allowed := []string{"expr", "source"}
	if source == sourceCommand {
		allowed = append(allowed, "timeout")
	}
	if fe := onlyFields(spec, allowed...); fe != nil {
		if fe.Field == "criterion.timeout" {
			fe.Msg = "timeout applies to a json_predicate only with a command: source: remove it"
		}
		return nil, fe
	}
	p := predicate{expr: spec.Expr, source: source, arg: arg}
	switch source {
	case sourceFile:
		if arg == "" {
			return nil, fieldErr("source", "file: needs a path, e.g. \"file:report.json\"")
		}
		if !filepath.IsLocal(arg) {
			return nil, fieldErr("source", "file path %q leaves the working dir: give a path inside it, relative to it (e.g. \"out/report.json\")", arg)
		}
	case sourceCommand:
		if arg == "" {
			return nil, fieldErr("source", "command: needs a command that prints JSON, e.g. \"command:curl -s localhost:8080/health\"")
		}
		if fe := checkBashSyntax("source", arg); fe != nil {
			return nil, fe
		}
		t, fe := checkTimeout(spec.Timeout)
		if fe != nil {
			return nil, fe
		}
		p.timeout = t
	}
	if strings.TrimSpace(spec.Expr) == "" {
		return nil, fieldErr("expr", "a json_predicate needs an expression that is true when the goal is done, e.g. \"errorCount === 0\"")
	}
	c, err := compilePredicate(spec.Expr)
	if err != nil {
		return nil, fieldErr("expr", "%v", err)
	}
	p.compiled = c
	return p, nil
}

func (p predicate) Kind() string { return KindJSONPredicate }

func (p predicate) Describe() string {
	switch p.source {
	case sourceFile:
		return fmt.Sprintf("the expression `%s` is true of the JSON in the file %s (relative to the working dir)", p.expr, p.arg)
	case sourceCommand:
		return fmt.Sprintf("the expression `%s` is true of the JSON printed by the command `%s` (timeout %s)", p.expr, p.arg, p.timeout)
	}
	return fmt.Sprintf("the expression `%s` is true of your claim_complete rationale, which must be a JSON document", p.expr)
}

func (p predicate) Verify(ctx context.Context, ev Evidence) (Verdict, error) {
	doc, fail, err := p.read(ctx, ev)
	if err != nil || fail != "" {
		return Verdict{Detail: fail}, err
	}
	// Go's decoder checks the document first for the sake of its error message, which says
	// where the JSON goes wrong; the predicate then reads it through JSON.parse.
	var raw json.RawMessage
	if err := json.Unmarshal(doc, &raw); err != nil {
		name := p.sourceName()
		return Verdict{Detail: fmt.Sprintf("%s%s is not valid JSON (%v); it starts: %q", strings.ToUpper(name[:1]), name[1:], err, clip(string(doc), jsonPreviewChars))}, nil
	}
	o := p.evaluate(ctx, string(doc))
	switch {
	case ctx.Err() != nil:
		return Verdict{}, fmt.Errorf("the check was stopped: %w", ctx.Err())
	case o.timedOut:
		return Verdict{Detail: fmt.Sprintf("The expression `%s` took longer than %s to evaluate, so it was stopped: simplify it (a predicate checks a document; it should take microseconds).", p.expr, evalTimeout)}, nil
	case o.err != nil:
		return Verdict{Detail: fmt.Sprintf("The expression `%s` could not be evaluated on %s: %v\nValues: %s", p.expr, p.sourceName(), o.err, o.values)}, nil
	case o.kind != "boolean":
		return Verdict{Detail: fmt.Sprintf("The expression `%s` gave %s, not true or false: a predicate must give a boolean (truthiness does not count), so make it a comparison, e.g. `items.length > 0` or `errorCount === 0`.\nValues: %s", p.expr, describeResult(o), o.values)}, nil
	case !o.boolean:
		return Verdict{Detail: fmt.Sprintf("The expression `%s` is false for %s.\nValues: %s", p.expr, p.sourceName(), o.values)}, nil
	}
	return Verdict{Passed: true, Detail: fmt.Sprintf("The expression `%s` is true for %s.", p.expr, p.sourceName())}, nil
}

func (p predicate) sourceName() string {
	switch p.source {
	case sourceFile:
		return "the file " + p.arg
	case sourceCommand:
		return "the output of `" + p.arg + "`"
	}
	return "the claim's rationale"
}

// read fetches the document. A problem the model can fix (no such file, a command that
// printed too much) is returned as fail; err is for a check that could not run.
func (p predicate) read(ctx context.Context, ev Evidence) (doc []byte, fail string, err error) {
	switch p.source {
	case sourceFile:
		return readLocalFile(ev.WorkDir, p.arg)
	case sourceCommand:
		out, stderr := &head{n: maxJSONBytes}, newTail(tailBytes)
		res, err := runBash(ctx, ev, p.arg, p.timeout, out, stderr)
		if err != nil {
			return nil, "", err
		}
		tailText := outputTail(stderr.Bytes(), out.buf)
		switch {
		case res.timedOut:
			return nil, fmt.Sprintf("The command `%s` timed out after %s; its processes were killed. Output tail:\n%s", p.arg, p.timeout, tailText), nil
		case out.overflow:
			return nil, fmt.Sprintf("The command `%s` printed more than %d bytes; a JSON predicate reads at most that: print a smaller document.", p.arg, maxJSONBytes), nil
		case len(bytes.TrimSpace(out.buf)) == 0:
			return nil, fmt.Sprintf("The command `%s` printed nothing on stdout (exit %d); it must print a JSON document. Output tail:\n%s", p.arg, res.exitCode, tailText), nil
		}
		// The exit code is not judged: linters print their JSON report and exit 1 when it
		// lists problems, which is exactly what the expression is there to look at.
		return out.buf, "", nil
	}
	doc = []byte(unfence(ev.Rationale))
	if len(doc) > maxJSONBytes {
		return nil, fmt.Sprintf("The claim's rationale is over %d bytes: give a smaller JSON document.", maxJSONBytes), nil
	}
	if len(bytes.TrimSpace(doc)) == 0 {
		return nil, "The claim's rationale is empty: it must be a JSON document, checked with `" + p.expr + "`.", nil
	}
	return doc, "", nil
}

// unfence strips one ``` code fence around the whole text, which models add around JSON.
func unfence(s string) string {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "```") || !strings.HasSuffix(t, "```") || len(t) < 6 {
		return s
	}
	t = strings.TrimSuffix(strings.TrimPrefix(t, "```"), "```")
	if nl := strings.IndexByte(t, '\n'); nl >= 0 && !strings.ContainsAny(t[:nl], "{[\"") {
		t = t[nl+1:] // the info string: ```json
	}
	return t
}

// readLocalFile reads path inside dir, refusing any way out of it: .., an absolute path, or
// a symlink pointing outside.
func readLocalFile(dir, path string) ([]byte, string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, "", fmt.Errorf("the check's working dir %q cannot be opened: %w", dir, err)
	}
	defer root.Close()
	f, err := root.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Sprintf("The file %s does not exist in %s: write the JSON document there.", path, dir), nil
	case err != nil && strings.Contains(err.Error(), "escapes"):
		return nil, fmt.Sprintf("The file %s leads outside the working dir %s (through a symlink): refused. Put the document inside it.", path, dir), nil
	case err != nil:
		return nil, fmt.Sprintf("The file %s cannot be read: %v", path, err), nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, fmt.Sprintf("%s is a directory, not a JSON file.", path), nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxJSONBytes+1))
	if err != nil {
		return nil, fmt.Sprintf("The file %s cannot be read: %v", path, err), nil
	}
	if len(data) > maxJSONBytes {
		return nil, fmt.Sprintf("The file %s is over %d bytes; a JSON predicate reads at most that.", path, maxJSONBytes), nil
	}
	return data, "", nil
}
