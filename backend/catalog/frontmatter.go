package catalog

import (
	"errors"
	"fmt"
	"strings"

	"github.com/clusterspace/clusterspace/backend/internal/fileloc"
	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Problem is one thing wrong with a file of the config dir: which file, which line (1-based;
// 0 when the file as a whole is wrong), which field, and what to do. A file with a problem
// is not loaded (a built-in of the same id stays in use); every other file still is.
type Problem struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

func (p Problem) Error() string {
	return fileloc.String(p.File, p.Line, p.Field) + ": " + p.Message
}

// document is a file split into its front matter fields and its body.
type document struct {
	file string
	// fields maps each front matter key to its value node and the line it is on (in the
	// file, counting the opening ---).
	fields map[string]field
	order  []string
	body   string
}

type field struct {
	node ast.Node
	line int
}

// problem is a Problem at a field of this document.
func (d *document) problem(key, format string, args ...any) *Problem {
	line := 0
	if f, ok := d.fields[key]; ok {
		line = f.line
	}
	return &Problem{File: d.file, Line: line, Field: key, Message: fmt.Sprintf(format, args...)}
}

// splitFrontMatter reads "---\nYAML\n---\nbody". A file without front matter is a problem:
// every kind needs at least a name. yamlOnly files (a pane template's .yaml) are all front
// matter and have no body.
func splitFrontMatter(file string, data []byte, yamlOnly bool) (*document, *Problem) {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	offset := 0 // lines before the YAML starts
	var fm, body string
	if yamlOnly {
		fm = text
	} else {
		if !strings.HasPrefix(text, "---\n") {
			return nil, &Problem{File: file, Line: 1, Field: "front matter",
				Message: "the file must start with a line \"---\", then the fields (name: …), then another \"---\" line, then the text"}
		}
		rest := text[len("---\n"):]
		end := -1
		if strings.HasPrefix(rest, "---\n") || rest == "---" {
			end = 0
		} else if i := strings.Index(rest, "\n---\n"); i >= 0 {
			end = i + 1
		} else if strings.HasSuffix(rest, "\n---") {
			end = len(rest) - len("---")
		}
		if end < 0 {
			return nil, &Problem{File: file, Line: 1, Field: "front matter",
				Message: "the front matter is never closed: add a line \"---\" after the fields"}
		}
		fm = rest[:end]
		body = strings.TrimPrefix(rest[end:], "---")
		body = strings.TrimPrefix(body, "\n")
		offset = 1
	}
	d := &document{file: file, fields: map[string]field{}, body: strings.TrimSpace(body)}
	if strings.TrimSpace(fm) == "" {
		return d, nil
	}
	f, err := parser.ParseBytes([]byte(fm), 0)
	if err != nil {
		return nil, yamlProblem(file, offset, "front matter", err)
	}
	if len(f.Docs) != 1 {
		return nil, &Problem{File: file, Line: 1, Field: "front matter", Message: "holds more than one YAML document; keep one block of fields"}
	}
	var values []*ast.MappingValueNode
	switch n := f.Docs[0].Body.(type) {
	case nil:
		return d, nil
	case *ast.MappingNode:
		values = n.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{n}
	default:
		return nil, &Problem{File: file, Line: offset + n.GetToken().Position.Line, Field: "front matter",
			Message: "must be fields, one \"key: value\" a line"}
	}
	for _, mv := range values {
		key := strings.TrimSpace(mv.Key.String())
		line := offset + mv.Key.GetToken().Position.Line
		if _, dup := d.fields[key]; dup {
			return nil, &Problem{File: file, Line: line, Field: key, Message: "is given twice; keep one"}
		}
		d.fields[key] = field{node: mv.Value, line: line}
		d.order = append(d.order, key)
	}
	return d, nil
}

// yamlProblem turns a YAML error into a Problem at its line.
func yamlProblem(file string, offset int, fieldName string, err error) *Problem {
	p := &Problem{File: file, Field: fieldName, Message: "is not valid YAML: " + oneLine(err.Error())}
	var ye yaml.Error
	if errors.As(err, &ye) {
		p.Message = "is not valid YAML: " + oneLine(ye.GetMessage())
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			p.Line = offset + tk.Position.Line
		}
	}
	return p
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// decoder reads a document's fields by kind, collecting the first problem.
type decoder struct {
	doc   *document
	known []string // the keys this kind has, in the order the message lists them
	err   *Problem
}

// decoderFor starts reading d as an item of a kind whose other keys are known. Every kind has
// a name, which is the item's id when the file gives none, and a description, left as it is
// (a kind may default it) when the file gives none; the two come first in the list of keys
// an unknown one is answered with.
func (d *document) decoderFor(id string, name, description *string, known ...string) *decoder {
	dc := &decoder{doc: d, known: append([]string{"name", "description"}, known...)}
	dc.check()
	if dc.str("name", name); *name == "" {
		*name = id
	}
	dc.str("description", description)
	return dc
}

// check reports an unknown key, naming the ones the kind has.
func (dc *decoder) check() {
	for _, k := range dc.doc.order {
		found := false
		for _, kk := range dc.known {
			if k == kk {
				found = true
			}
		}
		if !found && dc.err == nil {
			dc.err = dc.doc.problem(k, "unknown field; use %s", strings.Join(dc.known, ", "))
		}
	}
}

func (dc *decoder) decode(key string, dst any, want string) bool {
	f, ok := dc.doc.fields[key]
	if !ok || dc.err != nil {
		return false
	}
	if _, null := f.node.(*ast.NullNode); null {
		return false
	}
	if err := yaml.NodeToValue(f.node, dst, yaml.Strict()); err != nil {
		dc.err = dc.doc.problem(key, "must be %s", want)
		return false
	}
	return true
}

func (dc *decoder) str(key string, dst *string) {
	var v any
	if !dc.decode(key, &v, "text") {
		return
	}
	switch v.(type) {
	case string, int, uint64, int64, float64, bool:
		*dst = strings.TrimSpace(fmt.Sprint(v))
	default:
		dc.err = dc.doc.problem(key, "must be text on one line (quote it if it has a colon)")
	}
}

func (dc *decoder) strs(key string, dst *[]string) {
	var v any
	if !dc.decode(key, &v, "a list") {
		return
	}
	switch v := v.(type) {
	case string:
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				*dst = append(*dst, s)
			}
		}
	case []any:
		for _, e := range v {
			switch e.(type) {
			case string, int, uint64, int64, float64:
				*dst = append(*dst, strings.TrimSpace(fmt.Sprint(e)))
			default:
				dc.err = dc.doc.problem(key, "must be a list of words, such as [a, b]")
				return
			}
		}
	default:
		dc.err = dc.doc.problem(key, "must be a list, such as [a, b]")
	}
}

func (dc *decoder) number(key string, dst **float64) {
	var v float64
	if dc.decode(key, &v, "a number") {
		*dst = &v
	}
}

func (dc *decoder) integer(key string, dst *int) {
	var v int
	dc.decode(key, &v, "a whole number")
	*dst = v
}

// raw decodes a field into a typed value (a list of steps, a map of parameters).
func (dc *decoder) raw(key string, dst any, want string) { dc.decode(key, dst, want) }
