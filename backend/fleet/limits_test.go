package fleet

import (
	"errors"
	"strings"
	"testing"
)

// A fleet file's mistakes name the line as well as the task and the field, and text no person
// meant (a 5 MB goal, a NUL in a name) is refused before anything runs.
func TestBadFleetFilesNameTheLineTaskAndField(t *testing.T) {
	huge := strings.Repeat("x", 5<<20)
	cases := []struct {
		name, file         string
		line               int
		task, field, words string
	}{
		{"a goal over 64 KiB", "name: f\ntasks:\n  - id: a\n    goal: " + strings.Repeat("y", 70<<10) + "\n    check_shell: \"true\"\n", 4, `"a"`, "goal", "at most 65536"},
		{"a NUL in a goal", "name: f\ntasks:\n  - id: a\n    goal: g\n    check_shell: \"true\"\n  - id: b\n    goal: \"build\\0 it\"\n    check_shell: \"true\"\n", 7, `"b"`, "goal", "control character U+0000"},
		{"an escape in a task's pane", "name: f\ntasks:\n  - id: a\n    goal: build\n    pane: \"a\\e[2J\"\n    check_shell: \"true\"\n", 5, `"a"`, "pane", "control character U+001B"},
		{"a NUL in the fleet's name", "name: \"f\\0\"\ntasks:\n  - id: a\n    goal: g\n    check_shell: \"true\"\n", 1, "", "name", "control character"},
		{"a newline in a check is fine, a bell is not", "name: f\ntasks:\n  - id: a\n    goal: g\n    check_shell: \"echo \\a\"\n", 5, `"a"`, "check_shell", "control character U+0007"},
		{"an unknown dependency", "name: f\ntasks:\n  - id: a\n    goal: g\n    check_shell: \"true\"\n  - id: b\n    goal: g\n    depends_on: [nope]\n    check_shell: \"true\"\n", 8, `"b"`, "depends_on", "no task has id"},
		{"a file over 4 MiB", "name: f\nsetup: " + huge + "\n", 0, "", "file", "at most 4194304"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.file))
		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Errorf("%s: got %v, want a FieldError", c.name, err)
			continue
		}
		if fe.Line != c.line || fe.Task != c.task || fe.Field != c.field || !strings.Contains(fe.Msg, c.words) {
			t.Errorf("%s: line %d task %s field %s: %q; want line %d task %s field %s saying %q", c.name, fe.Line, fe.Task, fe.Field, fe.Msg, c.line, c.task, c.field, c.words)
		}
		if c.line > 0 && !strings.HasPrefix(err.Error(), "line ") {
			t.Errorf("%s: the message does not start with its line: %q", c.name, err)
		}
	}
	// A goal of many lines, tabs included, is a goal.
	if _, err := Parse([]byte("name: f\ntasks:\n  - id: a\n    goal: |\n      first\n      \tthen this\n    check_shell: \"true\"\n")); err != nil {
		t.Errorf("a multi-line goal: %v", err)
	}
}
