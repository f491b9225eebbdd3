package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// End-to-end with the real agent CLIs (installed by scripts/agents.sh at the versions pinned
// there): each runs as a fleet task's pane started from its template, inside the task's
// sandbox, against the scripted model server. The task's goal (the app's own agent, on the
// OpenAI-style side of the same server) types a task into the pane, waits, reads the agent's
// answer from the screen and claims; the fleet's check verifies the file the agent wrote.

// agentsBin is the directory holding the pinned CLIs' executables: scripts/agents.sh is run
// (it installs once into its cache, then only checks); a version npm does not serve fails
// the test with the script's own words.
func agentsBin(t *testing.T, bin string) string {
	t.Helper()
	cache := os.Getenv("CLUSTERSPACE_AGENTS_DIR")
	out, err := exec.Command("scripts/agents.sh").CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/agents.sh could not install the pinned agent CLIs: %v\n%s", err, out)
	}
	if cache == "" {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		cache = lines[len(lines)-1]
	}
	matches, _ := filepath.Glob(filepath.Join(cache, "*", "node_modules", ".bin", bin))
	if len(matches) != 1 {
		t.Fatalf("scripts/agents.sh left %d %s executables in %s (%v), want 1", len(matches), bin, cache, matches)
	}
	return filepath.Dir(matches[0])
}

// agentRun is one CLI's run: what its template is, and how its model and the goal talk.
type agentRun struct {
	template, bin string
	kind          string // the provider kind the CLI speaks
	answer        string // what the CLI's model answers last, to be read from the screen
	file, content string // what the CLI's model writes
	// viaSettingsUI assigns the provider to the template in Settings in a real browser, as a
	// person does (else over the REST API).
	viaSettingsUI bool
	// cliReply answers the CLI's own requests.
	cliReply func(req llmtest.Request) llmtest.Reply
}

// goalTurns are the task goal's moves: wait for the CLI at its prompt, type the task, wait
// for the answer, read the screen, claim. Both waits go without a pattern: the terminal's
// recogniser of the template's tool ends them when the tool is idle at its prompt.
func (a agentRun) goalTurn(pane, task string, turn int, lastResult string) llmtest.Reply {
	switch turn {
	case 0:
		return toolCall("wait_for_output", map[string]any{"pane_id": pane, "timeout_ms": 60000})
	case 1:
		// Typed, then Enter on its own, as a person does: a TUI takes text and a newline that
		// arrive together as one paste and does not submit it.
		return toolCall("write_to_terminal", map[string]any{"pane_id": pane, "text": task, "press_enter": false})
	case 2:
		return toolCall("write_to_terminal", map[string]any{"pane_id": pane, "text": "enter"})
	case 3:
		return toolCall("wait_for_output", map[string]any{"pane_id": pane, "timeout_ms": 120000})
	case 4:
		return toolCall("read_terminal_output", map[string]any{"pane_id": pane, "lines": 80})
	}
	return fleetClaim("the agent answered: " + firstLineWith(lastResult, a.answer))
}

func firstLineWith(text, want string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, want) {
			return strings.TrimSpace(l)
		}
	}
	return "(not on the screen)"
}

// runAgentFleet serves a fresh data dir with the CLI on PATH, adds the scripted server as the
// goal's provider and as the provider assigned to the template in Settings, runs a one-task
// fleet whose pane is the template, confined to a sandbox at write_local, and returns the
// task's goal's requests and the sandbox.
func runAgentFleet(t *testing.T, a agentRun) {
	binDir := agentsBin(t, a.bin)
	t.Setenv("PATH", binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	const key = "sk-scripted-agent-key-4242"
	pane := a.template + "-term"
	// The task does not name the answer, so a wait for it cannot match the typed text.
	task := fmt.Sprintf("Create the file %s containing the line %q, then tell me you are done.", a.file, strings.TrimSpace(a.content))

	var mu sync.Mutex
	var goalReqs []llmtest.Request
	var cliReqs []llmtest.Request
	model := llmtest.New(t, llmtest.Script{APIKey: key, Replies: []llmtest.Reply{{Repeat: 1 << 30, Compute: func(req llmtest.Request) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		if req.Protocol == "openai" && strings.Contains(string(req.Body), "You are working in pane "+pane) {
			goalReqs = append(goalReqs, req)
			return a.goalTurn(pane, task, req.AssistantTurns(), req.LastToolResult())
		}
		if strings.Contains(string(req.Body), "You are a critic") {
			return llmtest.Text("PROGRESSING")
		}
		cliReqs = append(cliReqs, req)
		return a.cliReply(req)
	}}}})

	srv := startServe(t, t.TempDir(), e2ePassword)
	token := apiToken(t, srv.URL)
	var goalProv, cliProv struct{ ID string }
	apiCall(t, "POST", srv.URL+"/api/providers", token,
		map[string]any{"name": "Scripted", "kind": "openai", "baseUrl": model.OpenAIURL(), "model": "scripted-model", "apiKey": key}, &goalProv)
	cliBase := model.URL
	if a.kind == "openai" {
		cliBase = model.OpenAIURL()
	}
	apiCall(t, "POST", srv.URL+"/api/providers", token,
		map[string]any{"name": "Scripted for " + a.template, "kind": a.kind, "baseUrl": cliBase, "model": "scripted-" + a.template, "apiKey": key}, &cliProv)
	apiCall(t, "PUT", srv.URL+"/api/providers/defaults", token, map[string]string{"defaultId": goalProv.ID, "criticDefaultId": ""}, nil)
	if a.viaSettingsUI {
		assignInSettings(t, srv, a.template, cliProv.ID)
	} else {
		apiCall(t, "PUT", srv.URL+"/api/settings/agent-keys", token, map[string]any{"providers": map[string]string{a.template: cliProv.ID}}, nil)
	}
	var keys struct{ Providers map[string]string }
	apiCall(t, "GET", srv.URL+"/api/settings/agent-keys", token, nil, &keys)
	if keys.Providers[a.template] != cliProv.ID {
		t.Fatalf("the %s template's key: %v, want provider %s", a.template, keys.Providers, cliProv.ID)
	}

	sandbox := t.TempDir()
	var f struct{ ID string }
	apiCall(t, "POST", srv.URL+"/api/fleets", token, map[string]any{
		"yaml": fmt.Sprintf("name: %s-e2e\ntasks:\n  - id: write\n    goal: Have %s write %s and report its answer\n    pane: %s\n    template: %s\n    check_shell: grep -qx '%s' %s\n",
			a.template, a.template, a.file, pane, a.template, strings.TrimSpace(a.content), a.file),
		"policy":   map[string]any{"risk": "write_local", "sandboxDir": sandbox},
		"settings": map[string]any{"workDir": sandbox, "criticIntervalSteps": 0},
	}, &f)

	var fl struct {
		Status string
		Tasks  []struct{ Status, Report, GoalID string }
	}
	deadline := time.Now().Add(4 * time.Minute)
	for {
		apiCall(t, "GET", srv.URL+"/api/fleets/"+f.ID, token, nil, &fl)
		if fl.Status == "completed" || fl.Status == "failed" || fl.Status == "aborted" {
			break
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	var screen string
	for _, r := range goalReqs {
		if strings.Contains(r.LastToolResult(), a.answer) {
			screen = r.LastToolResult()
		}
	}
	if fl.Status != "completed" {
		var lastResult string
		for i, r := range goalReqs {
			lastResult += fmt.Sprintf("--- turn %d read:\n%s\n", i, tail(r.LastToolResult(), 1500))
		}
		t.Fatalf("the %s fleet ended %q (tasks %+v) after %d goal requests and %d of the CLI's; the goal last read:\n%s\nserve's log:\n%s",
			a.template, fl.Status, fl.Tasks, len(goalReqs), len(cliReqs), lastResult, tail(srv.stderr.String(), 3000))
	}
	t.Logf("the goal read the %s pane's screen:\n%s", a.template, screen)
	// Both waits had no pattern; each ended when the tool was idle at its prompt, the second
	// with the answer already drawn, not at the timeout.
	if len(goalReqs) >= 5 {
		for _, w := range []struct {
			turn   int
			answer bool
		}{{1, false}, {4, true}} {
			res := goalReqs[w.turn].LastToolResult()
			if strings.Contains(res, "Completion: timeout") || !strings.Contains(res, "Completion: ") || (w.answer && !strings.Contains(res, a.answer)) {
				t.Errorf("the wait without a pattern (turn %d) ended so:\n%s", w.turn-1, res)
			}
		}
	}
	// The answer was read from the screen by read_terminal_output (the fifth turn's result).
	if len(goalReqs) < 6 || !strings.Contains(goalReqs[5].LastToolResult(), a.answer) {
		t.Errorf("read_terminal_output did not show the %s's answer %q; it read:\n%s", a.template, a.answer, screen)
	}
	// The agent ran inside the task's sandbox: its pane's tab is confined.
	var tabs struct {
		Tabs []struct {
			Confined, Running bool
			Title             string
		}
	}
	apiCall(t, "GET", srv.URL+"/api/panes/"+pane+"/terminal/tabs", token, nil, &tabs)
	if n := len(tabs.Tabs); n == 0 || !tabs.Tabs[n-1].Confined {
		t.Errorf("the %s pane's tabs: %+v, want its last one confined", a.template, tabs.Tabs)
	}
	// Its task ended, the agent waits at its prompt: the inbox lists its pane as an idle
	// agent (the recogniser's state of the real CLI, not a shell's quiet prompt).
	var inbox struct {
		Items []struct{ Kind, PaneID string }
	}
	idle := false
	for deadline := time.Now().Add(20 * time.Second); !idle && time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		apiCall(t, "GET", srv.URL+"/api/inbox", token, nil, &inbox)
		for _, it := range inbox.Items {
			idle = idle || (it.PaneID == pane && it.Kind == "agent_idle")
		}
	}
	if !idle {
		t.Errorf("the inbox does not list the idle %s pane %s: %+v", a.template, pane, inbox.Items)
	}
	if b, err := os.ReadFile(filepath.Join(sandbox, a.file)); err != nil || string(b) != a.content {
		t.Errorf("%s wrote %q (%v), want %q", a.file, b, err, a.content)
	}
	// The CLI authenticated with the key assigned in Settings, and the app's goal with its own.
	if len(cliReqs) == 0 {
		t.Fatalf("the %s never called its model", a.template)
	}
	// The key reached the CLI through its config dir, not the environment of its pane.
	if strings.Contains(screen, key) {
		t.Errorf("the key shows on the %s pane's screen", a.template)
	}
}

// assignInSettings logs in with headless Chromium, opens Settings → Providers and picks the
// provider in the template's "Keys for agent panes" select.
func assignInSettings(t *testing.T, srv *serveProcess, template, providerID string) {
	t.Helper()
	ctx := newBrowser(t)
	logIn(t, ctx, srv.URL, e2ePassword)
	sel := fmt.Sprintf(`[data-testid=agent-key][data-template=%q]`, template)
	step(t, ctx, "assign the provider to the "+template+" template in Settings",
		chromedp.Click(`[data-testid=settings-open]`),
		chromedp.WaitVisible(sel),
		waitJS(fmt.Sprintf(`[...document.querySelector(%q).options].some(o => o.value === %q)`, sel, providerID)),
		chromedp.Evaluate(fmt.Sprintf(`(() => { const s = document.querySelector(%q); s.focus(); s.value = %q; s.dispatchEvent(new Event('change', {bubbles: true})); })()`, sel, providerID), nil),
		waitJS(fmt.Sprintf(`document.querySelector(%q).value === %q && !document.querySelector('[data-testid=agent-keys] [data-testid=field-error]')`, sel, providerID)))
	shot(t, ctx, "agent-keys-"+template)
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// hasTool reports whether an Anthropic or OpenAI request offers a tool of that name.
func hasTool(req llmtest.Request, name string) bool {
	toolsList, _ := req.JSON["tools"].([]any)
	for _, x := range toolsList {
		if m, _ := x.(map[string]any); m["name"] == name {
			return true
		}
	}
	return false
}

// Claude Code 2.x as a fleet task's pane from the claude template: it follows the
// ANTHROPIC_BASE_URL and apiKeyHelper of the settings its private CLAUDE_CONFIG_DIR was seeded
// with, writes the file with its Bash tool inside the sandbox and answers.
func TestClaudeCodeFleetTaskEndToEnd(t *testing.T) {
	var a agentRun
	a = agentRun{template: "claude", bin: "claude", kind: "anthropic", answer: "CC-FINISHED: the file is written.",
		file: "cc-out.txt", content: "written by claude code\n", viaSettingsUI: true}
	a.cliReply = func(req llmtest.Request) llmtest.Reply {
		if !hasTool(req, "Write") {
			// Its side requests (a title, a topic check): short text serves them.
			return llmtest.Text(`{"isNewTopic": false, "title": null}`)
		}
		if blocks := lastUserBlocks(req); strings.Contains(blocks, "tool_result") {
			return llmtest.Text(a.answer)
		}
		if strings.Contains(req.LastUser, a.file) {
			// Its Bash tool, which keeps per-session state under its config dir: it failed
			// with EACCES on a read-only HOME before the pane had a private CLAUDE_CONFIG_DIR.
			return llmtest.Calls(llmtest.Call("Bash", map[string]string{"command": "printf 'written by claude code\\n' > " + a.file, "description": "Write " + a.file}))
		}
		return llmtest.Text("ok")
	}
	runAgentFleet(t, a)
}

// lastUserBlocks is the JSON of the request's last message (Anthropic).
func lastUserBlocks(req llmtest.Request) string {
	msgs, _ := req.JSON["messages"].([]any)
	if len(msgs) == 0 {
		return ""
	}
	b, _ := json.Marshal(msgs[len(msgs)-1])
	return string(b)
}

// Codex CLI as a fleet task's pane from the codex template: it takes the provider its private
// CODEX_HOME's config.toml names (OpenAI-compatible, the Responses API, the key from its
// auth.json), runs a command to write the file inside the sandbox and answers.
func TestCodexFleetTaskEndToEnd(t *testing.T) {
	var a agentRun
	a = agentRun{template: "codex", bin: "codex", kind: "openai", answer: "CODEX-FINISHED: the file is written.",
		file: "codex-out.txt", content: "written by codex\n"}
	a.cliReply = func(req llmtest.Request) llmtest.Reply {
		if req.Protocol != "responses" {
			return llmtest.Text("ok")
		}
		if _, answered := lastFunctionOutputOf(req); answered {
			return llmtest.Text(a.answer)
		}
		if !strings.Contains(req.LastUser, a.file) {
			return llmtest.Text("ok")
		}
		write := "printf 'written by codex\\n' > " + a.file
		switch {
		case hasResponsesTool(req, "exec_command"):
			return llmtest.Calls(llmtest.Call("exec_command", map[string]any{"cmd": write}))
		case hasResponsesTool(req, "shell_command"):
			return llmtest.Calls(llmtest.Call("shell_command", map[string]any{"command": write}))
		case hasResponsesTool(req, "shell"):
			return llmtest.Calls(llmtest.Call("shell", map[string]any{"command": []string{"bash", "-lc", write}}))
		}
		return llmtest.Text("no shell tool among " + responsesToolNames(req))
	}
	runAgentFleet(t, a)
}

func lastFunctionOutputOf(req llmtest.Request) (string, bool) {
	in, _ := req.JSON["input"].([]any)
	if len(in) == 0 {
		return "", false
	}
	m, _ := in[len(in)-1].(map[string]any)
	if m["type"] == "function_call_output" {
		return req.LastToolResult(), true
	}
	return "", false
}

func hasResponsesTool(req llmtest.Request, name string) bool {
	return strings.Contains(","+responsesToolNames(req)+",", ","+name+",")
}

func responsesToolNames(req llmtest.Request) string {
	var names []string
	toolsList, _ := req.JSON["tools"].([]any)
	for _, x := range toolsList {
		if m, _ := x.(map[string]any); m["name"] != nil {
			names = append(names, fmt.Sprint(m["name"]))
		}
	}
	return strings.Join(names, ",")
}
