package terminal

import (
	"syscall"

	"github.com/clusterspace/clusterspace/backend/procstat"
)

// sessionMembers lists the processes of the session the shell leads (pid is the session id:
// pty.Start makes the shell a session leader). Its background jobs are in process groups of
// their own, and `nohup` ones ignore SIGHUP, so signalling the shell's group alone leaves them
// running where no pane can reach them.
func sessionMembers(sid int) []int {
	var pids []int
	for _, p := range procstat.All() {
		if p.PID != sid && p.Session() == sid {
			pids = append(pids, p.PID)
		}
	}
	return pids
}

// signalSession sends sig to every process of the session but its leader.
func signalSession(sid int, sig syscall.Signal) {
	for _, pid := range sessionMembers(sid) {
		_ = syscall.Kill(pid, sig) // Best effort: it may have exited meanwhile.
	}
}
