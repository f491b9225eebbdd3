package terminal

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// sessionMembers lists the processes of the session the shell leads (pid is the session id:
// pty.Start makes the shell a session leader). Its background jobs are in process groups of
// their own, and `nohup` ones ignore SIGHUP, so signalling the shell's group alone leaves them
// running where no pane can reach them.
func sessionMembers(sid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == sid {
			continue
		}
		if s, ok := sessionOf(pid); ok && s == sid {
			pids = append(pids, pid)
		}
	}
	return pids
}

// sessionOf reads a process's session id from /proc/PID/stat (the 6th field; the 2nd, the
// command, may hold spaces and parentheses, so fields are counted after its last ')').
func sessionOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:]) // state ppid pgrp session …
	if len(f) < 4 {
		return 0, false
	}
	sid, err := strconv.Atoi(f[3])
	return sid, err == nil
}

// signalSession sends sig to every process of the session but its leader.
func signalSession(sid int, sig syscall.Signal) {
	for _, pid := range sessionMembers(sid) {
		_ = syscall.Kill(pid, sig) // Best effort: it may have exited meanwhile.
	}
}
