package cli

import (
	"bytes"
	"strings"
	"testing"
)

// Every command of the reference answers --help and -h with its own help on stdout and exit
// status 0 (asking for help is no mistake), and every command with a help of its own is in
// the reference.
func TestEveryCommandAnswersHelp(t *testing.T) {
	listed := map[string]bool{}
	for _, words := range ReferenceCommands {
		listed[strings.Join(words, " ")] = true
		help, err := HelpOf(words)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(help, "Usage") {
			t.Errorf("clusterspace %s --help prints no usage line:\n%s", strings.Join(words, " "), help)
		}
		if len(words) == 2 && !strings.Contains(help, "clusterspace "+strings.Join(words, " ")) {
			t.Errorf("clusterspace %s --help does not show how the command is called:\n%s", strings.Join(words, " "), help)
		}
		if len(words) == 2 {
			var out, errb bytes.Buffer
			run := Goal
			if words[0] == "fleet" {
				run = Fleet
			}
			if code := run([]string{words[1], "-h"}, &out, &errb); code != ExitOK || out.String() != help {
				t.Errorf("clusterspace %s -h: exit %d, printed %q (stderr %q); want --help's text", strings.Join(words, " "), code, out.String(), errb.String())
			}
		}
	}
	for name := range goalHelp {
		if !listed["goal "+name] {
			t.Errorf("goal %s has a help of its own but is not in ReferenceCommands", name)
		}
	}
	for name := range fleetHelp {
		if !listed["fleet "+name] {
			t.Errorf("fleet %s has a help of its own but is not in ReferenceCommands", name)
		}
	}
}

// A bad flag is still a mistake: exit 64 with the usage on stderr, nothing on stdout.
func TestBadFlagIsStillAMistake(t *testing.T) {
	for _, words := range ReferenceCommands {
		if len(words) != 2 {
			continue
		}
		var out, errb bytes.Buffer
		run := Goal
		if words[0] == "fleet" {
			run = Fleet
		}
		code := run([]string{words[1], "--frobnicate"}, &out, &errb)
		if code != ExitUsage || out.Len() != 0 || !strings.Contains(errb.String(), "frobnicate") {
			t.Errorf("clusterspace %s --frobnicate: exit %d, stdout %q, stderr %q", strings.Join(words, " "), code, out.String(), errb.String())
		}
	}
}
