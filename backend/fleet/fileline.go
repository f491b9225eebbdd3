package fleet

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/parser"
)

// lineOf finds the line of a fleet file a mistake is on: its task's field, else the task, else
// the file's own field; 0 when the file does not say (a field left out, a YAML error, which
// names its line itself).
func lineOf(data []byte, e *FieldError) int {
	var paths []string
	if i := taskIndex(data, e.Task); i >= 0 {
		paths = append(paths, fmt.Sprintf("$.tasks[%d].%s", i, e.Field), fmt.Sprintf("$.tasks[%d]", i))
	} else if e.Task == "" {
		paths = append(paths, "$."+e.Field)
	}
	return yamlLine(data, paths...)
}

// yamlLine is the line of the first of paths (YAML paths such as "$.tasks[2].goal") that the
// file has; 0 when it has none of them or does not parse.
func yamlLine(data []byte, paths ...string) int {
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		return 0
	}
	for _, p := range paths {
		path, err := yaml.PathString(p)
		if err != nil {
			continue
		}
		if node, err := path.FilterFile(file); err == nil && node != nil && node.GetToken() != nil {
			return node.GetToken().Position.Line
		}
	}
	return 0
}

// taskIndex is the position in the file's task list of the task a mistake names: "#3" is the
// third, a quoted id the task with that id; -1 when it names none.
func taskIndex(data []byte, task string) int {
	if n, ok := strings.CutPrefix(task, "#"); ok {
		if i, err := strconv.Atoi(n); err == nil {
			return i - 1
		}
		return -1
	}
	id, err := strconv.Unquote(task)
	if err != nil {
		return -1
	}
	var raw struct {
		Tasks []map[string]any `yaml:"tasks"`
	}
	if yaml.Unmarshal(data, &raw) != nil {
		return -1
	}
	for i, t := range raw.Tasks {
		if v, ok := t["id"].(string); ok && strings.TrimSpace(v) == id {
			return i
		}
	}
	return -1
}
