package goal_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/tools"
	"github.com/clusterspace/clusterspace/backend/tools/toolstest"
	"github.com/clusterspace/clusterspace/backend/worktree"
)

// worktreeRegistry is the goal tools, sleep, and make_file, which writes where the goal
// works: a relative path means the call's dir, as every real tool's does.
func worktreeRegistry(sandbox string) *tools.Registry {
	reg := tools.NewRegistry()
	reg.Register(tools.GoalTools()...)
	reg.Register(toolstest.Basic(sandbox)...)
	reg.Register(tools.New("make_file", "Write a file.", tools.WriteLocal, func(ctx context.Context, c tools.Call, p struct {
		Path string `json:"path"`
	}) (tools.Result, error) {
		path, err := c.Path(p.Path)
		if err != nil {
			return tools.Errorf("%v", err), nil
		}
		if err := os.WriteFile(path, []byte("made\n"), 0o644); err != nil {
			return tools.Errorf("%v", err), nil
		}
		return tools.Result{Text: "wrote " + path}, nil
	}))
	return reg
}

func makeFile(path string) llmtest.Reply { return call("make_file", map[string]string{"path": path}) }

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := worktree.Git(context.Background(), dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// personsCheckout makes dir a repository on branch main with one commit, and then leaves an
// uncommitted change in it (an edited tracked file, a new untracked one), as a person's
// checkout mid-work is.
func personsCheckout(t *testing.T, dir string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("these tests need git on PATH")
	}
	git(t, dir, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(dir, "README"), []byte("hello\n"), 0o644)
	git(t, dir, "add", "README")
	git(t, dir, "commit", "-q", "-m", "first")
	os.WriteFile(filepath.Join(dir, "README"), []byte("hello, half-edited\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine\n"), 0o644)
}

// files is every file of dir outside its .git, with its bytes.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, path)
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameFiles(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: files %v, want %v", what, got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s: %s is %q, want %q", what, k, got[k], v)
		}
	}
}

// A goal asking for a worktree works in its own worktree and branch: its check passes there
// while the person's checkout never sees its file and is left byte for byte as it was; when
// it ends its work is committed on its branch, and a re-opened goal works and commits there
// again.
func TestGoalWorksInItsOwnWorktree(t *testing.T) {
	r := buildRig(t, llmtest.Script{Replies: []llmtest.Reply{
		makeFile("made.txt"), claim("made.txt is there"),
		makeFile("more.txt"), claim("more.txt too"),
	}}, worktreeRegistry, nil)
	personsCheckout(t, r.sandbox)
	head := git(t, r.sandbox, "rev-parse", "HEAD")
	before := files(t, r.sandbox)

	spec := r.spec(func(s *goal.Spec) {
		s.Criterion.Command = "test -f made.txt"
		s.Worktree = &worktree.Worktree{}
	})
	started := r.mustStart(spec)
	wt := started.Spec.Worktree
	common := filepath.Join(r.sandbox, ".git")
	switch {
	case wt == nil:
		t.Fatal("the goal has no worktree")
	case wt.Branch != "goal/"+started.ID || wt.Dir != filepath.Join(common, worktree.DirName, started.ID):
		t.Fatalf("worktree %+v: want branch goal/%s in %s", wt, started.ID, filepath.Join(common, worktree.DirName, started.ID))
	case wt.Repo != r.sandbox || wt.Base != head || wt.Target != "main" || wt.WorkDir != wt.Dir:
		t.Fatalf("worktree %+v: want repo %s, base %s, target main, work dir its dir", wt, r.sandbox, head)
	case started.Spec.Policy.SandboxDir != wt.Dir || started.Spec.Settings.WorkDir != wt.Dir:
		t.Fatalf("the goal works in sandbox %s, dir %s; want its worktree %s", started.Spec.Policy.SandboxDir, started.Spec.Settings.WorkDir, wt.Dir)
	}

	g, _ := r.wait(started.ID)
	if g.Status != goal.StatusCompleted || g.State.Bounces != 0 {
		t.Fatalf("goal %s after %d failed checks: %s", g.Status, g.State.Bounces, g.Report)
	}
	wt = g.Spec.Worktree
	if _, err := os.Stat(filepath.Join(wt.Dir, "made.txt")); err != nil {
		t.Fatalf("made.txt is not in the worktree: %v", err)
	}
	sameFiles(t, "the person's checkout", files(t, r.sandbox), before)
	if got := git(t, r.sandbox, "rev-parse", "HEAD"); got != head || git(t, r.sandbox, "symbolic-ref", "--short", "HEAD") != "main" {
		t.Fatalf("the person's checkout moved to %s", got)
	}
	if tip := git(t, r.sandbox, "rev-parse", "refs/heads/"+wt.Branch); wt.Commit == "" || tip != wt.Commit || tip == head {
		t.Fatalf("branch %s is at %s, the goal recorded %q (base %s)", wt.Branch, tip, wt.Commit, head)
	}
	if got := git(t, r.sandbox, "show", wt.Branch+":made.txt"); got != "made" {
		t.Fatalf("the branch's made.txt is %q", got)
	}
	if !strings.Contains(wt.DiffStat, "made.txt") || !strings.Contains(g.Report, "Branch: "+wt.Branch) || !strings.Contains(g.Report, wt.DiffStat) {
		t.Fatalf("diff stat %q, report %q: want the branch and its diff stat in the report", wt.DiffStat, g.Report)
	}
	stored, err := r.st.Goal(context.Background(), g.ID)
	if err != nil || stored.Spec.Worktree == nil || stored.Spec.Worktree.Commit != wt.Commit || stored.Spec.Worktree.DiffStat != wt.DiffStat {
		t.Fatalf("the stored goal's worktree is %+v (%v), want commit %s", stored.Spec.Worktree, err, wt.Commit)
	}

	// Re-opened, it works in the same worktree, and its new work lands on its branch: made
	// again from the branch when the worktree was removed meanwhile.
	git(t, r.sandbox, "worktree", "remove", "--force", wt.Dir)
	if err := r.svc.Reopen(context.Background(), g.ID, "also make more.txt"); err != nil {
		t.Fatal(err)
	}
	g, _ = r.wait(g.ID)
	if g.Status != goal.StatusCompleted {
		t.Fatalf("re-opened goal %s: %s", g.Status, g.Report)
	}
	again := g.Spec.Worktree
	if again.Dir != wt.Dir || again.Branch != wt.Branch || again.Commit == wt.Commit || !strings.Contains(again.DiffStat, "more.txt") {
		t.Fatalf("after the re-open the worktree is %+v; want the same one with a new commit holding more.txt", again)
	}
	if got := git(t, r.sandbox, "show", again.Branch+":more.txt"); got != "made" || strings.Count(g.Report, "Branch: ") != 1 {
		t.Fatalf("more.txt on the branch is %q; report %q", got, g.Report)
	}
	if got := git(t, r.sandbox, "show", again.Branch+":made.txt"); got != "made" || again.Base != head {
		t.Fatalf("after the re-open the branch lost made.txt (%q) or its base (%s)", got, again.Base)
	}
	sameFiles(t, "the person's checkout after the re-open", files(t, r.sandbox), before)
}

// An aborted goal's work is committed on its branch too, and a copy of a goal that worked in
// a worktree gets a worktree of its own, made from the person's checkout.
func TestAbortedGoalCommitsItsWorktree(t *testing.T) {
	r := buildRig(t, llmtest.Script{Replies: []llmtest.Reply{
		makeFile("half.txt"), call("sleep", map[string]int{"ms": 60_000}),
		{Fault: &llmtest.Fault{Stall: true}}, // the copy waits in its first model call until aborted
	}}, worktreeRegistry, nil)
	personsCheckout(t, r.sandbox)
	os.Mkdir(filepath.Join(r.sandbox, "sub"), 0o755) // untracked: the worktree gets it made
	spec := r.spec(func(s *goal.Spec) {
		s.Policy.SandboxDir = filepath.Join(r.sandbox, "sub")
		s.Worktree = &worktree.Worktree{}
	})
	g := r.mustStart(spec)
	if want := filepath.Join(g.Spec.Worktree.Dir, "sub"); g.Spec.Policy.SandboxDir != want || g.Spec.Worktree.WorkDir != want {
		t.Fatalf("sandbox %s, work dir %s: want %s, the same subdir of the worktree", g.Spec.Policy.SandboxDir, g.Spec.Worktree.WorkDir, want)
	}
	waitFile(t, filepath.Join(g.Spec.Worktree.Dir, "sub", "half.txt"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.svc.Abort(ctx, g.ID); err != nil {
		t.Fatal(err)
	}
	g, _ = r.wait(g.ID)
	wt := g.Spec.Worktree
	if g.Status != goal.StatusAborted || wt.Commit == "" || !strings.Contains(wt.DiffStat, "sub/half.txt") {
		t.Fatalf("aborted goal %s, worktree %+v", g.Status, wt)
	}
	if got := git(t, r.sandbox, "show", wt.Branch+":sub/half.txt"); got != "made" {
		t.Fatalf("the branch's sub/half.txt is %q", got)
	}

	// Run again from its spec, it works in a worktree of its own, made of the person's checkout.
	cp := r.mustStart(g.Spec)
	cwt := cp.Spec.Worktree
	if cwt.Branch != "goal/"+cp.ID || cwt.Repo != r.sandbox || cwt.Target != "main" || cwt.Commit != "" ||
		cp.Spec.Policy.SandboxDir != filepath.Join(cwt.Dir, "sub") {
		t.Fatalf("the copy's worktree is %+v, sandbox %s", cwt, cp.Spec.Policy.SandboxDir)
	}
	if err := r.svc.Abort(ctx, cp.ID); err != nil {
		t.Fatal(err)
	}
}

// A goal asking for a worktree outside a git repository, or in one without a commit, is
// refused before anything is stored, naming the field and the dir.
func TestGoalWorktreeRefusedOutsideARepository(t *testing.T) {
	r := buildRig(t, llmtest.Script{}, worktreeRegistry, nil)
	check := func(what string) {
		t.Helper()
		_, err := r.svc.Start(context.Background(), r.spec(func(s *goal.Spec) { s.Worktree = &worktree.Worktree{} }))
		var fe *goal.FieldError
		if !errors.As(err, &fe) || fe.Field != "worktree" || !strings.Contains(fe.Msg, r.sandbox) || !strings.Contains(fe.Msg, "git init it and commit once") {
			t.Fatalf("%s: got %v; want a refusal of field worktree naming %s", what, err, r.sandbox)
		}
	}
	check("no repository")
	git(t, r.sandbox, "init", "-q")
	check("a repository without a commit")
	if gs, _ := r.svc.List(context.Background()); len(gs) != 0 {
		t.Fatalf("a refused goal was stored: %v", gs)
	}
}
