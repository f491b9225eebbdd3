package procfd_test

import (
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/procfd"
)

// inheritablePipe opens a pipe the way the Wails asset server does: without close-on-exec.
func inheritablePipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var p [2]int
	if err := syscall.Pipe2(p[:], 0); err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(p[0]), "r"), os.NewFile(uintptr(p[1]), "w")
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// readsToEOF reports whether everything written to w reaches r's reader, EOF included,
// within a second of w being closed: what the webview needs to finish loading a script.
func readsToEOF(r, w *os.File) bool {
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(r)
		done <- err
	}()
	w.Write([]byte("console.log('xterm')"))
	w.Close()
	select {
	case err := <-done:
		return err == nil
	case <-time.After(time.Second):
		return false
	}
}

func startSleeper(t *testing.T) {
	t.Helper()
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
}

// A child started while a pipe's answer is being written must not hold the answer open: after
// SealInherited the reader sees the end as soon as the writer closes, child or no child.
func TestSealedPipeEndsWhileAChildLives(t *testing.T) {
	r, w := inheritablePipe(t)
	if n := procfd.SealInherited(); n < 2 {
		t.Fatalf("sealed %d descriptors; want at least the pipe's two", n)
	}
	startSleeper(t)
	if !readsToEOF(r, w) {
		t.Fatal("the reader saw no end of the answer while the child lived")
	}
}

// Without the seal the same child keeps the write end and the reader waits: what left the
// desktop window's terminals blank. This shows the test above can fail.
func TestUnsealedPipeIsHeldOpenByAChild(t *testing.T) {
	r, w := inheritablePipe(t)
	startSleeper(t)
	if readsToEOF(r, w) {
		t.Fatal("the reader saw the end though a child holds the write end; the sealed test proves nothing")
	}
}
