package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/cli"
)

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
