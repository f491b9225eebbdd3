// Package engine opens the data dir, the store and the services every door shares: the
// desktop window, the HTTP server and the CLI each open one Engine and call its services.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/browser"
	"github.com/clusterspace/clusterspace/backend/catalog"
	"github.com/clusterspace/clusterspace/backend/chat"
	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/egress"
	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/inbox"
	"github.com/clusterspace/clusterspace/backend/land"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/providers"
	"github.com/clusterspace/clusterspace/backend/logins"
	"github.com/clusterspace/clusterspace/backend/mcp"
	"github.com/clusterspace/clusterspace/backend/panes"
	"github.com/clusterspace/clusterspace/backend/plugins"
	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/recipes"
	"github.com/clusterspace/clusterspace/backend/review"
	"github.com/clusterspace/clusterspace/backend/secrets"
	"github.com/clusterspace/clusterspace/backend/store"
	"github.com/clusterspace/clusterspace/backend/terminal"
	"github.com/clusterspace/clusterspace/backend/tools"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// Engine is the backend every door shares: the store and the services over it. Open sets
// every field; the doors call the services and never replace them.
type Engine struct {
	DataDir string
	// ConfigDir holds the files people keep in git to shape the agent (personas, skills,
	// templates, tool plugins, mcp.json); it need not exist.
	ConfigDir  string
	Store      *store.Store
	Workspaces *workspace.Service
	Providers  *config.Providers
	SSH        *config.SSHServers
	Terminals  *terminal.Manager
	Browsers   *browser.Manager
	Registry   *tools.Registry
	Panes      *panes.Service
	Goals      *goal.Service
	Fleets     *fleet.Service
	// Land lands the fleet tasks' verified work on their target branches.
	Land *land.Service
	// Review reads the changes of tasks and goals with branches, and sends their review
	// comments back to the agents.
	Review *review.Service
	Chat   *chat.Service
	// Recipes are the saved browser recipes; Logins the saved per-site logins (passwords in the vault).
	Recipes *recipes.Service
	Logins  *logins.Service
	// Catalog is the personas, skills, task and pane templates: the defaults with the config
	// dir's files over them, reloaded when they change.
	Catalog *catalog.Catalog
	// Plugins are the JavaScript tools of ConfigDir/tools, MCP the servers of
	// ConfigDir/mcp.json: both offer their tools through Registry, shared by goals and chats.
	Plugins *plugins.Set
	MCP     *mcp.Manager
	// Approvals is the one approval desk of goals, chats and MCP clients (backend/mcpserve).
	Approvals *agent.Approvals
	// Inbox is what waits for the person across workspaces, most urgent first.
	Inbox *inbox.Service

	wsEvents    *pubsub.Broker[workspace.List]
	provEvents  *pubsub.Broker[config.ProviderList]
	goalEvents  *pubsub.Broker[goal.Event]
	sshEvents   *pubsub.Broker[[]config.SSHServer]
	chatEvents  *pubsub.Broker[chat.Event]
	fleetEvents *pubsub.Broker[fleet.Event]
	inboxEvents *pubsub.Broker[inbox.List]

	lock *config.DataDirLock

	// sshPanes maps the panes of fleet tasks with `ssh:` to their saved server's id.
	sshMu    sync.Mutex
	sshPanes map[string]string

	// bounds holds what each confined goal's boundary needs while it runs (boundary.go).
	bounds boundaries

	// mcpOffered: this door serves MCP on the data dir's socket, so agent panes get it (mcppanes.go).
	mcpOffered atomic.Bool
}

// options adjust what Open builds for one door.
type options struct {
	logger *slog.Logger
	// models wraps the stored provider settings (the CLI's --base-url/--model flags take
	// precedence over them).
	models func(stored goal.Models) goal.Models
	// autoApprove answers approvals without a person (the CLI's --approve).
	autoApprove agent.AutoAnswer
	// paneExists overrides pane validation (the CLI's term-1).
	paneExists func(string) bool
	// vision overrides the stored default provider's vision model (the CLI's --vision-model).
	vision tools.Vision
	// hiddenEnv names the variables holding this process's API keys, kept out of every pane.
	hiddenEnv []string
	// sshOptions go to every ssh a terminal runs (tests keep ssh off the machine's own set-up).
	sshOptions []string
	// command names the door in the data dir's lock file, for the message another process gets.
	command string
	// configDir is the --config-dir flag ("" picks the default, see config.ResolveConfigDir).
	configDir string
	// secretFiles are files no confined goal may read (serve's --password-file).
	secretFiles []string
	// ownAddrs lists where this process serves (serve's address): never reachable from a goal.
	ownAddrs []string
}

// An Option adjusts what Open builds for one door.
type Option func(*options)

// WithLogger logs the services' warnings to l (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithModels wraps the models resolved from the stored provider settings, so a door can serve
// some references itself (the CLI's --base-url/--model) and pass the rest on to stored.
func WithModels(wrap func(stored goal.Models) goal.Models) Option {
	return func(o *options) { o.models = wrap }
}

// WithModel answers every model reference, the critic's too, with the model cfg names, whatever
// the stored providers say: one model for every goal and fleet agent (a scripted server in tests).
func WithModel(cfg llm.Config) Option {
	return WithModels(func(goal.Models) goal.Models { return oneModel{cfg} })
}

type oneModel struct{ cfg llm.Config }

func (m oneModel) Model(context.Context, string) (agent.Model, error) { return ModelFor(m.cfg, nil) }

// WithAutoApprove answers goal approvals without asking a person (the CLI's --approve).
func WithAutoApprove(a agent.AutoAnswer) Option { return func(o *options) { o.autoApprove = a } }

// WithHiddenEnv names environment variables that hold the app's own API keys (the CLI's
// --api-key-env and --critic-api-key-env), so no terminal pane inherits them.
func WithHiddenEnv(names ...string) Option {
	return func(o *options) { o.hiddenEnv = append(o.hiddenEnv, names...) }
}

// WithSSHOptions adds ssh client options to every SSH terminal (a test's known_hosts file).
func WithSSHOptions(opts ...string) Option {
	return func(o *options) { o.sshOptions = append(o.sshOptions, opts...) }
}

// WithPaneExists replaces the workspaces' pane check for goals (the CLI has no workspace, only
// its own panes).
func WithPaneExists(f func(paneID string) bool) Option {
	return func(o *options) { o.paneExists = f }
}

// WithVision replaces the stored default provider's vision model (the CLI's --vision-model);
// nil keeps the stored one.
func WithVision(v tools.Vision) Option { return func(o *options) { o.vision = v } }

// WithCommand names the door ("serve", "goal run") in the data dir's lock file, so a second
// process is told what holds the data dir (default "desktop").
func WithCommand(name string) Option { return func(o *options) { o.command = name } }

// WithSecretFiles names files of the person's that no confined goal may read (serve's
// --password-file), beside the data and config dirs it never reads.
func WithSecretFiles(paths ...string) Option {
	return func(o *options) {
		for _, p := range paths {
			if abs, err := filepath.Abs(p); p != "" && err == nil {
				o.secretFiles = append(o.secretFiles, abs)
			}
		}
	}
}

// WithOwnAddrs names the host:port pairs this process serves on (serve's listener): no goal
// reaches them, even through a local port the person opened to it.
func WithOwnAddrs(addrs ...string) Option {
	return func(o *options) { o.ownAddrs = append(o.ownAddrs, addrs...) }
}

// WithConfigDir sets the config dir (the doors' --config-dir); "" picks the default.
func WithConfigDir(dir string) Option { return func(o *options) { o.configDir = dir } }

// Open resolves and creates the data dir (dataDirFlag, else the environment's default), takes
// it for this process alone, opens (and migrates) the store and starts the services. If
// another process owns the data dir the error wraps config.ErrDataDirInUse and names it: two
// engines on one store would each take the other's running goals for crashed ones.
func Open(ctx context.Context, dataDirFlag string, opts ...Option) (*Engine, error) {
	o := options{logger: slog.Default(), command: "desktop"}
	for _, f := range opts {
		f(&o)
	}
	dir, err := config.ResolveDataDir(dataDirFlag)
	if err != nil {
		return nil, err
	}
	if err := config.EnsureDataDir(dir, o.logger); err != nil {
		return nil, err
	}
	configDir, err := config.ResolveConfigDir(o.configDir)
	if err != nil {
		return nil, err
	}
	lock, err := config.LockDataDir(dir, o.command, false)
	if err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, filepath.Join(dir, store.FileName))
	if err != nil {
		lock.Release()
		return nil, err
	}
	e := &Engine{DataDir: dir, ConfigDir: configDir, Store: st, lock: lock, wsEvents: pubsub.NewBroker[workspace.List](),
		provEvents: pubsub.NewBroker[config.ProviderList](), goalEvents: pubsub.NewBroker[goal.Event](),
		sshEvents: pubsub.NewBroker[[]config.SSHServer](), chatEvents: pubsub.NewBroker[chat.Event](),
		fleetEvents: pubsub.NewBroker[fleet.Event](), inboxEvents: pubsub.NewBroker[inbox.List]()}
	if err := e.start(ctx, o); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

func (e *Engine) start(ctx context.Context, o options) error {
	e.bounds = boundaries{secretFiles: o.secretFiles, ownAddrs: o.ownAddrs, proxies: map[string]*egress.Proxy{}, log: o.logger}
	if err := config.RememberDataDir(e.DataDir); err != nil {
		// Best effort: this data dir is hidden from its own goals regardless; another
		// app's goals would miss it. Say so.
		o.logger.Warn("could not add the data dir to the list confined goals may not read", "err", err)
	}
	masker := newMasker(&o) // first: it wraps the logger every service gets (masking.go)
	cat, err := catalog.Open(ctx, e.ConfigDir, o.logger)
	if err != nil {
		return fmt.Errorf("open the config dir: %w", err)
	}
	e.Catalog = cat
	ws, err := workspace.NewService(ctx, e.Store, e.wsEvents)
	if err != nil {
		return fmt.Errorf("start workspaces: %w", err)
	}
	e.Workspaces = ws
	ws.SetTemplates(cat.LaunchTemplates)
	vault, err := secrets.Open(ctx, e.DataDir, e.Store, secrets.Options{Masker: masker})
	if err != nil {
		return fmt.Errorf("open the secrets vault: %w", err)
	}
	e.Providers = config.NewProviders(e.Store, vault, e.provEvents, config.LLMTester{})
	e.SSH = config.NewSSHServers(e.Store, vault, e.sshEvents)
	e.Terminals = terminal.NewManager(terminal.Options{Logger: o.logger, HiddenEnv: o.hiddenEnv, SSHOptions: o.sshOptions})
	e.Browsers = browser.NewManager(browser.Options{DataDir: e.DataDir, Logger: o.logger})
	e.Registry = tools.NewRegistry()
	e.Registry.Register(tools.GoalTools()...)
	e.Registry.Register(cat.Tools()...)
	vision := o.vision
	if vision == nil {
		vision = e.vision()
	}
	tools.RegisterBrowser(e.Registry, e.Browsers, vision)
	e.Panes = panes.New(e.Workspaces, e.Terminals, e.Browsers)
	tools.RegisterTerminal(e.Registry, wakingTerminals{e.Terminals, e.Panes})
	tools.RegisterWorkspace(e.Registry, e.Panes)
	e.Recipes = recipes.NewService(e.Store, e.Registry, e.Browsers)
	e.Logins = logins.NewService(e.Store, vault)
	e.Registry.Register(recipes.Tools(e.Recipes)...)
	e.Registry.Register(logins.Tool(e.Logins, e.Browsers))
	// Tools from the config dir: plugins may never take a built-in's name (checked when a
	// file loads, so built-ins registered below count too); ctx.readFile never reads the
	// data dir. MCP servers start on the first tool listing and end in Close.
	e.Plugins = plugins.New(e.ConfigDir, e.Registry.Builtin, plugins.Options{Hidden: e.hiddenFromGoals()})
	e.MCP = mcp.New(e.ConfigDir, mcp.Options{Logger: o.logger})
	e.Registry.AddSource(e.Plugins)
	e.Registry.AddSource(e.MCP)
	e.maskTools(masker)

	var models goal.Models = storedModels{e.Providers}
	if o.models != nil {
		models = o.models(models)
	}
	paneExists := o.paneExists
	if paneExists == nil {
		paneExists = func(id string) bool { return e.Workspaces.HasPane(context.Background(), id) }
	}
	defaults, err := config.LoadGoalDefaults(ctx, e.Store)
	if err != nil {
		o.logger.Warn("goal settings", "err", err) // the defaults apply; the user can set them again
	}
	// One approval desk for goals and chats: a request is answered the same way whoever asked.
	approvals := agent.NewApprovals(e.Store, o.autoApprove)
	e.Approvals = approvals
	e.Goals, err = goal.NewService(ctx, e.Store, models, e.Registry, e.goalEvents, goal.Options{
		Logger: o.logger, Approvals: approvals, PaneExists: paneExists, Catalog: cat,
		OnStart: e.confineGoalTerminal, OnEnd: e.releaseBoundary, Confine: e.confineCheck, Hidden: e.hiddenFromGoals,
		Screenshot: e.Browsers.Thumbnail,
		PaneSummary: func(ctx context.Context, paneID string) string {
			return masker.Mask(e.Panes.Summary(ctx, panes.Caller{PaneID: paneID})) // a URL or command may hold a token
		},
		Visual: func(ctx context.Context, paneID, question string) (criterion.Verdict, error) {
			ok, detail, err := tools.VisualCheck(ctx, e.Browsers, vision, paneID, question)
			return criterion.Verdict{Passed: ok, Detail: detail}, err
		},
		MaxConcurrent: defaults.MaxConcurrent, DefaultBudgetUSD: defaults.BudgetUSD, DefaultBudgetTokens: defaults.BudgetTokens})
	if err != nil {
		return fmt.Errorf("start the goal runner: %w", err)
	}
	e.Panes.SetGoals(e.Goals.WorkingIn)
	e.Fleets, err = fleet.NewService(ctx, e.Store, e.Goals, e.fleetEvents, fleet.Options{Logger: o.logger, EnsurePanes: e.ensureFleetPanes,
		PaneExists: paneExists})
	if err != nil {
		return fmt.Errorf("start the fleets: %w", err)
	}
	e.Registry.Register(fleet.Tools(e.Fleets)...)
	// A door that drives fleets sends refused work back to its agent at once; the CLI's
	// `land` leaves it for `fleet resume`.
	e.Land = land.NewService(e.Fleets, e.Goals, e.Store, resumesFleets[o.command])
	e.Review = e.newReview(o)
	e.resumeFleets(ctx, o)
	e.Chat = chat.NewService(e.Store, models, e.Registry, e.chatEvents, chat.Options{Logger: o.logger, Screenshot: e.Browsers.Thumbnail,
		Approvals: approvals, Catalog: cat, PaneSummary: func(ctx context.Context, wsID string) string {
			return masker.Mask(e.Panes.Summary(ctx, panes.Caller{WorkspaceID: wsID}))
		}})
	if err := e.newInbox(approvals, o); err != nil {
		return err
	}
	// Removing a pane ends what it holds (see ClosePane).
	e.Workspaces.SetPaneHolder(e)
	// Every tool is registered now: a persona's tools list can be checked for typos.
	cat.SetToolCheck(func(name string) bool { _, ok := e.Registry.Get(name); return ok })
	return nil
}

// vision is the vision model of the default provider (its "Vision model" setting), for
// screenshots judged by a model. Without one the browser's vision tools say which setting to fill.
func (e *Engine) vision() tools.Vision {
	return tools.VisionFunc(func() (llm.Provider, string) {
		r, err := e.Providers.Resolve(context.Background(), "")
		if err != nil || r.VisionModel == "" {
			return nil, ""
		}
		prov, err := providers.New(r.LLMConfig())
		if err != nil {
			return nil, ""
		}
		return prov, r.VisionModel
	})
}

// storedModels resolves goal model references through the provider settings.
type storedModels struct{ providers *config.Providers }

func (m storedModels) Model(ctx context.Context, ref string) (agent.Model, error) {
	r, err := m.providers.Resolve(ctx, ref)
	if err != nil {
		return agent.Model{}, err
	}
	prices, err := m.providers.Prices(ctx)
	if err != nil {
		return agent.Model{}, err
	}
	table := llm.Prices{}
	for model, p := range prices {
		table[model] = p.LLM()
	}
	return ModelFor(r.LLMConfig(), table)
}

// ModelFor makes a callable goal model from a provider config; prices (may be nil) give its
// cost per token.
func ModelFor(cfg llm.Config, prices llm.Prices) (agent.Model, error) {
	prov, err := providers.New(cfg)
	if err != nil {
		return agent.Model{}, err
	}
	m := agent.Model{Provider: prov, Name: cfg.Name, ModelID: cfg.Model, Vision: cfg.VisionModel != "",
		Window: cfg.ContextWindow, MaxTokens: cfg.MaxTokens}
	if p, ok := prices.For(cfg.Model); ok {
		m.Price = &p
	}
	return m, nil
}

// Sources are the event streams the desktop and server doors forward to their UI, by topic.
func (e *Engine) Sources() []pubsub.Source {
	return []pubsub.Source{
		pubsub.From(e.wsEvents, "workspaces"),
		pubsub.From(e.provEvents, "providers"),
		pubsub.From(e.goalEvents, "goals"),
		pubsub.From(e.fleetEvents, "fleets"),
		pubsub.From(e.sshEvents, "ssh"),
		pubsub.From(e.Browsers.Events(), "browser"),
		pubsub.From(e.chatEvents, "chat"),
		pubsub.From(e.Catalog.Events(), "catalog"),
		pubsub.From(e.inboxEvents, "inbox"),
		// Tab changes go out as type "tab" with {kind, tab}, broadcast flags as "broadcast" with
		// {paneId, include}: the UI handles each in one place.
		func(ctx context.Context, send func(pubsub.Envelope)) {
			pubsub.Relay(ctx, e.Terminals.Events(), "terminal", func(env pubsub.Envelope) {
				if ev, ok := env.Data.(terminal.Event); ok && ev.Kind == terminal.EventBroadcast {
					env.Type, env.Data = "broadcast", map[string]any{"paneId": ev.Tab.PaneID, "include": ev.Tab.Broadcast}
				} else {
					env.Type = "tab"
				}
				send(env)
			})
		},
	}
}

// SubscribeGoals streams goal events (the CLI follows one goal with it) until ctx ends.
func (e *Engine) SubscribeGoals(ctx context.Context) <-chan pubsub.Event[goal.Event] {
	return e.goalEvents.Subscribe(ctx)
}

// Close stops the goals (they become resumable), the terminals and the brokers, and closes
// the store.
func (e *Engine) Close() error {
	if e.Inbox != nil {
		e.Inbox.Shutdown() // it reads the services below
	}
	if e.Fleets != nil {
		e.Fleets.Shutdown() // first: it stops following the goals, and stores its fleets as interrupted
	}
	if e.Goals != nil {
		e.Goals.Shutdown()
	}
	if e.Chat != nil {
		e.Chat.Shutdown()
	}
	if e.MCP != nil {
		e.MCP.Close() // after the goals and chats: none of their calls is left to answer
	}
	e.bounds.closeProxies() // the goals have ended: each closed its own; this is for safety
	if e.Terminals != nil {
		e.Terminals.Shutdown()
	}
	if e.Browsers != nil {
		e.Browsers.Shutdown()
	}
	if e.Catalog != nil {
		e.Catalog.Close()
	}
	e.wsEvents.Shutdown()
	e.provEvents.Shutdown()
	e.goalEvents.Shutdown()
	e.sshEvents.Shutdown()
	e.chatEvents.Shutdown()
	e.fleetEvents.Shutdown()
	e.inboxEvents.Shutdown()
	err := e.Store.Close()
	// The lock goes last: the next owner must find the store closed.
	e.lock.Release()
	return err
}

// Reader is the store opened for reading goals and nothing else: no service starts, so no
// goal is repaired, resumed or scheduled. `goal list` and `goal show` use it, and work while
// another process owns the data dir.
type Reader struct {
	DataDir string
	Store   *store.Store
	// Owner is the process that owns the data dir, if another one does.
	Owner *config.LockOwner

	lock *config.DataDirLock
}

// OpenReader resolves and creates the data dir like Open. If no other process owns it, the
// reader holds it while it reads (and creates or migrates the store as Open would); if one
// does, the store is opened read-only and the owner's goals are left to it.
func OpenReader(ctx context.Context, dataDirFlag, command string, logger *slog.Logger) (*Reader, error) {
	dir, err := config.ResolveDataDir(dataDirFlag)
	if err != nil {
		return nil, err
	}
	if err := config.EnsureDataDir(dir, logger); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, store.FileName)
	lock, err := config.LockDataDir(dir, command, true)
	var inUse *config.InUseError
	switch {
	case errors.As(err, &inUse):
		st, err := store.OpenReadOnly(ctx, path)
		if err != nil {
			return nil, fmt.Errorf("%w (%v)", err, inUse)
		}
		return &Reader{DataDir: dir, Store: st, Owner: &inUse.Owner}, nil
	case err != nil:
		return nil, err
	}
	st, err := store.Open(ctx, path)
	if err != nil {
		lock.Release()
		return nil, err
	}
	return &Reader{DataDir: dir, Store: st, lock: lock}, nil
}

// Close closes the store and gives the data dir up.
func (r *Reader) Close() error {
	err := r.Store.Close()
	r.lock.Release()
	return err
}
