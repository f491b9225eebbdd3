package tools_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/clusterspace/clusterspace/backend/terminal"
	"github.com/clusterspace/clusterspace/backend/terminal/terminaltest"
)

// TestTerminalToolsInAnSSHPane drives a pane logged in to a real sshd (inside the pane's
// remote tmux session) with the agent's terminal tools: commands run there, their output and
// the remote prompt are seen, and a wait by pattern works across the connection.
func TestTerminalToolsInAnSSHPane(t *testing.T) {
	known := filepath.Join(t.TempDir(), "known_hosts")
	if err := sshd.KnownHosts(known); err != nil {
		t.Fatal(err)
	}
	r, m := terminalRegistry(t, terminal.Options{SSHOptions: terminaltest.ClientOptions(known)})
	target := terminal.SSHTarget{Host: sshd.Host, Port: sshd.Port, User: sshd.User, KeyPath: sshd.KeyPath}
	const pane = "pane-55aa00000001"
	if _, err := m.Open(context.Background(), terminal.Spec{PaneID: pane, Dir: t.TempDir(), SSH: &target}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Best effort: the test user and its tmux server go when the package's tests end.
		m.KillRemoteSession(context.Background(), target, terminal.TmuxSessionName(pane))
	})

	// The tool waits for the remote shell's first prompt before it types.
	res := call(t, r, "write_to_terminal", map[string]any{"pane_id": pane, "text": `echo "on=$(whoami) sum=$((6*7))"`})
	mustContain(t, res, "Completion: prompt", "on="+sshd.User+" sum=42")

	call(t, r, "write_to_terminal", map[string]any{"pane_id": pane, "text": "sleep 0.5; echo remote-ready-$((2+3)); sleep 0.5", "wait_timeout_ms": 0})
	res = call(t, r, "wait_for_output", map[string]any{"pane_id": pane, "until_pattern": `remote-ready-\d`, "timeout_ms": 5000})
	mustContain(t, res, `Completion: pattern (matched "remote-ready-5")`)
	res = call(t, r, "wait_for_output", map[string]any{"pane_id": pane, "timeout_ms": 5000})
	mustContain(t, res, "Completion: prompt")

	res = call(t, r, "write_to_terminal", map[string]any{"pane_id": pane, "text": "printf 'line-%s\\n' 1 2 3 4 5"})
	mustContain(t, res, "Completion: prompt", "line-5")
	res = call(t, r, "read_terminal_output", map[string]any{"pane_id": pane, "lines": 10})
	mustContain(t, res, "line-3", "line-4")
	mustContain(t, call(t, r, "poll_terminal_status", map[string]any{"pane_id": pane}), "State: idle")
}
