// Package plugins loads the JavaScript tool plugins people keep in the config dir
// (tools/NAME.js) and offers them to the agent as tools. A plugin is a CommonJS module run in
// an embedded engine (goja) with no file system, network or require of its own:
//
//	module.exports = {
//	  name: "word_count", description: "…", risk: "read_only",
//	  parameters: {type: "object", properties: {text: {type: "string"}}, required: ["text"]},
//	  run(args, ctx) { return {words: args.text.split(/\s+/).length} },
//	}
//
// Its risk is what the policy judges each call by (missing or unknown: network_write); its
// parameters are a JSON schema the arguments are checked against before it runs. Each call
// runs in a fresh runtime, bounded in time and memory (see run.go). The directory is
// re-read when a file in it changes; a file that does not load is kept as a LoadError with
// its file and line, and the other plugins go on.
package plugins

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"

	"github.com/clusterspace/clusterspace/backend/internal/fileloc"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// rescanEvery is how often at most the tools dir is looked at for changes: often enough
// that a saved file is offered by the model's next turn, rarely enough to cost nothing.
const rescanEvery = 500 * time.Millisecond

// namePattern is what a plugin's name may be: what both model APIs accept as a tool name,
// and never the mcp__ prefix MCP tools are offered under.
var namePattern = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_-]{0,63}$`)

// Plugin is a loaded plugin as Settings shows it.
type Plugin struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Risk        tools.Risk      `json:"risk"`
	File        string          `json:"file"`
	Schema      json.RawMessage `json:"schema"`
	// Note says what was assumed: a risk missing or unknown counted as network_write.
	Note string `json:"note,omitempty"`
}

// LoadError is a file that did not load, where and why.
type LoadError struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

func (e LoadError) Error() string {
	return "plugin " + fileloc.String(e.File, e.Line, e.Field) + ": " + e.Message
}

// Status is the plugins of the tools dir and the files that did not load.
type Status struct {
	Dir     string      `json:"dir"`
	Plugins []Plugin    `json:"plugins"`
	Errors  []LoadError `json:"errors"`
}

// Options bound the plugins' calls; zero values take the defaults in run.go.
type Options struct {
	CallTimeout time.Duration
	MemoryLimit uint64
	// HTTPClient makes ctx.fetch's requests (default: one with FetchTimeout).
	HTTPClient *http.Client
	// Hidden are dirs ctx.readFile never reads, even inside the caller's dir: the app's
	// data dir (its database, its keys).
	Hidden []string
}

// Set is the plugins of one tools dir, a tools.Source.
type Set struct {
	dir     string
	builtin func(name string) bool
	opts    Options

	// beforeOpen, set only by tests, runs between ctx.readFile's check of a path and its open:
	// where a link can be swapped.
	beforeOpen func(path string)

	mu       sync.Mutex
	lastScan time.Time
	stamp    string
	plugins  []*plugin
	errs     []LoadError
}

// New returns the plugins of configDir/tools. builtin reports the names of tools registered
// in code, which a plugin may not take.
func New(configDir string, builtin func(name string) bool, opts Options) *Set {
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = CallTimeout
	}
	if opts.MemoryLimit == 0 {
		opts.MemoryLimit = MemoryLimit
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: FetchTimeout}
	}
	return &Set{dir: filepath.Join(configDir, "tools"), builtin: builtin, opts: opts}
}

// Kind names the source on tool definitions.
func (s *Set) Kind() string { return "plugin" }

// Tools offers the plugins that loaded.
func (s *Set) Tools() []tools.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scan()
	out := make([]tools.Tool, len(s.plugins))
	for i, p := range s.plugins {
		out[i] = p
	}
	return out
}

// Problems lists the files that did not load.
func (s *Set) Problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scan()
	var out []string
	for _, e := range s.errs {
		out = append(out, e.Error()+" (the plugin is not offered; fix the file and it loads on its own)")
	}
	return out
}

// Status lists the plugins and load errors, re-reading the dir if it changed.
func (s *Set) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scan()
	st := Status{Dir: s.dir, Plugins: []Plugin{}, Errors: slices.Clone(s.errs)}
	if st.Errors == nil {
		st.Errors = []LoadError{}
	}
	for _, p := range s.plugins {
		st.Plugins = append(st.Plugins, Plugin{Name: p.name, Description: p.desc, Risk: p.risk, File: p.file, Schema: p.args.JSON(), Note: p.note})
	}
	return st
}

// scan reloads every plugin when a file in the dir was added, removed or changed. s.mu held.
func (s *Set) scan() {
	if time.Since(s.lastScan) < rescanEvery && !s.lastScan.IsZero() {
		return
	}
	s.lastScan = time.Now()
	entries, err := os.ReadDir(s.dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		s.plugins, s.stamp = nil, "error"
		s.errs = []LoadError{{File: s.dir, Message: fmt.Sprintf("cannot read the plugins dir (%v)", err)}}
		return
	}
	var files []string
	var stamp strings.Builder
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".js") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // Best effort: removed while we looked; the next scan sees it gone.
		}
		files = append(files, filepath.Join(s.dir, e.Name()))
		fmt.Fprintf(&stamp, "%s|%d|%d\n", e.Name(), info.Size(), info.ModTime().UnixNano())
	}
	if stamp.String() == s.stamp {
		return
	}
	s.stamp = stamp.String()
	s.plugins, s.errs = nil, nil
	byName := map[string]string{}
	for _, f := range files {
		p, err := s.load(f)
		if err != nil {
			var le LoadError
			if !errors.As(err, &le) {
				le = LoadError{File: f, Message: err.Error()}
			}
			s.errs = append(s.errs, le)
			continue
		}
		if other, dup := byName[p.name]; dup {
			s.errs = append(s.errs, LoadError{File: f, Line: lineOf(p.src, "name"), Field: "name",
				Message: fmt.Sprintf("%q is already the name of the plugin in %s: rename one of them", p.name, other)})
			continue
		}
		byName[p.name] = f
		s.plugins = append(s.plugins, p)
	}
	slices.SortFunc(s.plugins, func(a, b *plugin) int { return cmp.Compare(a.name, b.name) })
}

// load compiles a file and reads what its module exports, bounded like a call.
func (s *Set) load(file string) (*plugin, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, LoadError{File: file, Message: fmt.Sprintf("cannot read it (%v)", err)}
	}
	prog, err := goja.Compile(file, wrapModule(string(src)), false)
	if err != nil {
		return nil, compileError(file, err)
	}
	p := &plugin{set: s, file: file, src: string(src), program: prog}
	exports, err := p.exports(nil)
	if err != nil {
		return nil, LoadError{File: file, Line: errorLine(err), Message: "loading it failed: " + errorText(err)}
	}
	fail := func(field, format string, args ...any) error {
		return LoadError{File: file, Line: lineOf(p.src, field), Field: field, Message: fmt.Sprintf(format, args...)}
	}
	base := strings.TrimSuffix(filepath.Base(file), ".js")
	p.name = base
	if v := exports.name; v != nil {
		name, ok := v.(string)
		if !ok {
			return nil, fail("name", "must be a string, got %T", v)
		}
		p.name = name
	}
	switch {
	case !namePattern.MatchString(p.name) || strings.HasPrefix(p.name, "mcp__"):
		return nil, fail("name", "%q is not a tool name: use letters, digits, _ and - (at most 64, starting with a letter, not mcp__)", p.name)
	case s.builtin != nil && s.builtin(p.name):
		return nil, fail("name", "%q is a built-in tool's name: a plugin may not shadow it; rename the plugin", p.name)
	}
	desc, ok := exports.description.(string)
	if !ok || strings.TrimSpace(desc) == "" {
		return nil, fail("description", "missing: say in a sentence what the tool does, for the model to read")
	}
	p.desc = desc
	p.risk = tools.UndeclaredRisk
	switch r := exports.risk.(type) {
	case nil:
		p.note = "no risk declared: counted as network_write"
	case string:
		if risk, err := tools.ParseRisk(r); err == nil {
			p.risk = risk
		} else {
			p.note = fmt.Sprintf("risk %q is not on the ladder: counted as network_write", r)
		}
	default:
		p.note = "risk is not a string: counted as network_write"
	}
	p.args, err = tools.CompileArgs(exports.parameters)
	if err != nil {
		return nil, fail("parameters", "%v", err)
	}
	if !exports.hasRun {
		return nil, fail("run", "missing: export a function run(args, ctx) that does the work")
	}
	return p, nil
}

// wrapModule makes a file a CommonJS module body; it stays on the file's first line so
// line numbers in errors are the file's own.
func wrapModule(src string) string {
	return "(function(module, exports) {" + src + "\n})"
}

// syntaxPos finds the line in goja's syntax error text ("…: Line 3:21 Unexpected token ;").
var syntaxPos = regexp.MustCompile(`Line (\d+):\d+ (.*?)(?: \(and \d+ more errors?\))?$`)

func compileError(file string, err error) error {
	var ce *goja.CompilerSyntaxError
	if errors.As(err, &ce) && ce.File != nil {
		pos := ce.File.Position(ce.Offset)
		return LoadError{File: file, Line: pos.Line, Message: "syntax error: " + ce.Message}
	}
	if m := syntaxPos.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return LoadError{File: file, Line: line, Message: "syntax error: " + m[2]}
	}
	return LoadError{File: file, Message: "syntax error: " + err.Error()}
}

// lineOf is the first line of src that names field as a key, for an error about it (0 if
// none: the field is missing).
func lineOf(src, field string) int {
	re := regexp.MustCompile(`(^|[\s{,"'])` + regexp.QuoteMeta(field) + `["']?\s*[:(]`)
	for i, line := range strings.Split(src, "\n") {
		if re.MatchString(line) {
			return i + 1
		}
	}
	return 0
}
