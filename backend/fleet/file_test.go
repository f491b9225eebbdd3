package fleet

import (
	"errors"
	"os"
	"reflect"
	"regexp"
	"slices"
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

// A fleet file's land: is read, written back as it was, and refused naming its field and
// line when it is not a mapping of check and strategy.
func TestFleetFileLandKey(t *testing.T) {
	const head = "name: l\nisolation: worktree\n"
	const tasks = "tasks:\n  - {id: a, goal: Write a}\n"
	f, err := Parse([]byte(head + "land: {check: \"make test\", strategy: merge}\n" + tasks))
	if err != nil || f.Land == nil || f.Land.Check != "make test" || f.Land.Strategy != "merge" {
		t.Fatalf("land: %+v, %v", f.Land, err)
	}
	text, err := Format(f)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(text)
	if err != nil || again.Land == nil || *again.Land != *f.Land {
		t.Fatalf("written back as\n%s\nread again as %+v, %v", text, again.Land, err)
	}
	for _, c := range []struct{ land, field, want string }{
		{"land: make test", "land", "is a mapping"},
		{"land: {strategy: squash}", "land.strategy", "use rebase"},
		{"land: {check: \"if then\"}", "land.check", "bash cannot parse"},
		{"land: {check: make, when: always}", "land.when", "land has check and strategy"},
	} {
		_, err := Parse([]byte(head + c.land + "\n" + tasks))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(fe.Msg, c.want) || fe.Line != 3 {
			t.Errorf("%s: %v (want field %s on line 3, saying %q)", c.land, err, c.field, c.want)
		}
	}
}

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

// `copy:` reads as a list of clean paths, writes back the same (Format, then Parse), and a
// bad entry is refused naming the field and the entry's own line.
func TestCopyParsesWritesBackAndRefusesBadEntries(t *testing.T) {
	in := "name: c\nisolation: worktree\nsetup: npm ci\ncopy:\n  - .env\n  - ./config/local.yaml\n  - fixtures/\ntasks:\n  - {id: a, goal: A}\n"
	f, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.Copy, []string{".env", "config/local.yaml", "fixtures"}) {
		t.Fatalf("copy: %q", f.Copy)
	}
	out, err := Format(f)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(out)
	if err != nil || !reflect.DeepEqual(back, f) {
		t.Fatalf("read back (%v):\n%s\ngot  %+v\nwant %+v", err, out, back, f)
	}
	if !strings.Contains(string(out), "copy:\n  - .env\n") {
		t.Errorf("copy: is not written as a list:\n%s", out)
	}

	head := "name: c\nisolation: worktree\ncopy:\n  - .env\n"
	for _, c := range []struct {
		entries string
		line    int
		want    string
	}{
		{"  - /etc/passwd\n", 5, "absolute"},
		{"  - ../secrets/.env\n", 5, "leaves the repository"},
		{"  - ok.txt\n  - a/../../b\n", 6, "leaves the repository"},
		{"  - \"\"\n", 5, "empty"},
		{"  -\n", 5, "empty"},
		{"  - \"a\\x01b\"\n", 5, "control character"},
		{"  - .git/config\n", 5, "inside .git"},
		{"  - ./.env\n", 5, "listed twice"},
	} {
		_, err := Parse([]byte(head + c.entries + "tasks:\n  - {id: a, goal: A}\n"))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "copy" || fe.Line != c.line || !strings.Contains(fe.Msg, c.want) {
			t.Errorf("copy entries %q: %v (line %d), want field copy, line %d, %q", c.entries, err, feLine(fe), c.line, c.want)
		}
	}
	for _, c := range []struct{ file, want string }{
		{"name: c\ncopy: .env\ntasks:\n  - {id: a, goal: A, isolation: worktree}\n", "is a list"},
		{"name: c\ncopy: []\ntasks:\n  - {id: a, goal: A, isolation: worktree}\n", "is empty"},
		{"name: c\ncopy: [.env]\ntasks:\n  - {id: a, goal: A}\n", "no task has isolation: worktree"},
	} {
		_, err := Parse([]byte(c.file))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "copy" || fe.Line != 2 || !strings.Contains(fe.Msg, c.want) {
			t.Errorf("%q: %v, want field copy on line 2, %q", c.file, err, c.want)
		}
	}
	// One isolated task is enough.
	if _, err := Parse([]byte("name: c\ncopy: [.env]\ntasks:\n  - {id: a, goal: A, isolation: worktree}\n")); err != nil {
		t.Errorf("copy with one isolated task: %v", err)
	}
}

func feLine(fe *FieldError) int {
	if fe == nil {
		return -1
	}
	return fe.Line
}

// A fleet written back as YAML reads back to the same tasks: every criterion kind with its
// qualifiers, dependencies, roles, personas, pane templates, isolation, ssh, priorities, panes;
// a default criterion stays implicit.
func TestFormatReadsBackToTheSameFleet(t *testing.T) {
	in := `name: "all kinds: one fleet"
concurrency: 4
isolation: worktree
setup: npm ci
tasks:
  - {id: build, goal: "Build it: fast", pane: b-1, role: Builder, persona: reviewer, template: claude, isolation: none, ssh: build-box, priority: 2, check_shell: "make -j4 && test -d dist", exit_code: 0, check_timeout: 90s}
  - {id: judge, goal: Explain the design, depends_on: [build]}
  - {id: ask, goal: Write docs, role: Reviewer, check_question: "Are the docs complete? Say yes or no.", threshold: high_confidence}
  - {id: json, goal: Report, depends_on: [build, ask], check_json: "x.ok === true", json_source: "command:cat out/report.json", check_timeout: 2m}
  - {id: look, goal: Make the page green, check_visual: Is the page green?, visual_pane: web-1}
  - {id: me, goal: Deploy, priority: -1, depends_on: [json], check_manual: true}
`
	want, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Format(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(out)
	if err != nil {
		t.Fatalf("the formatted file does not parse: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read back differs:\n%s\ngot  %+v\nwant %+v", out, got, want)
	}
	if b := got.Tasks[0]; b.Template != "claude" || b.Persona != "reviewer" {
		t.Errorf("the build task lost its template or persona: %+v\n%s", b, out)
	}
	if strings.Contains(string(out), "Judging strictly") {
		t.Errorf("the default criterion was written out:\n%s", out)
	}
}

// Every fleet file docs/fleet-file.md shows is one Parse takes.
func TestFleetFileDocExamplesParse(t *testing.T) {
	readme, err := os.ReadFile("../../docs/fleet-file.md")
	if err != nil {
		t.Fatal(err)
	}
	examples := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	if len(examples) < 3 {
		t.Fatalf("found %d YAML examples in docs/fleet-file.md", len(examples))
	}
	for _, m := range examples {
		if _, err := Parse([]byte(m[1])); err != nil {
			t.Errorf("%v in:\n%s", err, m[1])
		}
	}
}
