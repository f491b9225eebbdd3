// Package procstat reads the machine's processes from /proc (Linux): each one's id, command
// name and the fields of its stat line, for the code that finds a session's members and the
// tests that look for processes left behind.
package procstat

import (
	"os"
	"strconv"
	"strings"
)

// Proc is one process as /proc/PID/stat shows it.
type Proc struct {
	PID  int
	Comm string // the command name, which may hold spaces and parentheses
	// Fields are the stat line's fields after the name: state, ppid, pgrp, session, …
	Fields []string
}

// Read reads one process; false when it is gone (or /proc is not there).
func Read(pid int) (Proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, false
	}
	// The name runs from the first '(' to the last ')': fields are counted after it.
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return Proc{}, false
	}
	return Proc{PID: pid, Comm: s[open+1 : end], Fields: strings.Fields(s[end+1:])}, true
}

// All lists the processes /proc shows; one that ends while it reads is passed over.
func All() []Proc {
	entries, _ := os.ReadDir("/proc") // Best effort: no /proc lists none.
	var out []Proc
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			if p, ok := Read(pid); ok {
				out = append(out, p)
			}
		}
	}
	return out
}

// field is the stat field at i after the name, "" when the line is shorter.
func (p Proc) field(i int) string {
	if i < len(p.Fields) {
		return p.Fields[i]
	}
	return ""
}

// Zombie says whether the process has ended and only waits to be reaped.
func (p Proc) Zombie() bool { return p.field(0) == "Z" }

// Parent is the id of the process's parent; 0 when unknown.
func (p Proc) Parent() int {
	n, _ := strconv.Atoi(p.field(1))
	return n
}

// Session is the id of the process's session; 0 when unknown.
func (p Proc) Session() int {
	n, _ := strconv.Atoi(p.field(3))
	return n
}

// Cmdline is the process's command line, its arguments separated by NUL bytes; "" when it is
// gone.
func (p Proc) Cmdline() string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/cmdline") // Best effort: gone is empty.
	return string(b)
}
