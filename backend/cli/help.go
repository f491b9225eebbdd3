package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// The help of every command lives here, in one place, so that docs/cli.md can be generated
// from it (reference.go) and a test can tell when the two differ. main prints Usage and
// ServeHelp; the goal and fleet commands print theirs for --help (or -h).

// Usage is what `clusterspace --help` prints.
const Usage = `ClusterSpace — terminal and browser panes with an AI agent.

Usage:
  clusterspace [--data-dir DIR] [--config-dir DIR]
                                       open the desktop window
  clusterspace serve [options]         serve the same UI over HTTP for any browser
  clusterspace goal run|list|show|resume|abort|reopen …
                                       run and manage goals from the terminal (goal help)
  clusterspace fleet run FILE|list|show|abort|resume|prune …
                                       run many goals as one job, with dependencies (fleet help)
  clusterspace diff REF [--stat]       the change a fleet task or a goal made on its branch
  clusterspace land FLEET|FLEET/TASK|GOAL
                                       land verified work on its target branch, checked there first
  clusterspace mcp [options]           serve the workspace's tools to any agent over MCP (stdio)
  clusterspace version | --version     print the version
  clusterspace help | --help           print this help
  Every command prints its own help with --help (clusterspace goal run --help).

serve options:
` + serveOptions

// serveOptions are serve's options, in the top-level help and serve's own.
const serveOptions = `  --addr HOST:PORT        where to listen (default 127.0.0.1:4444; port 0 picks a free one)
  --data-dir DIR          data directory (default $CLUSTERSPACE_DATA_DIR, else
                          $XDG_DATA_HOME/clusterspace, else ~/.local/share/clusterspace)
  --config-dir DIR        personas, skills, templates, tool plugins, mcp.json (default
                          $CLUSTERSPACE_CONFIG_DIR, else $XDG_CONFIG_HOME/clusterspace,
                          else ~/.config/clusterspace)
  --password-file FILE    set the login password from the first line of FILE
  --allow-remote          allow listening on a non-loopback address (traffic is plain HTTP:
                          put it behind TLS)
  --allowed-origin URL    another browser origin allowed to connect (repeatable)
`

// ServeHelp is what `clusterspace serve --help` prints.
const ServeHelp = `Usage: clusterspace serve [options]
  Serves the desktop window's UI over HTTP and a WebSocket, for any browser, behind a login.
  On its first start it prints a generated password once and keeps only its hash.

Options:
` + serveOptions + `Only one process at a time owns a data dir; a second one is refused with exit status 1.
Exit status: 0 stopped (Ctrl+C or SIGTERM), 1 runtime error (or the data dir is in use),
64 bad usage or configuration.
`

// goalRunLines are goal run's synopsis, shared by `goal --help` and `goal run --help`.
const goalRunLines = `  clusterspace goal run --goal TEXT <criterion> [options]
    criterion, exactly one:
      --check-shell CMD [--exit-code N] [--check-timeout DUR]
      --check-question TEXT [--threshold yes|high_confidence]
      --check-json EXPR [--json-source claim|file:PATH|command:CMD]
      --check-manual
      --check-visual TEXT [--visual-pane ID]   (a vision model looks at a browser pane the run opens)
    --provider NAME | --base-url URL --model NAME [--vision-model NAME] [--api-kind openai|anthropic] [--api-key-env VAR]
    --critic-provider NAME | --critic-base-url URL --critic-model NAME [--critic-api-kind …] [--critic-api-key-env VAR]
    --critic-every N   --finalize-critic   --bounce-budget N
    --risk read_only|write_local|network_get|network_write|spends_money   (default write_local)
    --sandbox DIR   --allow-tools a,b   --deny-tools a,b   --step-protocol
    --worktree   (work in a git worktree and branch of its own, goal/ID, made from the HEAD of the
                  sandbox's repository; the work is committed there when the goal ends)
    --allow-local-port N   (a port on this machine the sandboxed goal may reach through its proxy; repeatable)
    --approve ask|allow|deny   --wall-clock DUR   --max-steps N   --budget-usd X   --budget-tokens N
    --context-window TOKENS   (the model's window when the provider's setting is empty and the model is not a known one)
    --persona ID   (work as a persona of the config dir's personas/, or a built-in)
    --skill ID     (attach a skill up front; repeatable)
    --data-dir DIR   --config-dir DIR   --json
`

const goalExit = "Exit status: 0 completed, 1 failed (or the data dir is in use), 2 aborted, 64 bad usage or configuration.\n"

// goalUsage is what `clusterspace goal --help` prints: every goal command in short.
const goalUsage = "Usage:\n" + goalRunLines + `  clusterspace goal list | show ID | resume ID | abort ID | reopen ID --feedback TEXT
    (resume and reopen take --base-url/--model/--api-kind/--api-key-env again if the goal used them)
  Only one process at a time owns a data dir (the desktop, serve, or goal run|resume|abort|reopen);
  another one is refused with exit status 1. goal list and goal show only read: they work beside
  the owner and leave its goals alone.
  Each command prints its own help with --help (clusterspace goal run --help).
` + goalExit

// goalHelp is each goal command's own --help.
var goalHelp = map[string]string{
	"run": "Usage:\n" + goalRunLines + `  Drives a model in a terminal pane (term-1) until the criterion verifies; the model cannot stop
  on its own. With --sandbox the pane's shell is confined by the kernel to DIR.
  Defaults: --critic-every 5, --bounce-budget 5, --wall-clock 1h, --max-steps 300, the budgets
  of the app's goal runner settings (none unless set there); --approve is ask on a terminal
  and deny otherwise. API keys come from --api-key-env VAR,
  never from the command line. Without --json one line per step, verdict and verification;
  with --json the same events as JSON Lines. Ctrl+C aborts the goal.
` + goalExit,
	"list": `Usage: clusterspace goal list [--data-dir DIR] [--json]
  Lists the data dir's goals: id, status, steps and the goal's text (--json: one JSON object a
  line). It only reads, so it works beside the process that owns the data dir; with no owner it
  names a goal stored as running that no process runs any more.
Exit status: 0 listed, 1 the data dir cannot be read, 64 bad usage.
`,
	"show": `Usage: clusterspace goal show ID [--data-dir DIR] [--json]
  Prints a goal: status, steps, tokens, cost, its text, then its story event by event (--json:
  the whole goal as JSON). It only reads, like goal list.
Exit status: 0 shown, 1 the data dir cannot be read, 64 bad usage or no goal ID.
`,
	"resume": `Usage: clusterspace goal resume ID [--base-url URL --model NAME [--vision-model NAME]
                            [--api-kind openai|anthropic] [--api-key-env VAR]] [--data-dir DIR] [--json]
  Goes on with an interrupted or paused goal from its stored conversation, then follows it as
  goal run does. A goal started with --base-url/--model stored no provider: give them again.
` + goalExit,
	"abort": `Usage: clusterspace goal abort ID [--data-dir DIR]
  Aborts a goal stored in the data dir. To abort a goal another process runs, use that process
  (its window, or Ctrl+C on its goal run): the data dir has one owner at a time.
Exit status: 0 aborted, 1 runtime error (or the data dir is in use), 64 bad usage or no goal ID.
`,
	"reopen": `Usage: clusterspace goal reopen ID --feedback TEXT [--base-url URL --model NAME …] [--data-dir DIR] [--json]
  Re-opens an ended goal with feedback saying what is still wrong; the model reads it on its
  next turn and the criterion must verify again. Follows the goal as goal run does.
` + goalExit,
}

// fleetExit is the exit statuses of fleet run and fleet resume.
const fleetExit = `Exit status: 0 every task completed, 1 a task failed or is blocked (or the data dir is in use),
2 the fleet was aborted, 64 a bad file or usage (the message names the task and the field).
`

// fleetUsage is what `clusterspace fleet --help` prints: every fleet command in short.
const fleetUsage = `Usage:
  clusterspace fleet run FILE [--concurrency N] [options]
    FILE is a fleet in YAML: name, concurrency, tasks (id, goal, pane, role, priority, depends_on,
    and a criterion: check_shell, exit_code, check_timeout, check_question, threshold, check_json,
    json_source, check_manual, check_visual; default a strict judge question on the evidence),
    and isolation: worktree (fleet-wide or per task) with setup: CMD run in each new worktree
    and copy: [.env, …] (your untracked files copied into it); each such task gets its own PORT.
    options are goal run's: --provider | --base-url URL --model NAME …, --critic-…, --critic-every N,
    --risk LEVEL, --sandbox DIR, --allow-tools, --deny-tools, --approve ask|allow|deny, --wall-clock,
    --max-steps, --budget-usd, --budget-tokens, --data-dir DIR, --config-dir DIR, --json (JSON Lines)
  clusterspace fleet list | show ID | abort ID | resume ID | prune ID
    (prune removes the tasks' git worktrees, keeping their branches; refused while a task runs)
    (resume takes --base-url/--model/--api-kind/--api-key-env and --approve again if the run used them)
  Each command prints its own help with --help (clusterspace fleet run --help).
` + fleetExit

// fleetHelp is each fleet command's own --help.
var fleetHelp = map[string]string{
	"run": `Usage: clusterspace fleet run FILE [--concurrency N] [options]
  Runs a fleet file: its tasks as goals, each in its own terminal pane, a task only after the
  tasks it depends on verified complete; at most --concurrency at once (1-20; default the
  file's concurrency, else 3). The file is checked before anything runs (docs/fleet-file.md).
  options are goal run's, given to every task's goal:
    --provider NAME | --base-url URL --model NAME [--vision-model NAME] [--api-kind openai|anthropic] [--api-key-env VAR]
    --critic-provider NAME | --critic-base-url URL --critic-model NAME [--critic-api-kind …] [--critic-api-key-env VAR]
    --critic-every N   --finalize-critic   --bounce-budget N
    --risk LEVEL   --sandbox DIR   --allow-local-port N   --allow-tools a,b   --deny-tools a,b   --step-protocol
    --approve ask|allow|deny   --wall-clock DUR   --max-steps N   --budget-usd X   --budget-tokens N
    --context-window TOKENS   --data-dir DIR   --config-dir DIR
    --json   (JSON Lines: one object per task change, then {"type":"ended",…})
  Progress is one line per task change and each task's goal steps, prefixed with the task id.
  Ctrl+C aborts the fleet.
` + fleetExit,
	"resume": `Usage: clusterspace fleet resume ID [options]
  Goes on with an interrupted fleet (cut off by a quit, a crash or a kill) without redoing the
  tasks that verified, then follows it as fleet run does. It takes goal run's options, as fleet
  run does: give the model flags (--base-url/--model/--api-kind/--api-key-env) and --approve
  again if the run used them.
` + fleetExit,
	"list": `Usage: clusterspace fleet list [--data-dir DIR] [--json]
  Lists the data dir's fleets: id, status, tasks completed and the name (--json: one JSON
  object a line). It only reads, so it works beside the process that owns the data dir.
Exit status: 0 listed, 1 the data dir cannot be read, 64 bad usage.
`,
	"show": `Usage: clusterspace fleet show ID [--data-dir DIR] [--json]
  Prints a fleet and each task: status, pane, goal, dependencies, a blocked task's reason, an
  isolated task's branch and diff stat, and its report (--json: the whole fleet as JSON). It
  only reads, like fleet list.
Exit status: 0 shown, 1 the data dir cannot be read, 64 bad usage or no such fleet.
`,
	"abort": `Usage: clusterspace fleet abort ID [--data-dir DIR]
  Aborts a fleet stored in the data dir: its running tasks' goals are aborted, the waiting
  tasks never start.
Exit status: 0 aborted, 1 runtime error (or the data dir is in use), 64 bad usage or no such fleet.
`,
	"prune": `Usage: clusterspace fleet prune ID [--data-dir DIR]
  Removes the git worktrees of an isolated fleet's tasks and keeps their branches; refused
  while a task of the fleet runs.
Exit status: 0 pruned, 1 runtime error (or the data dir is in use), 64 bad usage or no such fleet.
`,
}

// helpAsked reports whether err is the flag package's answer to -h, -help or --help, and if
// so prints help to stdout: asking for help is no mistake, so the caller exits 0.
func helpAsked(err error, help string, stdout io.Writer) bool {
	if !errors.Is(err, flag.ErrHelp) {
		return false
	}
	fmt.Fprint(stdout, help)
	return true
}

// newFlagSet is a command's flag set: it reports its errors (helpAsked and the command's own
// usage message say them), never prints them or exits.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parseWithArg parses flags that may come before or after one positional argument.
func parseWithArg(fs *flag.FlagSet, args []string) (string, error) {
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	if fs.NArg() == 0 {
		return "", nil
	}
	arg, rest := fs.Arg(0), fs.Args()[1:]
	if err := fs.Parse(rest); err != nil {
		return "", err
	}
	if fs.NArg() > 0 {
		return "", fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return arg, nil
}
