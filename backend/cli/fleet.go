package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/clusterspace/clusterspace/backend/engine"
	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/store"
)

// Fleet runs `clusterspace fleet …` with the arguments after "fleet" and returns the exit status.
func Fleet(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, fleetUsage)
		return ExitUsage
	}
	switch args[0] {
	case "run", "resume":
		return fleetRun(args[0], args[1:], stdout, stderr)
	case "list", "show":
		return fleetRead(args[0], args[1:], stdout, stderr)
	case "abort", "prune":
		return fleetAbort(args[0], args[1:], stdout, stderr)
	case "help", "--help", "-h":
		fmt.Fprint(stdout, fleetUsage)
		return ExitOK
	}
	fmt.Fprintf(stderr, "clusterspace fleet: unknown command %q\n\n%s", args[0], fleetUsage)
	return ExitUsage
}

// fleetRun runs `fleet run FILE` and `fleet resume ID`: both drive a fleet to its end.
func fleetRun(cmd string, args []string, stdout, stderr io.Writer) int {
	var f runFlags
	fs := newFlagSet("fleet " + cmd)
	f.register(fs)
	concurrency := fs.Int("concurrency", 0, "")
	arg, err := parseWithArg(fs, args)
	if helpAsked(err, fleetHelp[cmd], stdout) {
		return ExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "clusterspace fleet %s: %v\n\n%s", cmd, err, fleetUsage)
		return ExitUsage
	}
	if arg == "" {
		what := "FILE"
		if cmd == "resume" {
			what = "ID"
		}
		fmt.Fprintf(stderr, "clusterspace fleet %s: name the %s: clusterspace fleet %s %s\n", cmd, strings.ToLower(what), cmd, what)
		return ExitUsage
	}
	var file fleet.File
	if cmd == "run" {
		if *concurrency < 0 || *concurrency > fleet.MaxConcurrency {
			fmt.Fprintf(stderr, "clusterspace fleet run: --concurrency: from 1 to %d\n", fleet.MaxConcurrency)
			return ExitUsage
		}
		data, err := os.ReadFile(arg)
		if err != nil {
			fmt.Fprintf(stderr, "clusterspace fleet run: %v\n", err)
			return ExitUsage
		}
		if file, err = fleet.Parse(data); err != nil {
			fmt.Fprintf(stderr, "clusterspace fleet run: %s: %v\n", arg, err)
			return ExitUsage
		}
	}
	pol, settings, err := f.template()
	if err != nil {
		return reportFleetError(err, stderr)
	}
	eng, err := f.open("fleet "+cmd, stdout, stderr)
	if err != nil {
		return reportFleetError(err, stderr)
	}
	defer eng.Close()
	// Subscribed before the fleet starts: its first tasks start inside Create.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	fleetEvents, goalEvents := eng.SubscribeFleets(ctx), eng.SubscribeGoals(ctx)
	var fl fleet.Fleet
	if cmd == "run" {
		fl, err = eng.Fleets.Create(context.Background(), file, fleet.Spec{Concurrency: *concurrency, Policy: pol, Settings: settings})
		if err != nil {
			fmt.Fprintf(stderr, "clusterspace fleet run: %s: %v\n", arg, err)
			var fe *fleet.FieldError
			if errors.As(err, &fe) {
				return ExitUsage
			}
			return ExitError
		}
	} else if fl, err = eng.Fleets.Resume(context.Background(), arg); err != nil {
		fmt.Fprintf(stderr, "clusterspace fleet resume: %v\n", err)
		if errors.Is(err, fleet.ErrNotFound) {
			return ExitUsage
		}
		return ExitError
	}
	return followFleet(eng, fl, fleetEvents, goalEvents, f.json, stdout, stderr)
}

func reportFleetError(err error, stderr io.Writer) int {
	fmt.Fprintf(stderr, "clusterspace fleet: %v\n", err)
	var ue usageErr
	if errors.As(err, &ue) {
		return ExitUsage
	}
	return ExitError
}

type (
	pubsubFleetEvent = pubsub.Event[fleet.Event]
	pubsubGoalEvent  = pubsub.Event[goal.Event]
)

// followFleet prints the fleet's progress, task by task, until it ends; Ctrl+C aborts it.
func followFleet(eng *engine.Engine, fl fleet.Fleet, fevs <-chan pubsubFleetEvent, gevs <-chan pubsubGoalEvent, asJSON bool, stdout, stderr io.Writer) int {
	sig, stopSig := interruptible()
	defer stopSig()
	if !asJSON {
		fmt.Fprintf(stdout, "fleet %s  %s  (%d tasks, %d at once)\n", fl.ID, fl.Name, len(fl.Tasks), fl.Spec.Concurrency)
	}
	taskOf := map[string]string{} // goal id → task id
	for _, t := range fl.Tasks {
		if t.GoalID != "" {
			taskOf[t.GoalID] = t.ID
		}
	}
	done := make(chan fleet.Fleet, 1)
	go func() {
		f, _ := eng.Fleets.Wait(context.Background(), fl.ID)
		done <- f
	}()
	onFleet := func(e fleet.Event) {
		if e.FleetID != fl.ID {
			return
		}
		if e.GoalID != "" {
			taskOf[e.GoalID] = e.TaskID
		}
		printFleetEvent(stdout, e, asJSON)
	}
	onGoal := func(e goal.Event) {
		task, ok := taskOf[e.GoalID]
		if !ok || asJSON || e.Type == goal.EventDelta || e.Type == goal.EventEnded {
			return
		}
		printEvent(&prefixWriter{w: stdout, prefix: fmt.Sprintf("  [%s] ", task)}, e, false)
	}
	for {
		select {
		case ev, ok := <-fevs:
			if ok {
				onFleet(ev.Payload)
			}
		case ev, ok := <-gevs:
			if ok {
				onGoal(ev.Payload)
			}
		case <-sig.Done():
			fmt.Fprintln(stderr, "clusterspace fleet: interrupted; aborting the fleet")
			stopSig()
			sig = context.Background()
			go eng.Fleets.Abort(context.Background(), fl.ID)
		case f := <-done:
			for drained := false; !drained; { // what was published before the end
				select {
				case ev := <-fevs:
					onFleet(ev.Payload)
				default:
					drained = true
				}
			}
			return fleetSummary(stdout, f, asJSON)
		}
	}
}

func fleetSummary(w io.Writer, f fleet.Fleet, asJSON bool) int {
	if asJSON {
		ended := map[string]any{"type": "ended", "fleetId": f.ID, "status": f.Status, "tasks": f.Counts()}
		branches := map[string]any{}
		for _, t := range f.Tasks {
			if t.Worktree != nil {
				branches[t.ID] = map[string]string{"branch": t.Worktree.Branch, "diffStat": t.Worktree.DiffStat}
			}
		}
		if len(branches) > 0 {
			ended["branches"] = branches
		}
		printJSON(w, ended)
	} else {
		fmt.Fprintf(w, "fleet %s %s\n", f.ID, f.Status)
		for _, t := range f.Tasks {
			line := string(t.Status)
			if t.Reason != "" {
				line += ": " + t.Reason
			}
			fmt.Fprintf(w, "  %-16s %s\n", t.ID, line)
			printBranch(w, t)
		}
	}
	switch f.Status {
	case fleet.StatusCompleted:
		return ExitOK
	case fleet.StatusAborted:
		return ExitGoalAborted
	}
	return ExitGoalFailed
}

func printFleetEvent(w io.Writer, e fleet.Event, asJSON bool) {
	if asJSON {
		printJSON(w, e)
		return
	}
	if e.Type == fleet.EventFleet {
		fmt.Fprintf(w, "fleet     %s\n", e.Status)
		return
	}
	switch fleet.TaskStatus(e.Status) {
	case fleet.TaskRunning:
		fmt.Fprintf(w, "task %-16s running    goal %s in pane %s\n", e.TaskID, e.GoalID, e.Pane)
	case fleet.TaskBlocked:
		fmt.Fprintf(w, "task %-16s blocked    %s\n", e.TaskID, e.Reason)
	case fleet.TaskWaiting:
		fmt.Fprintf(w, "task %-16s waiting\n", e.TaskID)
	default:
		fmt.Fprintf(w, "task %-16s %-10s %s\n", e.TaskID, e.Status, strings.ReplaceAll(strings.TrimSpace(e.Report), "\n", "\n                                 "))
	}
}

// prefixWriter starts every line with a prefix (a task's goal events under the task).
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	lines := strings.SplitAfter(string(b), "\n")
	for _, l := range lines {
		if l == "" {
			continue
		}
		if _, err := io.WriteString(p.w, p.prefix+l); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// fleetAbort runs `fleet abort ID` and `fleet prune ID`, which change a fleet and so need the
// data dir to themselves.
func fleetAbort(cmd string, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("fleet " + cmd)
	dataDir := fs.String("data-dir", "", "")
	id, err := parseWithArg(fs, args)
	if helpAsked(err, fleetHelp[cmd], stdout) {
		return ExitOK
	}
	if err != nil { // a bad flag: name it, then how the command is called
		fmt.Fprintf(stderr, "clusterspace fleet %s: %v\n\n%s", cmd, err, fleetHelp[cmd])
		return ExitUsage
	}
	if id == "" {
		fmt.Fprintf(stderr, "clusterspace fleet %s: name the fleet: clusterspace fleet %s ID\n", cmd, cmd)
		return ExitUsage
	}
	logger := warnLogger(stderr)
	eng, err := engine.Open(context.Background(), *dataDir, engine.WithLogger(logger), engine.WithCommand("fleet "+cmd))
	if err != nil {
		fmt.Fprintf(stderr, "clusterspace fleet: %v\n", err)
		return ExitError
	}
	defer eng.Close()
	if cmd == "prune" {
		f, err := eng.Fleets.Prune(context.Background(), id)
		for _, t := range f.Tasks {
			if t.Worktree != nil && t.Worktree.Pruned {
				fmt.Fprintf(stdout, "  %-16s worktree removed; branch %s kept\n", t.ID, t.Worktree.Branch)
			}
		}
		if err != nil {
			return failed(stderr, "fleet prune", err)
		}
		fmt.Fprintf(stdout, "fleet %s pruned\n", id)
		return ExitOK
	}
	if err := eng.Fleets.Abort(context.Background(), id); err != nil {
		return failed(stderr, "fleet abort", err)
	}
	fmt.Fprintf(stdout, "fleet %s aborted\n", id)
	return ExitOK
}

// printBranch lists an isolated task's branch and diff stat under it.
func printBranch(w io.Writer, t fleet.Task) {
	wt := t.Worktree
	if wt == nil {
		return
	}
	where := wt.Dir
	if wt.Pruned {
		where = "pruned"
	}
	fmt.Fprintf(w, "      branch %s  (worktree %s)\n", wt.Branch, where)
	if wt.DiffStat != "" {
		fmt.Fprintf(w, "        %s\n", strings.ReplaceAll(wt.DiffStat, "\n", "\n        "))
	}
}

// fleetRead runs list and show from the store alone, like goal list and show: they work
// while another process owns the data dir.
func fleetRead(cmd string, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("fleet " + cmd)
	dataDir := fs.String("data-dir", "", "")
	asJSON := fs.Bool("json", false, "")
	id, err := parseWithArg(fs, args)
	if helpAsked(err, fleetHelp[cmd], stdout) {
		return ExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "clusterspace fleet %s: %v\n\n%s", cmd, err, fleetHelp[cmd])
		return ExitUsage
	}
	if (cmd == "show" && id == "") || (cmd == "list" && id != "") {
		fmt.Fprintf(stderr, "clusterspace fleet %s: usage: clusterspace fleet list | show ID [--data-dir DIR] [--json]\n", cmd)
		return ExitUsage
	}
	ctx := context.Background()
	logger := warnLogger(stderr)
	r, err := engine.OpenReader(ctx, *dataDir, "fleet "+cmd, logger)
	if errors.Is(err, store.ErrNoDatabase) && cmd == "list" {
		return ExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "clusterspace fleet %s: %v\n", cmd, err)
		return ExitError
	}
	defer r.Close()
	stale := func(f fleet.Fleet) {
		if (r.Owner == nil && f.Status == fleet.StatusRunning) || f.Status == fleet.StatusInterrupted {
			fmt.Fprintf(stderr, "clusterspace fleet %s: fleet %s stopped with its process: go on with `clusterspace fleet resume %s`\n", cmd, f.ID, f.ID)
		}
	}
	if cmd == "list" {
		fs, err := r.Store.ListFleets(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "clusterspace fleet list: %v\n", err)
			return ExitError
		}
		printList(stdout, fs, *asJSON, stale, func(f fleet.Fleet) string {
			n := f.Counts()
			return fmt.Sprintf("%-20s %-11s %d/%d tasks completed  %s", f.ID, f.Status, n[fleet.TaskCompleted], len(f.Tasks), truncateLine(f.Name, 50))
		})
		return ExitOK
	}
	f, err := r.Store.Fleet(ctx, id)
	return printShown(stdout, stderr, "fleet show", f, err, *asJSON, stale, func(f fleet.Fleet) { printFleet(stdout, f) })
}

// printFleet writes a fleet as `fleet show` lists it: a line for the fleet, then its tasks,
// each with its branch and report under it.
func printFleet(w io.Writer, f fleet.Fleet) {
	fmt.Fprintf(w, "%s  %s  %s  (%d at once)\n", f.ID, f.Status, f.Name, f.Spec.Concurrency)
	for _, t := range f.Tasks {
		deps := ""
		if len(t.DependsOn) > 0 {
			deps = " after " + strings.Join(t.DependsOn, ",")
		}
		fmt.Fprintf(w, "  %-16s %-10s pane %-14s %s%s\n", t.ID, t.Status, t.Pane, t.GoalID, deps)
		if t.Reason != "" {
			fmt.Fprintf(w, "      blocked: %s\n", t.Reason)
		}
		printBranch(w, t)
		report := t.Report
		if i := strings.Index(report, "\nBranch: "); i >= 0 && t.Worktree != nil {
			report = report[:i] // the branch and its diff stat are listed just above
		}
		if report != "" {
			fmt.Fprintf(w, "      %s\n", strings.ReplaceAll(report, "\n", "\n      "))
		}
	}
}
