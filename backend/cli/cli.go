// Package cli holds the command line's subcommands (`goal …`, and `fleet …` to come); main
// only dispatches to them.
package cli

import (
	"errors"

	"github.com/clusterspace/clusterspace/backend/config"
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
