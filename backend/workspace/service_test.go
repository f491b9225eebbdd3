package workspace_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/store"
	"github.com/clusterspace/clusterspace/backend/store/storetest"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

func newService(t *testing.T) (*workspace.Service, *store.Store, <-chan pubsub.Event[workspace.List]) {
	t.Helper()
	st, _ := storetest.Open(t)
	broker := pubsub.NewBroker[workspace.List]()
	t.Cleanup(broker.Shutdown)
	events := broker.Subscribe(t.Context())
	svc, err := workspace.NewService(context.Background(), st, broker)
	if err != nil {
		t.Fatal(err)
	}
	return svc, st, events
}

// activeID is the id of the service's active workspace.
func activeID(t *testing.T, svc *workspace.Service) string {
	t.Helper()
	list, err := svc.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return list.ActiveID
}

func nextEvent(t *testing.T, ch <-chan pubsub.Event[workspace.List]) pubsub.Event[workspace.List] {
	t.Helper()
	select {
	case ev := <-ch:
		return ev
	case <-time.After(2 * time.Second):
		t.Fatal("no event published")
	}
	panic("unreachable")
}

func TestFirstRunCreatesWorkspaceOne(t *testing.T) {
	t.Parallel()
	svc, st, _ := newService(t)
	ctx := context.Background()
	list, err := svc.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Workspaces) != 1 {
		t.Fatalf("%d workspaces on first run", len(list.Workspaces))
	}
	ws := list.Workspaces[0]
	if ws.Name != "Workspace 1" || ws.Rows != 2 || ws.Cols != 2 || len(ws.Panes) != 4 || list.ActiveID != ws.ID {
		t.Fatalf("first workspace: %+v active %q", ws, list.ActiveID)
	}
	for _, p := range ws.Panes {
		if p.Kind != workspace.KindTerminal {
			t.Fatalf("pane %s is %s, want terminal", p.ID, p.Kind)
		}
	}
	// A second start on the same store does not add another.
	if _, err := workspace.NewService(ctx, st, pubsub.NewBroker[workspace.List]()); err != nil {
		t.Fatal(err)
	}
	if list, _ := svc.List(ctx); len(list.Workspaces) != 1 {
		t.Fatalf("restart added workspaces: %d", len(list.Workspaces))
	}
}

func TestCreateRenameDeleteSwitch(t *testing.T) {
	t.Parallel()
	svc, _, events := newService(t)
	ctx := context.Background()
	first, _ := svc.List(ctx)

	b, err := svc.Create(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, events)
	if ev.Type != workspace.EventCreated || len(ev.Payload.Workspaces) != 2 || ev.Payload.ActiveID != b.ID {
		t.Fatalf("create event: %+v", ev)
	}
	if b.Name != "Workspace 2" {
		t.Fatalf("default name %q", b.Name)
	}
	if _, err := svc.Rename(ctx, b.ID, "  Build  "); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, events); ev.Payload.Workspaces[1].Name != "Build" {
		t.Fatalf("rename event: %+v", ev.Payload.Workspaces[1])
	}
	var fe *workspace.FieldError
	if _, err := svc.Rename(ctx, b.ID, " "); !errors.As(err, &fe) || fe.Field != "name" {
		t.Fatalf("empty rename: %v", err)
	}
	if err := svc.Activate(ctx, first.ActiveID); err != nil {
		t.Fatal(err)
	}
	nextEvent(t, events)
	// Deleting the active workspace activates its neighbour.
	if err := svc.Delete(ctx, first.ActiveID, false); err != nil {
		t.Fatal(err)
	}
	list, _ := svc.List(ctx)
	if len(list.Workspaces) != 1 || list.ActiveID != b.ID {
		t.Fatalf("after delete: %+v", list)
	}
	if err := svc.Delete(ctx, b.ID, false); !errors.Is(err, workspace.ErrLastWorkspace) {
		t.Fatalf("deleting the last workspace: %v", err)
	}
	if err := svc.Activate(ctx, "ws-nope"); !errors.Is(err, workspace.ErrNotFound) {
		t.Fatalf("activate unknown: %v", err)
	}
}

func TestGridSwapWeightsPersist(t *testing.T) {
	t.Parallel()
	svc, st, _ := newService(t)
	ctx, id := context.Background(), activeID(t, svc)
	ws, err := svc.SetGrid(ctx, id, 3, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	a, b := ws.Panes[0], ws.Panes[5]
	if _, err := svc.SwapPanes(ctx, id, a.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SetWeights(ctx, id, []float64{1, 2, 3}, []float64{3, 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SetWeights(ctx, id, []float64{1}, []float64{3, 1}); err == nil || !strings.Contains(err.Error(), "rowWeights") {
		t.Fatalf("short weights: %v", err)
	}
	kind := workspace.KindBrowser
	if _, err := svc.UpdatePane(ctx, id, a.ID, workspace.PanePatch{Kind: &kind}); err != nil {
		t.Fatal(err)
	}

	// A new service on the same store (a restart) sees the same state.
	again, err := workspace.NewService(ctx, st, pubsub.NewBroker[workspace.List]())
	if err != nil {
		t.Fatal(err)
	}
	list, _ := again.List(ctx)
	got := list.Workspaces[0]
	if got.Rows != 3 || got.Cols != 2 || !reflect.DeepEqual(got.RowWeights, []float64{1, 2, 3}) {
		t.Fatalf("after restart: %+v", got)
	}
	if got.Panes[0].ID != b.ID || got.Panes[5].ID != a.ID || got.Panes[5].Kind != workspace.KindBrowser {
		t.Fatalf("swap/kind not persisted: %+v", got.Panes)
	}
	// The given label names the new kind; a label the user chose stays as it is.
	if got.Panes[5].Label != "Browser 1.1" {
		t.Fatalf("label after the kind change: %q", got.Panes[5].Label)
	}
	mine, term := "API docs", workspace.KindTerminal
	svc.UpdatePane(ctx, id, b.ID, workspace.PanePatch{Label: &mine})
	svc.UpdatePane(ctx, id, b.ID, workspace.PanePatch{Kind: &kind})
	ws, _ = svc.UpdatePane(ctx, id, a.ID, workspace.PanePatch{Kind: &term})
	if ws.Panes[0].Label != "API docs" || ws.Panes[5].Label != "Terminal 1.1" {
		t.Fatalf("labels: %q %q", ws.Panes[0].Label, ws.Panes[5].Label)
	}
}

func TestExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	svc, _, _ := newService(t)
	ctx := context.Background()
	src, _ := svc.SetGrid(ctx, activeID(t, svc), 1, 3, false)
	src, _ = svc.Rename(ctx, src.ID, "Deploy / prod")

	data, name, err := svc.Export(ctx, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	if name != "deploy--prod.clusterspace.json" {
		t.Fatalf("file name %q", name)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil || doc["format"] != workspace.ExportFormat {
		t.Fatalf("export is not the documented format: %s", data)
	}
	imported, err := svc.Import(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	twice, err := svc.Import(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	if imported.Name != src.Name || imported.Rows != 1 || imported.Cols != 3 || imported.ID == src.ID {
		t.Fatalf("imported %+v", imported)
	}
	for i := range src.Panes {
		if imported.Panes[i].Label != src.Panes[i].Label || imported.Panes[i].ID == src.Panes[i].ID || imported.Panes[i].ID == twice.Panes[i].ID {
			t.Fatalf("pane %d: src %+v imported %+v twice %+v", i, src.Panes[i], imported.Panes[i], twice.Panes[i])
		}
	}
	list, _ := svc.List(ctx)
	if len(list.Workspaces) != 3 || list.ActiveID != twice.ID {
		t.Fatalf("after imports: %d workspaces, active %q", len(list.Workspaces), list.ActiveID)
	}
}

func TestImportRefusesBadFilesAndChangesNothing(t *testing.T) {
	t.Parallel()
	svc, _, events := newService(t)
	ctx := context.Background()
	before, _ := svc.List(ctx)
	good, _, _ := svc.Export(ctx, before.ActiveID)

	cases := map[string]struct{ data, want string }{
		"broken json":   {`{"format": "clusterspace.workspace", "version": 1,`, "not a valid workspace export"},
		"syntax":        {"{\n  \"format\": nope\n}", "line 2"},
		"empty":         {"   ", "empty"},
		"other format":  {`{"format":"something.else","version":1,"workspace":{}}`, `"format" is "something.else"`},
		"newer version": {strings.Replace(string(good), `"version": 1`, `"version": 9`, 1), "version 9"},
		"unknown field": {strings.Replace(string(good), `"version": 1`, `"version": 1, "extra": true`, 1), "extra"},
		"bad grid":      {strings.Replace(string(good), `"rows": 2`, `"rows": 8`, 1), "workspace.rows"},
		"wrong type":    {strings.Replace(string(good), `"rows": 2`, `"rows": "two"`, 1), "should be int"},
		"trailing":      {string(good) + "{}", "more content"},
	}
	for name, tc := range cases {
		_, err := svc.Import(ctx, []byte(tc.data))
		var ie *workspace.ImportError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an import error containing %q", name, err, tc.want)
		}
	}
	after, _ := svc.List(ctx)
	if !reflect.DeepEqual(before, after) {
		t.Fatal("a refused import changed the workspaces")
	}
	select {
	case ev := <-events:
		t.Fatalf("a refused import published %q", ev.Type)
	default:
	}
}

// Two clients editing at once must not lose each other's changes (run with -race).
func TestConcurrentEditsAreSerialised(t *testing.T) {
	t.Parallel()
	svc, _, _ := newService(t)
	ctx, id := context.Background(), activeID(t, svc)
	ws, _ := svc.SetGrid(ctx, id, 1, 6, false)
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			label := "pane-label-" + string(rune('a'+i))
			if _, err := svc.UpdatePane(ctx, id, ws.Panes[i].ID, workspace.PanePatch{Label: &label}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	list, _ := svc.List(ctx)
	for i, p := range list.Workspaces[0].Panes {
		if p.Label != "pane-label-"+string(rune('a'+i)) {
			t.Fatalf("pane %d label %q: a concurrent edit was lost", i, p.Label)
		}
	}
}
