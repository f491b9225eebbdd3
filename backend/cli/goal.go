package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/engine"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/keyenv"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/providers"
	"github.com/clusterspace/clusterspace/backend/store"
	"github.com/clusterspace/clusterspace/backend/tools"
	"github.com/clusterspace/clusterspace/backend/workspace"
	"github.com/clusterspace/clusterspace/backend/worktree"
)

// cliPane is the terminal pane a CLI goal works in.
const cliPane = "term-1"

// cliBrowserPane is the browser pane a CLI goal with a visual check gets (--visual-pane
// names it otherwise): it opens blank, the agent drives it with the browser tools, and the
// judge looks at it.
const cliBrowserPane = "web-1"

// cliWorkspace owns the CLI's browser pane (its Chromium profile lives under that name).
const cliWorkspace = "cli"

// Goal runs `clusterspace goal …` with the arguments after "goal" and returns the exit status.
func Goal(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, goalUsage)
		return ExitUsage
	}
	switch args[0] {
	case "run":
		return goalRun(args[1:], stdout, stderr)
	case "list", "show", "resume", "abort", "reopen":
		return goalManage(args[0], args[1:], stdout, stderr)
	case "help", "--help", "-h":
		fmt.Fprint(stdout, goalUsage)
		return ExitOK
	default:
		fmt.Fprintf(stderr, "clusterspace goal: unknown command %q\n\n%s", args[0], goalUsage)
		return ExitUsage
	}
}

// usageErr is a mistake in the invocation: exit 64 with a message naming it.
type usageErr struct{ msg string }

func (e usageErr) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageErr{fmt.Sprintf(format, args...)} }

type modelFlags struct {
	provider, baseURL, model, kind, keyEnv string
	// vision is the model on the same server that judges screenshots.
	vision string
}

func (m modelFlags) given() bool { return m.baseURL != "" || m.model != "" }

// config builds an ad-hoc provider from flags (not stored); the key comes from an environment
// variable so it never appears in the process list.
func (m modelFlags) config(name string) (llm.Config, error) {
	if m.provider != "" {
		return llm.Config{}, usagef("--%sprovider and --%sbase-url/--%smodel are alternatives: give one", name, name, name)
	}
	if m.baseURL == "" || m.model == "" {
		return llm.Config{}, usagef("--%sbase-url and --%smodel go together", name, name)
	}
	kind := m.kind
	if kind == "" {
		kind = llm.KindOpenAI
	}
	cfg := llm.Config{Name: "cli-" + strings.TrimSuffix(name, "-") + "model", Kind: kind, BaseURL: m.baseURL, Model: m.model, VisionModel: m.vision}
	if cfg.Name == "cli-model" {
		cfg.Name = "cli"
	}
	if m.keyEnv != "" {
		cfg.APIKey, _ = keyenv.Lookup(m.keyEnv)
		if cfg.APIKey == "" {
			return llm.Config{}, usagef("--%sapi-key-env %s: that environment variable is empty", name, m.keyEnv)
		}
	}
	if err := cfg.Validate(); err != nil {
		return llm.Config{}, usagef("%v", err)
	}
	return cfg, nil
}

// cliModels serves the models given by flags; references it does not cover go to the stored
// provider settings.
type cliModels struct {
	actor, critic *llm.Config
	stored        goal.Models
}

// vision is the flags' vision model (nil: the stored default provider's, as in the app).
func (m cliModels) vision() tools.Vision {
	if m.actor == nil || m.actor.VisionModel == "" {
		return nil
	}
	cfg := *m.actor
	return tools.VisionFunc(func() (llm.Provider, string) {
		prov, err := providers.New(cfg)
		if err != nil {
			return nil, ""
		}
		return prov, cfg.VisionModel
	})
}

// cliPanes are the panes a CLI goal may name: its terminal, and the browser pane of a
// visual check.
func cliPanes(spec goal.Spec) func(string) bool {
	return func(id string) bool {
		return id == cliPane || (spec.Criterion.Kind == criterion.KindVisual && id == spec.Criterion.PaneID)
	}
}

// adoptCLIPanes keeps the CLI's panes in a stored workspace of their own ("goal run", id
// cli), so the agent's pane tools (list_panes, …) see them as they see a window's panes.
func adoptCLIPanes(eng *engine.Engine, spec goal.Spec) error {
	panes := []workspace.Pane{{ID: cliPane, Kind: workspace.KindTerminal, Label: "Terminal"}}
	if spec.Criterion.Kind == criterion.KindVisual {
		panes = append(panes, workspace.Pane{ID: spec.Criterion.PaneID, Kind: workspace.KindBrowser, Label: "Browser"})
	}
	if _, err := eng.Workspaces.Adopt(context.Background(), cliWorkspace, "goal run", panes); err != nil {
		return fmt.Errorf("setting up the goal's panes: %w", err)
	}
	return nil
}

// openCLIBrowser opens the visual check's browser pane, blank, for the agent to drive.
func openCLIBrowser(eng *engine.Engine, spec goal.Spec) error {
	if spec.Criterion.Kind != criterion.KindVisual {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := eng.Browsers.Open(ctx, spec.Criterion.PaneID, cliWorkspace, ""); err != nil {
		return fmt.Errorf("--check-visual needs a browser pane, and Chromium could not open one: %w", err)
	}
	return nil
}

func (m cliModels) Model(ctx context.Context, ref string) (agent.Model, error) {
	switch {
	case ref == "critic" && m.critic != nil:
		return engine.ModelFor(*m.critic, nil)
	case ref == "critic" && m.actor != nil:
		return engine.ModelFor(*m.actor, nil)
	case ref == "" && m.actor != nil:
		return engine.ModelFor(*m.actor, nil)
	}
	return m.stored.Model(ctx, ref)
}

type goalRunFlags struct {
	runFlags
	spec goal.Spec
	crit criterion.Builder
	// worktree runs the goal in its own git worktree and branch (the service makes them).
	worktree bool
}

func goalRun(args []string, stdout, stderr io.Writer) int {
	var f goalRunFlags
	fs := newFlagSet("goal run")
	fs.StringVar(&f.spec.Goal, "goal", "", "")
	fs.StringVar(&f.spec.Persona, "persona", "", "")
	fs.Func("skill", "", func(id string) error {
		if id = strings.TrimSpace(id); id == "" {
			return fmt.Errorf("--skill needs a skill id")
		}
		f.spec.Skills = append(f.spec.Skills, id)
		return nil
	})
	registerCriterion(fs, &f.crit)
	f.register(fs)
	fs.BoolVar(&f.worktree, "worktree", false, "")
	if err := fs.Parse(args); err != nil {
		if helpAsked(err, goalHelp["run"], stdout) {
			return ExitOK
		}
		fmt.Fprintf(stderr, "clusterspace goal run: %v\n\n%s", err, goalUsage)
		return ExitUsage
	}
	eng, id, err := f.prepare(fs, stdout, stderr)
	if err != nil {
		return reportStartError(err, stderr)
	}
	defer eng.Close()
	return followGoal(eng, id, f.json, stdout, stderr)
}

// prepare checks the flags, opens the engine and starts the goal.
func (f *goalRunFlags) prepare(fs *flag.FlagSet, stdout, stderr io.Writer) (*engine.Engine, string, error) {
	if fs.NArg() > 0 {
		return nil, "", usagef("unexpected argument %q", fs.Arg(0))
	}
	if f.crit.Kinds() != 1 {
		return nil, "", usagef("give exactly one criterion (--check-shell, --check-question, --check-json, --check-visual or --check-manual); got %d", f.crit.Kinds())
	}
	c, err := f.crit.Spec()
	if err != nil {
		return nil, "", usagef("%v", err)
	}
	f.spec.Criterion = c
	if c := &f.spec.Criterion; c.Kind == criterion.KindVisual && c.PaneID == "" {
		c.PaneID = cliBrowserPane
	} else if c.Kind != criterion.KindVisual && c.PaneID != "" {
		return nil, "", usagef("--visual-pane goes with --check-visual")
	}
	if f.spec.Policy, f.spec.Settings, err = f.template(); err != nil {
		return nil, "", err
	}
	f.spec.PaneID = cliPane
	if f.worktree {
		f.spec.Worktree = &worktree.Worktree{}
	}
	eng, err := f.open("goal run", stdout, stderr, engine.WithPaneExists(cliPanes(f.spec)))
	if err != nil {
		return nil, "", err
	}
	if err := adoptCLIPanes(eng, f.spec); err != nil {
		eng.Close()
		return nil, "", err
	}
	if err := openCLIBrowser(eng, f.spec); err != nil {
		eng.Close()
		return nil, "", err
	}
	g, err := eng.Goals.Start(context.Background(), f.spec)
	if err != nil {
		eng.Close()
		return nil, "", usagef("%v", err)
	}
	return eng, g.ID, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func reportStartError(err error, stderr io.Writer) int {
	fmt.Fprintf(stderr, "clusterspace goal: %v\n", err)
	return ExitFor(err)
}

// followGoal prints the goal's events until it ends; Ctrl+C aborts it. It returns the exit
// status for the goal's outcome.
func followGoal(eng *engine.Engine, id string, asJSON bool, stdout, stderr io.Writer) int {
	ctx, stop := interruptible()
	defer stop()
	events := eng.SubscribeGoals(ctx)
	// Events stored before we subscribed (the start) are printed from the store first.
	past, _ := eng.Goals.History(context.Background(), id, 0)
	var last int64
	for _, e := range past {
		printEvent(stdout, e, asJSON)
		last = e.Seq
	}
	done := make(chan goal.Goal, 1)
	go func() {
		g, _ := eng.Goals.Wait(context.Background(), id)
		done <- g
	}()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				continue
			}
			e := ev.Payload
			if e.GoalID != id || (e.Type != goal.EventDelta && e.Seq <= last) {
				continue
			}
			if e.Type != goal.EventDelta {
				last = e.Seq
			}
			printEvent(stdout, e, asJSON)
		case <-ctx.Done():
			fmt.Fprintln(stderr, "clusterspace goal: interrupted; aborting the goal")
			eng.Goals.Abort(context.Background(), id)
			stop()
			ctx = context.Background()
		case g := <-done:
			// Print whatever arrived in the store after the last live event.
			rest, _ := eng.Goals.History(context.Background(), id, last)
			for _, e := range rest {
				printEvent(stdout, e, asJSON)
			}
			return exitFor(g.Status)
		}
	}
}

func exitFor(s goal.Status) int {
	switch s {
	case goal.StatusCompleted:
		return ExitOK
	case goal.StatusAborted:
		return ExitGoalAborted
	default:
		return ExitGoalFailed
	}
}

// printEvent writes one event: a JSON line, or one readable line.
func printEvent(w io.Writer, e goal.Event, asJSON bool) {
	if asJSON {
		if e.Type == goal.EventDelta {
			return // JSON Lines carry the stored story; deltas are for live UIs
		}
		printJSON(w, e)
		return
	}
	var d map[string]any
	json.Unmarshal(e.Data, &d)
	str := func(k string) string { v, _ := d[k].(string); return v }
	switch e.Type {
	case goal.EventDelta:
		return
	case goal.EventStarted:
		fmt.Fprintf(w, "started   %s\n          criterion: %s\n", str("goal"), str("criterion"))
		if p := str("persona"); p != "" {
			fmt.Fprintf(w, "          persona: %s\n", p)
		}
	case goal.EventStep:
		outcome := "ok "
		if b, _ := d["isError"].(bool); b {
			outcome = "ERR"
		}
		fmt.Fprintf(w, "step %-4v %s %-22s %s\n", d["index"], outcome, str("tool"), str("preview"))
	case goal.EventCritic:
		if str("error") != "" {
			fmt.Fprintf(w, "critic    (failed: %s)\n", str("error"))
		} else {
			fmt.Fprintf(w, "critic    %s — %s\n", str("verdict"), str("reason"))
		}
	case goal.EventGuard:
		fmt.Fprintf(w, "guard     %s %s: %s\n", str("action"), str("tool"), str("message"))
	case goal.EventVerificationFailed:
		fmt.Fprintf(w, "verify    FAILED (%v/%v): %s\n", d["bounces"], d["budget"], str("detail"))
	case goal.EventVerificationPassed:
		fmt.Fprintf(w, "verify    passed: %s\n", str("detail"))
	case goal.EventApprovalRequested:
		fmt.Fprintf(w, "approval  asked for %s (%s): %s\n", str("tool"), str("risk"), str("reason"))
	case goal.EventApprovalResolved:
		fmt.Fprintf(w, "approval  %s %s\n", str("status"), str("answerReason"))
	case goal.EventEnded:
		fmt.Fprintf(w, "ended     %s\n%s\n", str("status"), str("report"))
	case goal.EventCompaction:
		fmt.Fprintf(w, "compact   #%v: older steps summarised to fit the model's window (about %v → %v tokens)\n", d["count"], d["tokensBefore"], d["tokensAfter"])
	default:
		msg := str("message")
		if msg == "" {
			msg = str("status")
		}
		if msg != "" {
			fmt.Fprintf(w, "%-9s %s\n", e.Type, msg)
		}
	}
}

// goalManage runs list, show, resume, abort and reopen.
func goalManage(cmd string, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("goal " + cmd)
	dataDir := fs.String("data-dir", "", "")
	feedback := fs.String("feedback", "", "")
	asJSON := fs.Bool("json", false, "")
	// A goal started with --base-url/--model stored no provider: resume and reopen take them again.
	var actor modelFlags
	fs.StringVar(&actor.baseURL, "base-url", "", "")
	fs.StringVar(&actor.model, "model", "", "")
	fs.StringVar(&actor.vision, "vision-model", "", "")
	fs.StringVar(&actor.kind, "api-kind", "", "")
	fs.StringVar(&actor.keyEnv, "api-key-env", "", "")
	// Flags may come before or after the id.
	var id string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		id, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		if helpAsked(err, goalHelp[cmd], stdout) {
			return ExitOK
		}
		fmt.Fprintf(stderr, "clusterspace goal %s: %v\n\n%s", cmd, err, goalUsage)
		return ExitUsage
	}
	if id == "" && fs.NArg() > 0 {
		id = fs.Arg(0)
	}
	if cmd != "list" && id == "" {
		fmt.Fprintf(stderr, "clusterspace goal %s: name the goal: clusterspace goal %s ID\n", cmd, cmd)
		return ExitUsage
	}
	if cmd == "reopen" && strings.TrimSpace(*feedback) == "" {
		fmt.Fprintln(stderr, "clusterspace goal reopen: --feedback TEXT says what is still wrong")
		return ExitUsage
	}
	models := cliModels{}
	if actor.given() {
		cfg, err := actor.config("")
		if err != nil {
			fmt.Fprintf(stderr, "clusterspace goal %s: %v\n", cmd, err)
			return ExitUsage
		}
		models.actor = &cfg
	}
	logger := warnLogger(stderr)
	if cmd == "list" || cmd == "show" {
		return goalRead(cmd, id, *dataDir, *asJSON, logger, stdout, stderr)
	}
	eng, err := engine.Open(context.Background(), *dataDir, engine.WithLogger(logger), engine.WithCommand("goal "+cmd),
		engine.WithHiddenEnv(actor.keyEnv),
		engine.WithPaneExists(func(id string) bool { return id == cliPane }),
		engine.WithModels(func(stored goal.Models) goal.Models { models.stored = stored; return models }),
		engine.WithVision(models.vision()))
	if err != nil {
		fmt.Fprintf(stderr, "clusterspace goal: %v\n", err)
		return ExitFor(err)
	}
	defer eng.Close()
	ctx := context.Background()
	switch cmd {
	case "abort":
		if err := eng.Goals.Abort(ctx, id); err != nil {
			return failed(stderr, "goal abort", err)
		}
		return ExitOK
	case "resume", "reopen":
		// A visual check's browser pane died with the last process: it opens blank again.
		g, err := eng.Goals.Get(ctx, id)
		if err != nil {
			fmt.Fprintf(stderr, "clusterspace goal %s: %v\n", cmd, err)
			return ExitUsage
		}
		if g.Spec.PaneID == cliPane {
			if err := adoptCLIPanes(eng, g.Spec); err != nil {
				fmt.Fprintf(stderr, "clusterspace goal %s: %v\n", cmd, err)
				return ExitError
			}
		}
		if err := openCLIBrowser(eng, g.Spec); err != nil {
			fmt.Fprintf(stderr, "clusterspace goal %s: %v\n", cmd, err)
			return ExitError
		}
		if cmd == "resume" {
			err = eng.Goals.Resume(ctx, id)
		} else {
			err = eng.Goals.Reopen(ctx, id, *feedback)
		}
		if err != nil {
			fmt.Fprintf(stderr, "clusterspace goal %s: %v\n", cmd, err)
			return ExitUsage
		}
		return followGoal(eng, id, *asJSON, stdout, stderr)
	}
	return ExitUsage
}

// goalRead runs list and show from the store alone, starting no goal service: they work while
// another process owns the data dir, and never touch its goals.
func goalRead(cmd, id, dataDir string, asJSON bool, logger *slog.Logger, stdout, stderr io.Writer) int {
	ctx := context.Background()
	r, err := engine.OpenReader(ctx, dataDir, "goal "+cmd, logger)
	if errors.Is(err, store.ErrNoDatabase) && cmd == "list" {
		return ExitOK // the owner has not created the database yet: no goals
	}
	if err != nil {
		fmt.Fprintf(stderr, "clusterspace goal %s: %v\n", cmd, err)
		return ExitFor(err)
	}
	defer r.Close()
	// With no owner nothing runs: a goal stored as running outlived a process that stopped.
	stale := func(g goal.Goal) {
		if r.Owner == nil && (g.Status == goal.StatusRunning || g.Status == goal.StatusAwaitingApproval) {
			fmt.Fprintf(stderr, "clusterspace goal %s: goal %s is stored as %s but no process runs it (the app stopped): resume it with `clusterspace goal resume %s`\n",
				cmd, g.ID, g.Status, g.ID)
		}
	}
	if cmd == "list" {
		gs, err := r.Store.ListGoals(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "clusterspace goal list: %v\n", err)
			return ExitError
		}
		printList(stdout, gs, asJSON, stale, func(g goal.Goal) string {
			return fmt.Sprintf("%-18s %-17s %4d steps  %s", g.ID, g.Status, g.State.Steps, truncateLine(g.Spec.Goal, 60))
		})
		return ExitOK
	}
	g, err := r.Store.Goal(ctx, id)
	return printShown(stdout, stderr, "goal show", g, err, asJSON, stale, func(g goal.Goal) {
		fmt.Fprintf(stdout, "%s  %s  %d steps, %d tokens, $%.4f\nGOAL: %s\n", g.ID, g.Status, g.State.Steps, g.State.Usage.Total(), g.State.CostUSD, g.Spec.Goal)
		if wt := g.Spec.Worktree; wt != nil {
			fmt.Fprintf(stdout, "BRANCH: %s\n", branchOf(wt))
		}
		evs, _ := r.Store.GoalEvents(ctx, id, 0)
		for _, e := range evs {
			printEvent(stdout, e, false)
		}
	})
}

// branchOf is a goal's branch for goal show: where it works (or worked) and where it lands.
func branchOf(wt *worktree.Worktree) string {
	s := wt.Branch
	if wt.Target != "" {
		s += " (onto " + wt.Target + ")"
	}
	if wt.Pruned {
		return s + ", its worktree removed"
	}
	return s + ", worktree " + wt.Dir
}

func truncateLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
