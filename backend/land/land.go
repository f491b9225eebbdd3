// Package land takes a piece of work's branch onto its target branch only when it verifies
// there: the branch is replayed (rebase or merge) onto the target's tip in a scratch
// worktree, the work's own criterion and the repository's check run on the result, and only
// when both pass does the target move — by compare-and-swap, so a target that moved
// meanwhile is replayed again. The person's checkout, its index and its uncommitted files are
// never touched.
package land

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/clusterspace/clusterspace/backend/worktree"
)

// Strategy is how a branch is replayed onto its target.
type Strategy string

const (
	Rebase Strategy = "rebase" // the work's commits replayed one by one on the target's tip
	Merge  Strategy = "merge"  // a merge commit of the target's tip and the branch
)

// ParseStrategy reads a strategy ("" is none given).
func ParseStrategy(s string) (Strategy, error) {
	switch Strategy(s) {
	case "", Rebase, Merge:
		return Strategy(s), nil
	}
	return "", fmt.Errorf("%q is not a strategy: use rebase (the work's commits replayed on the target) or merge (a merge commit)", s)
}

// maxReplays bounds how often a target that keeps moving during the checks is replayed onto.
const maxReplays = 3

// Check is one thing that must hold on the target with the work on it.
type Check struct {
	Name string // "its criterion", "the repository's check `make test`"
	// Run runs the check in dir (the scratch worktree's work dir): passed, and what it
	// showed (the output's end on failure). The error is for a check that could not run.
	Run func(ctx context.Context, dir string) (passed bool, detail string, err error)
}

// Request is one branch to land.
type Request struct {
	Repo     string // the repository's top-level dir
	Target   string // the branch that moves
	Branch   string // the work's branch
	Strategy Strategy
	SubDir   string // where the checks run, relative to the worktree's top ("" or ".": the top)
	Setup    string // run in the scratch worktree before the checks (npm ci…), "" none
	Checks   []Check
	Message  string // the merge commit's message (Merge)
}

// Result is how a landing went. Exactly one of Landed, Already, Conflict and Failed holds
// when the error is nil.
type Result struct {
	Landed  bool   `json:"landed"`
	Already bool   `json:"already"` // the branch was on the target already: nothing moved
	Old     string `json:"old"`     // the target's tip before
	New     string `json:"new"`     // the target's tip after (Landed)
	// Conflict lists the files the replay conflicted in; nothing landed.
	Conflict []string `json:"conflict,omitempty"`
	// Failed names the check that failed on the result; Detail is what it showed.
	Failed  string   `json:"failed,omitempty"`
	Detail  string   `json:"detail,omitempty"`
	Passed  []string `json:"passed,omitempty"` // the checks that passed, by name
	Replays int      `json:"replays"`          // how often the work was replayed (the target moved meanwhile)
	// CheckedOut is the worktree that has the target checked out (the person's, usually):
	// its files and index were left as they were.
	CheckedOut string `json:"checkedOut,omitempty"`
}

// Land replays the branch onto the target in a scratch worktree, runs the checks there and
// moves the target to the result only when every one passes.
func Land(ctx context.Context, req Request) (Result, error) {
	if req.Target == "" {
		return Result{}, errors.New("no target branch: the work began on a detached HEAD; name the branch to land on")
	}
	if req.Strategy == "" {
		req.Strategy = Rebase
	}
	tip, err := worktree.Git(ctx, req.Repo, "rev-parse", "--verify", "refs/heads/"+req.Branch+"^{commit}")
	if err != nil {
		return Result{}, fmt.Errorf("the work's branch %s is gone from %s: %w", req.Branch, req.Repo, err)
	}
	var res Result
	for res.Replays < maxReplays {
		old, err := worktree.Git(ctx, req.Repo, "rev-parse", "--verify", "refs/heads/"+req.Target+"^{commit}")
		if err != nil {
			return Result{}, fmt.Errorf("the target branch %s is not in %s: %w", req.Target, req.Repo, err)
		}
		res = Result{Old: old, Replays: res.Replays + 1, CheckedOut: checkedOutAt(ctx, req.Repo, req.Target)}
		if _, err := worktree.Git(ctx, req.Repo, "merge-base", "--is-ancestor", tip, old); err == nil {
			res.Already, res.New = true, old
			return res, nil
		}
		next, err := replayAndCheck(ctx, req, old, tip, &res)
		if err != nil || next == "" {
			return res, err
		}
		// Compare-and-swap: the target moves only from the tip the work was verified on.
		if _, err := worktree.Git(ctx, req.Repo, "update-ref", "-m", "clusterspace land "+req.Branch, "refs/heads/"+req.Target, next, old); err == nil {
			res.Landed, res.New = true, next
			return res, nil
		}
		now, _ := worktree.Git(ctx, req.Repo, "rev-parse", "refs/heads/"+req.Target)
		if now == old {
			return res, fmt.Errorf("the target branch %s could not be moved to %s (is the repository locked by another git command?)", req.Target, next)
		}
		// The target moved during the checks: replay onto its new tip and check again.
	}
	return res, fmt.Errorf("the target branch %s moved during each of %d landings; land again when it is quiet", req.Target, maxReplays)
}

// replayAndCheck replays tip onto old in a scratch worktree and runs the checks there. It
// returns the commit to move the target to, or "" with res saying why not.
func replayAndCheck(ctx context.Context, req Request, old, tip string, res *Result) (string, error) {
	common, err := worktree.Git(ctx, req.Repo, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", err
	}
	parent := filepath.Join(common, worktree.DirName)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	scratch, err := os.MkdirTemp(parent, "land-")
	if err != nil {
		return "", err
	}
	os.Remove(scratch) // git makes it
	if _, err := worktree.Git(ctx, req.Repo, "worktree", "add", "--detach", scratch, old); err != nil {
		return "", fmt.Errorf("making the scratch worktree to land in: %w", err)
	}
	defer func() {
		// Best effort: a scratch worktree left behind is pruned by the next land.
		if _, err := worktree.Git(context.WithoutCancel(ctx), req.Repo, "worktree", "remove", "--force", scratch); err != nil {
			os.RemoveAll(scratch)
			worktree.Git(context.WithoutCancel(ctx), req.Repo, "worktree", "prune")
		}
	}()
	if files, err := replay(ctx, scratch, req, old, tip); err != nil || files != nil {
		res.Conflict = files
		return "", err
	}
	next, err := worktree.Git(ctx, scratch, "rev-parse", "HEAD")
	if err != nil {
		return "", err
	}
	dir := filepath.Join(scratch, req.SubDir)
	if req.Setup != "" {
		wt := worktree.Worktree{Repo: req.Repo, Dir: scratch, WorkDir: dir}
		if err := worktree.RunSetup(ctx, wt, req.Setup); err != nil {
			res.Failed, res.Detail = "the setup", err.Error()
			return "", nil
		}
	}
	for _, c := range req.Checks {
		passed, detail, err := c.Run(ctx, dir)
		if err != nil {
			return "", fmt.Errorf("%s could not run on the result: %w", c.Name, err)
		}
		if !passed {
			res.Failed, res.Detail = c.Name, detail
			return "", nil
		}
		res.Passed = append(res.Passed, c.Name)
	}
	return next, nil
}

// replay puts the work on top of old in the scratch worktree (checked out at old). A
// conflict aborts the replay and returns the conflicted files.
func replay(ctx context.Context, scratch string, req Request, old, tip string) ([]string, error) {
	var err error
	switch req.Strategy {
	case Merge:
		msg := req.Message
		if msg == "" {
			msg = "Land " + req.Branch + " on " + req.Target
		}
		_, err = worktree.Git(ctx, scratch, "merge", "--no-ff", "--no-edit", "-m", msg, tip)
	default:
		// Only the work's own commits: those of tip not on the target.
		var upstream string
		if upstream, err = worktree.Git(ctx, scratch, "merge-base", old, tip); err != nil {
			return nil, fmt.Errorf("the work's branch %s shares no history with %s: %w", req.Branch, req.Target, err)
		}
		_, err = worktree.Git(ctx, scratch, "rebase", "--no-autostash", "--onto", old, upstream, tip)
	}
	if err == nil {
		return nil, nil
	}
	files, _ := worktree.Git(ctx, scratch, "diff", "--name-only", "--diff-filter=U")
	if req.Strategy == Merge {
		worktree.Git(ctx, scratch, "merge", "--abort") // Best effort: the scratch worktree goes anyway.
	} else {
		worktree.Git(ctx, scratch, "rebase", "--abort")
	}
	if files == "" {
		return nil, fmt.Errorf("replaying %s onto %s failed: %w", req.Branch, req.Target, err)
	}
	return strings.Fields(files), nil
}

// checkedOutAt is the worktree of the repository that has branch checked out ("" none).
func checkedOutAt(ctx context.Context, repo, branch string) string {
	out, err := worktree.Git(ctx, repo, "worktree", "list", "--porcelain")
	if err != nil {
		return ""
	}
	dir := ""
	for _, line := range strings.Split(out, "\n") {
		if d, ok := strings.CutPrefix(line, "worktree "); ok {
			dir = d
		}
		if line == "branch refs/heads/"+branch {
			return dir
		}
	}
	return ""
}

// CheckoutBase is the commit of target whose tree a checkout's index still holds (the tip
// it last had checked out, before landings moved the branch under it), searched back along
// the target's first parents; "" when none matches (staged changes, or too far back).
func CheckoutBase(ctx context.Context, checkout, target string) string {
	list, err := worktree.Git(ctx, checkout, "rev-list", "--first-parent", "-n", "100", "refs/heads/"+target)
	if err != nil {
		return ""
	}
	for _, c := range strings.Fields(list) {
		if _, err := worktree.Git(ctx, checkout, "diff-index", "--cached", "--quiet", c, "--"); err == nil {
			return c
		}
	}
	return ""
}
