package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/clusterspace/clusterspace/backend/engine"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// runFlags are the flags `goal run` and `fleet run` share: the models, the critic, the
// policy and sandbox, the limits, how approvals are answered, the data dir and the output.
type runFlags struct {
	actor, critic     modelFlags
	approve, dataDir  string
	configDir         string
	json              bool
	criticEvery       int
	allow, deny, risk string
	wallClock         time.Duration
	policy            policy.Policy
	settings          goal.Settings
}

func (f *runFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.actor.provider, "provider", "", "")
	fs.StringVar(&f.actor.baseURL, "base-url", "", "")
	fs.StringVar(&f.actor.model, "model", "", "")
	fs.StringVar(&f.actor.vision, "vision-model", "", "")
	fs.StringVar(&f.actor.kind, "api-kind", "", "")
	fs.StringVar(&f.actor.keyEnv, "api-key-env", "", "")
	fs.StringVar(&f.critic.provider, "critic-provider", "", "")
	fs.StringVar(&f.critic.baseURL, "critic-base-url", "", "")
	fs.StringVar(&f.critic.model, "critic-model", "", "")
	fs.StringVar(&f.critic.kind, "critic-api-kind", "", "")
	fs.StringVar(&f.critic.keyEnv, "critic-api-key-env", "", "")
	fs.IntVar(&f.criticEvery, "critic-every", goal.DefaultCriticInterval, "")
	fs.BoolVar(&f.settings.FinalizeCritic, "finalize-critic", false, "")
	fs.IntVar(&f.settings.BounceBudget, "bounce-budget", 0, "")
	fs.StringVar(&f.risk, "risk", "write_local", "")
	fs.StringVar(&f.policy.SandboxDir, "sandbox", "", "")
	fs.Func("allow-local-port", "", func(v string) error {
		port, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%q is not a port number", v)
		}
		f.policy.LocalPorts = append(f.policy.LocalPorts, port)
		return nil
	})
	fs.StringVar(&f.allow, "allow-tools", "", "")
	fs.StringVar(&f.deny, "deny-tools", "", "")
	fs.BoolVar(&f.policy.RequireStepProtocol, "step-protocol", false, "")
	fs.StringVar(&f.approve, "approve", "", "")
	fs.DurationVar(&f.wallClock, "wall-clock", goal.DefaultWallClock, "")
	fs.IntVar(&f.settings.MaxSteps, "max-steps", 0, "")
	fs.Float64Var(&f.settings.BudgetUSD, "budget-usd", 0, "")
	fs.IntVar(&f.settings.BudgetTokens, "budget-tokens", 0, "")
	fs.IntVar(&f.settings.ContextWindow, "context-window", 0, "")
	fs.StringVar(&f.dataDir, "data-dir", "", "")
	fs.StringVar(&f.configDir, "config-dir", "", "")
	fs.BoolVar(&f.json, "json", false, "")
}

// registerCriterion adds the criterion flags (--check-shell, …), named after the criterion
// keys a fleet file uses too.
func registerCriterion(fs *flag.FlagSet, b *criterion.Builder) {
	for _, k := range criterion.Keys {
		name := strings.ReplaceAll(k, "_", "-")
		if criterion.IsBoolKey(k) {
			fs.BoolFunc(name, "", func(v string) error { return b.Set(k, v) })
			continue
		}
		fs.Func(name, "", func(v string) error { return b.Set(k, v) })
	}
}

// template is the policy and settings the flags give every goal of the run.
func (f *runFlags) template() (policy.Policy, goal.Settings, error) {
	p, st := f.policy, f.settings
	if f.actor.vision != "" && !f.actor.given() {
		return p, st, usagef("--vision-model goes with --base-url and --model (a stored --provider has its own Vision model setting)")
	}
	if w := st.ContextWindow; w != 0 && w < goal.MinContextWindow {
		return p, st, usagef("--context-window %d is too small to hold a goal: give the model's window in tokens, at least %d (or leave it out)", w, goal.MinContextWindow)
	}
	if f.wallClock <= 0 {
		return p, st, usagef("--wall-clock %v: give a time above 0, such as 30m or 2h", f.wallClock)
	}
	if st.MaxSteps < 0 {
		return p, st, usagef("--max-steps %d: give a number of steps above 0, or leave it out for %d", st.MaxSteps, goal.DefaultMaxSteps)
	}
	risk, err := tools.ParseRisk(f.risk)
	if err != nil {
		return p, st, usagef("--risk: %v", err)
	}
	p.Ceiling = risk
	p.Allowed, p.Denied = splitList(f.allow), splitList(f.deny)
	every := f.criticEvery
	st.CriticInterval = &every
	st.WallClock = goal.Duration(f.wallClock)
	st.Provider, st.CriticProvider = f.actor.provider, f.critic.provider
	if st.WorkDir, err = os.Getwd(); err != nil {
		return p, st, err
	}
	return p, st, nil
}

// open opens the engine with the flags' models, approvals and key variables.
func (f *runFlags) open(command string, stdout, stderr io.Writer, extra ...engine.Option) (*engine.Engine, error) {
	approve := f.approve
	if approve == "" {
		approve = "deny"
		if isatty.IsTerminal(os.Stdin.Fd()) {
			approve = "ask"
		}
	}
	auto, err := approver(approve, stdout)
	if err != nil {
		return nil, err
	}
	models, err := f.models()
	if err != nil {
		return nil, err
	}
	logger := warnLogger(stderr)
	// The key variables stay with this process: no pane's shell inherits them.
	opts := append([]engine.Option{engine.WithLogger(logger), engine.WithCommand(command), engine.WithAutoApprove(auto),
		engine.WithHiddenEnv(f.actor.keyEnv, f.critic.keyEnv),
		engine.WithModels(func(stored goal.Models) goal.Models { models.stored = stored; return models }),
		engine.WithVision(models.vision()), engine.WithConfigDir(f.configDir)}, extra...)
	return engine.Open(context.Background(), f.dataDir, opts...)
}

// models are the flags' ad-hoc models (none: the stored providers answer).
func (f *runFlags) models() (cliModels, error) {
	models := cliModels{}
	if f.actor.given() {
		cfg, err := f.actor.config("")
		if err != nil {
			return models, err
		}
		models.actor = &cfg
	}
	if f.critic.given() {
		cfg, err := f.critic.config("critic-")
		if err != nil {
			return models, err
		}
		models.critic = &cfg
	}
	return models, nil
}
