package goal_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/catalog"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// A goal run as a persona from the config dir sends the persona's prompt (and an attached
// skill) in the system prompt, and its temperature and max_tokens in every request the
// scripted model server records; its tools list narrows what the model is offered, while the
// goal tools stay.
func TestPersonaReachesTheModelRequests(t *testing.T) {
	cat, _ := personaCatalog(t, "careful", `---
name: Careful writer
temperature: 0.35
max_tokens: 1234
tools: [write_file]
---
PERSONA-MARKER: write files slowly and check them.
`)
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{writeDone(), claim("done.txt written")}},
		func(o *goal.Options) { o.Catalog = cat })

	g, _ := r.run(r.spec(func(s *goal.Spec) { s.Persona = "careful"; s.Skills = []string{"bug-reproduction"} }))
	if g.Status != goal.StatusCompleted {
		t.Fatalf("status %s: %s", g.Status, g.Report)
	}
	reqs := r.srv.ChatRequests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, req := range reqs {
		if !strings.Contains(req.System, "PERSONA-MARKER") || !strings.Contains(req.System, "## Skill: Reproducing a bug") {
			t.Errorf("request %d: the persona's prompt and the skill are not in the system prompt", i)
		}
		if temp, _ := req.JSON["temperature"].(float64); temp != 0.35 {
			t.Errorf("request %d: temperature = %v, want the persona's 0.35", i, req.JSON["temperature"])
		}
		if mt, _ := req.JSON["max_tokens"].(float64); mt != 1234 {
			t.Errorf("request %d: max_tokens = %v, want the persona's 1234", i, req.JSON["max_tokens"])
		}
		var offered []string
		for _, tl := range req.JSON["tools"].([]any) {
			offered = append(offered, tl.(map[string]any)["function"].(map[string]any)["name"].(string))
		}
		joined := "," + strings.Join(offered, ",") + ","
		if !strings.Contains(joined, ",write_file,") || !strings.Contains(joined, ",claim_complete,") || strings.Contains(joined, ",browser_look,") {
			t.Errorf("request %d offered %v: want write_file and the goal tools, not browser_look", i, offered)
		}
	}
}

// An unknown persona or skill is refused at start, naming the field and the id; nothing is stored.
func TestUnknownPersonaRefused(t *testing.T) {
	cat, _ := personaCatalog(t, "", "")
	r := newRig(t, llmtest.Script{}, func(o *goal.Options) { o.Catalog = cat })
	for field, edit := range map[string]func(*goal.Spec){
		"persona": func(s *goal.Spec) { s.Persona = "nobody" },
		"skill":   func(s *goal.Spec) { s.Skills = []string{"nobody"} },
	} {
		_, err := r.svc.Start(context.Background(), r.spec(edit))
		fe, ok := err.(*goal.FieldError)
		if !ok || fe.Field != field || !strings.Contains(fe.Msg, `"nobody"`) || !strings.Contains(fe.Msg, "engineer") && field == "persona" {
			t.Errorf("%s: err = %v, want a FieldError naming %s and the id", field, err, field)
		}
	}
	if gs, _ := r.svc.List(context.Background()); len(gs) != 0 {
		t.Errorf("%d goals stored after refusals", len(gs))
	}
}

// A goal cut off by a restart is still its persona when it resumes, as the file says now: the
// edited temperature reaches the resumed requests. A persona whose file is gone refuses the
// resume, naming it.
func TestPersonaSurvivesRestartAndFollowsTheFile(t *testing.T) {
	cat, file := personaCatalog(t, "steady", "---\nname: Steady\ntemperature: 0.2\n---\nSTEADY-MARKER\n")
	withCatalog := func(o *goal.Options) { o.Catalog = cat }
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{
		call("write_file", map[string]string{"path": "a.txt", "content": "a"}),
		llmtest.Stalled("working", 3),
	}}, withCatalog)
	g := quitMidGoal(t, r, "steady")

	os.WriteFile(file, []byte("---\nname: Steady\ntemperature: 0.6\n---\nSTEADY-MARKER v2\n"), 0o644)
	cat.Reload()
	before := len(r.srv.ChatRequests())
	r.srv.Push(writeDone(), claim("done after restart"))
	r.start(withCatalog)
	if err := r.svc.Resume(context.Background(), g.ID); err != nil {
		t.Fatal(err)
	}
	if g, _ = r.wait(g.ID); g.Status != goal.StatusCompleted {
		t.Fatalf("%s: %s", g.Status, g.Report)
	}
	resumed := r.srv.ChatRequests()[before:]
	if len(resumed) == 0 {
		t.Fatal("no request after the resume")
	}
	for i, req := range resumed {
		if temp, _ := req.JSON["temperature"].(float64); temp != 0.6 || !strings.Contains(req.System, "STEADY-MARKER v2") {
			t.Errorf("resumed request %d: temperature %v, system has v2: %v", i, req.JSON["temperature"], strings.Contains(req.System, "STEADY-MARKER v2"))
		}
	}

	// Gone: the resume is refused by name and the goal stays resumable.
	r2 := newRig(t, llmtest.Script{Replies: []llmtest.Reply{llmtest.Stalled("working", 3)}}, withCatalog)
	g2 := quitMidGoal(t, r2, "steady")
	os.Remove(file)
	cat.Reload()
	r2.start(withCatalog)
	if err := r2.svc.Resume(context.Background(), g2.ID); err == nil || !strings.Contains(err.Error(), `"steady"`) {
		t.Errorf("resume without the persona's file: %v, want a refusal naming it", err)
	}
	if cur, _ := r2.svc.Get(context.Background(), g2.ID); cur.Status != goal.StatusInterrupted {
		t.Errorf("after the refused resume the goal is %s, want still interrupted", cur.Status)
	}
}

// personaCatalog opens a catalog on a new config dir holding the persona id (none if id is
// empty) with the given file text, closed when the test ends; it returns the persona's file.
func personaCatalog(t *testing.T, id, text string) (*catalog.Catalog, string) {
	t.Helper()
	configDir := t.TempDir()
	file := filepath.Join(configDir, "personas", id+".md")
	if id != "" {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cat, err := catalog.Open(context.Background(), configDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	return cat, file
}

// quitMidGoal starts a goal working as persona, then shuts the service down once its model
// streams, as quitting the app mid-goal does; the goal is left to resume.
func quitMidGoal(t *testing.T, r *rig, persona string) goal.Goal {
	t.Helper()
	events := r.broker.Subscribe(t.Context())
	g := r.mustStart(r.spec(func(s *goal.Spec) { s.Persona = persona }))
	waitEvent(t, events, goal.EventDelta)
	r.svc.Shutdown()
	r.broker.Shutdown()
	return g
}
