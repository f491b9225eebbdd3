package api

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/engine"
	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// goldenFleet has a task that works (its agent waits, step after step, until aborted) and one
// that waits for it, so the answers carry a running task with its goal and progress, a queue,
// and an inbox.
const goldenFleet = `name: release
concurrency: 1
tasks:
  - id: build
    goal: Build the release
    pane: build-term
    role: Builder
    persona: engineer
    check_shell: "true"
  - id: review
    goal: Review the build
    pane: build-term
    priority: 2
    depends_on: [build]
    check_question: Is the build reviewed?
`

// TestGoldenFleetAnswers runs the fleets', agents' and extensions' calls on a real engine whose
// model is the scripted server, and compares their answers with the golden JSON the frontend's
// fleet and agent tests read (src/lib/api/fleets.test.ts, agents.test.ts).
func TestGoldenFleetAnswers(t *testing.T) {
	model := llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{{Repeat: 1 << 30,
		ToolCalls: []llmtest.ToolCall{{Name: "wait", Args: json.RawMessage(`{"ms": 100}`)}}}}})
	g := newGoldenEngine(t, engine.WithModel(model.Config()))
	yaml, _ := json.Marshal(goldenFleet)
	created := g.call("CreateFleet", `{"yaml": `+string(yaml)+`}`)
	var f fleet.Fleet
	json.Unmarshal(created, &f)
	// Until the build's goal has taken a step.
	var agents json.RawMessage
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		agents = g.call("ListAgents", `{}`)
		var l AgentsResult
		json.Unmarshal(agents, &l)
		if len(l.Agents) > 0 && l.Agents[0].Progress != nil && l.Agents[0].Progress.Steps > 0 && len(l.Agents[0].Inbox) > 0 && l.Agents[0].Inbox[0].Delivered {
			break
		}
		if len(l.Agents) > 0 && l.Agents[0].CurrentTask != nil && len(l.Agents[0].Inbox) == 0 {
			if _, err := g.eng.Fleets.Share(context.Background(), fleet.Caller{User: true}, "build-term", "dist/ is at /tmp/dist", false); err != nil {
				t.Fatal(err)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the build task did not take a step: %s", agents)
		}
	}
	answers := map[string]json.RawMessage{
		"ParseFleet":   g.call("ParseFleet", `{"yaml": `+string(yaml)+`}`),
		"GetFleet":     g.call("GetFleet", `{"id": "`+f.ID+`"}`),
		"ListFleets":   g.call("ListFleets", `{}`),
		"ListAgents":   agents,
		"SetAgentRole": g.call("SetAgentRole", `{"pane": "build-term", "role": "tester", "purpose": "runs the suite"}`),
		"ExportFleet":  g.call("ExportFleet", `{"id": "`+f.ID+`"}`),
		"FleetBulk":    g.call("FleetBulk", `{"id": "`+f.ID+`", "taskIds": ["build", "review"], "action": "pause"}`),
		"Extensions":   g.call("Extensions", `{}`),
	}
	// The abort's answer races with the fleet ending its tasks, so it is not golden.
	g.call("AbortFleet", `{"id": "`+f.ID+`"}`)
	checkGolden(t, answers,
		unstableValue{regexp.MustCompile(`"(fleet|goal)-[0-9a-f]{6,}"`), `"$1-0"`},
		unstableValue{regexp.MustCompile(`"(steps|tokens)":\s*\d+`), `"$1": 1`},
		unstableValue{regexp.MustCompile(`"cost_usd":\s*[0-9.e-]+`), `"cost_usd": 0`},
		unstableValue{regexp.MustCompile(`"(file|dir)":\s*"[^"]*"`), `"$1": "/config/x"`})
}
