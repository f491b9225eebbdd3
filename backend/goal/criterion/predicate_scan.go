package criterion

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
	"github.com/dop251/goja/token"
)

// compiled is a predicate's program and what its syntax says about it.
type compiled struct {
	program *goja.Program
	// names are the names it reads that it does not declare itself, in order of appearance:
	// the document's fields, json, response, JavaScript's globals, or names the document lacks.
	names []string
	paths []memberPath // what the detail of a failure lists, with values
}

// memberPath is a name followed by constant members: errorCount, response.body.ok, items[0].
type memberPath struct {
	parts []any // a string, then strings (names) and ints (indexes)
	// whole is set for the receiver of a method call: items in items.every(…) is shown in full
	// even when items.length is shown too.
	whole bool
}

// compilePredicate checks and compiles a predicate, and lists the names and paths it reads.
// Everything wrong that can be known without the document is refused here, at goal start.
func compilePredicate(src string) (c compiled, err error) {
	defer func() {
		// The parser reads what a user typed; a bug of its own must not take the app down.
		if r := recover(); r != nil {
			c, err = compiled{}, fmt.Errorf("the expression could not be parsed (the JavaScript parser failed: %v): simplify it", r)
		}
	}()
	if len(src) > maxExprBytes {
		return compiled{}, fmt.Errorf("the expression is %d bytes, over the limit of %d: a predicate is one check, not a program; move the logic into a command: source", len(src), maxExprBytes)
	}
	// Source maps are off: a sourceMappingURL comment would otherwise make the parser read a file.
	tree, err := parser.ParseFile(nil, "", src, 0, parser.WithDisableSourceMaps)
	if err != nil {
		return compiled{}, fmt.Errorf("the expression does not compile: %s\nWrite a JavaScript true/false check such as %s", syntaxMessage(err), exampleChecks)
	}
	program, err := goja.CompileAST(tree, false)
	if err != nil {
		return compiled{}, fmt.Errorf("the expression does not compile: %s\nWrite a JavaScript true/false check such as %s", syntaxMessage(err), exampleChecks)
	}
	s := scanner{declared: map[string]bool{}}
	s.walk(nodes(tree.Body)...)
	if s.nodes > maxExprNodes {
		return compiled{}, fmt.Errorf("the expression has %d syntax nodes, over the limit of %d: a predicate is one check, not a program; move the logic into a command: source", s.nodes, maxExprNodes)
	}
	for _, name := range s.assigns {
		if !s.declared[name] {
			return compiled{}, fmt.Errorf("the expression assigns to %s with `=`: a predicate only reads the document; to compare, write `===`, e.g. `%s === true`", name, name)
		}
	}
	globals := goja.New().GlobalObject()
	for _, name := range s.calls {
		if !s.declared[name] && globals.Get(name) == nil {
			return compiled{}, fmt.Errorf("the expression calls %s, which is no function here: JSON holds no functions; use JavaScript's own (items.length, name.includes(\"x\"), items.every(i => i.ok), Math.max(...values), Object.keys(obj), …)", name)
		}
	}
	if last := lastExpression(tree); last != nil {
		if what := neverBoolean(last); what != "" {
			return compiled{}, fmt.Errorf("the expression gives %s, never true or false: write a check such as %s", what, exampleChecks)
		}
	}
	var names []string
	for _, name := range s.refs {
		if !s.declared[name] {
			names = append(names, name)
		}
	}
	return compiled{program: program, names: names, paths: s.result()}, nil
}

const exampleChecks = "`errorCount === 0`, `items.length > 0` or `response.status === 200 && response.body.ok === true`"

// syntaxMessage says where the parser or compiler stopped, without the file name it was given.
func syntaxMessage(err error) string {
	var list parser.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		e := list[0]
		msg := fmt.Sprintf("SyntaxError: %s (line %d, column %d)", e.Message, e.Position.Line, e.Position.Column)
		if len(list) > 1 {
			msg += fmt.Sprintf(" and %d more", len(list)-1)
		}
		return msg
	}
	var syn *goja.CompilerSyntaxError
	if errors.As(err, &syn) {
		return "SyntaxError: " + syn.Message
	}
	return err.Error()
}

// lastExpression is the predicate's last statement when it is an expression: its value is
// the script's result.
func lastExpression(tree *ast.Program) ast.Expression {
	for i := len(tree.Body) - 1; i >= 0; i-- {
		switch st := tree.Body[i].(type) {
		case *ast.EmptyStatement:
			continue
		case *ast.ExpressionStatement:
			return st.Expression
		}
		return nil
	}
	return nil
}

// neverBoolean says what an expression gives when no document can make it a boolean
// ("a number"), and "" when it may be one.
func neverBoolean(e ast.Expression) string {
	switch e := e.(type) {
	case *ast.NumberLiteral:
		return "a number"
	case *ast.StringLiteral:
		return "a string"
	case *ast.TemplateLiteral:
		if e.Tag == nil {
			return "a string"
		}
	case *ast.NullLiteral:
		return "null"
	case *ast.ObjectLiteral:
		return "an object"
	case *ast.ArrayLiteral:
		return "an array"
	case *ast.RegExpLiteral:
		return "a regular expression"
	case *ast.FunctionLiteral, *ast.ArrowFunctionLiteral, *ast.ClassLiteral:
		return "a function"
	case *ast.BinaryExpression:
		switch e.Operator {
		case token.PLUS:
			return "a number or a string"
		case token.MINUS, token.MULTIPLY, token.SLASH, token.REMAINDER, token.EXPONENT,
			token.AND, token.OR, token.EXCLUSIVE_OR, token.SHIFT_LEFT, token.SHIFT_RIGHT, token.UNSIGNED_SHIFT_RIGHT:
			return "a number"
		}
	case *ast.UnaryExpression:
		switch e.Operator {
		case token.TYPEOF:
			return "a string"
		case token.VOID:
			return "undefined"
		case token.MINUS, token.PLUS, token.BITWISE_NOT, token.INCREMENT, token.DECREMENT:
			return "a number"
		}
	}
	return ""
}

// scanner walks a predicate's syntax tree and notes what it reads, declares, calls and assigns.
// It need not be exact: a name noted as read but never read costs nothing, and a name it
// misses behaves as JavaScript says (a ReferenceError at run time).
type scanner struct {
	nodes    int
	refs     []string        // names read, in order of first appearance
	declared map[string]bool // names the predicate binds itself: let, const, var, parameters, functions
	paths    []memberPath
	calls    []string // names called as f(…)
	assigns  []string // names assigned with a plain =
}

func (s *scanner) ref(name string) {
	if !slices.Contains(s.refs, name) {
		s.refs = append(s.refs, name)
	}
}

// path notes e when it is a member path, and marks it whole when it is a call's receiver.
func (s *scanner) path(e ast.Expression, whole bool) {
	parts, ok := pathOf(e)
	if !ok {
		return
	}
	for i, p := range s.paths {
		if formatPath(p.parts) == formatPath(parts) {
			s.paths[i].whole = s.paths[i].whole || whole
			return
		}
	}
	s.paths = append(s.paths, memberPath{parts: parts, whole: whole})
}

// pathOf returns the path an expression reads when it is a name followed by constant members.
func pathOf(e ast.Expression) ([]any, bool) {
	switch e := e.(type) {
	case *ast.Identifier:
		return []any{e.Name.String()}, true
	case *ast.Optional:
		return pathOf(e.Expression)
	case *ast.OptionalChain:
		return pathOf(e.Expression)
	case *ast.DotExpression:
		if base, ok := pathOf(e.Left); ok {
			return append(slices.Clip(base), e.Identifier.Name.String()), true
		}
	case *ast.BracketExpression:
		base, ok := pathOf(e.Left)
		if !ok {
			return nil, false
		}
		switch m := e.Member.(type) {
		case *ast.StringLiteral:
			return append(slices.Clip(base), m.Value.String()), true
		case *ast.NumberLiteral:
			if i, ok := m.Value.(int64); ok && i >= 0 && i <= 1<<31 {
				return append(slices.Clip(base), int(i)), true
			}
		}
	}
	return nil, false
}

// result keeps the paths worth listing: the longest (response.body.ok says more than response
// or response.body), and the receivers of method calls; none that the predicate binds itself.
func (s *scanner) result() []memberPath {
	var out []memberPath
	for _, p := range s.paths {
		if s.declared[p.parts[0].(string)] {
			continue
		}
		key := formatPath(p.parts)
		longer := slices.ContainsFunc(s.paths, func(q memberPath) bool {
			return len(q.parts) > len(p.parts) && formatPath(q.parts[:len(p.parts)]) == key
		})
		if longer && !p.whole {
			continue
		}
		out = append(out, p)
	}
	return out
}

// node walks a statement or an expression: the nodes that read, call, assign or bind names
// here, every other through its children (see children).
func (s *scanner) node(n ast.Node) {
	if n == nil {
		return
	}
	s.nodes++
	switch n := n.(type) {
	case *ast.VariableStatement:
		s.bindings(n.List)
	case *ast.LexicalDeclaration:
		s.bindings(n.List)
	case *ast.ForStatement:
		switch init := n.Initializer.(type) {
		case *ast.ForLoopInitializerExpression:
			s.node(init.Expression)
		case *ast.ForLoopInitializerVarDeclList:
			s.bindings(init.List)
		case *ast.ForLoopInitializerLexicalDecl:
			s.bindings(init.LexicalDeclaration.List)
		}
		s.walk(n.Test, n.Update, n.Body)
	case *ast.ForInStatement:
		s.forInto(n.Into)
		s.walk(n.Source, n.Body)
	case *ast.ForOfStatement:
		s.forInto(n.Into)
		s.walk(n.Source, n.Body)
	case *ast.TryStatement:
		s.node(n.Body)
		if n.Catch != nil {
			s.declare(n.Catch.Parameter)
			s.node(n.Catch.Body)
		}
		if n.Finally != nil {
			s.node(n.Finally)
		}
	case *ast.SwitchStatement:
		s.node(n.Discriminant)
		for _, c := range n.Body {
			s.node(c.Test)
			s.walk(nodes(c.Consequent)...)
		}
	case *ast.Identifier:
		s.ref(n.Name.String())
		s.path(n, false)
	case *ast.DotExpression:
		s.path(n, false)
		s.node(n.Left)
	case *ast.BracketExpression:
		s.path(n, false)
		s.walk(n.Left, n.Member)
	case *ast.CallExpression:
		s.callee(n.Callee)
		s.walk(nodes(n.ArgumentList)...)
	case *ast.AssignExpression:
		if id, ok := n.Left.(*ast.Identifier); ok && n.Operator == token.ASSIGN {
			s.assigns = append(s.assigns, id.Name.String())
		}
		s.walk(n.Left, n.Right)
	case *ast.ObjectLiteral:
		s.properties(n.Value)
	case *ast.ObjectPattern: // the target of a destructuring assignment
		s.properties(n.Properties)
		s.node(n.Rest)
	case *ast.ArrowFunctionLiteral:
		s.params(n.ParameterList)
		switch body := n.Body.(type) {
		case *ast.BlockStatement:
			s.node(body)
		case *ast.ExpressionBody:
			s.node(body.Expression)
		}
	case *ast.FunctionLiteral:
		if n.Name != nil {
			s.declared[n.Name.Name.String()] = true
		}
		s.params(n.ParameterList)
		if n.Body != nil {
			s.node(n.Body)
		}
	case *ast.ClassLiteral:
		if n.Name != nil {
			s.declared[n.Name.Name.String()] = true
		}
		s.node(n.SuperClass)
		for _, el := range n.Body {
			switch el := el.(type) {
			case *ast.FieldDefinition:
				s.member(el.Computed, el.Key, el.Initializer)
			case *ast.MethodDefinition:
				s.member(el.Computed, el.Key, el.Body)
			case *ast.ClassStaticBlock:
				s.node(el.Block)
			}
		}
	case *ast.Binding:
		s.declare(n)
	default:
		s.walk(children(n)...)
	}
}

// children are the parts of a node that reads and binds nothing itself, in source order:
// walking it is walking them. Listed by how many they are; a kind of node listed nowhere (a
// literal) has none.
func children(n ast.Node) []ast.Node {
	switch n := n.(type) {
	case *ast.ExpressionStatement:
		return []ast.Node{n.Expression}
	case *ast.FunctionDeclaration:
		return []ast.Node{n.Function}
	case *ast.ClassDeclaration:
		return []ast.Node{n.Class}
	case *ast.ReturnStatement:
		return []ast.Node{n.Argument}
	case *ast.ThrowStatement:
		return []ast.Node{n.Argument}
	case *ast.LabelledStatement:
		return []ast.Node{n.Statement}
	case *ast.PrivateDotExpression:
		return []ast.Node{n.Left}
	case *ast.OptionalChain:
		return []ast.Node{n.Expression}
	case *ast.Optional:
		return []ast.Node{n.Expression}
	case *ast.UnaryExpression:
		return []ast.Node{n.Operand}
	case *ast.SpreadElement:
		return []ast.Node{n.Expression}
	case *ast.YieldExpression:
		return []ast.Node{n.Argument}
	case *ast.AwaitExpression:
		return []ast.Node{n.Argument}
	case *ast.WhileStatement:
		return []ast.Node{n.Test, n.Body}
	case *ast.DoWhileStatement:
		return []ast.Node{n.Test, n.Body}
	case *ast.WithStatement:
		return []ast.Node{n.Object, n.Body}
	case *ast.BinaryExpression:
		return []ast.Node{n.Left, n.Right}
	case *ast.IfStatement:
		return []ast.Node{n.Test, n.Consequent, n.Alternate}
	case *ast.ConditionalExpression:
		return []ast.Node{n.Test, n.Consequent, n.Alternate}
	case *ast.BlockStatement:
		if n != nil {
			return nodes(n.List)
		}
	case *ast.NewExpression:
		return append([]ast.Node{n.Callee}, nodes(n.ArgumentList)...)
	case *ast.SequenceExpression:
		return nodes(n.Sequence)
	case *ast.ArrayLiteral:
		return nodes(n.Value)
	case *ast.ArrayPattern: // the target of a destructuring assignment
		return append(nodes(n.Elements), n.Rest)
	case *ast.TemplateLiteral:
		return append([]ast.Node{n.Tag}, nodes(n.Expressions)...)
	}
	return nil
}

// nodes is a list of statements or expressions as nodes.
func nodes[N ast.Node](list []N) []ast.Node {
	out := make([]ast.Node, len(list))
	for i, n := range list {
		out[i] = n
	}
	return out
}

// walk walks each node in turn; a nil one is skipped, as node skips it.
func (s *scanner) walk(list ...ast.Node) {
	for _, n := range list {
		s.node(n)
	}
}

func (s *scanner) forInto(into ast.ForInto) {
	switch into := into.(type) {
	case *ast.ForIntoVar:
		s.bindings([]*ast.Binding{into.Binding})
	case *ast.ForDeclaration:
		s.declare(into.Target)
	case *ast.ForIntoExpression:
		s.node(into.Expression)
	}
}

func (s *scanner) bindings(list []*ast.Binding) {
	for _, b := range list {
		if b == nil {
			continue
		}
		s.declare(b.Target)
		s.node(b.Initializer)
	}
}

func (s *scanner) params(pl *ast.ParameterList) {
	if pl == nil {
		return
	}
	s.bindings(pl.List)
	s.declare(pl.Rest)
}

// declare notes the names a binding target binds: x, {a, b: [c = 1], ...d}.
func (s *scanner) declare(target ast.Expression) {
	switch t := target.(type) {
	case *ast.Identifier:
		s.nodes++
		s.declared[t.Name.String()] = true
	case *ast.ObjectPattern:
		s.nodes++
		for _, prop := range t.Properties {
			switch prop := prop.(type) {
			case *ast.PropertyShort:
				s.declared[prop.Name.Name.String()] = true
				s.node(prop.Initializer)
			case *ast.PropertyKeyed:
				if prop.Computed {
					s.node(prop.Key)
				}
				s.declare(prop.Value)
			}
		}
		s.declare(t.Rest)
	case *ast.ArrayPattern:
		s.nodes++
		for _, el := range t.Elements {
			s.declare(el)
		}
		s.declare(t.Rest)
	case *ast.AssignExpression: // a default: [a = 1]
		s.declare(t.Left)
		s.node(t.Right)
	case *ast.Binding:
		s.declare(t.Target)
		s.node(t.Initializer)
	}
}

// callee walks what is called: a name (noted, so that calling what cannot be a function is
// refused), or a method, whose receiver is listed in full in a failure's detail.
func (s *scanner) callee(e ast.Expression) {
	inner := e
	if opt, ok := inner.(*ast.Optional); ok {
		inner = opt.Expression
	}
	switch c := inner.(type) {
	case *ast.Identifier:
		s.nodes++
		s.calls = append(s.calls, c.Name.String())
		s.ref(c.Name.String())
	case *ast.DotExpression:
		s.nodes++
		s.path(c.Left, true)
		s.node(c.Left)
	case *ast.BracketExpression:
		s.nodes++
		s.path(c.Left, true)
		s.walk(c.Left, c.Member)
	default:
		s.node(e)
	}
}

// member walks a class member or an object property: its key only when computed ([k]: v),
// since a plain key is a name, not something read; then its value.
func (s *scanner) member(computed bool, key ast.Expression, value ast.Node) {
	if computed {
		s.node(key)
	}
	s.walk(value)
}

func (s *scanner) properties(props []ast.Property) {
	for _, prop := range props {
		switch prop := prop.(type) {
		case *ast.PropertyShort:
			s.nodes++
			s.ref(prop.Name.Name.String())
			s.path(&prop.Name, false)
			s.node(prop.Initializer)
		case *ast.PropertyKeyed:
			s.nodes++
			s.member(prop.Computed, prop.Key, prop.Value)
		case *ast.SpreadElement:
			s.node(prop.Expression)
		}
	}
}

// formatPath writes a path as JavaScript would: response.body.ok, items[0], json["error-rate"].
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
