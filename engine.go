package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/browser"
	"github.com/clusterspace/clusterspace/backend/chat"
	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/providers"
	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/secrets"
	"github.com/clusterspace/clusterspace/backend/store"
	"github.com/clusterspace/clusterspace/backend/terminal"
	"github.com/clusterspace/clusterspace/backend/tools"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// engine is the backend every door shares: the store and the services over it.
type engine struct {
	dataDir    string
	store      *store.Store
	workspaces *workspace.Service
	providers  *config.Providers
	ssh        *config.SSHServers
	terminals  *terminal.Manager
	browsers   *browser.Manager
	registry   *tools.Registry
	goals      *goal.Service
	chat       *chat.Service
	wsEvents   *pubsub.Broker[workspace.List]
	provEvents *pubsub.Broker[config.ProviderList]
	goalEvents *pubsub.Broker[goal.Event]
	sshEvents  *pubsub.Broker[[]config.SSHServer]
	chatEvents *pubsub.Broker[chat.Event]
}

// engineOptions adjust what openEngine builds for one door.
type engineOptions struct {
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
}

// openEngine resolves and creates the data dir, opens (and migrates) the store and starts the
// services.
func openEngine(ctx context.Context, dataDirFlag string, opts ...func(*engineOptions)) (*engine, error) {
	o := engineOptions{logger: slog.Default()}
	for _, f := range opts {
		f(&o)
	}
	dir, err := config.ResolveDataDir(dataDirFlag)
	if err != nil {
		return nil, err
	}
	if err := config.EnsureDataDir(dir); err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, filepath.Join(dir, store.FileName))
	if err != nil {
		return nil, err
	}
	e := &engine{dataDir: dir, store: st, wsEvents: pubsub.NewBroker[workspace.List](),
		provEvents: pubsub.NewBroker[config.ProviderList](), goalEvents: pubsub.NewBroker[goal.Event](),
		sshEvents: pubsub.NewBroker[[]config.SSHServer](), chatEvents: pubsub.NewBroker[chat.Event]()}
	if err := e.start(ctx, o); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

func (e *engine) start(ctx context.Context, o engineOptions) error {
	ws, err := workspace.NewService(ctx, e.store, e.wsEvents)
	if err != nil {
		return fmt.Errorf("start workspaces: %w", err)
	}
	e.workspaces = ws
	vault, err := secrets.Open(ctx, e.dataDir, e.store, secrets.Options{})
	if err != nil {
		return fmt.Errorf("open the secrets vault: %w", err)
	}
	e.providers = config.NewProviders(e.store, vault, e.provEvents, config.LLMTester{})
	e.ssh = config.NewSSHServers(e.store, vault, e.sshEvents)
	e.terminals = terminal.NewManager(terminal.Options{Logger: o.logger})
	e.browsers = browser.NewManager(browser.Options{DataDir: e.dataDir, Logger: o.logger})
	e.registry = tools.NewRegistry()
	e.registry.Register(tools.GoalTools()...)
	tools.RegisterTerminal(e.registry, e.terminals)
	vision := o.vision
	if vision == nil {
		vision = e.vision()
	}
	tools.RegisterBrowser(e.registry, e.browsers, vision)

	var models goal.Models = storedModels{e.providers}
	if o.models != nil {
		models = o.models(models)
	}
	paneExists := o.paneExists
	if paneExists == nil {
		paneExists = func(id string) bool { return e.workspaces.HasPane(context.Background(), id) }
	}
	defaults, err := config.LoadGoalDefaults(ctx, e.store)
	if err != nil {
		o.logger.Warn("goal settings", "err", err) // the defaults apply; the user can set them again
	}
	// One approval desk for goals and chats: a request is answered the same way whoever asked.
	approvals := agent.NewApprovals(e.store, o.autoApprove)
	e.goals, err = goal.NewService(ctx, e.store, models, e.registry, e.goalEvents, goal.Options{
		Logger: o.logger, Approvals: approvals, PaneExists: paneExists, OnStart: e.confineGoalTerminal,
		Screenshot: e.browsers.Thumbnail,
		Visual: func(ctx context.Context, paneID, question string) (criterion.Verdict, error) {
			ok, detail, err := tools.VisualCheck(ctx, e.browsers, vision, paneID, question)
			return criterion.Verdict{Passed: ok, Detail: detail}, err
		},
		MaxConcurrent: defaults.MaxConcurrent, DefaultBudgetUSD: defaults.BudgetUSD, DefaultBudgetTokens: defaults.BudgetTokens})
	if err != nil {
		return fmt.Errorf("start the goal runner: %w", err)
	}
	e.chat = chat.NewService(e.store, models, e.registry, e.chatEvents, chat.Options{Logger: o.logger, Screenshot: e.browsers.Thumbnail,
		Approvals: approvals})
	return nil
}

// confineGoalTerminal makes sure the goal's pane has a shell. A goal with a sandbox gets a fresh terminal tab in its pane whose shell
// the kernel confines to the sandbox (and, below network_get, keeps off the network). Where
// the kernel cannot, the goal's story says so instead of pretending.
func (e *engine) confineGoalTerminal(ctx context.Context, g goal.Goal) ([]string, error) {
	dir := g.Spec.Policy.SandboxDir
	if dir == "" {
		// No sandbox: the pane just needs a shell, in the goal's working dir.
		_, err := e.terminals.Ensure(ctx, terminal.Spec{PaneID: g.Spec.PaneID, Dir: g.Spec.Settings.WorkDir})
		return nil, err
	}
	noNet := g.Spec.Policy.Ceiling < tools.NetworkGet
	tab, err := e.terminals.Open(ctx, terminal.Spec{PaneID: g.Spec.PaneID, Dir: dir,
		Sandbox: &terminal.Sandbox{WritableDirs: []string{dir}, NoNetwork: noNet}})
	if err != nil {
		return []string{fmt.Sprintf("the goal's terminal is NOT confined by the OS (%v); the policy still checks every tool call", err)}, nil
	}
	if err := e.terminals.SetActive(g.Spec.PaneID, tab.TabID); err != nil {
		return nil, err
	}
	net := "network allowed"
	if noNet {
		net = "no outbound network"
	}
	return []string{fmt.Sprintf("the goal's terminal (tab %s) is confined by the kernel to %s, %s", tab.TabID, dir, net)}, nil
}

// vision is the vision model of the default provider (its "Vision model" setting), for
// screenshots judged by a model. Without one the browser's vision tools say which setting to fill.
func (e *engine) vision() tools.Vision {
	return tools.VisionFunc(func() (llm.Provider, string) {
		r, err := e.providers.Resolve(context.Background(), "")
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
		table[model] = llm.Price{InputPerMTok: p.InputPerMTok, OutputPerMTok: p.OutputPerMTok}
	}
	return modelFor(r.LLMConfig(), table)
}

// modelFor makes a callable goal model from a provider config.
func modelFor(cfg llm.Config, prices llm.Prices) (agent.Model, error) {
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

// sources are the event streams both doors forward to their UI, by topic.
func (e *engine) sources() []pubsub.Source {
	return []pubsub.Source{
		pubsub.From(e.wsEvents, "workspaces"),
		pubsub.From(e.provEvents, "providers"),
		pubsub.From(e.goalEvents, "goals"),
		pubsub.From(e.sshEvents, "ssh"),
		pubsub.From(e.browsers.Events(), "browser"),
		pubsub.From(e.chatEvents, "chat"),
		// Tab changes go out as type "tab" with {kind, tab}, broadcast flags as "broadcast" with
		// {paneId, include}: the UI handles each in one place.
		func(ctx context.Context, send func(pubsub.Envelope)) {
			pubsub.Relay(ctx, e.terminals.Events(), "terminal", func(env pubsub.Envelope) {
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

// Close stops the goals (they become resumable), the terminals and the brokers, and closes
// the store.
func (e *engine) Close() error {
	if e.goals != nil {
		e.goals.Shutdown()
	}
	if e.chat != nil {
		e.chat.Shutdown()
	}
	if e.terminals != nil {
		e.terminals.Shutdown()
	}
	if e.browsers != nil {
		e.browsers.Shutdown()
	}
	e.wsEvents.Shutdown()
	e.provEvents.Shutdown()
	e.goalEvents.Shutdown()
	e.sshEvents.Shutdown()
	e.chatEvents.Shutdown()
	return e.store.Close()
}

// sshTarget turns a saved server into what the terminal engine connects to.
func sshTarget(r config.SSHResolved) terminal.SSHTarget {
	return terminal.SSHTarget{Host: r.Host, Port: r.Port, User: r.User, KeyPath: r.KeyPath, Password: r.Password}
}
