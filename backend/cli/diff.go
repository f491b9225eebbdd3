package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mattn/go-isatty"

	"github.com/clusterspace/clusterspace/backend/engine"
	"github.com/clusterspace/clusterspace/backend/review"
	"github.com/clusterspace/clusterspace/backend/store"
)

// DiffHelp is what `clusterspace diff --help` prints.
const DiffHelp = `Usage: clusterspace diff REF [options]
  Prints the change a piece of work made on its branch, as a unified diff from the commit
  the branch started at to its tip. REF is FLEET_ID/TASK_ID, a task of a fleet run with
  isolation: worktree, or the id of a goal run with its own worktree (the goal id of a fleet
  task names that task). Only committed work is shown: a task or goal still running has its
  work committed when it ends. Reads the store alone, so it works while the app runs.

Options:
  --stat          the files with their added and removed lines, and the totals
  --name-only     the files' paths, one a line
  --json          the change as JSON, one page (files, patch) a line; with --stat or
                  --name-only one object with the files and no patch
  --color WHEN    colour the diff: auto (when stdout is a terminal), always or never
                  (default auto)
  --data-dir DIR  data directory (as for the desktop window)

Exit status: 0 printed, 1 git or the store failed, 64 bad usage or a REF that names no task
or goal with a branch.
`

// Diff runs `clusterspace diff`.
func Diff(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("diff")
	stat := fs.Bool("stat", false, "")
	nameOnly := fs.Bool("name-only", false, "")
	asJSON := fs.Bool("json", false, "")
	color := fs.String("color", "auto", "")
	dataDir := fs.String("data-dir", "", "")
	ref, err := parseWithArg(fs, args)
	if helpAsked(err, DiffHelp, stdout) {
		return ExitOK
	}
	if err == nil && ref == "" {
		err = errors.New("name the work to diff: clusterspace diff FLEET_ID/TASK_ID or GOAL_ID")
	}
	if err == nil && *stat && *nameOnly {
		err = errors.New("give --stat or --name-only, not both")
	}
	colour := false
	switch *color {
	case "auto":
		colour = isTerminal(stdout) && !*asJSON
	case "always":
		colour = !*asJSON
	case "never":
	default:
		if err == nil {
			err = fmt.Errorf("--color %q: give auto, always or never", *color)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "clusterspace diff: %v\n\n%s", err, DiffHelp)
		return ExitUsage
	}
	ctx := context.Background()
	r, err := engine.OpenReader(ctx, *dataDir, "diff", warnLogger(stderr))
	if errors.Is(err, store.ErrNoDatabase) {
		fmt.Fprintf(stderr, "clusterspace diff: no task or goal is %s: this data dir has no fleets or goals yet (give --data-dir DIR for another)\n", ref)
		return ExitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "clusterspace diff: %v\n", err)
		return ExitFor(err)
	}
	defer r.Close()
	subj, err := review.Resolve(ctx, review.StoreFleets(r.Store), review.StoreGoals(r.Store), ref)
	if err != nil {
		return diffFailed(stderr, err)
	}
	if *stat || *nameOnly {
		page, err := review.Changes(ctx, subj, review.ChangesOptions{FilesOnly: true})
		if err != nil {
			return diffFailed(stderr, err)
		}
		switch {
		case *asJSON:
			printJSON(stdout, page)
		case *stat:
			printStat(stdout, page.Files)
		default:
			for _, f := range page.Files {
				fmt.Fprintln(stdout, f.Path)
			}
		}
		noteStale(stderr, page, *asJSON)
		return ExitOK
	}
	for offset := 0; ; {
		page, err := review.Changes(ctx, subj, review.ChangesOptions{Offset: offset, Limit: review.MaxLimit})
		if err != nil {
			return diffFailed(stderr, err)
		}
		if offset == 0 {
			noteStale(stderr, page, *asJSON)
		}
		if *asJSON {
			printJSON(stdout, page)
		} else {
			writePatch(stdout, page.Patch, colour)
		}
		if page.NextOffset == 0 {
			return ExitOK
		}
		offset = page.NextOffset
	}
}

// diffFailed reports why diff failed: a ref that names nothing, or names work without a
// branch, is a mistake in the invocation (64).
func diffFailed(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "clusterspace diff: %v\n", err)
	var fe *review.FieldError
	if errors.Is(err, review.ErrNotFound) || errors.As(err, &fe) {
		return ExitUsage
	}
	return ExitError
}

// noteStale says on stderr that the work is still going on, so what it shows may grow.
func noteStale(stderr io.Writer, page review.ChangesPage, asJSON bool) {
	if page.Note == "" || asJSON {
		return
	}
	fmt.Fprintf(stderr, "clusterspace diff: %s\n", page.Note)
	if page.Uncommitted {
		fmt.Fprintf(stderr, "clusterspace diff: its worktree holds uncommitted work besides, not shown\n")
	}
}

// printStat lists the files as git's --stat does, with their status, and the totals.
func printStat(w io.Writer, files []review.FileChange) {
	width := 0
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Path
		if f.OldPath != "" {
			names[i] = f.OldPath + " => " + f.Path
		}
		width = max(width, len(names[i]))
	}
	added, removed := 0, 0
	for i, f := range files {
		counts := fmt.Sprintf("+%d -%d", f.Added, f.Removed)
		if f.Binary {
			counts = "binary"
		}
		fmt.Fprintf(w, " %-8s %-*s | %s\n", f.Status, width, names[i], counts)
		added += f.Added
		removed += f.Removed
	}
	fmt.Fprintf(w, " %d %s changed, %d %s(+), %d %s(-)\n", len(files), plural(len(files), "file", "files"),
		added, plural(added, "insertion", "insertions"), removed, plural(removed, "deletion", "deletions"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ANSI colours of a diff, as git's defaults.
const (
	ansiBold  = "\x1b[1m"
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiCyan  = "\x1b[36m"
	ansiReset = "\x1b[m"
)

// writePatch writes a patch, coloured as git colours one when colour is set.
func writePatch(w io.Writer, patch string, colour bool) {
	if !colour {
		io.WriteString(w, patch)
		return
	}
	inHeader := false
	for line := range strings.Lines(patch) {
		text, nl := strings.CutSuffix(line, "\n")
		var c string
		switch {
		case strings.HasPrefix(text, "diff --git "):
			c, inHeader = ansiBold, true
		case strings.HasPrefix(text, "@@"):
			c, inHeader = ansiCyan, false
		case inHeader:
			c = ansiBold
		case strings.HasPrefix(text, "+"):
			c = ansiGreen
		case strings.HasPrefix(text, "-"):
			c = ansiRed
		}
		if c != "" && text != "" {
			text = c + text + ansiReset
		}
		io.WriteString(w, text)
		if nl {
			io.WriteString(w, "\n")
		}
	}
}

// isTerminal reports whether w is a terminal, where colour is read (a file, a pipe or
// /dev/null is not).
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && isatty.IsTerminal(f.Fd())
}
