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
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"
)

const (
	// maxJSONBytes bounds the document a predicate reads: far above any status report, well
	// below what would strain memory once parsed.
	maxJSONBytes = 4 << 20
	// maxExprNodes bounds an expression's size; a predicate is a line, not a program.
	maxExprNodes = 1000
	// exprMemoryBudget is expr's own cap on what one evaluation allocates (ranges, maps,
	// filtered lists); with maxJSONBytes it keeps loops over the document finite.
	exprMemoryBudget = 1_000_000
	// evalTimeout is the wall-clock bound on one evaluation; a true/false check of a parsed
	// document takes microseconds, so hitting it means a pathological expression.
	evalTimeout = 2 * time.Second
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

// predicate is a json_predicate: an expr expression that must be true of a JSON document.
type predicate struct {
	expr    string      // as the user wrote it
	program *vm.Program // compiled from the rewritten expression
	paths   [][]any     // the names and member paths it reads, for explaining a failure
	source  string      // sourceClaim, sourceFile or sourceCommand
	arg     string      // the file path or command
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
		return nil, fieldErr("expr", "a json_predicate needs an expression that is true when the goal is done, e.g. \"errorCount == 0\"")
	}
	program, paths, err := compilePredicate(spec.Expr)
	if err != nil {
		return nil, fieldErr("expr", "%v", err)
	}
	p.program, p.paths = program, paths
	return p, nil
}

// compilePredicate checks and compiles an expression, and lists the paths it reads.
func compilePredicate(src string) (*vm.Program, [][]any, error) {
	code := rewriteJSOperators(src)
	opts := []expr.Option{expr.AllowUndefinedVariables(), expr.MaxNodes(maxExprNodes)}
	// With AsBool the checker refuses what is certainly not a boolean ("1 + 2"); names from
	// the document are of unknown type until it is read, so Verify checks the rest.
	if _, err := expr.Compile(code, append(opts, expr.AsBool())...); err != nil {
		return nil, nil, fmt.Errorf("the expression does not compile: %v\nWrite a true/false check such as `errorCount == 0` or `response.status === 200 && response.body.ok === true`", err)
	}
	program, err := expr.Compile(code, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("the expression does not compile: %v", err)
	}
	tree, err := parser.Parse(code)
	if err != nil {
		return nil, nil, fmt.Errorf("the expression does not compile: %v", err)
	}
	var c pathCollector
	ast.Walk(&tree.Node, &c)
	if c.call != "" {
		return nil, nil, fmt.Errorf("the expression calls %s, which is no function here: use expr's built-in functions (len, all, any, none, filter, map, count, contains, startsWith, …) and the document's fields", c.call)
	}
	return program, c.result(), nil
}

// rewriteJSOperators turns JavaScript's === and !== into expr's == and != outside string
// literals, so expressions can be written as in JavaScript.
func rewriteJSOperators(src string) string {
	var b strings.Builder
	var quote byte // the open string literal's quote, or 0
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case quote != 0:
			b.WriteByte(c)
			if c == '\\' && quote != '`' && i+1 < len(src) {
				i++
				b.WriteByte(src[i])
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
			b.WriteByte(c)
		case strings.HasPrefix(src[i:], "==="):
			b.WriteString("==")
			i += 2
		case strings.HasPrefix(src[i:], "!=="):
			b.WriteString("!=")
			i += 2
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// pathCollector gathers the names and constant member paths an expression reads
// (errorCount, response.body.ok, items[0]); names bound by let are its own, not the document's.
type pathCollector struct {
	paths [][]any
	lets  []string
	call  string // the first call of a non-builtin, which can never work on JSON
}

func (c *pathCollector) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.VariableDeclaratorNode:
		c.lets = append(c.lets, n.Name)
	case *ast.CallNode:
		if c.call == "" {
			c.call = n.Callee.String()
		}
	}
	if p, ok := memberPath(*node); ok {
		c.paths = append(c.paths, p)
	}
}

// memberPath returns the path a node reads when it is a name followed by constant members.
func memberPath(node ast.Node) ([]any, bool) {
	switch n := node.(type) {
	case *ast.IdentifierNode:
		return []any{n.Value}, true
	case *ast.ChainNode:
		return memberPath(n.Node)
	case *ast.MemberNode:
		base, ok := memberPath(n.Node)
		if !ok {
			return nil, false
		}
		switch prop := n.Property.(type) {
		case *ast.StringNode:
			return append(slices.Clone(base), prop.Value), true
		case *ast.IntegerNode:
			return append(slices.Clone(base), prop.Value), true
		}
	}
	return nil, false
}

// result keeps the longest paths: response.body.ok says more than response or response.body.
func (c *pathCollector) result() [][]any {
	var out [][]any
	seen := map[string]bool{}
	for _, p := range c.paths {
		root := p[0].(string)
		if strings.HasPrefix(root, "$") || root == "null" || root == "undefined" || slices.Contains(c.lets, root) {
			continue
		}
		key := formatPath(p)
		if seen[key] || slices.ContainsFunc(c.paths, func(q []any) bool { return len(q) > len(p) && formatPath(q[:len(p)]) == key }) {
			continue
		}
		seen[key] = true
		out = append(out, p)
	}
	return out
}

func formatPath(p []any) string {
	var b strings.Builder
	for i, part := range p {
		switch v := part.(type) {
		case string:
			if i > 0 {
				if isIdent(v) {
					b.WriteByte('.')
				} else {
					fmt.Fprintf(&b, "[%q]", v)
					continue
				}
			}
			b.WriteString(v)
		case int:
			fmt.Fprintf(&b, "[%d]", v)
		}
	}
	return b.String()
}

func isIdent(s string) bool {
	for i, r := range s {
		if !(r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
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
	var value any
	if err := json.Unmarshal(doc, &value); err != nil {
		name := p.sourceName()
		return Verdict{Detail: fmt.Sprintf("%s%s is not valid JSON (%v); it starts: %q", strings.ToUpper(name[:1]), name[1:], err, clip(string(doc), jsonPreviewChars))}, nil
	}
	env := environment(value)
	out, err := p.run(ctx, env)
	values := p.explain(env)
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		if ctx.Err() != nil {
			return Verdict{}, fmt.Errorf("the check was stopped: %w", ctx.Err())
		}
		return Verdict{Detail: fmt.Sprintf("The expression `%s` took longer than %s to evaluate: simplify it.", p.expr, evalTimeout)}, nil
	case err != nil:
		return Verdict{Detail: fmt.Sprintf("The expression `%s` could not be evaluated on %s: %v\nValues: %s", p.expr, p.sourceName(), err, values)}, nil
	}
	b, ok := out.(bool)
	switch {
	case !ok:
		return Verdict{Detail: fmt.Sprintf("The expression `%s` gave %s, not true or false: make it a comparison, e.g. `errorCount == 0`.\nValues: %s", p.expr, describeValue(out), values)}, nil
	case !b:
		return Verdict{Detail: fmt.Sprintf("The expression `%s` is false for %s.\nValues: %s", p.expr, p.sourceName(), values)}, nil
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
		res, err := runBash(ctx, ev.WorkDir, p.arg, p.timeout, out, stderr)
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

// environment exposes the document as its top-level fields and as a whole (json, response).
func environment(value any) map[string]any {
	env := map[string]any{}
	if obj, ok := value.(map[string]any); ok {
		for k, v := range obj {
			env[k] = v
		}
	}
	if _, taken := env[responseName]; !taken {
		env[responseName] = value
	}
	env[wholeName] = value
	return env
}

// run evaluates the program with a time limit. expr's VM cannot be interrupted, so a run past
// the limit is abandoned; its memory budget makes it end on its own soon after.
func (p predicate) run(ctx context.Context, env map[string]any) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, evalTimeout)
	defer cancel()
	type result struct {
		out any
		err error
	}
	done := make(chan result, 1)
	go func() {
		machine := vm.VM{MemoryBudget: exprMemoryBudget}
		out, err := machine.Run(p.program, env)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		return r.out, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// explain lists the paths the expression reads with their values in env.
func (p predicate) explain(env map[string]any) string {
	if len(p.paths) == 0 {
		return "(the expression reads no field of the document)"
	}
	var parts []string
	for i, path := range p.paths {
		if i == maxListedValues {
			parts = append(parts, fmt.Sprintf("… and %d more", len(p.paths)-i))
			break
		}
		v, ok := lookup(env, path)
		shown := "undefined (not in the JSON)"
		if ok {
			shown = clip(jsonText(v), maxValueChars)
		}
		parts = append(parts, formatPath(path)+" = "+shown)
	}
	return strings.Join(parts, ", ")
}

// lookup follows path through maps and lists.
func lookup(env map[string]any, path []any) (any, bool) {
	var cur any = env
	for _, part := range path {
		switch key := part.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[key]; !ok {
				return nil, false
			}
		case int:
			list, ok := cur.([]any)
			if !ok {
				return nil, false
			}
			if key < 0 {
				key += len(list) // expr, like Python, counts negative indexes from the end
			}
			if key < 0 || key >= len(list) {
				return nil, false
			}
			cur = list[key]
		}
	}
	return cur, true
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// describeValue names a non-boolean result's type and shows it.
func describeValue(v any) string {
	var kind string
	switch x := v.(type) {
	case nil:
		return "nil (nothing: a name not in the JSON?)"
	case float64, int, int64, float32:
		kind = "a number"
	case string:
		kind = "a string"
	case []any:
		kind = "a list of " + strconv.Itoa(len(x))
	case map[string]any:
		kind = "an object"
	default:
		kind = fmt.Sprintf("a %T", v)
	}
	return kind + " (" + clip(jsonText(v), maxValueChars) + ")"
}
