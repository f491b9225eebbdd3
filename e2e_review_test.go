package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	kb "github.com/chromedp/chromedp/kb"

	"github.com/clusterspace/clusterspace/backend/cli"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// reviewDialog is a CSS selector inside the Changes dialog.
func reviewDialog(sel string) string { return `[data-testid=changes-dialog] ` + sel }

// reviewText is the JS for the text of the first element sel picks in the Changes dialog.
func reviewText(sel string) string {
	return fmt.Sprintf(`(document.querySelector(%q)?.textContent ?? '')`, reviewDialog(sel))
}

// TestReviewUIEndToEnd: a fleet task runs in its own worktree through `serve` and writes
// greet.txt; the person opens its Changes from the task's card, sees the diff of the file,
// comments on a line of it and sends the review to the agent. The task is reopened with the
// comment in its agent's prompt, fixes the file and verifies again; the diff follows. The
// person lands it (rebase, the remembered default) and main holds the fix, while their own
// checkout is left as it was. The Changes view has no serious or critical accessibility
// violation, unified or side by side.
func TestReviewUIEndToEnd(t *testing.T) {
	const comment = "Greet a person, not the world."
	m := newFleetModel(t, func(pane string, turn int) llmtest.Reply {
		switch turn {
		case 0:
			return toolCall("write_to_terminal", map[string]any{"pane_id": pane, "text": "printf 'hello\\nworld\\n' > greet.txt"})
		case 2: // sent back with the review
			return toolCall("write_to_terminal", map[string]any{"pane_id": pane, "text": "printf 'hello\\nperson\\n' > greet.txt"})
		}
		return fleetClaim("greet.txt written")
	})
	repo := gitRepo(t, t.TempDir(), map[string]string{"greet.txt": "hello\n"})
	mainBefore := gitRun(t, repo, "rev-parse", "main")

	srv, ctx := openAppWithModel(t, m.srv)
	token := apiToken(t, srv.URL)
	var f struct{ ID string }
	apiCall(t, "POST", srv.URL+"/api/rpc/CreateFleet", token, map[string]any{
		"yaml": `name: greet
isolation: worktree
tasks:
  - {id: greet, goal: Write greet.txt, pane: greet-term, check_shell: "test -s greet.txt"}
`,
		"policy":   map[string]any{"risk": "write_local", "sandboxDir": repo},
		"settings": map[string]any{"criticIntervalSteps": 0},
	}, &f)
	if f.ID == "" {
		t.Fatal("CreateFleet answered no fleet id")
	}
	card := func(sel string) string { return `[data-testid=task-card][data-task=greet] ` + sel }

	openFleetDashboard(t, ctx,
		chromedp.WaitVisible(`[data-testid=fleet-detail]`),
		waitJS(fleetNodeStatus("greet", "completed")),
		chromedp.WaitVisible(card(`[data-testid=task-changes]`)))

	step(t, ctx, "open the task's Changes: the file list and the diff of greet.txt",
		chromedp.Focus(card(`[data-testid=task-changes]`)),
		chromedp.Click(card(`[data-testid=task-changes]`)),
		chromedp.WaitVisible(`[data-testid=changes-dialog]`),
		waitJS(`document.querySelector('[data-testid=changes-file][data-path="greet.txt"]')?.dataset.status === 'modified'`),
		waitJS(reviewText(`[data-testid=changes-file][data-path="greet.txt"]`)+`.includes('+1')`),
		waitJS(reviewText(`.d2h-file-wrapper[data-file="greet.txt"]`)+`.includes('world')`),
		waitJS(reviewText(`[data-testid=changes-branch]`)+`.includes('main')`),
		waitJS(reviewText(`[data-testid=review-report]`)+` !== ''`))
	shot(t, ctx, "review-changes")

	step(t, ctx, "comment on the line that says world, by keyboard: Enter on its line number",
		chromedp.Focus(reviewDialog(`button[data-line-key="new:2:greet.txt"]`)),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(reviewDialog(`[data-testid=line-comment-box-text]`)),
		chromedp.SendKeys(reviewDialog(`[data-testid=line-comment-box-text]`), comment),
		chromedp.Click(reviewDialog(`[data-testid=line-comment-box-save]`)),
		waitJS(`!document.querySelector('[data-testid=line-comment-box]')`),
		waitJS(reviewText(`[data-testid=line-comment]`)+`.includes(`+fmt.Sprintf("%q", comment)+`)`),
		waitJS(`document.querySelectorAll('[data-testid=pending-comment]').length === 1`),
		waitJS(reviewText(`[data-testid=review-send]`)+`.includes('Send to agent (1)')`))
	axeCheck(t, ctx, "changes view, unified, with a comment", `[data-testid=changes-dialog]`)

	step(t, ctx, "side by side: the comment stays under its line",
		chromedp.Click(reviewDialog(`[data-testid=changes-split]`)),
		waitJS(`document.querySelector('[data-testid=diff]').dataset.format === 'side-by-side'`),
		waitJS(reviewText(`.d2h-file-side-diff [data-testid=line-comment]`)+`.includes(`+fmt.Sprintf("%q", comment)+`)`))
	axeCheck(t, ctx, "changes view, side by side", `[data-testid=changes-dialog]`)
	shot(t, ctx, "review-side-by-side")
	step(t, ctx, "the dark palette", systemScheme("dark"), waitJS(`document.documentElement.dataset.theme === 'dark'`))
	axeCheck(t, ctx, "changes view, side by side, dark", `[data-testid=changes-dialog]`)
	shot(t, ctx, "review-side-by-side-dark")

	step(t, ctx, "send the review: the task is reopened, its story says so",
		chromedp.Click(reviewDialog(`[data-testid=changes-unified]`)),
		chromedp.SendKeys(reviewDialog(`[data-testid=review-note]`), "Then it can land."),
		chromedp.Click(reviewDialog(`[data-testid=review-send]`)),
		waitJS(reviewText(`[data-testid=review-sent]`)+`.includes('was reopened')`),
		waitJS(`document.querySelectorAll('[data-testid=pending-comment]').length === 0`),
		waitJS(`!!document.querySelector('[data-testid=review-story] li[data-kind=reopened]')`))
	step(t, ctx, "the task verifies again and the diff follows",
		waitJS(`document.querySelector('[data-testid=review-work-status]')?.dataset.status === 'completed'`),
		waitJS(reviewText(`.d2h-file-wrapper[data-file="greet.txt"]`)+`.includes('person')`))
	var sawComment bool
	for _, r := range m.requests("greet-term") {
		sawComment = sawComment || strings.Contains(string(r.Body), comment)
	}
	if !sawComment {
		t.Error("the agent was never given the review comment")
	}

	checkout := checkoutDigest(t, repo)
	step(t, ctx, "land it: rebase, the default, and the landed commit is shown",
		waitJS(`document.querySelector('[data-testid=land-rebase]')?.checked === true`),
		chromedp.Click(reviewDialog(`[data-testid=land-button]`)),
		waitJS(`document.querySelector('[data-testid=land-outcome]')?.dataset.status === 'landed'`),
		waitJS(reviewText(`[data-testid=land-commit]`)+`.length === 12`))
	axeCheck(t, ctx, "changes view, landed", `[data-testid=changes-dialog]`)
	shot(t, ctx, "review-landed")

	var shown string
	step(t, ctx, "read the landed commit the page shows", chromedp.Text(reviewDialog(`[data-testid=land-commit]`), &shown))
	if tip := gitRun(t, repo, "rev-parse", "main"); tip == mainBefore || !strings.HasPrefix(tip, shown) {
		t.Errorf("main is at %s (was %s), the page says it landed as %s", tip, mainBefore, shown)
	}
	if got := gitRun(t, repo, "show", "main:greet.txt"); got != "hello\nperson" {
		t.Errorf("main's greet.txt = %q, want the fix", got)
	}
	if checkoutDigest(t, repo) != checkout {
		t.Error("landing changed the person's checkout")
	}

	step(t, ctx, "Esc closes the Changes and the focus is back on the task's Changes button",
		chromedp.KeyEvent(kb.Escape),
		waitJS(`!document.querySelector('[data-testid=changes-dialog]')`),
		waitJS(`document.activeElement?.dataset.testid === 'task-changes'`),
		chromedp.WaitVisible(`[data-testid=fleet-dashboard]`))

	step(t, ctx, "Land fleet: the task is on main already",
		chromedp.Click(`[data-testid=fleet-land]`),
		chromedp.WaitVisible(`[data-testid=land-fleet-dialog]`),
		chromedp.Click(`[data-testid=land-fleet-button]`),
		waitJS(`document.querySelector('[data-testid=land-fleet-outcome][data-task=greet]')?.dataset.status === 'already'`))
	axeCheck(t, ctx, "land fleet", `[data-testid=land-fleet-dialog]`)
}

// TestReviewUIGoalWorktreeEndToEnd: a goal started with its own worktree (the create call's
// worktree: true) writes made.txt; from its detail in the Goal Dashboard the person opens
// Changes, sees the file's diff on the goal's branch, and lands it on main; the dialog is
// accessible, and Esc gives the focus back to the goal's Changes button.
func TestReviewUIGoalWorktreeEndToEnd(t *testing.T) {
	repo := gitRepo(t, t.TempDir(), map[string]string{"README": "hello\n"})
	model := llmtest.New(t, llmtest.Script{})
	srv, ctx := openAppWithModel(t, nil)
	addScriptedProvider(t, srv, model)
	token := apiToken(t, srv.URL)
	pane := firstWorkspace(t, srv, token).Panes[0].ID
	model.Push(
		toolCall("write_to_terminal", map[string]string{"pane_id": pane, "text": "echo ok > made.txt"}),
		toolCall("claim_complete", map[string]string{"rationale": "made.txt written"}),
	)
	var g struct{ ID string }
	apiCall(t, "POST", srv.URL+"/api/rpc/StartGoal", token, map[string]any{
		"spec": map[string]any{
			"paneId": pane, "goal": "Write made.txt",
			"criterion": map[string]string{"kind": "shell", "command": "test -f made.txt"},
			"policy":    map[string]string{"risk": "write_local", "sandboxDir": repo},
			"settings":  map[string]any{"criticIntervalSteps": 0},
		},
		"worktree": true,
	}, &g)
	if g.ID == "" {
		t.Fatal("StartGoal answered no goal id")
	}

	step(t, ctx, "open the goal's detail in the Goal Dashboard",
		ctrlShift("d"),
		chromedp.WaitVisible(`[data-testid=goal-dashboard]`),
		chromedp.Click(fmt.Sprintf(`[data-testid=goal-row][data-goal-id=%q]`, g.ID)),
		waitJS(detailStatus("completed")),
		chromedp.WaitVisible(`[data-testid=goal-changes]`))

	step(t, ctx, "its Changes show made.txt added on the goal's branch",
		chromedp.Focus(`[data-testid=goal-changes]`),
		chromedp.Click(`[data-testid=goal-changes]`),
		chromedp.WaitVisible(`[data-testid=changes-dialog]`),
		waitJS(`document.querySelector('[data-testid=changes-file][data-path="made.txt"]')?.dataset.status === 'added'`),
		waitJS(reviewText(`.d2h-file-wrapper[data-file="made.txt"]`)+`.includes('ok')`),
		waitJS(reviewText(`[data-testid=changes-branch]`)+`.includes('main')`))
	axeCheck(t, ctx, "changes view of a goal", `[data-testid=changes-dialog]`)

	step(t, ctx, "land it",
		chromedp.Click(reviewDialog(`[data-testid=land-button]`)),
		waitJS(`document.querySelector('[data-testid=land-outcome]')?.dataset.status === 'landed'`))
	if got := gitRun(t, repo, "show", "main:made.txt"); got != "ok" {
		t.Errorf("main's made.txt = %q after the goal landed", got)
	}
	shot(t, ctx, "review-goal-landed")

	step(t, ctx, "Esc closes the Changes and the focus is back on the goal's Changes button",
		chromedp.KeyEvent(kb.Escape),
		waitJS(`!document.querySelector('[data-testid=changes-dialog]')`),
		waitJS(`document.activeElement?.dataset.testid === 'goal-changes'`),
		chromedp.WaitVisible(`[data-testid=goal-dashboard]`))
}

// A fleet task run in its own worktree renames, deletes, adds and edits files through its
// real terminal; `clusterspace diff FLEET/TASK` then prints git's diff of its branch, --stat
// its files and counts, --json its pages, and a ref that names nothing exits 64 saying what
// to give.
func TestDiffCLIShowsAFleetTasksBranch(t *testing.T) {
	m := newFleetModel(t, func(pane string, turn int) llmtest.Reply {
		if turn == 0 {
			return toolCall("write_to_terminal", map[string]any{"pane_id": pane,
				"text": "mv old.txt new.txt && rm gone.txt && echo fresh > added.txt && echo more >> README"})
		}
		return fleetClaim(pane + " changed its files")
	})
	var old strings.Builder
	for i := range 30 {
		old.WriteString("line " + strings.Repeat("o", i) + "\n")
	}
	repo, dataDir := gitRepo(t, t.TempDir(), map[string]string{"README": "base\n", "old.txt": old.String(), "gone.txt": "bye\n"}), t.TempDir()
	code, out, errs := runToEnd(t, fleetCmd(t, m, `
name: diff-demo
isolation: worktree
tasks:
  - {id: a, goal: Tidy the files, pane: a-term, check_shell: "test -f added.txt && test ! -f gone.txt"}
`, repo, dataDir, "--json"))
	if code != cli.ExitOK {
		t.Fatalf("fleet run: exit %d\n%s\n%s", code, out, errs)
	}
	fleetID, goalID := lastJSONField(out, "fleetId"), lastJSONField(out, "goalId")
	if fleetID == "" {
		t.Fatalf("fleet run printed no fleet id:\n%s", out)
	}
	ref := fleetID + "/a"
	diff := func(args ...string) (int, string, string) {
		t.Helper()
		return runBinary(t, append(append([]string{"diff"}, args...), "--data-dir", dataDir)...)
	}

	code, patch, errs := diff(ref)
	if code != cli.ExitOK {
		t.Fatalf("diff %s: exit %d\n%s\n%s", ref, code, patch, errs)
	}
	for _, want := range []string{"diff --git a/README b/README\n", "+more\n", "diff --git a/old.txt b/new.txt\n", "rename from old.txt\n",
		"diff --git a/gone.txt b/gone.txt\ndeleted file mode", "-bye\n", "diff --git a/added.txt b/added.txt\nnew file mode", "+fresh\n"} {
		if !strings.Contains(patch, want) {
			t.Errorf("diff %s lacks %q:\n%s", ref, want, patch)
		}
	}
	if strings.Contains(patch, "\x1b[") {
		t.Errorf("diff into a pipe is coloured:\n%q", patch)
	}
	// It is git's own diff of the branch.
	branch := "fleet/" + fleetID + "/a"
	if gitDiff := gitRun(t, repo, "diff", "--no-color", "--find-renames", "main..."+branch) + "\n"; gitDiff != patch {
		t.Errorf("diff %s differs from git diff main...%s:\n%s\nwant:\n%s", ref, branch, patch, gitDiff)
	}
	if code, byGoal, _ := diff(goalID); goalID == "" || code != cli.ExitOK || byGoal != patch {
		t.Errorf("diff %q (a's goal): exit %d\n%s", goalID, code, byGoal)
	}
	if code, coloured, _ := diff(ref, "--color", "always"); code != cli.ExitOK || !strings.Contains(coloured, "\x1b[32m+fresh\x1b[m\n") ||
		!strings.Contains(coloured, "\x1b[31m-bye\x1b[m\n") || !strings.Contains(coloured, "\x1b[1mdiff --git a/README b/README\x1b[m\n") {
		t.Errorf("diff --color always: exit %d\n%q", code, coloured)
	}

	code, stat, errs := diff(ref, "--stat")
	if code != cli.ExitOK {
		t.Fatalf("diff --stat: exit %d\n%s", code, errs)
	}
	for _, want := range []string{" modified README ", "| +1 -0\n", " renamed  old.txt => new.txt | +0 -0\n", " deleted  gone.txt", "| +0 -1\n", " added    added.txt",
		" 4 files changed, 2 insertions(+), 1 deletion(-)\n"} {
		if !strings.Contains(stat, want) {
			t.Errorf("diff --stat lacks %q:\n%s", want, stat)
		}
	}
	if code, names, _ := diff(ref, "--name-only"); code != cli.ExitOK || names != "README\nadded.txt\ngone.txt\nnew.txt\n" {
		t.Errorf("diff --name-only: exit %d\n%s", code, names)
	}

	code, js, errs := diff(ref, "--json")
	var page struct {
		Ref, Kind, Branch, Base, Tip, Patch string
		Files                               []struct{ Path, OldPath, Status string }
		NextOffset                          int
	}
	if err := json.Unmarshal([]byte(js), &page); code != cli.ExitOK || err != nil {
		t.Fatalf("diff --json: exit %d, %v\n%s\n%s", code, err, js, errs)
	}
	if page.Ref != ref || page.Kind != "task" || page.Branch != branch || page.Patch != patch || len(page.Files) != 4 || page.NextOffset != 0 ||
		page.Base == "" || page.Tip == "" {
		t.Errorf("diff --json page: %+v", page)
	}
	code, js, _ = diff(ref, "--stat", "--json")
	page.Patch = "unset"
	if err := json.Unmarshal([]byte(js), &page); code != cli.ExitOK || err != nil || page.Patch != "" || len(page.Files) != 4 {
		t.Errorf("diff --stat --json: exit %d, %v\n%s", code, err, js)
	}

	for _, c := range []struct{ ref, want string }{
		{fleetID + "/zz", "fleet " + fleetID + " has no task zz; its tasks are a"},
		{"fleet-nope/a", "fleet fleet-nope does not exist"},
		{"goal-nope", "no goal or fleet task is goal-nope"},
		{fleetID, fleetID + " is a fleet; review one of its tasks as " + fleetID + "/TASK_ID (its tasks are a)"},
	} {
		if code, _, errs := diff(c.ref); code != cli.ExitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("diff %s: exit %d (want %d); stderr:\n%s", c.ref, code, cli.ExitUsage, errs)
		}
	}
	if code, _, errs := diff(ref, "--stat", "--name-only"); code != cli.ExitUsage || !strings.Contains(errs, "give --stat or --name-only, not both") {
		t.Errorf("diff --stat --name-only: exit %d\n%s", code, errs)
	}
}

// A goal run with --worktree is diffed by its id.
func TestDiffCLIShowsAGoalsOwnBranch(t *testing.T) {
	repo, dataDir := gitRepo(t, t.TempDir(), map[string]string{"README": "hello\n"}), t.TempDir()
	out := runGoalInWorktree(t, repo, dataDir, "echo ok > made.txt && echo bye >> README", "test -f made.txt", "--json")
	id := lastJSONField(out, "goalId")
	if id == "" {
		t.Fatalf("goal run printed no goal id:\n%s", out)
	}
	code, patch, errs := runBinary(t, "diff", id, "--data-dir", dataDir)
	want := "diff --git a/README b/README\n"
	if code != cli.ExitOK || !strings.HasPrefix(patch, want) || !strings.Contains(patch, "+bye\n") || !strings.Contains(patch, "diff --git a/made.txt b/made.txt\nnew file mode") {
		t.Fatalf("diff %s: exit %d\n%s\n%s", id, code, patch, errs)
	}
	code, stat, _ := runBinary(t, "diff", id, "--stat", "--data-dir", dataDir)
	if code != cli.ExitOK || !strings.HasSuffix(stat, " 2 files changed, 2 insertions(+), 0 deletions(-)\n") {
		t.Fatalf("diff %s --stat: exit %d\n%s", id, code, stat)
	}
}
