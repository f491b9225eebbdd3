package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestCLIUsageAndExitCodes(t *testing.T) {
	cases := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"--version"}, exitOK, "clusterspace " + version, ""},
		{[]string{"version"}, exitOK, "clusterspace " + version, ""},
		{[]string{"help"}, exitOK, "clusterspace serve [options]", ""},
		{[]string{"--help"}, exitOK, "Usage:", ""},
		{[]string{"frobnicate"}, exitUsage, "", `unknown command "frobnicate"`},
		{[]string{"--frobnicate"}, exitUsage, "", "flag provided but not defined: -frobnicate"},
		{[]string{"serve", "--frobnicate"}, exitUsage, "", "flag provided but not defined"},
		{[]string{"serve", "extra"}, exitUsage, "", `unexpected argument "extra"`},
		{[]string{"serve", "--addr", "0.0.0.0:4444"}, exitUsage, "", "--allow-remote"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		code := run(c.args, &out, &errb)
		if code != c.code || !strings.Contains(out.String(), c.stdout) || !strings.Contains(errb.String(), c.stderr) {
			t.Errorf("%v: exit %d (want %d)\nstdout: %s\nstderr: %s", c.args, code, c.code, out.String(), errb.String())
		}
		// Unknown commands and flags print the usage; a refused value names the fix instead.
		if c.code == exitUsage && c.stderr != "--allow-remote" && !strings.Contains(errb.String(), "Usage:") {
			t.Errorf("%v: bad usage does not print the usage", c.args)
		}
	}
}
