package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Work sent back to its agent goes on from what landed meanwhile: the target is merged into
// its worktree, cleanly when it can be; a conflict is left in the worktree, mid-merge with
// its markers, for the agent to resolve, and the note it gets names the files. A worktree
// removed meanwhile is made again from its branch first.
func TestCatchUpMergesTheTargetAndLeavesConflictsForTheAgent(t *testing.T) {
	ctx := context.Background()
	repo, base := repoWith(t, map[string]string{"shared.txt": "base\n"})

	dir := filepath.Join(t.TempDir(), "wt")
	wt := Worktree{Repo: repo, Dir: dir, WorkDir: dir, Branch: "work", Target: "main"}
	if _, err := wt.Add(ctx, base); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "mine.txt"), []byte("mine\n"), 0o644)
	gitT(t, dir, "add", ".")
	gitT(t, dir, "commit", "-qm", "mine")
	// main moves on with a file of its own: a clean merge.
	os.WriteFile(filepath.Join(repo, "theirs.txt"), []byte("theirs\n"), 0o644)
	gitT(t, repo, "add", ".")
	gitT(t, repo, "commit", "-qm", "theirs")

	note, err := wt.CatchUp(ctx)
	if err != nil || !strings.Contains(note, "merged in") {
		t.Fatalf("a clean catch-up: %q, %v", note, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "theirs.txt")); err != nil {
		t.Fatal("the worktree does not have what landed on main")
	}
	if note, err := wt.CatchUp(ctx); err != nil || note != "" {
		t.Fatalf("catching up twice: %q, %v", note, err)
	}

	// Both change shared.txt; the worktree is removed meanwhile.
	os.WriteFile(filepath.Join(dir, "shared.txt"), []byte("the work's\n"), 0o644)
	gitT(t, dir, "commit", "-qam", "work's shared")
	os.WriteFile(filepath.Join(repo, "shared.txt"), []byte("main's\n"), 0o644)
	gitT(t, repo, "commit", "-qam", "main's shared")
	gitT(t, repo, "worktree", "remove", "--force", dir)

	note, err = wt.CatchUp(ctx)
	if err != nil || !strings.Contains(note, "conflicts in shared.txt") {
		t.Fatalf("a conflicting catch-up: %q, %v", note, err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "shared.txt"))
	if !strings.Contains(string(b), "<<<<<<<") || !strings.Contains(string(b), "main's") || !strings.Contains(string(b), "the work's") {
		t.Errorf("shared.txt should hold both sides' markers for the agent:\n%s", b)
	}
	if _, err := Git(ctx, dir, "rev-parse", "--verify", "MERGE_HEAD"); err != nil {
		t.Error("the merge is not left in progress for the agent to conclude")
	}
}

// Tasks that start together make their worktrees together: every one is made, whole, although
// each Add also prunes (a prune running inside another add's first moments used to delete
// that worktree's admin dir: "failed to read .git/worktrees/NAME/commondir").
func TestWorktreesAddedAtOnceAreAllMade(t *testing.T) {
	ctx := context.Background()
	repo, base := repoWith(t, map[string]string{"a.txt": "a\n"})
	parent := t.TempDir()
	for round := range 4 {
		errs := make(chan error, 8)
		for i := range 8 {
			go func() {
				name := fmt.Sprintf("r%d-t%d", round, i)
				wt := Worktree{Repo: repo, Dir: filepath.Join(parent, name), Branch: "task/" + name}
				_, err := wt.Add(ctx, base)
				errs <- err
			}()
		}
		for range 8 {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
	if list := gitT(t, repo, "worktree", "list"); strings.Count(list, "\n")+1 != 1+4*8 {
		t.Fatalf("git lists %d worktrees, want %d:\n%s", strings.Count(list, "\n")+1, 1+4*8, list)
	}
}
