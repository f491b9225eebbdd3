package fleet

import (
	"fmt"

	"github.com/goccy/go-yaml"

	"github.com/clusterspace/clusterspace/backend/goal/criterion"
)

// File is the fleet as a file: its name, cap and tasks as they were given (what the tasks
// have done since is not part of it).
func (f Fleet) File() File {
	file := File{Name: f.Name, Concurrency: f.Spec.Concurrency, Isolation: f.Spec.Isolation, Setup: f.Spec.Setup,
		Copy: f.Spec.Copy}
	if f.Spec.LandCheck != "" || f.Spec.LandStrategy != "" {
		file.Land = &LandSpec{Check: f.Spec.LandCheck, Strategy: f.Spec.LandStrategy}
	}
	for _, t := range f.Tasks {
		ts := t.TaskSpec
		ts.Policy, ts.Settings, ts.StartsPast = nil, nil, nil // the run's, not the file's
		file.Tasks = append(file.Tasks, ts)
	}
	return file
}

// Format writes a fleet file as YAML that Parse reads back to the same tasks: the keys in the
// order the README shows them, a task's default criterion left out.
func Format(file File) ([]byte, error) {
	doc := yaml.MapSlice{{Key: "name", Value: file.Name}}
	if file.Concurrency > 0 {
		doc = append(doc, yaml.MapItem{Key: "concurrency", Value: file.Concurrency})
	}
	if file.Isolation != "" {
		doc = append(doc, yaml.MapItem{Key: "isolation", Value: file.Isolation})
	}
	if file.Setup != "" {
		doc = append(doc, yaml.MapItem{Key: "setup", Value: file.Setup})
	}
	if len(file.Copy) > 0 {
		doc = append(doc, yaml.MapItem{Key: "copy", Value: file.Copy})
	}
	if l := file.Land; l != nil && (l.Check != "" || l.Strategy != "") {
		var m yaml.MapSlice
		if l.Check != "" {
			m = append(m, yaml.MapItem{Key: "check", Value: l.Check})
		}
		if l.Strategy != "" {
			m = append(m, yaml.MapItem{Key: "strategy", Value: l.Strategy})
		}
		doc = append(doc, yaml.MapItem{Key: "land", Value: m})
	}
	var tasks []yaml.MapSlice
	for _, t := range file.Tasks {
		m := yaml.MapSlice{{Key: "id", Value: t.ID}, {Key: "goal", Value: t.Goal}}
		if t.Pane != "" {
			m = append(m, yaml.MapItem{Key: "pane", Value: t.Pane})
		}
		for _, kv := range []struct{ key, value string }{
			{"role", t.Role}, {"persona", t.Persona}, {"template", t.Template}, {"isolation", t.Isolation}, {"ssh", t.SSH},
		} {
			if kv.value != "" {
				m = append(m, yaml.MapItem{Key: kv.key, Value: kv.value})
			}
		}
		if t.Priority != 0 {
			m = append(m, yaml.MapItem{Key: "priority", Value: t.Priority})
		}
		if len(t.DependsOn) > 0 {
			m = append(m, yaml.MapItem{Key: "depends_on", Value: t.DependsOn})
		}
		keys, err := criterionKeys(t.Criterion, t.Goal)
		if err != nil {
			return nil, &FieldError{Task: fmt.Sprintf("%q", t.ID), Field: "criterion", Msg: err.Error()}
		}
		m = append(m, keys...)
		tasks = append(tasks, m)
	}
	doc = append(doc, yaml.MapItem{Key: "tasks", Value: tasks})
	return yaml.MarshalWithOptions(doc, yaml.IndentSequence(true))
}

// criterionKeys are a criterion as a task's keys; none for the default judge question.
func criterionKeys(c criterion.Spec, goalText string) (yaml.MapSlice, error) {
	if c == DefaultCriterion(goalText) || c.Kind == "" {
		return nil, nil
	}
	var m yaml.MapSlice
	add := func(k string, v any) { m = append(m, yaml.MapItem{Key: k, Value: v}) }
	switch c.Kind {
	case criterion.KindShell:
		add(criterion.KeyCheckShell, c.Command)
		if c.ExitCode != 0 {
			add(criterion.KeyExitCode, c.ExitCode)
		}
	case criterion.KindModelQuestion:
		add(criterion.KeyCheckQuestion, c.Question)
		if c.Threshold != "" {
			add(criterion.KeyThreshold, c.Threshold)
		}
	case criterion.KindJSONPredicate:
		add(criterion.KeyCheckJSON, c.Expr)
		if c.Source != "" {
			add(criterion.KeyJSONSource, c.Source)
		}
	case criterion.KindManual:
		add(criterion.KeyCheckManual, true)
	case criterion.KindVisual:
		add(criterion.KeyCheckVisual, c.Question)
		if c.PaneID != "" {
			add(criterion.KeyVisualPane, c.PaneID)
		}
	default:
		return nil, fmt.Errorf("kind %q has no file form", c.Kind)
	}
	if c.Timeout != 0 {
		add(criterion.KeyCheckTimeout, c.Timeout.String())
	}
	return m, nil
}
