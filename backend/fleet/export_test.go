package fleet_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/fleet"
)

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
	want, err := fleet.Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, err := fleet.Format(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := fleet.Parse(out)
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
