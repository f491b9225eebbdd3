package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/cli"
	"github.com/clusterspace/clusterspace/backend/mcp/mcptest"
	"github.com/clusterspace/clusterspace/backend/terminal/terminaltest"
)

func TestCLIUsageAndExitCodes(t *testing.T) {
	cases := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"--version"}, cli.ExitOK, "clusterspace " + version, ""},
		{[]string{"version"}, cli.ExitOK, "clusterspace " + version, ""},
		{[]string{"help"}, cli.ExitOK, "clusterspace serve [options]", ""},
		{[]string{"--help"}, cli.ExitOK, "Usage:", ""},
		{[]string{"frobnicate"}, cli.ExitUsage, "", `unknown command "frobnicate"`},
		{[]string{"--frobnicate"}, cli.ExitUsage, "", "flag provided but not defined: -frobnicate"},
		{[]string{"serve", "--frobnicate"}, cli.ExitUsage, "", "flag provided but not defined"},
		{[]string{"serve", "extra"}, cli.ExitUsage, "", `unexpected argument "extra"`},
		{[]string{"serve", "--addr", "0.0.0.0:4444"}, cli.ExitUsage, "", "--allow-remote"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		code := run(c.args, &out, &errb)
		if code != c.code || !strings.Contains(out.String(), c.stdout) || !strings.Contains(errb.String(), c.stderr) {
			t.Errorf("%v: exit %d (want %d)\nstdout: %s\nstderr: %s", c.args, code, c.code, out.String(), errb.String())
		}
		// Unknown commands and flags print the usage; a refused value names the fix instead.
		if c.code == cli.ExitUsage && c.stderr != "--allow-remote" && !strings.Contains(errb.String(), "Usage:") {
			t.Errorf("%v: bad usage does not print the usage", c.args)
		}
	}
}

// The binary's dispatch prints, for every command of docs/cli.md, exactly the help the
// reference shows, on stdout with exit status 0: the reference is generated from
// cli.HelpOf, and this holds main to it (the top level and serve are main's own).
func TestEveryCommandPrintsTheHelpOfTheReference(t *testing.T) {
	for _, words := range cli.ReferenceCommands {
		want, err := cli.HelpOf(words)
		if err != nil {
			t.Fatal(err)
		}
		for _, flag := range []string{"--help", "-h"} {
			var out, errb bytes.Buffer
			args := append(append([]string{}, words...), flag)
			if code := run(args, &out, &errb); code != cli.ExitOK || out.String() != want || errb.Len() != 0 {
				t.Errorf("clusterspace %s: exit %d, stderr %q, stdout:\n%s\nwant exit 0 and:\n%s", strings.Join(args, " "), code, errb.String(), out.String(), want)
			}
		}
	}
}

// TestMain gives every shell these tests start (in-process, or in the binary they run, which
// inherits the environment) a clean HOME.
func TestMain(m *testing.M) {
	mcptest.ServeIfAsked() // the MCP server e2e_extensions_test.go configures is this test binary
	cleanup := terminaltest.IsolateHome()
	code := m.Run()
	cleanup()
	os.Exit(code)
}
