package terminal

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"

	"github.com/clusterspace/clusterspace/backend/procfd"
)

// A goal is the unit of confinement: the panes it works in carry its sandbox, so every tab
// opened in them later — a new tab, a reconnect, a pane converted back to a terminal — is
// confined the same way, whoever opens it. The boundary lives here, at the one place every
// terminal starts, so no path around it exists.

// ConfinePane makes every tab opened in the pane from now on run in sb (a Spec with its own
// Sandbox keeps it). Tabs already open are left as they are: the caller opens a confined one.
func (m *Manager) ConfinePane(paneID string, sb Sandbox) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.confined[paneID] = sb
}

// ReleasePane ends the pane's confinement of new tabs, if it is confined to dir (its first
// writable dir), so a goal that ends frees only its own panes.
func (m *Manager) ReleasePane(paneID, dir string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if sb, ok := m.confined[paneID]; ok && firstDir(sb) == dir {
		delete(m.confined, paneID)
	}
}

// PaneSandbox is the sandbox new tabs of the pane run in, if the pane is confined.
func (m *Manager) PaneSandbox(paneID string) (Sandbox, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sb, ok := m.confined[paneID]
	return sb, ok
}

func (m *Manager) paneSandbox(paneID string) *Sandbox {
	if sb, ok := m.PaneSandbox(paneID); ok {
		return &sb
	}
	return nil
}

// TabSandboxDir is the sandbox dir (first writable dir) the tab's process is confined to, or
// "" for a tab that is not confined. tabID "" is the pane's active tab.
func (m *Manager) TabSandboxDir(paneID, tabID string) (string, error) {
	t, err := m.tab(paneID, tabID)
	if err != nil {
		return "", err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.spec.Sandbox == nil {
		return "", nil
	}
	return firstDir(*t.spec.Sandbox), nil
}

// firstDir names a sandbox by the dir it was made for: its first writable dir.
func firstDir(sb Sandbox) string {
	if len(sb.WritableDirs) == 0 {
		return ""
	}
	return sb.WritableDirs[0]
}

// confine completes and checks a sandbox before a command starts in it: the person's secret
// dirs are hidden whatever the caller asked, the scratch dir is made and writable. It
// returns the environment the command needs (scratch and proxy variables).
func (m *Manager) confine(sb Sandbox) (Sandbox, []string, error) {
	sb.HiddenDirs = append(slices.Clip(sb.HiddenDirs), userSecretDirs()...)
	var env []string
	if sb.Scratch != "" {
		if err := makeScratch(sb.Scratch); err != nil {
			return sb, nil, err
		}
		if !slices.Contains(sb.WritableDirs, sb.Scratch) {
			sb.WritableDirs = append(slices.Clip(sb.WritableDirs), sb.Scratch)
		}
		env = ScratchEnv(sb.Scratch)
	}
	checked, err := sb.check()
	if err != nil {
		return sb, nil, err
	}
	if checked.Proxy != "" && !checked.NoNetwork {
		env = append(env, ProxyEnv()...)
	}
	return checked, env, nil
}

// confinedArgv wraps argv in the sandbox's command line.
func (m *Manager) confinedArgv(sb Sandbox, argv []string) ([]string, error) {
	bwrap, err := findBwrap(m.opts.Bwrap)
	if err != nil {
		return nil, err
	}
	helper := m.opts.SandboxHelper
	if helper == "" {
		if helper, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("cannot find this program to run the sandbox helper: %w", err)
		}
	}
	return sb.commandLine(bwrap, helper, argv), nil
}

// ConfinedCommand is a command (not in a pane) confined exactly as a terminal would be: a
// check the model wrote runs this way. Its environment is the panes' (the app's keys hidden)
// plus env; it is killed with its process group when ctx ends or the app dies.
func (m *Manager) ConfinedCommand(ctx context.Context, sb Sandbox, dir string, argv []string, env []string) (*exec.Cmd, error) {
	sb, sbEnv, err := m.confine(sb)
	if err != nil {
		return nil, err
	}
	full, err := m.confinedArgv(sb, argv)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, full[0], full[1:]...)
	cmd.Dir = dir
	cmd.Env = append(append(append(m.inheritedEnv(), m.opts.SandboxHelperEnv...), sbEnv...), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	procfd.SealInherited()
	return cmd, nil
}
