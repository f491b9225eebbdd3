package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// These tests drive the real binary that `make build` produced, as a user would run it.
// CLUSTERSPACE_BIN names it (make test sets it); by default build/bin/clusterspace.
func testBinary(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("CLUSTERSPACE_BIN")
	if bin == "" {
		bin, _ = filepath.Abs(filepath.Join("build", "bin", "clusterspace"))
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no clusterspace binary at %s (%v): run `make build` first, or `make test`", bin, err)
	}
	return bin
}

// artifactDir is where tests keep screenshots for people to look at.
func artifactDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("CLUSTERSPACE_ARTIFACTS")
	if dir == "" {
		dir, _ = filepath.Abs("test-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// lockedBuffer collects a process's output while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var servingLine = regexp.MustCompile(`serving on (http://\S+)`)

// serveProcess is `clusterspace serve` running on a free port.
type serveProcess struct {
	URL    string
	cmd    *exec.Cmd
	stderr *lockedBuffer
	done   chan error
}

// tempFile writes content into a file of that name in a new temp dir, readable by its owner
// only (a password file, say), and returns the file's path.
func tempFile(t testing.TB, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startServe runs `clusterspace serve` on a free loopback port with the given data dir and
// password, and waits for it to print its URL.
func startServe(t testing.TB, dataDir, password string) *serveProcess {
	t.Helper()
	pw := tempFile(t, "password", password+"\n")
	cmd := exec.Command(testBinary(t), "serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir, "--password-file", pw)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &serveProcess{cmd: cmd, stderr: &lockedBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- m[1]
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	go func() { p.done <- cmd.Wait() }()
	select {
	case p.URL = <-urlc:
	case err := <-p.done:
		t.Fatalf("serve exited before listening: %v\n%s", err, p.stderr.String())
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("serve printed no URL in 30 s\n%s", p.stderr.String())
	}
	t.Cleanup(func() { p.Stop(t) })
	return p
}

// Stop sends SIGTERM and waits for a clean exit.
func (p *serveProcess) Stop(t testing.TB) {
	if p.cmd.ProcessState != nil {
		return
	}
	p.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-p.done:
		if err != nil {
			t.Errorf("serve did not exit cleanly: %v\n%s", err, p.stderr.String())
		}
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		t.Errorf("serve ignored SIGTERM for 10 s")
	}
}

// interruptThenKill asks p to end (SIGINT) and kills it when it has not ended within grace;
// either way it returns once exited says the process has ended.
func interruptThenKill[T any](p *os.Process, exited <-chan T, grace time.Duration) {
	p.Signal(os.Interrupt) // Best effort: the process may have ended already.
	select {
	case <-exited:
	case <-time.After(grace):
		p.Kill()
		<-exited
	}
}

func withTimeout(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// waitFor polls cond for up to 15 s, failing the test with what was awaited.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	waitWithin(t, 15*time.Second, what, cond)
}

// waitWithin is waitFor with a time limit of its own, for what takes longer (or must not).
func waitWithin(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting: %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// runBinaryTimeout bounds a command that should end at once: without the lock a second serve
// would serve on, and the test must fail rather than hang.
const runBinaryTimeout = 30 * time.Second

// runBinary runs the built binary to its end and returns its exit status and output.
func runBinary(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runBinaryTimeout)
	defer cancel()
	return runToEnd(t, exec.CommandContext(ctx, testBinary(t), args...))
}

// runToEnd runs cmd and returns its exit status and output; only a failure to run it at all
// fails the test.
func runToEnd(t *testing.T, cmd *exec.Cmd) (int, string, string) {
	t.Helper()
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}
