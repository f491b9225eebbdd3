package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/clusterspace/clusterspace/backend/workspace"
)

// Personas lists the personas by id.
func (c *Catalog) Personas() []Persona { return sortedValues(c.current().personas) }

// Persona returns the persona with that id.
func (c *Catalog) Persona(id string) (Persona, bool) {
	p, ok := c.current().personas[id]
	return p, ok
}

// Skills lists the skills by id.
func (c *Catalog) Skills() []Skill { return sortedValues(c.current().skills) }

// Skill returns the skill with that id.
func (c *Catalog) Skill(id string) (Skill, bool) {
	s, ok := c.current().skills[id]
	return s, ok
}

// Tasks lists the task templates by id.
func (c *Catalog) Tasks() []Task { return sortedValues(c.current().tasks) }

// Task returns the task template with that id.
func (c *Catalog) Task(id string) (Task, bool) {
	t, ok := c.current().tasks[id]
	return t, ok
}

// Templates lists the pane launch templates in menu order.
func (c *Catalog) Templates() []PaneTemplate {
	s := c.current()
	out := make([]PaneTemplate, len(s.templateOrder))
	for i, id := range s.templateOrder {
		out[i] = s.templates[id]
	}
	return out
}

// LaunchTemplates are the pane templates as the workspace uses them.
func (c *Catalog) LaunchTemplates() []workspace.Template {
	ts := c.Templates()
	out := make([]workspace.Template, len(ts))
	for i, t := range ts {
		out[i] = t.Template
	}
	return out
}

// Problems lists what is wrong with the config dir's files, by file and line.
func (c *Catalog) Problems() []Problem { return slices.Clone(c.current().problems) }

// LookupError is an id that names nothing: which field, which id, and the ids there are.
type LookupError struct {
	Field, ID string
	Known     []string
}

func (e *LookupError) Error() string {
	msg := fmt.Sprintf("%s: %q is not one; use one of %s", e.Field, e.ID, strings.Join(e.Known, ", "))
	if e.Field != "kind" && e.Field != "id" {
		msg += fmt.Sprintf(" (or add %s/%s.md to the config dir)", kindOfField(e.Field), e.ID)
	}
	return msg
}

func kindOfField(field string) string {
	switch {
	case strings.HasPrefix(field, "skill"):
		return KindSkills
	case field == "task":
		return KindTasks
	}
	return KindPersonas
}

// Resolve looks up a persona ("" for none: the agent as it is) and skills to attach besides
// the persona's own, refusing an unknown id with a LookupError. The skills come back without
// repeats, the persona's first.
func (c *Catalog) Resolve(personaID string, skillIDs []string) (Persona, []Skill, error) {
	s := c.current()
	var p Persona
	if personaID != "" {
		var ok bool
		if p, ok = s.personas[personaID]; !ok {
			return Persona{}, nil, &LookupError{Field: "persona", ID: personaID, Known: sortedKeys(s.personas)}
		}
	}
	var skills []Skill
	seen := map[string]bool{}
	for i, id := range append(slices.Clone(p.Skills), skillIDs...) {
		if seen[id] {
			continue
		}
		sk, ok := s.skills[id]
		if !ok {
			field := "skills"
			if i >= len(p.Skills) {
				field = "skill"
			}
			return Persona{}, nil, &LookupError{Field: field, ID: id, Known: sortedKeys(s.skills)}
		}
		seen[id] = true
		skills = append(skills, sk)
	}
	return p, skills, nil
}

// OverridePath is where the person's file for an item goes (whether or not it exists).
func (c *Catalog) OverridePath(kind, id string) string {
	return filepath.Join(c.dir, kind, id+".md")
}

// Customize copies a built-in item into the config dir, so the person can edit it, and
// returns the file's path. An existing file is left alone (and its path returned).
func (c *Catalog) Customize(kind, id string) (string, error) {
	if !slices.Contains(Kinds, kind) {
		return "", &LookupError{Field: "kind", ID: kind, Known: Kinds}
	}
	if !idPattern.MatchString(id) {
		return "", &FieldError{"id", fmt.Sprintf("%q is not an id: letters, digits, - _ . (at most 64)", id)}
	}
	dst := c.OverridePath(kind, id)
	if _, err := os.Stat(dst); err == nil {
		return dst, nil
	}
	data, err := c.builtinText(kind, id)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", filepath.Dir(dst), err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		return "", fmt.Errorf("write %s: %w", dst, err)
	}
	c.Reload()
	return dst, nil
}

func (c *Catalog) builtinText(kind, id string) ([]byte, error) {
	if data, err := defaults.ReadFile("defaults/" + kind + "/" + id + ".md"); err == nil {
		return data, nil
	}
	if kind == KindTemplates {
		if t, ok := workspace.TemplateByID(id); ok && t.Command != "" {
			var b strings.Builder
			fmt.Fprintf(&b, "---\nname: %q\ncommand: %q\n", t.Name, t.Command)
			if len(t.Args) > 0 {
				fmt.Fprintf(&b, "args: [%s]\n", quoteAll(t.Args))
			}
			if t.Install != "" {
				fmt.Fprintf(&b, "install: %q\n", t.Install)
			}
			b.WriteString("---\n" + t.Name + " in a terminal pane.\n")
			return []byte(b.String()), nil
		}
	}
	return nil, &FieldError{"id", fmt.Sprintf("there is no built-in %s %q to copy; create %s yourself", strings.TrimSuffix(kind, "s"), id, c.OverridePath(kind, id))}
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// Listing is everything the Settings pages show: the items with where each comes from, the
// folders to open, and the problems.
type Listing struct {
	Dir       string            `json:"dir"`
	Folders   map[string]string `json:"folders"`
	Personas  []Persona         `json:"personas"`
	Skills    []Skill           `json:"skills"`
	Tasks     []Task            `json:"tasks"`
	Templates []PaneTemplate    `json:"templates"`
	Problems  []Problem         `json:"problems"`
}

// List is the whole catalog as one snapshot.
func (c *Catalog) List() Listing {
	l := Listing{Dir: c.dir, Folders: map[string]string{}, Personas: c.Personas(), Skills: c.Skills(), Tasks: c.Tasks(),
		Templates: c.Templates(), Problems: c.Problems()}
	for _, k := range Kinds {
		l.Folders[k] = c.KindDir(k)
	}
	return l
}

// PathFor is what "open" shows for a kind (its folder, created if missing so the person can
// put files in it) or for one item (its file; a built-in's folder, since it has no file yet).
func (c *Catalog) PathFor(kind, id string) (string, error) {
	if !slices.Contains(Kinds, kind) {
		return "", &LookupError{Field: "kind", ID: kind, Known: Kinds}
	}
	dir := c.KindDir(kind)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	if id == "" {
		return dir, nil
	}
	source := ""
	switch kind {
	case KindPersonas:
		p, _ := c.Persona(id)
		source = p.Source
	case KindSkills:
		s, _ := c.Skill(id)
		source = s.Source
	case KindTasks:
		t, _ := c.Task(id)
		source = t.Source
	case KindTemplates:
		for _, t := range c.Templates() {
			if t.ID == id {
				source = t.Source
			}
		}
	}
	if source == "" {
		return "", &LookupError{Field: "id", ID: id, Known: c.ids(kind)}
	}
	if strings.HasPrefix(source, "builtin:") {
		return dir, nil
	}
	return source, nil
}

func (c *Catalog) ids(kind string) []string {
	s := c.current()
	switch kind {
	case KindPersonas:
		return sortedKeys(s.personas)
	case KindSkills:
		return sortedKeys(s.skills)
	case KindTasks:
		return sortedKeys(s.tasks)
	}
	return s.templateOrder
}

// FieldError is a request about the catalog that is wrong in one field.
type FieldError struct{ Field, Msg string }

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// RenderTask renders task template id with params (the New Goal dialog's "From template").
func (c *Catalog) RenderTask(id string, params map[string]string) (Rendered, error) {
	t, ok := c.Task(id)
	if !ok {
		return Rendered{}, &LookupError{Field: "task", ID: id, Known: c.ids(KindTasks)}
	}
	return t.Render(params)
}
