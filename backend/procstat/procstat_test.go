package procstat

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A real child process is read as it is, listed among all, and seen as a zombie once it has
// ended and before it is reaped.
func TestReadsARealChild(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sleep", "30.5")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() }) // Best effort: the test may have reaped it.
	p, ok := Read(pid)
	if !ok || p.Comm != "sleep" || p.Parent() != os.Getpid() || p.Session() != pid || p.Zombie() {
		t.Fatalf("Read(%d) = %+v, %v", pid, p, ok)
	}
	if !strings.Contains(p.Cmdline(), "30.5") {
		t.Errorf("command line %q", p.Cmdline())
	}
	if !slices.ContainsFunc(All(), func(q Proc) bool { return q.PID == pid }) {
		t.Error("All does not list the child")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if p, ok := Read(pid); ok && p.Zombie() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a killed child not yet reaped is not a zombie")
		}
	}
	cmd.Wait() // Best effort: it was killed.
	if _, ok := Read(pid); ok {
		t.Error("a reaped child is still read")
	}
}
