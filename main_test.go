package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/cli"
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
