package fleet

import (
	"errors"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/goal/criterion"
)

const release = `
name: release
concurrency: 2
tasks:
  - id: build
    goal: Build the project and write dist/
    pane: build-term
    role: Builder
    template: codex
    check_shell: test -d dist
  - id: test
    goal: Run the test suite against dist/
    pane: test-term
    role: Tester
    depends_on: [build]
    check_shell: make test
    exit_code: 0
    check_timeout: 5m
  - id: review
    goal: Review the diff
    priority: 5
    depends_on: [build]
`

func TestParseReadsTheIssueExample(t *testing.T) {
	f, err := Parse([]byte(release))
	if err != nil {
		t.Fatal(err)
	}
	if f.Name != "release" || f.Concurrency != 2 || len(f.Tasks) != 3 {
		t.Fatalf("%+v", f)
	}
	if f.Tasks[0].Template != "codex" || f.Tasks[1].Template != "" {
		t.Fatalf("template: the build task's pane starts as codex, the test task's as the shell: %q %q", f.Tasks[0].Template, f.Tasks[1].Template)
	}
	test := f.Tasks[1]
	if test.Pane != "test-term" || test.Role != "Tester" || test.DependsOn[0] != "build" ||
		test.Criterion.Kind != criterion.KindShell || test.Criterion.Command != "make test" || test.Criterion.Timeout.String() != "5m0s" {
		t.Fatalf("test task %+v", test)
	}
	// No criterion: a strict judge question; no pane: one named after the task.
	review := f.Tasks[2]
	if review.Criterion.Kind != criterion.KindModelQuestion || review.Criterion.Threshold != criterion.ThresholdHighConfidence ||
		!strings.Contains(review.Criterion.Question, "Review the diff") || review.Pane != "review-term" || review.Priority != 5 {
		t.Fatalf("review task %+v", review)
	}
}

// Each mistake is refused with a message naming the task and the field.
func TestParseNamesTheTaskAndField(t *testing.T) {
	head := "name: x\ntasks:\n"
	cases := map[string]string{
		head + "  - id: a\n    goal: g\n    depends_on: [b]\n  - id: b\n    goal: g\n    depends_on: [c]\n  - id: c\n    goal: g\n    depends_on: [a]\n": `task "c": depends_on: a dependency cycle: a → b → c → a`,
		head + "  - id: a\n    goal: g\n    depends_on: [a]\n":                             `task "a": depends_on: a task cannot depend on itself`,
		head + "  - id: a\n    goal: g\n    depends_on: [nope]\n":                          `task "a": depends_on: no task has id "nope"`,
		head + "  - id: a\n    goal: g\n  - id: a\n    goal: h\n":                          `task "a": id: another task has this id`,
		head + "  - id: a\n    check_shell: true\n":                                        `task "a": goal: must not be empty`,
		head + "  - id: a\n    goal: g\n    check_shell: 'true'\n    check_manual: true\n": `task "a": check_manual: conflicts with check_shell`,
		head + "  - id: a\n    goal: g\n    chek_shell: 'true'\n":                          `task "a": chek_shell: unknown field`,
		head + "  - goal: g\n": `task #1: id: every task needs an id`,
		head + "  - id: a\n    goal: g\n    template: 'claude code'\n":     `task "a": template: a pane template id`,
		head + "  - id: a\n    goal: g\n    check_shell: 'if then fi ('\n": `task "a": check_shell:`,
		head + "  - id: a\n    goal: g\n    exit_code: 2\n":                `task "a": exit_code: qualifies a check`,
		"name: x\nconcurrency: 0\ntasks:\n  - id: a\n    goal: g\n":        `concurrency: must be a whole number from 1 to 20`,
		"name: x\nconcurrency: lots\ntasks:\n  - id: a\n    goal: g\n":     `concurrency: must be a whole number`,
		"tasks:\n  - id: a\n    goal: g\n":                                 `name: must not be empty`,
		"name: x\n":                                                        `tasks: give a list of tasks`,
		"name: x\nextra: 1\ntasks: []\n":                                   `extra: unknown field`,
		"name: [x\n":                                                       `file: not valid YAML`,
	}
	for in, want := range cases {
		_, err := Parse([]byte(in))
		var fe *FieldError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q:\n got %v\nwant %s", in, err, want)
		}
	}
}
