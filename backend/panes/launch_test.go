package panes

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/workspace"
)

// The wrapper that runs a launch command, or says it is missing, is real /bin/sh: run it with
// a command that exists and one that does not (and a message with quotes in it).
func TestLaunchSpecRunsTheCommandOrSaysItIsMissing(t *testing.T) {
	p := workspace.Pane{ID: "pane-1", Kind: workspace.KindTerminal,
		Launch: &workspace.Launch{Template: "custom", Command: "echo", Args: []string{"it's", "here"}}}
	spec := LaunchSpec(p, 0, 0)
	out, err := exec.Command(spec.Command[0], spec.Command[1:]...).Output()
	if err != nil || string(out) != "it's here\n" {
		t.Fatalf("installed command: %q %v (argv %q)", out, err, spec.Command)
	}
	p.Launch = &workspace.Launch{Template: "claude", Command: "no-such-cmd-'x"}
	spec = LaunchSpec(p, 0, 0)
	cmd := exec.Command(spec.Command[0], spec.Command[1:]...)
	cmd.Env = []string{"SHELL=/bin/true", "PATH=/usr/bin:/bin"}
	out, _ = cmd.Output()
	if !strings.Contains(string(out), "no-such-cmd-'x is not installed") || !strings.Contains(string(out), "npm install -g @anthropic-ai/claude-code") {
		t.Fatalf("missing command: %q", out)
	}
	if plain := LaunchSpec(workspace.Pane{ID: "pane-2"}, 0, 0); plain.Command != nil || plain.Dir != "" {
		t.Fatalf("a pane without launch settings runs the shell: %+v", plain)
	}
}

// A pane launched as an agent CLI names its recogniser (by the program, else the template),
// as its command runs through the wrapper shell; any other program names none.
func TestLaunchSpecNamesTheAgentsRecogniser(t *testing.T) {
	for _, c := range []struct {
		launch workspace.Launch
		agent  string
	}{
		{workspace.Launch{Template: "claude", Command: "claude"}, "claude"},
		{workspace.Launch{Template: "custom", Command: "/opt/bin/codex", Args: []string{"--no-daemon"}}, "codex"},
		{workspace.Launch{Template: "aider", Command: "aider-wrapper"}, "aider"},
		{workspace.Launch{Template: "python", Command: "python3"}, ""},
	} {
		l := c.launch
		if got := LaunchSpec(workspace.Pane{ID: "pane-1", Kind: workspace.KindTerminal, Launch: &l}, 0, 0).Agent; got != c.agent {
			t.Errorf("%+v: agent %q, want %q", c.launch, got, c.agent)
		}
	}
}
