package tools_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/panes"
	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/store"
	"github.com/clusterspace/clusterspace/backend/terminal"
	"github.com/clusterspace/clusterspace/backend/tools"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// TestListPanesNamesPanesAsTheWindowDoes: each pane list_panes returns carries the id and the
// label its header shows, and shown_as joins the two the way the model should write them to the
// person ("Terminal 1.1 (pane-…)"), so "Terminal 1.1" and "pane-6334…" are never two names for
// one pane that only one side knows. A renamed pane is listed by its new label.
func TestListPanesNamesPanesAsTheWindowDoes(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	broker := pubsub.NewBroker[workspace.List]()
	t.Cleanup(broker.Shutdown)
	wsvc, err := workspace.NewService(ctx, st, broker)
	if err != nil {
		t.Fatal(err)
	}
	terms := terminal.NewManager(terminal.Options{})
	t.Cleanup(terms.Shutdown)
	r := tools.NewRegistry()
	tools.RegisterWorkspace(r, panes.New(wsvc, terms, nil))

	list, err := wsvc.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ws := list.Workspaces[0]
	renamed := ws.Panes[1]
	if _, err := wsvc.UpdatePane(ctx, ws.ID, renamed.ID, workspace.PanePatch{Label: ptr("build logs")}); err != nil {
		t.Fatal(err)
	}

	tool, _ := r.Get("list_panes")
	res, err := tool.Run(ctx, tools.Call{Name: "list_panes", Args: json.RawMessage(`{}`), WorkspaceID: ws.ID})
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal([]byte(res.Text), &page); err != nil {
		t.Fatalf("list_panes gave no JSON: %v\n%s", err, res.Text)
	}
	if len(page.Items) != len(ws.Panes) {
		t.Fatalf("list_panes listed %d panes, the workspace has %d:\n%s", len(page.Items), len(ws.Panes), res.Text)
	}
	labels := map[string]string{}
	for _, p := range ws.Panes {
		labels[p.ID] = p.Label
	}
	labels[renamed.ID] = "build logs"
	for _, it := range page.Items {
		id, _ := it["pane_id"].(string)
		want, ok := labels[id]
		if !ok {
			t.Fatalf("list_panes lists %q, which is no pane of the workspace:\n%s", id, res.Text)
		}
		if it["label"] != want {
			t.Errorf("pane %s: label %q, the window shows %q", id, it["label"], want)
		}
		if got, wantShown := it["shown_as"], want+" ("+id+")"; got != wantShown {
			t.Errorf("pane %s: shown_as %q, want %q", id, got, wantShown)
		}
	}
	// Each field once: the JSON text names pane_id and label once per pane.
	if n := strings.Count(res.Text, `"pane_id"`); n != len(ws.Panes) {
		t.Errorf("pane_id appears %d times for %d panes:\n%s", n, len(ws.Panes), res.Text)
	}
	if desc := tool.Description(); !strings.Contains(desc, "shown_as") || !strings.Contains(desc, "label") || !strings.Contains(desc, "pane_id") {
		t.Errorf("list_panes' description does not document the fields it returns: %s", desc)
	}
}

func ptr[T any](v T) *T { return &v }
