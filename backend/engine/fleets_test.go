package engine

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/fleet"
)

// A fleet task with `template:` gets a pane that starts as that template (here a config
// dir's templates/ file whose command leaves a mark); an unknown template refuses the fleet
// naming the task and the field, and makes no pane.
func TestFleetTaskPaneStartsAsItsTemplate(t *testing.T) {
	ctx := context.Background()
	configDir, out := t.TempDir(), t.TempDir()
	marker := markerTemplate(configDir, out)
	eng := openEngine(t, t.TempDir(), WithConfigDir(configDir))
	defer eng.Close()

	bad, err := fleet.Parse([]byte("name: bad\ntasks:\n  - id: build\n    goal: Build it\n    template: nope\n    check_shell: 'true'\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = eng.Fleets.Create(ctx, bad, fleet.Spec{})
	var fe *fleet.FieldError
	if !errors.As(err, &fe) || fe.Field != "template" || fe.Task != `"build"` || !strings.Contains(err.Error(), "marker") {
		t.Fatalf("an unknown template: %v, want a field error on task build's template naming the choices", err)
	}
	if eng.Workspaces.HasPane(ctx, "build-term") {
		t.Fatal("a refused fleet made its pane")
	}

	file, err := fleet.Parse([]byte("name: good\ntasks:\n  - id: build\n    goal: Build it\n    template: marker\n    check_shell: 'true'\n  - id: plain\n    goal: Look\n    check_shell: 'true'\n"))
	if err != nil {
		t.Fatal(err)
	}
	f := fleet.Fleet{ID: "fleet-t1", Name: file.Name}
	for _, ts := range file.Tasks {
		f.Tasks = append(f.Tasks, fleet.Task{TaskSpec: ts})
	}
	if err := eng.ensureFleetPanes(ctx, f, []string{"build-term", "plain-term"}); err != nil {
		t.Fatal(err)
	}
	_, p, err := eng.Workspaces.Find(ctx, "build-term")
	if err != nil {
		t.Fatal(err)
	}
	if p.Launch == nil || p.Launch.Template != "marker" || p.Launch.Command != "sh" {
		t.Fatalf("the build task's pane launch: %+v, want the marker template's sh", p.Launch)
	}
	if _, plain, _ := eng.Workspaces.Find(ctx, "plain-term"); plain.Launch != nil {
		t.Errorf("a task without template: got launch %+v, want the shell", plain.Launch)
	}
	eng.Panes.Wake(ctx, "build-term")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(marker); err == nil && strings.TrimSpace(string(b)) == "ran" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the task's pane did not run its template's command within 10 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
