package catalog

import (
	"fmt"
	"regexp"
	"strings"
)

// Task is tasks/ID.md: a goal people set often. Front matter name, category, description,
// personas (who suits it, the first is the default), steps, criterion and the parameters'
// questions; the body is the goal. {{name}} anywhere in the goal, the criterion or a step is
// a parameter the person fills in.
type Task struct {
	ID          string      `json:"id"`
	Name        string      `json:"name"`
	Category    string      `json:"category,omitempty"`
	Description string      `json:"description,omitempty"`
	Personas    []string    `json:"personas,omitempty"`
	Steps       []TaskStep  `json:"steps,omitempty"`
	Criterion   string      `json:"criterion"`
	Goal        string      `json:"goal"`
	Parameters  []Parameter `json:"parameters,omitempty"`
	Source      string      `json:"source"`
}

// TaskStep is one step of a task template, with its own success criterion.
type TaskStep struct {
	Title     string `json:"title" yaml:"title"`
	Action    string `json:"action" yaml:"action"`
	Criterion string `json:"criterion,omitempty" yaml:"criterion"`
}

// Parameter is a {{name}} of a task template and what to ask for it.
type Parameter struct {
	Name     string `json:"name"`
	Question string `json:"question,omitempty"`
}

// Rendered is a task template with its parameters filled in: what a goal starts from.
type Rendered struct {
	Goal      string     `json:"goal"`
	Criterion string     `json:"criterion"`
	Persona   string     `json:"persona,omitempty"`
	Steps     []TaskStep `json:"steps,omitempty"`
}

var placeholder = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

// findParameters lists the placeholders in order of first use, with their questions.
func (t Task) findParameters(questions map[string]string) []Parameter {
	var out []Parameter
	seen := map[string]bool{}
	texts := []string{t.Goal, t.Criterion}
	for _, s := range t.Steps {
		texts = append(texts, s.Title, s.Action, s.Criterion)
	}
	for _, text := range texts {
		for _, m := range placeholder.FindAllStringSubmatch(text, -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				out = append(out, Parameter{Name: m[1], Question: questions[m[1]]})
			}
		}
	}
	return out
}

// ParamError names a parameter a template needs and did not get.
type ParamError struct{ Task, Param, Msg string }

// Error starts with the field, "params.NAME: ", as the doors' other field errors do.
func (e *ParamError) Error() string {
	return fmt.Sprintf("params.%s: the parameter {{%s}} of task template %q %s", e.Param, e.Param, e.Task, e.Msg)
}

// Render fills the template's {{parameters}}. A parameter left empty is refused, naming it;
// so is a value for a parameter the template does not have (a typo would otherwise be lost).
// The steps are written into the goal, so the agent sees them; the persona is the first the
// template suits.
func (t Task) Render(params map[string]string) (Rendered, error) {
	for name := range params {
		known := false
		for _, p := range t.Parameters {
			known = known || p.Name == name
		}
		if !known {
			return Rendered{}, &ParamError{t.ID, name, fmt.Sprintf("is not one of this template's (%s)", t.paramNames())}
		}
	}
	for _, p := range t.Parameters {
		if strings.TrimSpace(params[p.Name]) == "" {
			what := "is empty: fill it in"
			if p.Question != "" {
				what += " (" + p.Question + ")"
			}
			return Rendered{}, &ParamError{t.ID, p.Name, what}
		}
	}
	fill := func(s string) string {
		return placeholder.ReplaceAllStringFunc(s, func(m string) string {
			return strings.TrimSpace(params[placeholder.FindStringSubmatch(m)[1]])
		})
	}
	r := Rendered{Goal: fill(t.Goal), Criterion: fill(t.Criterion)}
	if len(t.Personas) > 0 {
		r.Persona = t.Personas[0]
	}
	var b strings.Builder
	for i, s := range t.Steps {
		st := TaskStep{Title: fill(s.Title), Action: fill(s.Action), Criterion: fill(s.Criterion)}
		r.Steps = append(r.Steps, st)
		fmt.Fprintf(&b, "\n%d. %s: %s", i+1, st.Title, st.Action)
		if st.Criterion != "" {
			fmt.Fprintf(&b, " (done when: %s)", st.Criterion)
		}
	}
	if b.Len() > 0 {
		r.Goal += "\n\nSteps:" + b.String()
	}
	return r, nil
}

func (t Task) paramNames() string {
	if len(t.Parameters) == 0 {
		return "it has none"
	}
	names := make([]string, len(t.Parameters))
	for i, p := range t.Parameters {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}
