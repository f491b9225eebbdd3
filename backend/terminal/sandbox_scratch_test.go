package terminal_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/terminal"
)

// In a confined shell whose HOME and /tmp it may not write, the everyday tools still find a
// writable temp dir and caches when the sandbox has a scratch dir: mktemp works, and Go's
// build cache takes files. Without one they fail, as users saw on every command.
func TestConfinedShellScratchKeepsToolsWorking(t *testing.T) {
	t.Parallel()
	home := t.TempDir() // outside the sandbox: not writable for the confined shell
	probe := `d=$(go env GOCACHE) && mkdir -p "$d" && touch "$d/probe" && echo "gocache-ok $d"; f=$(mktemp) && echo "mktemp-ok $f"; echo "tmpdir=[$TMPDIR]"`
	m := newManager(t, terminal.Options{})

	for _, withScratch := range []bool{false, true} {
		spec := bashSpec(t, "pane-5c0000000000")
		if withScratch {
			spec.PaneID = "pane-5c0000000001"
		}
		spec.Env = []string{"HOME=" + home}
		scratch := filepath.Join(t.TempDir(), "goal-scratch")
		spec.Sandbox = &terminal.Sandbox{WritableDirs: []string{spec.Dir}}
		if withScratch {
			spec.Sandbox.Scratch = scratch
		}
		tab := openBash(t, m, spec)
		run(t, m, tab.PaneID, "", probe)
		text, _ := m.Tail(tab.PaneID, "", 8)
		worked := strings.Contains(text, "gocache-ok "+scratch) && strings.Contains(text, "mktemp-ok "+scratch+"/tmp/")
		if withScratch != worked {
			t.Errorf("scratch %v: tools worked %v:\n%s", withScratch, worked, text)
		}
		if !withScratch && !strings.Contains(text, "Read-only file system") {
			t.Errorf("without scratch the confined shell should be refused its HOME cache and /tmp:\n%s", text)
		}
		if withScratch {
			st, err := os.Stat(scratch)
			if err != nil || st.Mode().Perm() != 0o700 {
				t.Errorf("scratch dir %s: %v %v, want mode 0700", scratch, st, err)
			}
		}
	}
}
