package worktree

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/clusterspace/clusterspace/backend/procfd"
)

// Files in a worktree's own git dir (.git/worktrees/NAME) about its setup.
const (
	// setupFilesName lists, NUL-separated, the untracked files and dirs present right after
	// the setup ran (node_modules…): the fleet leaves them out of the task's commit.
	setupFilesName = "clusterspace-setup-files"
	// setupLockName is held (flock) by a running setup and every process it started, and
	// holds its process group: a setup left running by an app that was killed is found and
	// ended before another starts in the same worktree.
	setupLockName = "clusterspace-setup.lock"
	// oldSetupGrace bounds the wait for an old setup to end once killed.
	oldSetupGrace = 10 * time.Second
)

// worktreeGitDir is the worktree's own git dir.
func worktreeGitDir(ctx context.Context, dir string) (string, error) {
	return Git(ctx, dir, "rev-parse", "--path-format=absolute", "--git-dir")
}

// RunSetup runs the fleet's setup command in a new worktree, in its own process group, which
// is killed whole when the task is aborted or the app quits; a setup still running there
// from an earlier run of the app is ended first. What the setup leaves untracked is recorded
// so the task's commit leaves it out. A failure carries the end of its output.
func RunSetup(ctx context.Context, wt Worktree, command string) error {
	gitDir, err := worktreeGitDir(ctx, wt.Dir)
	if err != nil {
		return err
	}
	lock, err := takeSetupLock(ctx, filepath.Join(gitDir, setupLockName))
	if err != nil {
		return err
	}
	defer lock.Close() // releases the lock unless a process the setup left behind holds it

	ctx, cancel := context.WithTimeout(ctx, MaxSetup)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir = wt.WorkDir
	cmd.Env = append(os.Environ(), wt.Env()...) // its ports and scratch dirs, as the task's shell has them
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.ExtraFiles = []*os.File{lock} // the setup and its children hold the lock while they live
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	procfd.SealInherited() // a setup may leave a daemon behind: it must not hold the window's pipes open
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("setup %q could not start: %v", command, err)
	}
	// Best effort: without the group on record a later run only waits for the lock.
	lock.Truncate(0)
	lock.WriteAt([]byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0)
	err = cmd.Wait()
	if ctx.Err() != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // Best effort: what it started goes with it.
	}
	if err == nil {
		return recordSetupFiles(ctx, wt.Dir, gitDir)
	}
	text := strings.TrimSpace(out.String())
	if len(text) > maxSetupOutput {
		text = "…" + text[len(text)-maxSetupOutput:]
	}
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("setup %q did not finish within %s; its output:\n%s", command, MaxSetup, text)
	}
	return fmt.Errorf("setup %q failed (%v); its output:\n%s", command, err, text)
}

// takeSetupLock locks a worktree's setup lock file. While it is held, a setup from an
// earlier run of the app (killed, so it could not end it) still runs there: its process
// group, written in the file, is killed, and the lock awaited.
func takeSetupLock(ctx context.Context, path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("setup: cannot open its lock file: %v", err)
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		return f, nil
	}
	if b, err := os.ReadFile(path); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 1 {
			syscall.Kill(-pid, syscall.SIGKILL) // Best effort: the lock below tells whether it ended.
		}
	}
	deadline := time.Now().Add(oldSetupGrace)
	for {
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			return f, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			f.Close()
			return nil, fmt.Errorf("a setup from an earlier run is still running in this worktree (its lock %s is held) and did not end when killed; end it (fuser %s shows it) and retry the task", path, path)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// recordSetupFiles writes down what the setup left untracked in the worktree.
func recordSetupFiles(ctx context.Context, dir, gitDir string) error {
	list, err := Git(ctx, dir, "ls-files", "-z", "--others", "--exclude-standard", "--directory")
	if err != nil {
		return fmt.Errorf("setup: cannot list the files it wrote: %v", err)
	}
	if err := os.WriteFile(filepath.Join(gitDir, setupFilesName), []byte(list), 0o644); err != nil {
		return fmt.Errorf("setup: cannot record the files it wrote: %v", err)
	}
	return nil
}

// SetupExcludes are pathspecs leaving out of `git add` what the worktree's setup wrote and
// the files copied in from the person's checkout (`copy:`).
func SetupExcludes(ctx context.Context, wt *Worktree) []string {
	gitDir, err := worktreeGitDir(ctx, wt.Dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, name := range []string{setupFilesName, copiedFilesName} {
		for _, p := range readList(filepath.Join(gitDir, name)) {
			out = append(out, ":(exclude,literal,top)"+p)
		}
	}
	return out
}
