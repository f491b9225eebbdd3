// Package cli holds the command line's subcommands (`goal …`, and `fleet …` to come); main
// only dispatches to them.
package cli

// Exit statuses, a stable interface for scripts. 64 is EX_USAGE from sysexits.h, what scripts
// expect for a bad invocation; `goal run` (and resume, reopen) report the goal's outcome.
const (
	ExitOK          = 0
	ExitError       = 1
	ExitUsage       = 64
	ExitGoalFailed  = 1
	ExitGoalAborted = 2
)
