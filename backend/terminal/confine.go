package terminal

import (
	"errors"
	"fmt"
	"os"
	"slices"
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
	if sb, ok := m.confined[paneID]; ok && sb.Dir() == dir {
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

// TabSandboxDir is the sandbox dir (first writable dir) the tab's process is confined to (or
// was admitted to, see AdmitTab), or "" for a tab outside every boundary. tabID "" is the
// pane's active tab.
func (m *Manager) TabSandboxDir(paneID, tabID string) (string, error) {
	t, err := m.tab(paneID, tabID)
	if err != nil {
		return "", err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.spec.Sandbox == nil {
		return t.admitted, nil
	}
	return t.spec.Sandbox.Dir(), nil
}

// AdmitTab puts an unconfined tab inside the boundary of the goal confined to sandboxDir: the
// person chose where that goal's shell runs (an SSH task's remote host, where no sandbox of
// this machine applies), so the goal may use it.
func (m *Manager) AdmitTab(paneID, tabID, sandboxDir string) error {
	t, err := m.tab(paneID, tabID)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.admitted = sandboxDir
	return nil
}

// OutsideBoundary says why a caller confined to sandboxDir reaching the pane's tab (tabID ""
// for the active one) would leave its boundary: the tab runs outside that sandbox. It is ""
// when the tab is inside, when the caller is not confined (sandboxDir ""), and for a tab that
// does not exist (the tool's own error tells the model). A pane with no terminal yet is
// inside when it is confined to the caller's sandbox: its first shell starts there.
func (m *Manager) OutsideBoundary(sandboxDir, paneID, tabID string) string {
	if sandboxDir == "" {
		return ""
	}
	dir, err := m.TabSandboxDir(paneID, tabID)
	switch {
	case err == nil && dir == sandboxDir:
		return ""
	case err == nil:
		what := "terminal"
		if tabID != "" {
			what = "terminal tab " + tabID
		}
		return fmt.Sprintf("pane %s's %s runs outside this goal's sandbox %s: reaching into it is the person's to allow, every time", paneID, what, sandboxDir)
	case errors.Is(err, ErrNoPane):
		if sb, ok := m.PaneSandbox(paneID); ok && sb.Dir() == sandboxDir {
			return ""
		}
		return fmt.Sprintf("pane %s is outside this goal's sandbox %s (its terminal would not be confined): reaching into it is the person's to allow, every time", paneID, sandboxDir)
	}
	return ""
}

// Dir names a sandbox by the dir it was made for: its first writable dir ("" for none).
func (sb Sandbox) Dir() string {
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

// ConfinedArgs is the command line and environment that run argv (not in a pane) confined
// exactly as a terminal would be: a check the model wrote runs this way. The environment is
// the panes' (the app's keys hidden) plus what the sandbox needs.
func (m *Manager) ConfinedArgs(sb Sandbox, argv []string) (full, env []string, err error) {
	sb, sbEnv, err := m.confine(sb)
	if err != nil {
		return nil, nil, err
	}
	if full, err = m.confinedArgv(sb, argv); err != nil {
		return nil, nil, err
	}
	return full, append(append(m.inheritedEnv(), m.opts.SandboxHelperEnv...), sbEnv...), nil
}
