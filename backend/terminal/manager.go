// Package terminal runs the terminal panes: one PTY per tab, several tabs per pane, a
// bounded scrollback replayed to every viewer that attaches, output batched to viewers, SSH
// sessions kept alive in remote tmux, shells confined with Landlock, and the text views the
// model reads (escape sequences stripped, paged by a byte cursor, completion detection).
package terminal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"github.com/clusterspace/clusterspace/backend/internal/inflight"
	"github.com/clusterspace/clusterspace/backend/internal/panetabs"
	"github.com/clusterspace/clusterspace/backend/keyenv"
	"github.com/clusterspace/clusterspace/backend/pubsub"
)

// Default size of a new terminal, the classic 80×24.
const (
	DefaultCols = 80
	DefaultRows = 24
)

// maxDimension bounds cols and rows: far beyond any screen, small enough that a typo cannot
// make programs allocate gigantic screen buffers.
const maxDimension = 4096

// Errors the callers tell apart (with errors.Is).
var (
	ErrNoPane     = errors.New("no terminal in this pane")
	ErrNoTab      = errors.New("no such terminal tab")
	ErrExited     = errors.New("the shell has exited")
	ErrClosed     = errors.New("the terminal manager has shut down")
	ErrInputFull  = errors.New("terminal input is backed up: the program is not reading its input")
	ErrBadSize    = errors.New("terminal size out of range")
	ErrNoLandlock = errors.New("landlock is not available")
)

// Options configure a Manager; the zero value is usable.
type Options struct {
	ScrollbackLines int // default DefaultScrollbackLines
	ScrollbackBytes int // default DefaultScrollbackBytes
	Logger          *slog.Logger
	// SandboxHelper is the binary that implements `sandbox-exec` (default: this executable).
	SandboxHelper string
	// SandboxHelperEnv is added to the helper's environment (tests use it to reach TestMain).
	SandboxHelperEnv []string
	// Bwrap is the bubblewrap binary that gives confined terminals their namespaces
	// (default: bwrap on PATH).
	Bwrap string
	// SSH is the ssh client to run (default "ssh", found on PATH).
	SSH string
	// SSHOptions go to every ssh the manager runs, before the saved server's own. The app
	// passes none, so the person's ssh config and known_hosts apply; tests use them to keep
	// known_hosts and config apart from the machine's.
	SSHOptions []string
	// HiddenEnv names environment variables of this process that no pane's shell inherits:
	// the ones holding the app's own API keys (the CLI's --api-key-env). Every key variable by
	// keyenv's rule (keyenv.IsKey) is always hidden too; HideEnv adds more later.
	HiddenEnv []string
}

// Spec describes the terminal a tab runs.
type Spec struct {
	PaneID string
	Shell  string // default $SHELL, else /bin/bash
	// Command, when set, runs instead of the shell (a pane launched as Claude Code, a REPL…):
	// the program and its arguments.
	Command []string
	Dir     string   // working directory; default the home directory
	Env     []string // added to the inherited environment, overriding it
	Cols    int      // default DefaultCols
	Rows    int      // default DefaultRows
	SSH     *SSHTarget
	Sandbox *Sandbox
	// Agent names the recogniser of the agent CLI the tab runs (claude, codex, aider; see
	// Recognisers); "" picks it by the command's program name.
	Agent string
}

// TabInfo is the state of one tab, as the UI shows it.
type TabInfo struct {
	PaneID   string `json:"paneId"`
	TabID    string `json:"tabId"`
	Title    string `json:"title"`
	Running  bool   `json:"running"`
	ExitCode *int   `json:"exitCode,omitempty"`
	Cols     int    `json:"cols"`
	Rows     int    `json:"rows"`
	Confined bool   `json:"confined"`
	Active   bool   `json:"active"`
	Remote   string `json:"remote,omitempty"` // user@host:port of an SSH tab
	PID      int    `json:"pid,omitempty"`
	// Broadcast says the pane is included in broadcast input (a pane-wide flag, repeated on
	// each tab so a UI learns it with the tabs).
	Broadcast bool `json:"broadcast"`
}

// Event kinds published on Events().
const (
	EventOpened    = "opened"
	EventClosed    = "closed"
	EventExited    = "exited"
	EventRestarted = "restarted"
	EventTitle     = "title"
	EventActivated = "activated"
	// EventBroadcast: the pane was included in (or left out of) broadcast; Tab carries only
	// PaneID and Broadcast.
	EventBroadcast = "broadcast"
)

// Event is a change to a tab.
type Event struct {
	Kind string  `json:"kind"`
	Tab  TabInfo `json:"tab"`
}

// Manager owns every terminal tab and every goroutine serving them.
type Manager struct {
	opts   Options
	log    *slog.Logger
	events *pubsub.Broker[Event]
	ctx    context.Context // ends at Shutdown, releasing viewers
	cancel context.CancelFunc
	ops    inflight.Ops // every goroutine and every operation in flight; closed at Shutdown
	ensure sync.Mutex   // serialises Ensure so two callers do not both open a first tab

	mu        sync.Mutex
	hiddenEnv map[string]bool
	panes     map[string]*pane
	broadcast map[string]bool
	// confined holds the boundary of panes whose every new tab is confined (see confine.go).
	confined map[string]Sandbox
	nextTab  uint64
}

type pane struct {
	panetabs.Tabs[*tab]
}

// NewManager returns a Manager with no terminals.
func NewManager(opts Options) *Manager {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.SSH == "" {
		opts.SSH = "ssh"
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{opts: opts, log: opts.Logger, events: pubsub.NewBroker[Event](), ctx: ctx, cancel: cancel,
		panes: map[string]*pane{}, broadcast: map[string]bool{}, hiddenEnv: map[string]bool{},
		confined: map[string]Sandbox{}}
	m.HideEnv(opts.HiddenEnv...)
	return m
}

// HideEnv keeps the named variables of this process's environment out of every terminal
// started from now on (a Spec's own Env still sets them: the caller asked for it). The app
// calls it with the variables that hold its API keys, so a shell, and a goal's agent typing
// in it, cannot read them.
func (m *Manager) HideEnv(names ...string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, n := range names {
		if n != "" {
			m.hiddenEnv[n] = true
		}
	}
}

// inheritedEnv is this process's environment minus the key variables (keyenv's rule) and
// the hidden ones.
func (m *Manager) inheritedEnv() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return keyenv.Strip(os.Environ(), func(name string) bool { return m.hiddenEnv[name] })
}

// Events is the stream of tab changes.
func (m *Manager) Events() *pubsub.Broker[Event] { return m.events }

func (m *Manager) publish(kind string, t *tab) {
	m.events.Publish(kind, Event{Kind: kind, Tab: t.info()})
}

// Open starts a new tab in the pane and makes it the pane's active tab.
func (m *Manager) Open(ctx context.Context, spec Spec) (TabInfo, error) {
	if err := ctx.Err(); err != nil {
		return TabInfo{}, err
	}
	spec, argv, err := m.prepare(spec)
	if err != nil {
		return TabInfo{}, err
	}
	if !m.ops.Enter() {
		return TabInfo{}, ErrClosed
	}
	defer m.ops.Done()
	m.mu.Lock()
	m.nextTab++
	t := newTab(m, spec, argv, "tab-"+strconv.FormatUint(m.nextTab, 10))
	m.mu.Unlock()
	if err := t.start(); err != nil {
		return TabInfo{}, err
	}
	m.mu.Lock()
	if m.ops.Closed() { // Shutdown ran while the process started: it is ours to stop
		m.mu.Unlock()
		t.close()
		return TabInfo{}, ErrClosed
	}
	p := m.panes[spec.PaneID]
	if p == nil {
		p = &pane{}
		m.panes[spec.PaneID] = p
	}
	p.Add(t)
	p.Show(t)
	m.mu.Unlock()
	m.publish(EventOpened, t)
	return t.info(), nil
}

// Ensure returns the pane's active tab, opening a first one from spec if it has none.
func (m *Manager) Ensure(ctx context.Context, spec Spec) (TabInfo, error) {
	m.ensure.Lock()
	defer m.ensure.Unlock()
	if t, err := m.tab(spec.PaneID, ""); err == nil {
		return t.info(), nil
	}
	return m.Open(ctx, spec)
}

// Tabs lists the pane's tabs in the order they were opened.
func (m *Manager) Tabs(paneID string) []TabInfo {
	tabs, broadcast := m.paneTabs(paneID), m.Broadcasting(paneID)
	infos := make([]TabInfo, 0, len(tabs))
	for _, t := range tabs {
		info := t.info()
		info.Broadcast = broadcast
		infos = append(infos, info)
	}
	return infos
}

// withPane runs f on the pane, under the lock, when it has a terminal.
func (m *Manager) withPane(paneID string, f func(p *pane)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.panes[paneID]; p != nil {
		f(p)
	}
}

// paneTabs is a copy of the pane's tabs, none when it has no terminal, to use unlocked.
func (m *Manager) paneTabs(paneID string) (tabs []*tab) {
	m.withPane(paneID, func(p *pane) { tabs = p.All() })
	return tabs
}

// SetActive makes tabID the pane's active tab (the one tabID "" means elsewhere).
func (m *Manager) SetActive(paneID, tabID string) error {
	t, err := m.tab(paneID, tabID)
	if err != nil {
		return err
	}
	m.withPane(paneID, func(p *pane) { p.Show(t) })
	m.publish(EventActivated, t)
	return nil
}

// tab finds a tab; tabID "" is the pane's active tab.
func (m *Manager) tab(paneID, tabID string) (*tab, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ops.Closed() {
		return nil, ErrClosed
	}
	p := m.panes[paneID]
	if p == nil || p.Len() == 0 {
		return nil, fmt.Errorf("pane %q: %w", paneID, ErrNoPane)
	}
	if t, ok := p.Find(tabID); ok {
		return t, nil
	}
	return nil, fmt.Errorf("pane %q, tab %q: %w", paneID, tabID, ErrNoTab)
}

// Write sends input to a tab as typed; tabID "" is the pane's active tab.
func (m *Manager) Write(paneID, tabID string, data []byte) error {
	t, err := m.tab(paneID, tabID)
	if err != nil {
		return err
	}
	return t.write(data)
}

// Resize sets the terminal size of a tab, or of every tab in the pane when tabID is "" (the
// tabs of a pane share its size).
func (m *Manager) Resize(paneID, tabID string, cols, rows int) error {
	if cols < 1 || rows < 1 || cols > maxDimension || rows > maxDimension {
		return fmt.Errorf("%w: %d×%d (cols and rows must be 1–%d)", ErrBadSize, cols, rows, maxDimension)
	}
	var tabs []*tab
	if tabID == "" {
		if _, err := m.tab(paneID, ""); err != nil {
			return err
		}
		tabs = m.paneTabs(paneID)
	} else {
		t, err := m.tab(paneID, tabID)
		if err != nil {
			return err
		}
		tabs = []*tab{t}
	}
	var errs []error
	for _, t := range tabs {
		errs = append(errs, t.resize(cols, rows))
	}
	return errors.Join(errs...)
}

// Restart ends the tab's process if it still runs and starts its command again in the same
// tab; the scrollback is kept, so the user sees what happened before.
func (m *Manager) Restart(ctx context.Context, paneID, tabID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t, err := m.tab(paneID, tabID)
	if err != nil {
		return err
	}
	if !m.ops.Enter() {
		return ErrClosed
	}
	defer m.ops.Done()
	if err := t.restart(); err != nil {
		return err
	}
	m.publish(EventRestarted, t)
	return nil
}

// CloseTab ends the tab's process and removes the tab; the next tab becomes active.
func (m *Manager) CloseTab(paneID, tabID string) error {
	t, err := m.tab(paneID, tabID)
	if err != nil {
		return err
	}
	m.withPane(paneID, func(p *pane) {
		if next, _ := p.Remove(t); p.Len() == 0 {
			delete(m.panes, paneID)
		} else if next != nil {
			p.Show(next)
		}
	})
	t.close()
	m.publish(EventClosed, t)
	return nil
}

// ClosePane ends every tab of the pane (when a grid shrinks or the pane is removed). A pane
// without terminals is not an error, so callers need not know which panes had one.
func (m *Manager) ClosePane(paneID string) error {
	m.mu.Lock()
	if m.ops.Closed() {
		m.mu.Unlock()
		return ErrClosed
	}
	p := m.panes[paneID]
	delete(m.panes, paneID)
	delete(m.broadcast, paneID)
	delete(m.confined, paneID) // what it held ends with it, its boundary too
	m.mu.Unlock()
	if p == nil {
		return nil
	}
	tabs := p.All()
	closeAll(tabs)
	for _, t := range tabs {
		m.publish(EventClosed, t)
	}
	return nil
}

// Busy says which tabs of the pane run a program in the foreground of their shell
// ("sleep running in tab 2 (bash)"): closing the pane would end it. An idle shell is not busy,
// nor is an SSH tab, whose remote tmux session survives its closing.
func (m *Manager) Busy(paneID string) []string {
	var busy []string
	for i, info := range m.Tabs(paneID) {
		if !info.Running || info.Remote != "" {
			continue
		}
		st, err := m.Status(paneID, info.TabID)
		if err != nil || st.Foreground == "" {
			continue
		}
		busy = append(busy, fmt.Sprintf("%s running in tab %d (%s)", st.Foreground, i+1, info.Title))
	}
	return busy
}

// closeAll closes tabs in parallel, since each may wait for its process to end.
func closeAll(tabs []*tab) {
	var wg sync.WaitGroup
	for _, t := range tabs {
		wg.Go(t.close)
	}
	wg.Wait()
}

// SetBroadcast includes or excludes a pane from broadcast input.
func (m *Manager) SetBroadcast(paneID string, include bool) {
	m.mu.Lock()
	changed := m.broadcast[paneID] != include
	if include {
		m.broadcast[paneID] = true
	} else {
		delete(m.broadcast, paneID)
	}
	m.mu.Unlock()
	if changed {
		m.events.Publish(EventBroadcast, Event{Kind: EventBroadcast, Tab: TabInfo{PaneID: paneID, Broadcast: include}})
	}
}

// Broadcasting reports whether the pane is included in broadcast input.
func (m *Manager) Broadcasting(paneID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.broadcast[paneID]
}

// WriteBroadcast sends input typed in fromPaneID. When that pane is in broadcast, the input
// also goes to the active tab of every other broadcasting pane of panesInWorkspace. Only a
// failure to write to fromPaneID is returned.
func (m *Manager) WriteBroadcast(fromPaneID string, panesInWorkspace []string, data []byte) error {
	err := m.Write(fromPaneID, "", data)
	if !m.Broadcasting(fromPaneID) {
		return err
	}
	for _, id := range panesInWorkspace {
		if id != fromPaneID && m.Broadcasting(id) {
			_ = m.Write(id, "", data) // Best effort: a pane whose shell has exited misses the keys.
		}
	}
	return err
}

// Shutdown kills every PTY and waits for every goroutine the manager started.
func (m *Manager) Shutdown() {
	m.mu.Lock()
	if !m.ops.Close() {
		m.mu.Unlock()
		m.ops.Wait()
		return
	}
	var tabs []*tab
	for _, p := range m.panes {
		tabs = append(tabs, p.All()...)
	}
	m.panes = map[string]*pane{}
	m.mu.Unlock()
	m.cancel()
	closeAll(tabs)
	m.ops.Wait()
	m.events.Shutdown()
}

// prepare fills in the spec's defaults, checks it, and builds the command line.
func (m *Manager) prepare(spec Spec) (Spec, []string, error) {
	if spec.PaneID == "" {
		return spec, nil, errors.New("terminal spec has no pane id: pass the id of the pane the terminal belongs to")
	}
	if spec.Cols == 0 {
		spec.Cols = DefaultCols
	}
	if spec.Rows == 0 {
		spec.Rows = DefaultRows
	}
	if spec.Cols < 1 || spec.Rows < 1 || spec.Cols > maxDimension || spec.Rows > maxDimension {
		return spec, nil, fmt.Errorf("%w: %d×%d (cols and rows must be 1–%d)", ErrBadSize, spec.Cols, spec.Rows, maxDimension)
	}
	if spec.Shell == "" {
		spec.Shell = os.Getenv("SHELL")
	}
	if spec.Shell == "" {
		spec.Shell = "/bin/bash"
	}
	if spec.Dir == "" {
		spec.Dir, _ = os.UserHomeDir() // Best effort: "/" below when there is no home.
		if spec.Dir == "" {
			spec.Dir = "/"
		}
	}
	if st, err := os.Stat(spec.Dir); err != nil || !st.IsDir() {
		return spec, nil, fmt.Errorf("working directory %q does not exist: create it or pick another", spec.Dir)
	}
	var argv []string
	if spec.SSH != nil {
		a, err := SSHCommand(*spec.SSH, spec.PaneID)
		if err != nil {
			return spec, nil, err
		}
		if k := spec.SSH.KeyPath; k != "" {
			// ssh only warns about a missing key and goes on to other methods: say it plainly.
			if st, err := os.Stat(k); err != nil || st.IsDir() {
				return spec, nil, fmt.Errorf("ssh key %q is not a readable file: fix the key path in the saved server", k)
			}
		}
		argv = append(append([]string{m.opts.SSH}, m.opts.SSHOptions...), a[1:]...)
	} else if len(spec.Command) > 0 {
		argv = slices.Clone(spec.Command)
	} else {
		argv = []string{spec.Shell}
	}
	if spec.Sandbox == nil {
		spec.Sandbox = m.paneSandbox(spec.PaneID)
	}
	if spec.Sandbox != nil {
		if spec.SSH != nil {
			return spec, nil, fmt.Errorf("pane %s is confined to a goal's sandbox, which has no network for an SSH session: use a pane outside the goal", spec.PaneID)
		}
		sb, env, err := m.confine(*spec.Sandbox)
		if err != nil {
			return spec, nil, err
		}
		// Before the caller's own Env, which still wins.
		spec.Sandbox, spec.Env = &sb, append(env, spec.Env...)
		if argv, err = m.confinedArgv(sb, argv); err != nil {
			return spec, nil, err
		}
	}
	return spec, argv, nil
}

// defaultTitle names a tab before its shell sets a title.
func defaultTitle(spec Spec) string {
	if spec.SSH != nil {
		return "ssh " + spec.SSH.String()
	}
	return filepath.Base(spec.Shell)
}
