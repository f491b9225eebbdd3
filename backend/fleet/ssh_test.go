package fleet_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/engine"
	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/terminal/terminaltest"
)

// A task with `ssh:` naming a saved server runs its agent's terminal on that host (a real
// sshd, as another user), while the fleet is steered from here; an unknown server is refused
// when the fleet is created, naming the task and the field.
func TestSSHTaskRunsItsTerminalOnTheRemoteHost(t *testing.T) {
	sshd, err := terminaltest.StartSSHD("fleet")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sshd.Close)
	known := filepath.Join(t.TempDir(), "known_hosts")
	if err := sshd.KnownHosts(known); err != nil {
		t.Fatal(err)
	}
	r := newRig(t, func(pane string, turn int, req llmtest.Request) llmtest.Reply {
		switch turn {
		case 0:
			return call("write_to_terminal", map[string]string{"pane_id": pane, "text": "echo on=$(whoami) sum=$((40+2))"})
		case 1:
			return call("wait_for_output", map[string]any{"pane_id": pane, "until_pattern": "on=[a-z-]+ sum=42", "timeout_ms": 10000})
		}
		return claim("ran on the remote host")
	}, engine.WithSSHOptions(terminaltest.ClientOptions(known)...))
	ctx := context.Background()
	if _, err := r.eng.SSH.Save(ctx, "", config.SSHInput{SSHSettings: config.SSHSettings{Name: "build-box", Host: sshd.Host, Port: sshd.Port, User: sshd.User, KeyPath: sshd.KeyPath}}); err != nil {
		t.Fatal(err)
	}
	bad, _ := fleet.Parse([]byte("name: far\ntasks:\n  - {id: remote, goal: Work there, ssh: nowhere-box, check_shell: \"true\"}\n"))
	if _, err := r.eng.Fleets.Create(ctx, bad, r.spec()); err == nil || !strings.Contains(err.Error(), `task "remote": ssh: no saved SSH server is named "nowhere-box"`) {
		t.Fatalf("unknown server: %v", err)
	}
	f := r.run("name: far\ntasks:\n  - {id: remote, goal: Work there, pane: far-term, ssh: build-box, check_shell: \"true\"}\n")
	if f.Status != fleet.StatusCompleted {
		t.Fatalf("fleet %s: %+v", f.Status, f.Tasks)
	}
	out := r.requests("far-term")[2].LastToolResult()
	if !strings.Contains(out, "on="+sshd.User+" sum=42") {
		t.Fatalf("the task's terminal did not run on the remote host as %s:\n%s", sshd.User, out)
	}
}
