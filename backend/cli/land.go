package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/clusterspace/clusterspace/backend/engine"
	"github.com/clusterspace/clusterspace/backend/land"
)

// Exit statuses of `land` beyond the common ones.
const ExitLandRefused = 3 // something was refused (conflict or a failing check); the rest landed

// LandHelp is what `clusterspace land --help` prints.
const LandHelp = `Usage: clusterspace land FLEET|FLEET/TASK|GOAL [options]
  Lands verified work on its target branch (the branch checked out when the fleet or the
  goal run with --worktree began):
  each task's branch is replayed onto the target's tip in a scratch worktree, the task's own
  criterion and the repository's check run there, and only when both pass does the target
  move. A fleet lands its verified tasks in dependency order, each on top of the ones before
  it. Your checkout, its index and your uncommitted files are never touched; a target that
  moved meanwhile is replayed onto again. A landed task's worktree and branch are removed.
  A conflict or a failing check lands nothing for that task: it goes back to its agent with
  the conflict or the failing output (run fleet resume to let it resolve and verify again;
  for a goal, goal reopen), or stays with you (--on-refuse person).

Options:
  --strategy rebase|merge  replay the task's commits on the target (rebase), or a merge
                           commit (merge); remembered for the repository (default: the
                           fleet file's land: strategy, else the remembered one, else rebase)
  --check CMD              the repository's own check, run with bash on the result (e.g.
                           "make test"); remembered for the repository; a fleet file's
                           land: check: wins over it
  --on-refuse agent|person where refused work goes (remembered; default agent)
  --json                   print the report as JSON
  --data-dir DIR           data directory (as for the desktop window)

Exit status: 0 everything asked for landed (or had landed), 3 something was refused or
skipped (the report says why), 1 landing could not run, 64 bad usage.
`

// Land runs `clusterspace land`.
func Land(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("land")
	strategy := fs.String("strategy", "", "")
	check := fs.String("check", "", "")
	onRefuse := fs.String("on-refuse", "", "")
	asJSON := fs.Bool("json", false, "")
	dataDir := fs.String("data-dir", "", "")
	ref, err := parseWithArg(fs, args)
	if helpAsked(err, LandHelp, stdout) {
		return ExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "clusterspace land: %v\n\n%s", err, LandHelp)
		return ExitUsage
	}
	if ref == "" {
		fmt.Fprintf(stderr, "clusterspace land: name what to land: clusterspace land FLEET, FLEET/TASK or GOAL\n")
		return ExitUsage
	}
	eng, err := engine.Open(context.Background(), *dataDir, engine.WithLogger(warnLogger(stderr)), engine.WithCommand("land"))
	if err != nil {
		fmt.Fprintf(stderr, "clusterspace land: %v\n", err)
		return ExitFor(err)
	}
	defer eng.Close()
	rep, err := eng.Land.Land(context.Background(), land.Args{Ref: ref, Strategy: *strategy, Check: *check, OnRefuse: *onRefuse})
	var fe *land.FieldError
	if errors.As(err, &fe) {
		fmt.Fprintf(stderr, "clusterspace land: --%s: %s\n", flagName(fe.Field), fe.Msg)
		return ExitUsage
	}
	if err != nil {
		return failed(stderr, "land", err)
	}
	if *asJSON {
		printIndentedJSON(stdout, rep)
	} else {
		printLandReport(stdout, rep)
	}
	for _, o := range rep.Outcomes {
		if o.Status == land.OutcomeRefused || o.Status == land.OutcomeSkipped {
			return ExitLandRefused
		}
	}
	return ExitOK
}

// flagName is the option a land.FieldError's field came from.
func flagName(field string) string {
	switch field {
	case "onRefuse":
		return "on-refuse"
	case "ref":
		return "FLEET|FLEET/TASK|GOAL (the argument)"
	}
	return field
}

func printLandReport(w io.Writer, rep land.Report) {
	fmt.Fprintf(w, "landing with %s", rep.Strategy)
	if rep.Check != "" {
		fmt.Fprintf(w, ", repository check %q", rep.Check)
	}
	fmt.Fprintf(w, "; refused work goes to the %s\n", rep.OnRefuse)
	for _, o := range rep.Outcomes {
		fmt.Fprintf(w, "%-8s %s\n", o.Status, o.Ref)
		if o.Detail != "" {
			fmt.Fprintf(w, "  %s\n", strings.ReplaceAll(strings.TrimSpace(o.Detail), "\n", "\n  "))
		}
		if o.SentBack {
			fmt.Fprintln(w, "  sent back to its agent to resolve and verify again")
		}
	}
	if rep.Note != "" {
		fmt.Fprintln(w, rep.Note)
	}
}
