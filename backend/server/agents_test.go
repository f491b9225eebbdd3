package server

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/fleet"
)

// GET /api/agents lists the panes' agents with their roles (what the dashboard's cards
// show), and only to a logged-in client.
func TestAgentsRouteListsThePanesAgents(t *testing.T) {
	h := newHarness(t)
	if _, err := h.fleets.SetRole(context.Background(), fleet.Caller{WorkspaceID: "w"}, "p1", "tester", "runs the suite"); err != nil {
		t.Fatal(err)
	}
	if resp, _ := h.do(t, "GET", "/api/agents", "", ""); resp.StatusCode != 401 {
		t.Fatalf("without a token: %d", resp.StatusCode)
	}
	resp, body := h.do(t, "GET", "/api/agents", h.login(t).AccessToken, "")
	if resp.StatusCode != 200 || !strings.Contains(body, `"paneId":"p1"`) || !strings.Contains(body, `"role":"Tester"`) ||
		!strings.Contains(body, `"purpose":"runs the suite"`) || !strings.Contains(body, `"status":"idle"`) {
		t.Fatalf("GET /api/agents: %d %s", resp.StatusCode, body)
	}
}

type agentsBody struct {
	Agents []fleet.Agent `json:"agents"`
}

func agentOf(t *testing.T, h *fleetHarness, pane string) fleet.Agent {
	t.Helper()
	var out agentsBody
	h.call(t, "GET", "/api/agents", "", "", 200, &out)
	for _, a := range out.Agents {
		if a.PaneID == pane {
			return a
		}
	}
	t.Fatalf("no agent for pane %s in %+v", pane, out.Agents)
	return fleet.Agent{}
}

// An agent card's editor: PUT /api/agents/{pane} sets the role (a built-in one spelled as the
// list spells it, or the user's own) and the purpose; a bad role, an overlong purpose or an
// unknown pane is a 400 naming the field and leaves the agent as it was; no token, no change.
func TestSetAgentRoleRoute(t *testing.T) {
	h := newFleetHarness(t)
	var f fleet.Fleet
	h.call(t, "POST", "/api/fleets", "application/yaml", fleetTwoTasks, 201, &f)
	h.until(t, f.ID, "slow to run", func(f fleet.Fleet) bool { return fleetTaskStatus(f, "slow") == fleet.TaskRunning })

	var rec fleet.AgentRecord
	h.call(t, "PUT", "/api/agents/slow-term", "application/json", `{"role": "reviewer", "purpose": "reads every diff"}`, 200, &rec)
	if rec.Role != "Reviewer" || rec.Purpose != "reads every diff" {
		t.Errorf("PUT answered %+v", rec)
	}
	if a := agentOf(t, h, "slow-term"); a.Role != "Reviewer" || a.Purpose != "reads every diff" || a.Status != fleet.AgentWorking {
		t.Errorf("after PUT the card reads %+v", a)
	}
	h.call(t, "PUT", "/api/agents/slow-term", "application/json", `{"role": "Release captain", "purpose": ""}`, 200, &rec)
	if rec.Role != "Release captain" {
		t.Errorf("a role of the user's own: %+v", rec)
	}

	for _, c := range []struct{ pane, body, field string }{
		{"slow-term", `{"role": "9 lives", "purpose": "x"}`, "role"},
		{"slow-term", `{"role": "", "purpose": "x"}`, "role"},
		{"slow-term", `{"role": "Tester", "purpose": "` + strings.Repeat("p", 2001) + `"}`, "purpose"},
		{"no-such-pane", `{"role": "Tester"}`, "pane_id"},
	} {
		var bad fleetErrorBody
		h.call(t, "PUT", "/api/agents/"+c.pane, "application/json", c.body, 400, &bad)
		if bad.Field != c.field || !strings.Contains(bad.Error, c.field+":") {
			t.Errorf("%s %.40s: %+v, want field %s", c.pane, c.body, bad, c.field)
		}
	}
	var bad fleetErrorBody
	h.call(t, "PUT", "/api/agents/slow-term", "application/json", `{"role": "Tester", "mood": "good"}`, 400, &bad)
	if !strings.Contains(bad.Error, "mood") {
		t.Errorf("an unknown field: %+v", bad)
	}
	token := h.token
	h.token = ""
	h.call(t, "PUT", "/api/agents/slow-term", "application/json", `{"role": "Tester"}`, 401, nil)
	h.token = token
	if a := agentOf(t, h, "slow-term"); a.Role != "Release captain" || a.Purpose != "" {
		t.Errorf("a refused change changed the agent: %+v", a)
	}
	h.call(t, "POST", "/api/fleets/"+f.ID+"/abort", "", "", 200, nil)
}

// The persona of a task's goal reaches its agent's card: the current task of the pane's agent
// carries the persona id its goal runs as.
func TestAgentCardCarriesTheGoalsPersona(t *testing.T) {
	h := newFleetHarness(t)
	var f fleet.Fleet
	h.call(t, "POST", "/api/fleets", "application/yaml", `name: persona
tasks:
  - id: slow
    goal: Review the change
    pane: slow-term
    role: Reviewer
    persona: engineer
    check_shell: "true"
`, 201, &f)
	f = h.until(t, f.ID, "slow to run", func(f fleet.Fleet) bool { return fleetTaskStatus(f, "slow") == fleet.TaskRunning })
	a := agentOf(t, h, "slow-term")
	if a.CurrentTask == nil || a.CurrentTask.Persona != "engineer" || a.CurrentTask.TaskID != "slow" || a.CurrentTask.GoalID == "" {
		t.Errorf("the card's current task: %+v", a.CurrentTask)
	}
	if a.Role != "Reviewer" || a.Status != fleet.AgentWorking || a.Progress == nil {
		t.Errorf("the card: %+v", a)
	}
	h.call(t, "POST", "/api/fleets/"+f.ID+"/abort", "", "", 200, nil)
}

// The catalog routes: the listing, rendering a task template (an empty parameter is a 400
// naming params.NAME, an unknown template one naming task), and the path of a folder, which
// under serve is shown rather than opened.
func TestCatalogRoutes(t *testing.T) {
	h, tok := newLoggedIn(t)

	resp, body := h.do(t, "GET", "/api/catalog", tok, "")
	var l struct {
		Dir      string
		Personas []struct{ ID string }
		Tasks    []struct {
			ID         string
			Parameters []struct{ Name string }
		}
	}
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &l) != nil || len(l.Personas) < 6 || len(l.Tasks) < 2 {
		t.Fatalf("list: %d %s", resp.StatusCode, body)
	}

	resp, body = h.do(t, "POST", "/api/catalog/tasks/review-change/render", tok, `{"params":{"repo":"/r","branch":"b","base":""}}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `"field":"params.base"`) {
		t.Errorf("empty parameter: %d %s", resp.StatusCode, body)
	}
	resp, body = h.do(t, "POST", "/api/catalog/tasks/nope/render", tok, `{"params":{}}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `"field":"task"`) || !strings.Contains(body, "fix-bug") {
		t.Errorf("unknown template: %d %s", resp.StatusCode, body)
	}
	resp, body = h.do(t, "POST", "/api/catalog/tasks/review-change/render", tok, `{"params":{"repo":"/r","branch":"feature","base":"main"}}`)
	var r struct{ Goal, Criterion, Persona string }
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &r) != nil || r.Persona != "reviewer" || !strings.Contains(r.Goal, "branch feature") {
		t.Errorf("render: %d %s", resp.StatusCode, body)
	}

	resp, body = h.do(t, "POST", "/api/catalog/path", tok, `{"kind":"personas"}`)
	var p struct {
		Path   string
		Opened bool
	}
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &p) != nil || p.Path != filepath.Join(l.Dir, "personas") || p.Opened {
		t.Errorf("path: %d %s", resp.StatusCode, body)
	}
	if st, err := os.Stat(p.Path); err != nil || !st.IsDir() {
		t.Errorf("the folder to open should exist: %v", err)
	}
	resp, body = h.do(t, "POST", "/api/catalog/path", tok, `{"kind":"plugins"}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `"field":"kind"`) {
		t.Errorf("bad kind: %d %s", resp.StatusCode, body)
	}
	resp, body = h.do(t, "POST", "/api/catalog/customize", tok, `{"kind":"skills","id":"code-review"}`)
	if resp.StatusCode != 200 || !strings.Contains(body, filepath.Join(l.Dir, "skills", "code-review.md")) {
		t.Errorf("customize: %d %s", resp.StatusCode, body)
	}
}
