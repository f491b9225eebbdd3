// Package cli holds the command line's subcommands (`goal …`, and `fleet …` to come); main
// only dispatches to them.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

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
			printJSON(stdout, r)
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
		printIndentedJSON(stdout, record)
		return ExitOK
	}
	details(record)
	return ExitOK
}

// printJSON prints v as one line of JSON, what --json lists and streams. Our records always
// marshal, so there is no error to report.
func printJSON(w io.Writer, v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintln(w, string(b))
}

// printIndentedJSON prints v as indented JSON, what --json shows of one record or report.
func printIndentedJSON(w io.Writer, v any) {
	b, _ := json.MarshalIndent(v, "", "  ")
	fmt.Fprintln(w, string(b))
}

// interruptible is the context a command's foreground work runs under: Ctrl+C or SIGTERM
// cancels it, so the command can end what it runs (abort a goal, close a session) first.
func interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
