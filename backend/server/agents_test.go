package server

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/store"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// GET /api/agents lists the panes' agents with their roles (what the dashboard's cards
// show), and only to a logged-in client.
func TestAgentsRouteListsThePanesAgents(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(h.dataDir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	goalEvents, fleetEvents := pubsub.NewBroker[goal.Event](), pubsub.NewBroker[fleet.Event]()
	t.Cleanup(goalEvents.Shutdown)
	t.Cleanup(fleetEvents.Shutdown)
	goals, err := goal.NewService(ctx, st, noModels{}, tools.NewRegistry(), goalEvents, goal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(goals.Shutdown)
	fleets, err := fleet.NewService(ctx, st, goals, fleetEvents, fleet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fleets.Shutdown)
	if _, err := fleets.SetRole(ctx, fleet.Caller{WorkspaceID: "w"}, "p1", "tester", "runs the suite"); err != nil {
		t.Fatal(err)
	}
	h.srv.deps.Fleets = fleets
	if resp, _ := h.do(t, "GET", "/api/agents", "", ""); resp.StatusCode != 401 {
		t.Fatalf("without a token: %d", resp.StatusCode)
	}
	resp, body := h.do(t, "GET", "/api/agents", h.login(t).AccessToken, "")
	if resp.StatusCode != 200 || !strings.Contains(body, `"paneId":"p1"`) || !strings.Contains(body, `"role":"Tester"`) ||
		!strings.Contains(body, `"purpose":"runs the suite"`) || !strings.Contains(body, `"status":"idle"`) {
		t.Fatalf("GET /api/agents: %d %s", resp.StatusCode, body)
	}
}
