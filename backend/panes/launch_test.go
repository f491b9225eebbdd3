package panes

import (
	"bytes"
	"image/color"
	"image/png"
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

// A terminal screen drawn as a picture: its size follows the pane's cells, the text is drawn,
// and the cursor is a block in its cell.
func TestRenderScreenDrawsTextAndCursor(t *testing.T) {
	data, err := renderScreen("root@vm:~# ls\nfile.txt\nroot@vm:~# ", 40, 5, 3, 12)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 40*7+8 || b.Dy() != 5*13+8 {
		t.Fatalf("size %v", b)
	}
	if got := color.RGBAModel.Convert(img.At(4+11*7+3, 4+2*13+6)); got != screenCursor {
		t.Errorf("cursor cell is %v", got)
	}
	ink := 0
	for x := 4; x < 4+13*7; x++ { // the first line's text
		for y := 4; y < 4+13; y++ {
			if color.RGBAModel.Convert(img.At(x, y)) == screenFG {
				ink++
			}
		}
	}
	if ink < 50 {
		t.Errorf("the first line has %d drawn pixels", ink)
	}
}
