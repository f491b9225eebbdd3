package api

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/worktree"
)

// StartGoal's worktree: true reaches the Goal Runner: outside a git repository it is refused
// naming the field; in one the goal gets its own worktree and branch.
func TestStartGoalInItsOwnWorktree(t *testing.T) {
	model := llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{{Fault: &llmtest.Fault{Stall: true}}}})
	g := newGoldenEngine(t)
	g.call("SaveProvider", `{"id": "", "input": {"name": "Scripted", "kind": "openai", "baseUrl": "`+model.OpenAIURL()+`", "model": "scripted-model", "visionModel": "", "temperature": null, "maxTokens": 0, "thinking": false, "contextWindow": 0}}`)
	_, l := g.workspaces()
	pane := l.Workspaces[0].Panes[0].ID
	args := func(dir string) json.RawMessage {
		return json.RawMessage(`{"worktree": true, "spec": {"paneId": "` + pane + `", "goal": "Say hello", "criterion": {"kind": "manual"}, "policy": {"risk": "read_only", "sandboxDir": "` + dir + `"}}}`)
	}

	plain := t.TempDir()
	_, err := g.table.Call(context.Background(), "StartGoal", args(plain))
	var fe *goal.FieldError
	if !errors.As(err, &fe) || fe.Field != "worktree" || !strings.Contains(fe.Msg, plain) {
		t.Fatalf("StartGoal with worktree outside a repository: %v; want a refusal of field worktree naming %s", err, plain)
	}

	repo := t.TempDir()
	ctx := context.Background()
	for _, a := range [][]string{{"init", "-q", "-b", "main"}, {"add", "README"}, {"commit", "-q", "-m", "first"}} {
		if a[0] == "add" {
			os.WriteFile(filepath.Join(repo, "README"), []byte("hello\n"), 0o644)
		}
		if _, err := worktree.Git(ctx, repo, a...); err != nil {
			t.Fatal(err)
		}
	}
	var started goal.Goal
	json.Unmarshal(g.call("StartGoal", string(args(repo))), &started)
	wt := started.Spec.Worktree
	if wt == nil || wt.Branch != "goal/"+started.ID || wt.Target != "main" || started.Spec.Policy.SandboxDir != wt.Dir {
		t.Fatalf("the started goal's worktree is %+v, sandbox %s", wt, started.Spec.Policy.SandboxDir)
	}
	g.call("AbortGoal", `{"id": "`+started.ID+`"}`)
	if _, err := worktree.Git(ctx, repo, "rev-parse", "--verify", "refs/heads/"+wt.Branch); err != nil {
		t.Fatalf("no branch %s in the repository: %v", wt.Branch, err)
	}
}
