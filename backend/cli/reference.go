package cli

import (
	"bytes"
	"fmt"
	"strings"
)

// ReferenceCommands are the commands docs/cli.md shows, each as its words after
// "clusterspace"; `clusterspace WORDS --help` prints each one's help.
var ReferenceCommands = [][]string{
	{},
	{"serve"},
	{"goal"}, {"goal", "run"}, {"goal", "list"}, {"goal", "show"}, {"goal", "resume"}, {"goal", "abort"}, {"goal", "reopen"},
	{"fleet"}, {"fleet", "run"}, {"fleet", "resume"}, {"fleet", "list"}, {"fleet", "show"}, {"fleet", "abort"}, {"fleet", "prune"},
	{"diff"},
	{"land"},
	{"mcp"},
}

// HelpOf is what `clusterspace WORDS --help` prints. The goal and fleet commands are run
// here with --help, as main runs them; the top level and serve are main's own, whose texts
// live in this package (Usage, ServeHelp) and which main prints as they are.
func HelpOf(words []string) (string, error) {
	switch {
	case len(words) == 0:
		return Usage, nil
	case len(words) == 1 && words[0] == "serve":
		return ServeHelp, nil
	case len(words) == 1 && words[0] == "diff":
		return DiffHelp, nil
	case len(words) == 1 && words[0] == "land":
		return LandHelp, nil
	case len(words) == 1 && words[0] == "mcp":
		return McpHelp, nil
	}
	run := map[string]func([]string, *bytes.Buffer, *bytes.Buffer) int{
		"goal":  func(a []string, o, e *bytes.Buffer) int { return Goal(a, o, e) },
		"fleet": func(a []string, o, e *bytes.Buffer) int { return Fleet(a, o, e) },
	}[words[0]]
	if run == nil {
		return "", fmt.Errorf("clusterspace %s: no such command", strings.Join(words, " "))
	}
	var out, errb bytes.Buffer
	code := run(append(append([]string{}, words[1:]...), "--help"), &out, &errb)
	if code != ExitOK || errb.Len() > 0 || out.Len() == 0 {
		return "", fmt.Errorf("clusterspace %s --help exited %d, printed %d bytes of help and said on stderr: %s",
			strings.Join(words, " "), code, out.Len(), errb.String())
	}
	return out.String(), nil
}

// ReferenceHeader opens docs/cli.md; the commands' help follows it.
const ReferenceHeader = `# CLI reference

<!-- Generated from the commands' own --help by ` + "`make docs`" + ` (go test ./docs -run TestCLIReference -update).
     Do not edit: TestCLIReference fails when this file and the commands' help differ.
     The texts live in backend/cli/help.go. -->

Every command of the ` + "`clusterspace`" + ` binary with what its ` + "`--help`" + ` prints (also ` + "`-h`" + `;
` + "`clusterspace help`, `goal help` and `fleet help`" + ` print the overviews). Exit status 64 always means
a mistake in the invocation or the configuration, with a message naming it. What the goals
and fleets do is in the [manual](manual.md); the fleet file's keys in [fleet-file.md](fleet-file.md).

` + "`clusterspace version`" + ` (or ` + "`--version`" + `) prints the version and which doors the binary has
(` + "`clusterspace 0.1.0+abc1234 (desktop, serve, CLI)`" + `). ` + "`clusterspace sandbox-exec`" + ` is internal: a
confined goal's shell starts through it (Landlock and seccomp, then the shell); it is not for
people to run.
`

// Reference renders docs/cli.md: the header, then each command of ReferenceCommands with its
// help exactly as the command prints it.
func Reference() (string, error) {
	var b strings.Builder
	b.WriteString(ReferenceHeader)
	for _, words := range ReferenceCommands {
		help, err := HelpOf(words)
		if err != nil {
			return "", err
		}
		cmd := strings.TrimSpace("clusterspace " + strings.Join(words, " "))
		fmt.Fprintf(&b, "\n## %s\n\n```text\n$ %s --help\n%s```\n", cmd, cmd, help)
	}
	return b.String(), nil
}
