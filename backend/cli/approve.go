package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/clusterspace/clusterspace/backend/agent"
)

// How the command line answers the approvals a goal's policy asks for (--approve): `goal
// run` and `fleet run` ask on stdin, `mcp` on /dev/tty (its stdin and stdout carry the MCP
// stream); both ask the same question the same way.

// approver answers approvals per --approve: allow or deny them all, or ask on the terminal.
func approver(mode string, out io.Writer) (agent.AutoAnswer, error) {
	switch mode {
	case "allow":
		return func(agent.Approval) (agent.ApprovalStatus, string, bool) { return agent.ApprovalAllowOnce, "", true }, nil
	case "deny":
		return func(agent.Approval) (agent.ApprovalStatus, string, bool) {
			return agent.ApprovalDeny, "approvals are denied in this run (--approve deny)", true
		}, nil
	case "ask":
		return askOnTerminal(os.Stdin, out, "APPROVAL NEEDED", "Allow? [y]es once / [g]oal / [N]o", true), nil
	default:
		return nil, usagef("--approve %q: use ask, allow or deny", mode)
	}
}

// ttyApprover answers approvals per --approve: deny them all, or ask the person on the
// terminal, since stdin and stdout carry the MCP stream.
func ttyApprover(mode string) (agent.AutoAnswer, error) {
	switch mode {
	case "deny":
		return func(agent.Approval) (agent.ApprovalStatus, string, bool) {
			return agent.ApprovalDeny, "no one can approve calls in this session (clusterspace mcp --approve deny)", true
		}, nil
	case "ask":
		tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
		if err != nil {
			return nil, fmt.Errorf("--approve ask: no terminal to ask on (%v): use --approve deny, or run the app and attach to it", err)
		}
		return askOnTerminal(tty, tty, "MCP APPROVAL NEEDED", "Allow once? [y]es / [N]o", false), nil
	default:
		return nil, fmt.Errorf("--approve %q: use deny or ask", mode)
	}
}

// askOnTerminal answers each approval with the person's answer to a question written to out
// and read, a line, from in: y or yes allows the call once, g or goal (when the goal may be
// allowed, goalScope) allows the tool for the rest of the goal, anything else denies it, with
// what follows "n" or "no" as the reason the agent reads.
func askOnTerminal(in io.Reader, out io.Writer, title, choices string, goalScope bool) agent.AutoAnswer {
	lines := bufio.NewReader(in)
	return func(a agent.Approval) (agent.ApprovalStatus, string, bool) {
		fmt.Fprintf(out, "\n%s  %s (%s)\n  why: %s\n  args: %s\n%s (optionally: n <reason>): ",
			title, a.Tool, a.Risk, a.Reason, string(a.Args), choices)
		line, _ := lines.ReadString('\n')
		switch line = strings.TrimSpace(line); {
		case line == "y" || line == "yes":
			return agent.ApprovalAllowOnce, "", true
		case goalScope && (line == "g" || line == "goal"):
			return agent.ApprovalAllowScope, "", true
		}
		return agent.ApprovalDeny, strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(line, "no"), "n")), true
	}
}
