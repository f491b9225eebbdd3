// Command record-agents records the real agent CLIs' terminal output for the recogniser tests
// (backend/terminal/testdata/agents): each CLI runs in a real PTY of a terminal.Manager
// against the scripted model server (package llmtest), is given a task, writes a file,
// answers, and asks a permission; the raw bytes it drew are saved with checkpoints (the output
// offset at moments whose state the recorder knows from the model server's side, not from the
// screen) and the state expected there.
//
//	go run ./scripts/record-agents -agents "$(scripts/agents.sh | tail -1)"
//
// -agents is the cache scripts/agents.sh installs the pinned CLIs into.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/terminal"
)

// Size of the recorded terminal: a pane of a typical window.
const cols, rows = 100, 30

// quiet is how long output must pause for a CLI to count as settled at a checkpoint.
const quiet = 3 * time.Second

// Recording is a recording's metadata file (NAME.json next to NAME.raw).
type Recording struct {
	Agent       string       `json:"agent"`
	Version     string       `json:"version"`
	Cols        int          `json:"cols"`
	Rows        int          `json:"rows"`
	Answer      string       `json:"answer"` // text the CLI must show after its turn
	Checkpoints []Checkpoint `json:"checkpoints"`
}

// Checkpoint is a moment of the recording.
type Checkpoint struct {
	Offset int64               `json:"offset"`
	State  terminal.AgentState `json:"state"`
	Note   string              `json:"note"`
}

func main() {
	agents := flag.String("agents", "", "the dir scripts/agents.sh installed the CLIs into")
	out := flag.String("out", "backend/terminal/testdata/agents", "where to write NAME.raw and NAME.json")
	flag.Parse()
	if *agents == "" {
		fmt.Fprintln(os.Stderr, "record-agents: -agents DIR is required: run scripts/agents.sh and pass the dir it prints last")
		os.Exit(2)
	}
	only := flag.Arg(0) // "claude" or "codex" records one; none records both
	for name, record := range map[string]func(agents, out string) error{"claude": recordClaude, "codex": recordCodex} {
		if only != "" && only != name {
			continue
		}
		if err := record(*agents, *out); err != nil {
			fmt.Fprintf(os.Stderr, "record-agents: %s: %v\n", name, err)
			os.Exit(1)
		}
	}
}

// agentRun is where an agent CLI is recorded: its binary, as scripts/agents.sh installs it,
// and a scratch dir (the caller removes it) holding its working dir and its config dir.
type agentRun struct{ bin, scratch, work, conf string }

// prepare finds the CLI name of package pkg at version under agents and makes its scratch dirs.
func prepare(agents, name, pkg, version, confDir string) (agentRun, error) {
	a := agentRun{bin: filepath.Join(agents, pkg+"@"+version, "node_modules", ".bin", name)}
	if _, err := os.Stat(a.bin); err != nil {
		return a, fmt.Errorf("%s %s is not installed in %s: run scripts/agents.sh", name, version, agents)
	}
	scratch, err := os.MkdirTemp("", "record-"+name+"-")
	if err != nil {
		return a, err
	}
	a.scratch, a.work, a.conf = scratch, filepath.Join(scratch, "work"), filepath.Join(scratch, confDir)
	for _, d := range []string{a.work, a.conf} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			os.RemoveAll(scratch) // Best effort: the MkdirAll error is the one to report.
			return a, err
		}
	}
	return a, nil
}

const claudeAnswer = "CC-FINISHED: the file is written."

func recordClaude(agents, out string) error {
	const version = "2.1.197"
	a, err := prepare(agents, "claude", "@anthropic-ai+claude-code", version, "config")
	if err != nil {
		return err
	}
	defer os.RemoveAll(a.scratch)
	target := filepath.Join(a.work, "answer.txt")
	// Side requests (titles, topics) go to the small model: a role answers them, so the
	// ordered replies are the main conversation's.
	srv, err := llmtest.Listen("127.0.0.1:0", llmtest.Script{
		Models: []string{"scripted-main", "scripted-small"},
		Roles:  []llmtest.Role{{Name: "small", Match: llmtest.Match{Model: "scripted-small"}, Reply: llmtest.Reply{Text: "Recording"}}},
		Replies: []llmtest.Reply{
			{ToolCalls: []llmtest.ToolCall{{Name: "Write", Args: mustJSON(map[string]string{"file_path": target, "content": "written by claude\n"}), Fragments: 6}}, ChunkDelayMs: 400},
			{Text: claudeAnswer, Chunks: 8, ChunkDelayMs: 300},
			{ToolCalls: []llmtest.ToolCall{{Name: "Bash", Args: mustJSON(map[string]string{"command": "rm -rf build-output", "description": "Remove the build output"})}}},
			{Text: "Understood, I left it.", Repeat: 4},
		},
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	if err := writeJSON(filepath.Join(a.conf, ".claude.json"), map[string]any{"hasCompletedOnboarding": true,
		"projects": map[string]any{a.work: map[string]any{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}}}); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(a.conf, "settings.json"), map[string]any{
		"apiKeyHelper": "echo sk-scripted-recording",
		"model":        "scripted-main",
		"env": map[string]string{"ANTHROPIC_BASE_URL": srv.URL, "ANTHROPIC_DEFAULT_HAIKU_MODEL": "scripted-small",
			"ANTHROPIC_SMALL_FAST_MODEL": "scripted-small", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"},
		"permissions": map[string]any{"allow": []string{"Write"}},
	}); err != nil {
		return err
	}
	r, err := start(terminal.Spec{PaneID: "pane-0000000000c1", Command: []string{a.bin}, Dir: a.work, Cols: cols, Rows: rows,
		Env: []string{"HOME=" + a.scratch, "CLAUDE_CONFIG_DIR=" + a.conf}})
	if err != nil {
		return err
	}
	defer r.close()
	rec := Recording{Agent: "claude", Version: version, Cols: cols, Rows: rows, Answer: claudeAnswer}

	r.settle()
	rec.mark(r, terminal.AgentIdle, "started, at its prompt")
	r.typeLine("Write the answer file.")
	if err := r.awaitRequests(srv, 1); err != nil {
		return err
	}
	time.Sleep(time.Second) // the first reply streams for ~2.4 s
	rec.mark(r, terminal.AgentWorking, "the model is streaming its Write call")
	if err := r.awaitRequests(srv, 2); err != nil {
		return err
	}
	time.Sleep(time.Second) // the answer streams for ~2.4 s
	rec.mark(r, terminal.AgentWorking, "the model is streaming its answer")
	r.settle()
	if _, err := os.Stat(target); err != nil {
		return fmt.Errorf("claude did not write %s: %w", target, err)
	}
	rec.mark(r, terminal.AgentFinished, "answered, at its prompt again")
	if err := r.refuseCleanup(&rec, func() error { return r.awaitRequests(srv, 3) },
		"asks to run rm -rf build-output", "the permission refused, at its prompt"); err != nil {
		return err
	}
	return r.save(out, "claude", rec)
}

// run is a CLI in a terminal being recorded.
type run struct {
	m      *terminal.Manager
	pane   string
	cancel context.CancelFunc
	done   chan []byte
	typed  time.Time // when input was last written
}

func start(spec terminal.Spec) (*run, error) {
	m := terminal.NewManager(terminal.Options{})
	if _, err := m.Open(context.Background(), spec); err != nil {
		m.Shutdown()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	replay, chunks, err := m.Attach(ctx, spec.PaneID, "")
	if err != nil {
		cancel()
		m.Shutdown()
		return nil, err
	}
	r := &run{m: m, pane: spec.PaneID, cancel: cancel, done: make(chan []byte, 1)}
	go func() {
		all := append([]byte(nil), replay...)
		for c := range chunks {
			all = append(all, c.Data...)
		}
		r.done <- all
	}()
	return r, nil
}

func (r *run) close() { r.cancel(); r.m.Shutdown() }

func (r *run) status() terminal.Status {
	st, err := r.m.Status(r.pane, "")
	if err != nil {
		panic(err)
	}
	return st
}

// settle waits until the CLI has drawn something since the last input and then paused for
// quiet (at most a minute).
func (r *run) settle() {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if st := r.status(); st.LastOutput.After(r.typed) && time.Since(st.LastOutput) >= quiet {
			return
		}
	}
}

func (r *run) write(s string) {
	r.typed = time.Now()
	if err := r.m.Write(r.pane, "", []byte(s)); err != nil {
		panic(err)
	}
}

// typeLine types text, then Enter apart, as a person does (at once it would read as a paste).
func (r *run) typeLine(text string) {
	r.write(text)
	time.Sleep(500 * time.Millisecond)
	r.write("\r")
}

func (r *run) awaitRequests(srv *llmtest.Server, n int) error {
	return r.await(func() int {
		main := 0
		for _, q := range srv.ChatRequests() {
			if q.Model != "scripted-small" {
				main++
			}
		}
		return main
	}, n)
}

// await waits until count says the CLI has sent n requests of its conversation.
func (r *run) await(count func() int, n int) error {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if count() >= n {
			return nil
		}
	}
	return fmt.Errorf("the CLI did not send its request %d to the model within 30 s; screen:\n%s", n, r.screen())
}

func (r *run) screen() string {
	s, _ := r.m.Tail(r.pane, "", rows)
	return s
}

func (rec *Recording) mark(r *run, state terminal.AgentState, note string) {
	rec.Checkpoints = append(rec.Checkpoints, Checkpoint{Offset: r.status().Cursor, State: state, Note: note})
	fmt.Fprintf(os.Stderr, "%s: %s (%s) at %d\n%s\n", rec.Agent, state, note, r.status().Cursor, r.screen())
}

// refuseCleanup is the last scene of every recording: the person asks for the build output
// to be removed, the agent asks to run rm -rf (asked returns once the model has the request),
// and Esc refuses it. asking and refused note the two states in rec.
func (r *run) refuseCleanup(rec *Recording, asked func() error, asking, refused string) error {
	r.typeLine("Clean the build output.")
	if err := asked(); err != nil {
		return err
	}
	r.settle()
	rec.mark(r, terminal.AgentAsking, asking)
	r.write("\x1b") // Esc: no
	r.settle()
	rec.mark(r, terminal.AgentIdle, refused)
	return nil
}

func (r *run) save(dir, name string, rec Recording) error {
	end := r.status().Cursor
	time.Sleep(200 * time.Millisecond) // the last output reaches the viewer
	r.cancel()
	raw := <-r.done
	if int64(len(raw)) < end {
		return errors.New("the recording missed output: run it again")
	}
	raw = raw[:end]
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".raw"), raw, 0o644); err != nil {
		return err
	}
	return writeJSON(filepath.Join(dir, name+".json"), rec)
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o600)
}

const codexAnswer = "CX-FINISHED: the answer is ready."

// codexTools are the tools a Codex request offers, by name, with their parameter schemas.
func codexTools(req llmtest.Request) map[string]map[string]any {
	out := map[string]map[string]any{}
	list, _ := req.JSON["tools"].([]any)
	for _, x := range list {
		if tool, _ := x.(map[string]any); tool != nil {
			if name, _ := tool["name"].(string); name != "" {
				params, _ := tool["parameters"].(map[string]any)
				out[name] = params
			}
		}
	}
	return out
}

// codexShell is a call of Codex's shell tool that runs command outside its sandbox, which it
// must ask the person for (with approval_policy on-request); nil when it offers no shell
// tool the recorder knows.
func codexShell(tools map[string]map[string]any, command string) *llmtest.ToolCall {
	for _, name := range []string{"exec_command", "shell_command", "shell"} {
		params, ok := tools[name]
		if !ok {
			continue
		}
		args := map[string]any{}
		switch name {
		case "exec_command":
			args["cmd"] = command
		case "shell_command":
			args["command"] = command
		default:
			args["command"] = []string{"bash", "-lc", command}
		}
		props, _ := params["properties"].(map[string]any)
		if _, ok := props["sandbox_permissions"]; ok {
			args["sandbox_permissions"] = "require_escalated"
		}
		if _, ok := props["with_escalated_permissions"]; ok {
			args["with_escalated_permissions"] = true
		}
		if _, ok := props["justification"]; ok {
			args["justification"] = "Remove the build output outside the sandbox"
		}
		call := llmtest.Call(name, args)
		return &call
	}
	return nil
}

// codexReply answers Codex's requests: side requests (no tools) with short text, the first
// task with a slowly streamed answer, the second with a shell command it must ask for, and
// a command's result with a short answer.
func codexReply(req llmtest.Request) llmtest.Reply {
	tools := codexTools(req)
	if len(tools) == 0 {
		return llmtest.Text("ok")
	}
	if strings.Contains(string(req.Body), "function_call_output") {
		return llmtest.Text("Understood, I left it.")
	}
	if strings.Contains(req.LastUser, "Clean the build output") {
		if call := codexShell(tools, "rm -rf build-output"); call != nil {
			return llmtest.Calls(*call)
		}
		names := make([]string, 0, len(tools))
		for n := range tools {
			names = append(names, n)
		}
		return llmtest.Text(fmt.Sprintf("no shell tool among %v", names))
	}
	return llmtest.Reply{Text: codexAnswer, Chunks: 10, ChunkDelayMs: 300}
}

func recordCodex(agents, out string) error {
	const version = "0.171.0"
	a, err := prepare(agents, "codex", "@openai+codex", version, "codex")
	if err != nil {
		return err
	}
	defer os.RemoveAll(a.scratch)
	srv, err := llmtest.Listen("127.0.0.1:0", llmtest.Script{
		Models:  []string{"scripted-main"},
		Replies: []llmtest.Reply{{Compute: codexReply, Repeat: 100}},
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	config := fmt.Sprintf(`model = "scripted-main"
model_provider = "scripted"
approval_policy = "on-request"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false

[analytics]
enabled = false

[notice]
hide_full_access_warning = true

[model_providers.scripted]
name = "Scripted"
base_url = %q
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"

[projects.%q]
trust_level = "trusted"
`, srv.URL+"/v1", a.work)
	if err := os.WriteFile(filepath.Join(a.conf, "config.toml"), []byte(config), 0o600); err != nil {
		return err
	}
	r, err := start(terminal.Spec{PaneID: "pane-0000000000c2", Command: []string{a.bin}, Dir: a.work, Cols: cols, Rows: rows,
		Env: []string{"HOME=" + a.scratch, "CODEX_HOME=" + a.conf, "SCRIPTED_API_KEY=sk-scripted-recording"}})
	if err != nil {
		return err
	}
	defer r.close()
	rec := Recording{Agent: "codex", Version: version, Cols: cols, Rows: rows, Answer: codexAnswer}
	turns := func() int {
		n := 0
		for _, q := range srv.ChatRequests() {
			if len(codexTools(q)) > 0 {
				n++
			}
		}
		return n
	}

	r.settle()
	rec.mark(r, terminal.AgentIdle, "started, at its prompt")
	r.typeLine("Write the answer.")
	if err := r.await(turns, 1); err != nil {
		return err
	}
	time.Sleep(1500 * time.Millisecond) // the answer streams for ~3 s
	rec.mark(r, terminal.AgentWorking, "the model is streaming its answer")
	r.settle()
	rec.mark(r, terminal.AgentFinished, "answered, at its prompt again")
	if err := r.refuseCleanup(&rec, func() error { return r.await(turns, 2) },
		"asks to run rm -rf build-output outside its sandbox", "the command refused, at its prompt"); err != nil {
		return err
	}
	return r.save(out, "codex", rec)
}
