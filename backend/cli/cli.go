// Package cli holds the command line's subcommands (`goal …`, and `fleet …` to come); main
// only dispatches to them.
package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/goal"
)

// Exit statuses, a stable interface for scripts. 64 is EX_USAGE from sysexits.h, what scripts
// expect for a bad invocation; `goal run` (and resume, reopen) report the goal's outcome.
const (
	ExitOK          = 0
	ExitError       = 1
	ExitUsage       = 64
	ExitGoalFailed  = 1
	ExitGoalAborted = 2
)

// ExitFor is the exit status of a command that ends with err: ExitUsage for a mistake in the
// invocation or the configuration (a bad flag, a data dir that cannot be used), else ExitError.
func ExitFor(err error) int {
	var ue usageErr
	var fe *goal.FieldError
	var de *config.DataDirError
	if errors.As(err, &ue) || errors.As(err, &fe) || errors.As(err, &de) {
		return ExitUsage
	}
	return ExitError
}

// failed reports on stderr why `clusterspace <cmd>` failed and answers its exit status: an id
// that names no goal or fleet is a mistake in the invocation (as show and resume answer it).
func failed(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "clusterspace %s: %v\n", cmd, err)
	if errors.Is(err, goal.ErrNotFound) || errors.Is(err, fleet.ErrNotFound) {
		return ExitUsage
	}
	return ExitFor(err)
}

// warnLogger is the commands' log: warnings and worse, on stderr, so stdout stays the answer.
func warnLogger(stderr io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// printList prints what `goal list` and `fleet list` list, one a line: each as JSON with --json,
// else as line writes it. warn runs on each first, to say on stderr that a stopped process
// left it stored as running.
func printList[T any](stdout io.Writer, records []T, asJSON bool, warn func(T), line func(T) string) {
	for _, r := range records {
		warn(r)
		if asJSON {
			b, _ := json.Marshal(r)
			fmt.Fprintln(stdout, string(b))
			continue
		}
		fmt.Fprintln(stdout, line(r))
	}
}

// printShown prints what `goal show` and `fleet show` read: the record as indented JSON with
// --json, else as details writes it; warn runs first, as in printList. A record that cannot be
// read is a mistake in the id (exit 64).
func printShown[T any](stdout, stderr io.Writer, cmd string, record T, err error, asJSON bool, warn func(T), details func(T)) int {
	if err != nil {
		fmt.Fprintf(stderr, "clusterspace %s: %v\n", cmd, err)
		return ExitUsage
	}
	warn(record)
	if asJSON {
		b, _ := json.MarshalIndent(record, "", "  ")
		fmt.Fprintln(stdout, string(b))
		return ExitOK
	}
	details(record)
	return ExitOK
}
