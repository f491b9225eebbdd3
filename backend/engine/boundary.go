package engine

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/clusterspace/clusterspace/backend/agentpane"
	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/egress"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/terminal"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// A goal with a sandbox is the unit of confinement: its terminal, the panes it makes or
// converts, the tasks it assigns (they inherit its policy) and the checks its model writes all
// run inside one boundary. Outside it stay the app's data dirs, config dir and secret files,
// the environments of its ancestors, and its loopback services. A goal whose boundary cannot
// be made does not run.

// boundaries is the engine's part of every running confined goal's boundary.
type boundaries struct {
	secretFiles []string // files of the person's no goal reads (serve's --password-file)
	ownAddrs    []string // where this process serves
	log         *slog.Logger

	mu      sync.Mutex
	proxies map[string]*egress.Proxy // by goal id: a goal's only way out to the network
}

// hiddenFromGoals lists what no confined goal may read: every ClusterSpace data dir this user
// has (this one first), the config dir (mcp.json's header tokens and env values), and the
// person's secret files. The keyring files are added by the terminal manager.
func (e *Engine) hiddenFromGoals() []string {
	hidden := []string{e.DataDir, e.ConfigDir}
	for _, d := range append(config.KnownDataDirs(), e.bounds.secretFiles...) {
		if !slices.Contains(hidden, d) {
			hidden = append(hidden, d)
		}
	}
	return hidden
}

// goalSandbox is the sandbox of a confined goal: writes in its sandbox dir and scratch dir,
// the hidden dirs unreadable, and below network_get no network; from network_get on, the
// network only through the goal's egress proxy.
func (e *Engine) goalSandbox(g goal.Goal) (terminal.Sandbox, error) {
	scratch := g.Spec.Settings.ScratchDir
	if scratch == "" {
		scratch = e.goalScratch(g.ID)
	}
	// An agent pane reaches its provider's API whatever the ceiling: the proxy lets through
	// exactly those hosts to it.
	hosts := e.agentHosts(context.Background(), g)
	sb := terminal.Sandbox{WritableDirs: []string{g.Spec.Policy.SandboxDir}, HiddenDirs: e.hiddenFromGoals(),
		NoNetwork: g.Spec.Policy.Ceiling < tools.NetworkGet && len(hosts) == 0, Scratch: scratch}
	if !sb.NoNetwork {
		p, err := e.goalProxy(g, hosts)
		if err != nil {
			return sb, err
		}
		sb.Proxy = p.Path()
	}
	return sb, nil
}

// egressDir holds the goals' proxy sockets: private to the user, and outside every sandbox
// and hidden dir, so a goal can reach its socket and never replace it.
func egressDir() string {
	return filepath.Join(os.TempDir(), "clusterspace-egress-"+strconv.Itoa(os.Getuid()))
}

// goalProxy starts (or returns) the goal's egress proxy, deciding by its ceiling and the local
// ports the person opened to it.
func (e *Engine) goalProxy(g goal.Goal, agentHosts []string) (*egress.Proxy, error) {
	b := &e.bounds
	b.mu.Lock()
	defer b.mu.Unlock()
	if p, ok := b.proxies[g.ID]; ok {
		return p, nil
	}
	rules := egress.Rules{Ceiling: g.Spec.Policy.Ceiling, Never: e.ownServices(), AgentHosts: agentHosts}
	for _, port := range g.Spec.Policy.LocalPorts {
		rules.AllowLocal = append(rules.AllowLocal, "localhost:"+strconv.Itoa(port))
	}
	p, err := egress.Start(egressDir(), g.ID, rules, b.log)
	if err != nil {
		return nil, fmt.Errorf("cannot start the goal's network proxy: %w", err)
	}
	b.proxies[g.ID] = p
	return p, nil
}

// ownServices are the app's own listening addresses: serve's and the MCP HTTP servers'. They
// are refused to a goal even when the person opens a local port that happens to be one.
func (e *Engine) ownServices() []string {
	own := slices.Clone(e.bounds.ownAddrs)
	if e.MCP != nil {
		for _, s := range e.MCP.Status().Servers {
			if hp := agentpane.HostPort(s.URL); hp != "" {
				own = append(own, hp)
			}
		}
	}
	return own
}

// confineGoalTerminal gives the goal's pane its terminal, started as the pane's template
// (its launch settings; the shell when it has none). A goal with a sandbox gets a fresh
// terminal tab in its pane, inside its boundary, and the pane keeps that boundary for any tab
// opened later while the goal runs. If the boundary cannot be made the goal does not start:
// it never goes on unconfined.
func (e *Engine) confineGoalTerminal(ctx context.Context, g goal.Goal) ([]string, error) {
	if notices, ok, err := e.fleetSSHTerminal(ctx, g); ok {
		return notices, err
	}
	gp := e.paneLaunch(ctx, g.Spec.PaneID)
	dir, env := g.Spec.Policy.SandboxDir, g.Spec.Settings.Env
	spec := gp.spec
	if w := g.Spec.Settings.WorkDir; w != "" {
		spec.Dir = w // the goal's working dir (a fleet task's worktree) over the launch's own
	}
	spec.Env = append(slices.Clone(spec.Env), env...)
	if dir == "" && len(env) == 0 && gp.agent == nil {
		// No sandbox and nothing of its own: the pane's terminal as it is, or as its launch
		// settings start it.
		_, err := e.Terminals.Ensure(ctx, spec)
		return nil, err
	}
	if dir == "" {
		// An environment of its own (a fleet task's PORT and scratch dirs, an agent's config
		// dir), which a terminal already in the pane lacks: a fresh tab.
		scratch := g.Spec.Settings.ScratchDir
		if scratch == "" {
			scratch = e.goalScratch(g.ID)
		}
		notice, err := e.prepareAgent(ctx, g, gp, scratch, false, &spec)
		if err != nil {
			return nil, fmt.Errorf("the goal was not started: its agent pane could not be prepared (%w)", err)
		}
		tab, err := e.Terminals.Open(ctx, spec)
		if err != nil {
			return nil, err
		}
		var notices []string
		if notice != "" {
			notices = append(notices, notice)
		}
		return notices, e.Terminals.SetActive(g.Spec.PaneID, tab.TabID)
	}
	sb, err := e.goalSandbox(g)
	if err != nil {
		return nil, fmt.Errorf("the goal was not started: its sandbox could not be made (%w)", err)
	}
	spec.Dir, spec.Sandbox = dir, &sb
	agentNotice, err := e.prepareAgent(ctx, g, gp, sb.Scratch, true, &spec)
	if err != nil {
		return nil, fmt.Errorf("the goal was not started: its agent pane could not be prepared (%w)", err)
	}
	tab, err := e.Terminals.Open(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("the goal was not started: its terminal could not be confined to %s (%w)", dir, err)
	}
	e.Terminals.ConfinePane(g.Spec.PaneID, sb)
	if err := e.Terminals.SetActive(g.Spec.PaneID, tab.TabID); err != nil {
		return nil, err
	}
	net := "no network (TCP connect and bind, UDP, raw and Unix sockets refused)"
	if !sb.NoNetwork {
		net = fmt.Sprintf("a network namespace of its own whose only way out is the app's proxy at 127.0.0.1:%d (HTTP_PROXY and HTTPS_PROXY point there), "+
			"which refuses this machine's own services", terminal.ProxyPort)
		if len(g.Spec.Policy.LocalPorts) > 0 {
			net += fmt.Sprintf(" except the local ports the person opened (%v)", g.Spec.Policy.LocalPorts)
		}
		if g.Spec.Policy.Ceiling < tools.NetworkGet {
			net += "; below network_get it lets through only the pane's agent's provider API"
		}
	}
	notices := []string{
		fmt.Sprintf("the goal's terminal (tab %s) is confined by the kernel to %s: writes only there, its own processes only (no other process of this machine is visible), "+
			"the app's data and config dirs unreadable, and %s; panes it makes or converts are confined the same way, and other panes' terminals are the person's to allow",
			tab.TabID, dir, net),
		fmt.Sprintf("its temporary files and caches go to a private scratch dir, %s (TMPDIR, XDG_CACHE_HOME, GOCACHE and npm's cache point there), since HOME and /tmp are not writable", sb.Scratch),
	}
	if agentNotice != "" {
		notices = append(notices, agentNotice)
		if hosts := e.agentHosts(ctx, g); len(hosts) > 0 {
			notices = append(notices, fmt.Sprintf("its agent reaches its provider's API at %s through the proxy, whatever the goal's ceiling", strings.Join(hosts, ", ")))
		}
	}
	if c := g.Spec.Criterion; !c.ByModel && (c.Kind == criterion.KindShell || strings.HasPrefix(c.Source, "command:")) {
		notices = append(notices, "its check was written by the person, so it runs outside the sandbox, as the person's own command")
	}
	return notices, nil
}

// releaseBoundary ends what the goal's boundary held while it ran: its network proxy, and
// the confinement of new tabs in its own pane (panes it made stay confined).
func (e *Engine) releaseBoundary(g goal.Goal) {
	// An SSH task's pane is known again when its fleet is resumed (ensureFleetPanes): the
	// map does not grow with every task that ever ran.
	e.sshMu.Lock()
	delete(e.sshPanes, g.Spec.PaneID)
	e.sshMu.Unlock()
	if g.Spec.Policy.SandboxDir == "" {
		return
	}
	e.Terminals.ReleasePane(g.Spec.PaneID, g.Spec.Policy.SandboxDir)
	e.bounds.mu.Lock()
	p := e.bounds.proxies[g.ID]
	delete(e.bounds.proxies, g.ID)
	e.bounds.mu.Unlock()
	if p != nil {
		_ = p.Close() // Best effort: its socket may be gone with the temp dir.
	}
}

// closeProxies ends every goal's proxy (the app is closing).
func (b *boundaries) closeProxies() {
	b.mu.Lock()
	proxies := b.proxies
	b.proxies = map[string]*egress.Proxy{}
	b.mu.Unlock()
	for _, p := range proxies {
		_ = p.Close() // Best effort: closing anyway.
	}
}

// confineCheck wraps a check the model wrote in its goal's sandbox (goal.Options.Confine).
func (e *Engine) confineCheck(g goal.Goal, argv []string) ([]string, []string, error) {
	sb, err := e.goalSandbox(g)
	if err != nil {
		return nil, nil, err
	}
	return e.Terminals.ConfinedArgs(sb, argv)
}

// goalScratch is the goal's private dir for the temporary files and caches of its confined
// shell: under the user's cache dir (kept across a resume, so caches stay warm), never inside
// the data dir the shell may not read.
func (e *Engine) goalScratch(goalID string) string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	scratch := filepath.Join(base, "clusterspace", "goal-scratch", goalID)
	if strings.HasPrefix(scratch+"/", e.DataDir+"/") {
		scratch = filepath.Join(os.TempDir(), "clusterspace", "goal-scratch", goalID)
	}
	return scratch
}
