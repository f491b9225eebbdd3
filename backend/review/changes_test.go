package review_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/review"
)

func TestChangesOfABranch(t *testing.T) {
	ctx := context.Background()
	subj := changedRepo(t)
	page, err := review.Changes(ctx, subj, review.ChangesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tip := strings.TrimSpace(run(t, subj.Worktree.Repo, "rev-parse", "work"))
	if page.Ref != "goal-w" || page.Kind != "goal" || page.Branch != "work" || page.Base != subj.Worktree.Base || page.Tip != tip || page.Target != "main" {
		t.Fatalf("page head = %+v", page)
	}
	if page.Uncommitted || page.Note != "" || page.Truncated || page.NextOffset != 0 {
		t.Fatalf("a finished goal's page says uncommitted=%v note=%q truncated=%v next=%d", page.Uncommitted, page.Note, page.Truncated, page.NextOffset)
	}
	got := map[string]review.FileChange{}
	for _, f := range page.Files {
		got[f.Path] = f
	}
	want := map[string]review.FileChange{
		"added.txt":  {Path: "added.txt", Status: "added", Added: 1},
		"bin.dat":    {Path: "bin.dat", Status: "added", Binary: true},
		"gone.txt":   {Path: "gone.txt", Status: "deleted", Removed: 1},
		"keep.txt":   {Path: "keep.txt", Status: "modified", Added: 2, Removed: 1},
		"src/new.go": {Path: "src/new.go", OldPath: "src/old.go", Status: "renamed", Added: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("files = %+v; want %+v", page.Files, want)
	}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("file %s = %+v; want %+v", p, got[p], w)
		}
	}
	// The page's patch is git's own diff of the branch's work, whole.
	full := run(t, subj.Worktree.Repo, "diff", "--no-color", "--find-renames", "--src-prefix=a/", "--dst-prefix=b/", subj.Worktree.Base, "work")
	if page.Patch != full {
		t.Fatalf("patch:\n%s\nwant git's:\n%s", page.Patch, full)
	}
	if strings.Contains(page.Patch, "upstream") {
		t.Fatal("the patch shows the target's later commit")
	}

	// One file: a rename is found by its new path or its old one.
	for _, name := range []string{"src/new.go", "src/old.go"} {
		one, err := review.Changes(ctx, subj, review.ChangesOptions{File: name})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(one.Patch, "diff --git a/src/old.go b/src/new.go\n") || !strings.Contains(one.Patch, "rename from src/old.go\nrename to src/new.go\n") ||
			!strings.Contains(one.Patch, "+// one more\n") || strings.Count(one.Patch, "diff --git") != 1 || len(one.Files) != 5 || one.NextOffset != 0 {
			t.Fatalf("patch of %s:\n%s", name, one.Patch)
		}
	}
	bin, err := review.Changes(ctx, subj, review.ChangesOptions{File: "bin.dat"})
	if err != nil || !strings.Contains(bin.Patch, "Binary files /dev/null and b/bin.dat differ") {
		t.Fatalf("binary patch %q, %v", bin.Patch, err)
	}

	// Pages of two files make up the whole patch, in order.
	var joined strings.Builder
	offsets := []int{}
	for off := 0; ; {
		p, err := review.Changes(ctx, subj, review.ChangesOptions{Offset: off, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if p.Offset != off || strings.Count(p.Patch, "diff --git ") != min(2, 5-off) {
			t.Fatalf("page at %d: offset %d, patch:\n%s", off, p.Offset, p.Patch)
		}
		offsets = append(offsets, off)
		joined.WriteString(p.Patch)
		if p.NextOffset == 0 {
			break
		}
		off = p.NextOffset
	}
	if joined.String() != full || len(offsets) != 3 || offsets[2] != 4 {
		t.Fatalf("pages at %v joined:\n%s\nwant:\n%s", offsets, joined.String(), full)
	}

	// The wire's shape: the UI reads these names.
	b, _ := json.Marshal(page)
	for _, key := range []string{`"ref":`, `"branch":`, `"base":`, `"tip":`, `"files":`, `"patch":`, `"nextOffset":`, `"oldPath":"src/old.go"`, `"binary":true`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("the page's JSON lacks %s: %s", key, b)
		}
	}
}

func TestChangesRefusals(t *testing.T) {
	ctx := context.Background()
	subj := changedRepo(t)
	for _, c := range []struct {
		opts         review.ChangesOptions
		field, words string
	}{
		{review.ChangesOptions{File: "nope.txt"}, "file", `"nope.txt" is not a file of goal-w's change; its files are added.txt, bin.dat`},
		{review.ChangesOptions{Offset: 5}, "offset", "is 5, but the change of goal-w has 5 files"},
		{review.ChangesOptions{Offset: -1}, "offset", "give 0 or more"},
		{review.ChangesOptions{Limit: review.MaxLimit + 1}, "limit", "give 1 to 200 files"},
	} {
		_, err := review.Changes(ctx, subj, c.opts)
		var fe *review.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(err.Error(), c.words) {
			t.Errorf("Changes(%+v) = %v; want a field error on %s saying %q", c.opts, err, c.field, c.words)
		}
	}
	gone := subj
	gone.Worktree.Repo = filepath.Join(t.TempDir(), "missing")
	if _, err := review.Changes(ctx, gone, review.ChangesOptions{}); err == nil || !strings.Contains(err.Error(), "is gone") {
		t.Errorf("a gone repository: %v", err)
	}
	nothing := subj
	nothing.Worktree.Branch = "deleted"
	if _, err := review.Changes(ctx, nothing, review.ChangesOptions{}); err == nil || !strings.Contains(err.Error(), "branch deleted of goal-w is not in") {
		t.Errorf("a deleted branch without a commit: %v", err)
	}
}

// A branch deleted after the work ended is read from the commit the work ended at.
func TestChangesOfAnEndedCommit(t *testing.T) {
	ctx := context.Background()
	subj := changedRepo(t)
	subj.Worktree.Commit = strings.TrimSpace(run(t, subj.Worktree.Repo, "rev-parse", "work"))
	run(t, subj.Worktree.Repo, "worktree", "remove", "--force", subj.Worktree.Dir)
	run(t, subj.Worktree.Repo, "branch", "-D", "work")
	page, err := review.Changes(ctx, subj, review.ChangesOptions{})
	if err != nil || page.Tip != subj.Worktree.Commit || len(page.Files) != 5 {
		t.Fatalf("page %+v, %v", page, err)
	}
	subj.Worktree.Commit = strings.Repeat("ab", 20)
	if _, err := review.Changes(ctx, subj, review.ChangesOptions{}); err == nil || !strings.Contains(err.Error(), "is gone too") {
		t.Fatalf("a commit that is gone: %v", err)
	}
}

// While the work runs the page says it shows committed work only, and whether the worktree
// holds more.
func TestChangesWhileRunning(t *testing.T) {
	ctx := context.Background()
	subj := changedRepo(t)
	subj.Status = "running"
	page, err := review.Changes(ctx, subj, review.ChangesOptions{})
	if err != nil || page.Uncommitted || !strings.Contains(page.Note, "goal-w is running: this is the work committed on work so far") {
		t.Fatalf("clean running worktree: uncommitted=%v note=%q, %v", page.Uncommitted, page.Note, err)
	}
	write(t, subj.Worktree.Dir, "wip.txt", "not yet\n")
	page, err = review.Changes(ctx, subj, review.ChangesOptions{})
	if err != nil || !page.Uncommitted || len(page.Files) != 5 {
		t.Fatalf("dirty running worktree: uncommitted=%v files=%d, %v", page.Uncommitted, len(page.Files), err)
	}
}

// A file whose patch is over MaxFilePatch is cut at a line's end, saying so; the files after
// it on the page are whole.
func TestChangesCutsAHugeFile(t *testing.T) {
	ctx := context.Background()
	subj := changedRepo(t)
	dir := subj.Worktree.Dir
	write(t, dir, "aaa-huge.txt", lines("a huge generated file", 60000))
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-q", "-m", "huge")
	if st, _ := os.Stat(filepath.Join(dir, "aaa-huge.txt")); st.Size() <= review.MaxFilePatch {
		t.Fatalf("the file is %d bytes, not over the cap", st.Size())
	}
	page, err := review.Changes(ctx, subj, review.ChangesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !page.Truncated || len(page.TruncatedFiles) != 1 || page.TruncatedFiles[0] != "aaa-huge.txt" {
		t.Fatalf("truncated=%v files=%v", page.Truncated, page.TruncatedFiles)
	}
	huge, rest, ok := strings.Cut(page.Patch, "\ndiff --git a/added.txt")
	if !ok {
		t.Fatalf("no patch after the huge file's")
	}
	note := "\\ ClusterSpace cut this file's patch at 1048576 bytes of "
	i := strings.LastIndex(huge, "\n"+note)
	if i < 0 || i+1 > review.MaxFilePatch || !strings.HasPrefix(huge, "diff --git a/aaa-huge.txt b/aaa-huge.txt\n") {
		t.Fatalf("the huge file's part (%d bytes) ends:\n%s", len(huge), huge[max(0, len(huge)-300):])
	}
	// It is cut after a whole line.
	last := huge[strings.LastIndex(huge[:i], "\n")+1 : i]
	if strings.TrimRight(last, "x") != "+a huge generated file line " {
		t.Fatalf("the huge file's last line kept is %q", last)
	}
	if !strings.Contains(huge[i:], "git diff "+page.Base+" "+page.Tip+" -- aaa-huge.txt") {
		t.Fatalf("the note does not say how to read it all: %s", huge[i:])
	}
	if strings.Count(rest, "diff --git ") != 4 || !strings.Contains(rest, "+fresh\n") {
		t.Fatalf("the rest of the page:\n%s", rest)
	}
}

// A page stops growing at a few MiB of patch; the next page goes on from the file after.
func TestChangesPageStopsGrowing(t *testing.T) {
	ctx := context.Background()
	subj := changedRepo(t)
	dir := subj.Worktree.Dir
	for _, n := range []string{"1", "2", "3", "4", "5", "6"} {
		write(t, dir, "big-"+n+".txt", lines("file "+n+" of many lines", 26000)) // ~0.9 MiB each
	}
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-q", "-m", "big")
	full := run(t, subj.Worktree.Repo, "diff", "--no-color", "--find-renames", "--src-prefix=a/", "--dst-prefix=b/", subj.Worktree.Base, "work")
	var joined strings.Builder
	pages := 0
	for off := 0; ; pages++ {
		p, err := review.Changes(ctx, subj, review.ChangesOptions{Offset: off, Limit: review.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		if p.Truncated || len(p.Patch) > 5<<20 {
			t.Fatalf("page at %d: truncated=%v, %d bytes", off, p.Truncated, len(p.Patch))
		}
		joined.WriteString(p.Patch)
		if p.NextOffset == 0 {
			break
		}
		if p.NextOffset <= off {
			t.Fatalf("page at %d points back at %d", off, p.NextOffset)
		}
		off = p.NextOffset
	}
	if pages < 1 || joined.String() != full {
		t.Fatalf("%d pages of %d bytes; want %d pages' worth making git's %d bytes", pages+1, joined.Len(), 2, len(full))
	}
}
