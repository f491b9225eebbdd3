package catalog

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// PollInterval is how often the config dir is checked for changes. A stat of a few dozen
// files a second costs nothing, works on every file system (network mounts, editors that
// replace files by renaming) and needs no watcher limits; a second is quicker than a person
// switches from the editor to the app.
const PollInterval = time.Second

// The kinds of files, each a folder of the config dir.
const (
	KindPersonas  = "personas"
	KindSkills    = "skills"
	KindTasks     = "tasks"
	KindTemplates = "templates"
)

// Kinds lists the folders in the order the Settings pages show them.
var Kinds = []string{KindPersonas, KindSkills, KindTasks, KindTemplates}

//go:embed defaults
var defaults embed.FS

// Catalog is the configuration layer as loaded: the embedded defaults with the config dir's
// files over them, reloaded when the files change. Safe for concurrent use.
type Catalog struct {
	dir    string
	log    *slog.Logger
	events *pubsub.Broker[Change]

	mu        sync.RWMutex
	snap      *snapshot
	stamp     string
	knownTool func(string) bool

	cancel context.CancelFunc
	done   chan struct{}
}

// Change says the catalog was reloaded: the UI lists again.
type Change struct {
	Problems int `json:"problems"`
}

type snapshot struct {
	personas  map[string]Persona
	skills    map[string]Skill
	tasks     map[string]Task
	templates map[string]PaneTemplate
	// templateOrder is the menu order: the built-ins as the workspace lists them, then the
	// person's own by id.
	templateOrder []string
	problems      []Problem
	// lines is where each loaded file's fields are (file → field → line), so a name that
	// points nowhere is reported at its line.
	lines map[string]map[string]int
}

func (s *snapshot) lineOf(file, field string) int { return s.lines[file][field] }

// Open loads the catalog from configDir (which need not exist: the defaults stand alone) and
// watches it until Close. Problems with files never fail Open; Problems lists them.
func Open(ctx context.Context, configDir string, logger *slog.Logger) (*Catalog, error) {
	if logger == nil {
		logger = slog.Default()
	}
	if configDir == "" {
		return nil, fmt.Errorf("catalog: no config dir given")
	}
	c := &Catalog{dir: configDir, log: logger, events: pubsub.NewBroker[Change](), done: make(chan struct{})}
	c.Reload()
	wctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	go c.watch(wctx)
	return c, nil
}

// Close stops watching the config dir and waits for the watcher.
func (c *Catalog) Close() error {
	c.cancel()
	<-c.done
	c.events.Shutdown()
	return nil
}

// Dir is the config dir.
func (c *Catalog) Dir() string { return c.dir }

// KindDir is the folder of a kind of file (personas, skills, tasks, templates).
func (c *Catalog) KindDir(kind string) string { return filepath.Join(c.dir, kind) }

// Events is the stream of reloads.
func (c *Catalog) Events() *pubsub.Broker[Change] { return c.events }

// SetToolCheck lets persona tool lists be checked against the tools that exist: a typo in
// tools: would otherwise silently leave the persona without that tool.
func (c *Catalog) SetToolCheck(known func(name string) bool) {
	c.mu.Lock()
	c.knownTool = known
	c.mu.Unlock()
	c.Reload()
}

func (c *Catalog) watch(ctx context.Context) {
	defer close(c.done)
	t := time.NewTicker(PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.mu.RLock()
			old := c.stamp
			c.mu.RUnlock()
			if fingerprint(c.dir) != old {
				c.Reload()
			}
		}
	}
}

// fingerprint is every file's name, size and time of change under the kind folders.
func fingerprint(dir string) string {
	var b strings.Builder
	for _, kind := range Kinds {
		entries, err := os.ReadDir(filepath.Join(dir, kind))
		if err != nil {
			b.WriteString(kind + ":none;")
			continue
		}
		for _, e := range entries {
			info, err := e.Info()
			if err != nil {
				continue
			}
			fmt.Fprintf(&b, "%s/%s:%d:%d;", kind, e.Name(), info.Size(), info.ModTime().UnixNano())
		}
	}
	return b.String()
}

// Reload reads everything again now (the watcher calls it on a change).
func (c *Catalog) Reload() {
	stamp := fingerprint(c.dir)
	c.mu.RLock()
	known := c.knownTool
	c.mu.RUnlock()
	s := load(c.dir, known)
	c.mu.Lock()
	c.snap, c.stamp = s, stamp
	c.mu.Unlock()
	for _, p := range s.problems {
		c.log.Debug("config file problem", "problem", p.Error())
	}
	c.events.Publish("reloaded", Change{Problems: len(s.problems)})
}

func (c *Catalog) current() *snapshot {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.snap
}

// item is one file of a kind, read.
type item struct {
	id, file string
	doc      *document
}

func load(dir string, knownTool func(string) bool) *snapshot {
	s := &snapshot{personas: map[string]Persona{}, skills: map[string]Skill{}, tasks: map[string]Task{}, templates: map[string]PaneTemplate{},
		lines: map[string]map[string]int{}}
	for _, t := range workspace.Templates {
		s.templates[t.ID] = PaneTemplate{Template: t, Source: "builtin:" + t.ID}
		s.templateOrder = append(s.templateOrder, t.ID)
	}
	sub, _ := fs.Sub(defaults, "defaults")
	for _, kind := range Kinds {
		for _, it := range readKind(sub, kind, func(id string) string { return "builtin:" + id }, &s.problems) {
			s.add(kind, it) // the defaults are tested to load cleanly
		}
		userDir := filepath.Join(dir, kind)
		for _, it := range readKind(os.DirFS(userDir), ".", func(name string) string { return filepath.Join(userDir, name) }, &s.problems) {
			s.add(kind, it)
		}
	}
	s.crossCheck(knownTool)
	sort.SliceStable(s.problems, func(i, j int) bool {
		if s.problems[i].File != s.problems[j].File {
			return s.problems[i].File < s.problems[j].File
		}
		return s.problems[i].Line < s.problems[j].Line
	})
	return s
}

// readKind reads the files of one kind's folder in fsys. source maps an id (for the
// defaults) or a file name (for the person's files) to where the item came from.
func readKind(fsys fs.FS, folder string, source func(string) string, problems *[]Problem) []item {
	entries, err := fs.ReadDir(fsys, folder)
	if err != nil {
		return nil // no folder: nothing of this kind here
	}
	builtin := folder != "."
	var items []item
	seen := map[string]string{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || strings.HasSuffix(name, "~") || strings.HasPrefix(strings.ToUpper(name), "README") {
			continue
		}
		ext := path.Ext(name)
		id := strings.TrimSuffix(name, ext)
		file := source(name)
		if builtin {
			file = source(id)
		}
		yamlOnly := ext == ".yaml" || ext == ".yml"
		kindOf := path.Base(folder)
		if !builtin {
			kindOf = filepath.Base(filepath.Dir(file))
		}
		if ext != ".md" && !(yamlOnly && kindOf == KindTemplates) {
			want := "ID.md"
			if kindOf == KindTemplates {
				want = "ID.md or ID.yaml"
			}
			*problems = append(*problems, Problem{File: file, Field: "file name", Message: fmt.Sprintf("is not read: name it %s", want)})
			continue
		}
		if !idPattern.MatchString(id) {
			*problems = append(*problems, Problem{File: file, Field: "id", Message: fmt.Sprintf("%q cannot be an id: name the file with letters, digits, - _ . (at most 64)", id)})
			continue
		}
		if other, dup := seen[id]; dup {
			*problems = append(*problems, Problem{File: file, Line: 1, Field: "id", Message: fmt.Sprintf("%q is also the id of %s; rename one of them (the first is used)", id, other)})
			continue
		}
		seen[id] = file
		data, err := fs.ReadFile(fsys, path.Join(folder, name))
		if err != nil {
			*problems = append(*problems, Problem{File: file, Message: "cannot be read: " + err.Error()})
			continue
		}
		doc, prob := splitFrontMatter(file, data, yamlOnly)
		if prob != nil {
			*problems = append(*problems, *prob)
			continue
		}
		items = append(items, item{id: id, file: file, doc: doc})
	}
	return items
}

// add parses an item of a kind; a later one with the same id (the person's) replaces an
// earlier one (the default). An item with a problem is not added.
func (s *snapshot) add(kind string, it item) {
	lines := map[string]int{}
	for k, f := range it.doc.fields {
		lines[k] = f.line
	}
	s.lines[it.file] = lines
	var prob *Problem
	switch kind {
	case KindPersonas:
		prob = addParsed(s.personas, it, parsePersona)
	case KindSkills:
		prob = addParsed(s.skills, it, parseSkill)
	case KindTasks:
		prob = addParsed(s.tasks, it, parseTask)
	case KindTemplates:
		_, known := s.templates[it.id]
		if prob = addParsed(s.templates, it, parseTemplate); prob == nil && !known {
			s.templateOrder = append(s.templateOrder, it.id)
		}
	}
	if prob != nil {
		s.problems = append(s.problems, *prob)
	}
}

// sourced is an item that records the file it came from.
type sourced[T any] interface {
	*T
	setSource(file string)
}

func (p *Persona) setSource(file string)      { p.Source = file }
func (sk *Skill) setSource(file string)       { sk.Source = file }
func (t *Task) setSource(file string)         { t.Source = file }
func (t *PaneTemplate) setSource(file string) { t.Source = file }

// addParsed parses it and, when it has no problem, puts it in into with its file.
func addParsed[T any, P sourced[T]](into map[string]T, it item, parse func(string, *document) (T, *Problem)) *Problem {
	v, prob := parse(it.id, it.doc)
	if prob == nil {
		P(&v).setSource(it.file)
		into[it.id] = v
	}
	return prob
}

// crossCheck reports names that point nowhere: a persona's skills and tools, a task's
// personas. The item still loads, without the name.
func (s *snapshot) crossCheck(knownTool func(string) bool) {
	for id, p := range s.personas {
		p.Skills = keepKnown(s, p.Source, "skills", "skill", p.Skills, s.skills)
		if knownTool != nil {
			for _, t := range p.Tools {
				if !knownTool(t) {
					s.problems = append(s.problems, Problem{File: p.Source, Line: s.lineOf(p.Source, "tools"), Field: "tools",
						Message: fmt.Sprintf("%q is not a tool; check the spelling against the table of agent tools in docs/tools.md", t)})
				}
			}
		}
		s.personas[id] = p
	}
	for id, t := range s.tasks {
		t.Personas = keepKnown(s, t.Source, "personas", "persona", t.Personas, s.personas)
		s.tasks[id] = t
	}
}

// keepKnown returns the names known has, in order; each other one is a problem of field in
// file source, saying it is not a what and left out.
func keepKnown[V any](s *snapshot, source, field, what string, names []string, known map[string]V) []string {
	var keep []string
	for _, n := range names {
		if _, ok := known[n]; ok {
			keep = append(keep, n)
			continue
		}
		s.problems = append(s.problems, Problem{File: source, Line: s.lineOf(source, field), Field: field,
			Message: fmt.Sprintf("%q is not a %s (there are %s); it is left out", n, what, strings.Join(sortedKeys(known), ", "))})
	}
	return keep
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func sortedValues[V any](m map[string]V) []V {
	out := make([]V, 0, len(m))
	for _, k := range sortedKeys(m) {
		out = append(out, m[k])
	}
	return out
}
