package engine

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/workspace"
)

// A pane template in the config dir's templates/ joins the launch templates the pane menu
// lists, and a terminal pane started from it runs its command; the engine offers the skill
// tools. A template file added while the engine runs is usable at once.
func TestConfigDirPaneTemplatesAndSkillTools(t *testing.T) {
	ctx := context.Background()
	configDir, out := t.TempDir(), t.TempDir()
	eng := openEngine(t, t.TempDir(), WithConfigDir(configDir))
	defer eng.Close()
	if eng.Catalog == nil || eng.Catalog.Dir() != configDir {
		t.Fatalf("the engine's catalog should read %s", configDir)
	}
	for _, name := range []string{"list_skills", "load_skill"} {
		if _, ok := eng.Registry.Get(name); !ok {
			t.Errorf("the registry lacks %s", name)
		}
	}

	marker := markerTemplate(configDir, out)
	eng.Catalog.Reload() // the watcher would within a second; the test need not wait for it

	var listed bool
	for _, tp := range eng.Panes.Templates() {
		listed = listed || (tp.ID == "marker" && tp.Installed)
	}
	if !listed {
		t.Fatalf("the pane menu's templates lack the config dir's marker: %+v", eng.Panes.Templates())
	}
	list, _ := eng.Workspaces.List(ctx)
	ws := list.Workspaces[0]
	pane := ws.Panes[0].ID
	if _, err := eng.Panes.SetLaunch(ctx, ws.ID, pane, &workspace.Launch{Template: "marker"}, true); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(marker); err == nil && strings.TrimSpace(string(b)) == "ran" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the pane did not run the template's command within 10 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := eng.Panes.SetLaunch(ctx, ws.ID, pane, &workspace.Launch{Template: "nope"}, true); err == nil || !strings.Contains(err.Error(), "marker") {
		t.Errorf("an unknown template should be refused naming the choices, the config dir's too: %v", err)
	}

	// The agent reaches it too: convert_pane_to_terminal takes the config dir's template.
	r := &toolRig{t: t, eng: eng, ws: ws}
	other := ws.Panes[1].ID
	browser := workspace.KindBrowser
	if _, err := eng.Workspaces.UpdatePane(ctx, ws.ID, other, workspace.PanePatch{Kind: &browser}); err != nil {
		t.Fatal(err)
	}
	if res := r.call("", "convert_pane_to_terminal", map[string]any{"pane_id": other, "template": "nope"}); !res.IsError || !strings.Contains(res.Text, "marker") {
		t.Errorf("an unknown template from the agent: %+v, want a refusal naming the choices", res)
	}
	os.Remove(marker)
	r.mustOK("", "convert_pane_to_terminal", map[string]any{"pane_id": other, "template": "marker"})
	deadline = time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the converted pane did not run the template's command within 10 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
