package server

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/fleet"
)

func (h *fleetHarness) until(t *testing.T, id, what string, cond func(fleet.Fleet) bool) fleet.Fleet {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var f fleet.Fleet
		h.call(t, "GET", "/api/fleets/"+id, "", "", 200, &f)
		if cond(f) {
			return f
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %s %+v", what, f.Status, f.Tasks)
		}
		time.Sleep(30 * time.Millisecond)
	}
}

func fleetTaskStatus(f fleet.Fleet, id string) fleet.TaskStatus {
	if t, ok := f.Task(id); ok {
		return t.Status
	}
	return ""
}

const fleetTwoTasks = `name: pair
concurrency: 2
tasks:
  - id: first
    goal: Make the thing
    role: Builder
    check_shell: "true"
  - id: slow
    goal: Use the thing
    pane: slow-term
    role: Tester
    depends_on: [first]
    check_shell: "true"
`

// The Composer's routes: a file checked (YAML or JSON) answers its tasks or the task and field
// at fault; a fleet created runs in dependency order, a bulk abort ends the running task and
// the fleet, the export reads back to the same tasks, and controls that do not fit answer 409.
func TestFleetRoutesComposeRunBulkAbortExport(t *testing.T) {
	h := newFleetHarness(t)

	var bad fleetErrorBody
	h.call(t, "POST", "/api/fleets/parse", "application/yaml",
		"name: loop\ntasks:\n  - {id: a, goal: A, depends_on: [b]}\n  - {id: b, goal: B, depends_on: [a]}\n", 400, &bad)
	if bad.Field != "depends_on" || bad.Task != "b" || !strings.Contains(bad.Error, "cycle") {
		t.Errorf("a cycle: %+v", bad)
	}
	h.call(t, "POST", "/api/fleets/parse", "application/json", `{"yaml": "name: x\ntasks:\n  - {id: a, goal: A, check_shell: ls, check_manual: true}\n"}`, 400, &bad)
	if bad.Field != "check_shell" && bad.Field != "check_manual" || bad.Task != "a" {
		t.Errorf("two criteria: %+v", bad)
	}
	h.call(t, "POST", "/api/fleets/parse", "application/json", `{"yaml": "name: x", "risk": "high"}`, 400, &bad)
	if bad.Field != "risk" {
		t.Errorf("an unknown field of the request: %+v", bad)
	}
	var parsed struct {
		File fleet.File
		YAML string
	}
	h.call(t, "POST", "/api/fleets/parse", "application/json", `{"name": "j", "tasks": [{"id": "a", "goal": "A", "check_question": "Is it done?"}]}`, 200, &parsed)
	if len(parsed.File.Tasks) != 1 || parsed.File.Tasks[0].Criterion.Question != "Is it done?" || !strings.Contains(parsed.YAML, "check_question: Is it done?") {
		t.Errorf("the file as JSON: %+v", parsed)
	}

	// A sandbox that does not exist is refused before anything runs, naming the task.
	h.call(t, "POST", "/api/fleets", "application/json", fleetJSON(map[string]any{"yaml": fleetTwoTasks, "policy": map[string]any{"risk": "write_local", "sandboxDir": "/nonexistent/dir"}}), 400, &bad)
	if bad.Task != "first" || bad.Field != "policy.sandboxDir" {
		t.Errorf("a bad sandbox: %+v", bad)
	}
	// So is a pane template no catalog has, naming the task, the field and the choices.
	h.call(t, "POST", "/api/fleets", "application/json", fleetJSON(map[string]any{"yaml": strings.Replace(fleetTwoTasks, "role: Builder", "role: Builder\n    template: nope", 1)}), 400, &bad)
	if bad.Task != "first" || bad.Field != "template" || !strings.Contains(bad.Error, "claude") {
		t.Errorf("an unknown pane template: %+v", bad)
	}
	var wl struct{ Workspaces []struct{ ID string } }
	h.call(t, "GET", "/api/workspaces", "", "", 200, &wl)
	for _, ws := range wl.Workspaces {
		if strings.HasPrefix(ws.ID, "ws-fleet-") {
			t.Errorf("a refused fleet made the workspace %s for its panes", ws.ID)
		}
	}
	var fl struct{ Fleets []fleet.Fleet }
	if h.call(t, "GET", "/api/fleets", "", "", 200, &fl); len(fl.Fleets) != 0 {
		t.Fatalf("a refused fleet was stored: %+v", fl.Fleets)
	}

	var f fleet.Fleet
	h.call(t, "POST", "/api/fleets", "application/yaml", fleetTwoTasks, 201, &f)
	if f.Spec.Policy.Ceiling.String() != "write_local" || len(f.Tasks) != 2 {
		t.Fatalf("created: %+v", f)
	}
	f = h.until(t, f.ID, "first to complete and slow to run", func(f fleet.Fleet) bool {
		return fleetTaskStatus(f, "first") == fleet.TaskCompleted && fleetTaskStatus(f, "slow") == fleet.TaskRunning
	})

	h.call(t, "POST", "/api/fleets/"+f.ID+"/tasks/bulk", "application/json", `{"task_ids": ["slow"], "action": "explode"}`, 400, &bad)
	if bad.Field != "action" {
		t.Errorf("a bad action: %+v", bad)
	}
	h.call(t, "POST", "/api/fleets/"+f.ID+"/tasks/bulk", "application/json", `{"task_ids": ["ghost"], "action": "abort"}`, 400, &bad)
	if bad.Field != "task_ids" || !strings.Contains(bad.Error, "ghost") {
		t.Errorf("an unknown task: %+v", bad)
	}
	var res struct {
		Outcomes []fleet.Outcome
		Fleet    fleet.Fleet
	}
	h.call(t, "POST", "/api/fleets/"+f.ID+"/tasks/bulk", "application/json", `{"task_ids": ["first", "slow"], "action": "abort"}`, 200, &res)
	if len(res.Outcomes) != 2 || res.Outcomes[0].OK || !strings.Contains(res.Outcomes[0].Error, "already ended") || !res.Outcomes[1].OK {
		t.Errorf("bulk abort outcomes: %+v", res.Outcomes)
	}
	f = h.until(t, f.ID, "the fleet to end", func(f fleet.Fleet) bool { return f.Status.Finished() })
	if f.Status != fleet.StatusFailed || fleetTaskStatus(f, "slow") != fleet.TaskAborted || fleetTaskStatus(f, "first") != fleet.TaskCompleted {
		t.Fatalf("after the bulk abort: %s %+v", f.Status, f.Tasks)
	}

	var exp struct{ Name, YAML string }
	h.call(t, "GET", "/api/fleets/"+f.ID+"/yaml", "", "", 200, &exp)
	back, err := fleet.Parse([]byte(exp.YAML))
	if err != nil || exp.Name != "pair" || back.Concurrency != 2 || len(back.Tasks) != 2 || back.Tasks[1].DependsOn[0] != "first" ||
		back.Tasks[1].Pane != "slow-term" || back.Tasks[1].Role != "Tester" || back.Tasks[0].Criterion.Command != "true" {
		t.Errorf("export %v:\n%s\n%+v", err, exp.YAML, back)
	}

	h.call(t, "POST", "/api/fleets/"+f.ID+"/abort", "", "", 409, nil)
	h.call(t, "POST", "/api/fleets/"+f.ID+"/resume", "", "", 409, nil)
	h.call(t, "GET", "/api/fleets/fleet-none", "", "", 404, nil)
	h.call(t, "POST", "/api/fleets/fleet-none/tasks/bulk", "application/json", `{"task_ids": ["a"], "action": "abort"}`, 404, nil)
	if h.call(t, "GET", "/api/fleets", "", "", 200, &fl); len(fl.Fleets) != 1 || fl.Fleets[0].ID != f.ID {
		t.Errorf("list: %+v", fl.Fleets)
	}
}

// An abort of the whole fleet through its route ends its running task.
func TestFleetRouteAbortsARunningFleet(t *testing.T) {
	h := newFleetHarness(t)
	var f fleet.Fleet
	h.call(t, "POST", "/api/fleets", "application/json", `{"yaml": "name: one\ntasks:\n  - {id: s, goal: Wait, pane: slow-term, check_shell: \"true\"}\n", "policy": {}}`, 201, &f)
	if f.Spec.Policy.Ceiling.String() != "write_local" {
		t.Errorf("a policy without a risk runs at %s, want the default write_local", f.Spec.Policy.Ceiling)
	}
	h.until(t, f.ID, "s to run", func(f fleet.Fleet) bool { return fleetTaskStatus(f, "s") == fleet.TaskRunning })
	h.call(t, "POST", "/api/fleets/"+f.ID+"/abort", "", "", 200, &f)
	if f.Status != fleet.StatusAborted || fleetTaskStatus(f, "s") != fleet.TaskAborted {
		t.Fatalf("after abort: %s %+v", f.Status, f.Tasks)
	}
}

func fleetJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
