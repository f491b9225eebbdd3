package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/clusterspace/clusterspace/backend/cli"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// landRepo is a git repository on main whose own check (check.sh) fails when a.txt is there
// and b.txt does not say "compatible": task b passes its own check alone, but breaks the
// repository once a has landed. The person's checkout has uncommitted work in it.
func landRepo(t *testing.T) string {
	t.Helper()
	dir := gitRepo(t, t.TempDir(), map[string]string{
		"check.sh": "if [ -f a.txt ] && [ -f b.txt ] && ! grep -qx compatible b.txt; then echo 'b.txt is not compatible with a.txt'; exit 1; fi\n",
		"README":   "base\n",
	})
	writeFiles(t, dir, map[string]string{"README": "the person's edit, not committed\n", "notes.txt": "the person's own notes\n"})
	return dir
}

// checkoutDigest hashes every file of the person's checkout outside .git, names and bytes.
func checkoutDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			b, _ := os.ReadFile(p)
			fmt.Fprintf(h, "%s\x00%x\x00", p, sha256.Sum256(b))
		}
		return nil
	})
	return fmt.Sprintf("%x", h.Sum(nil))
}

// landFleetModel scripts the agents of landFleetYAML's tasks: each writes its file at once,
// and b, sent back with the repository check's failing output, writes "compatible" into b.txt.
func landFleetModel(t *testing.T) *fleetModel {
	return newFleetModel(t, func(pane string, turn int) llmtest.Reply {
		switch {
		case pane == "b-term" && turn == 2: // sent back: the failing output is in its prompt
			return toolCall("write_to_terminal", map[string]any{"pane_id": pane, "text": "echo compatible > b.txt"})
		case turn == 0:
			file := strings.TrimSuffix(pane, "-term") + ".txt"
			return toolCall("write_to_terminal", map[string]any{"pane_id": pane, "text": "echo " + strings.ToUpper(file[:1]) + " > " + file})
		}
		return fleetClaim(pane + " wrote its file")
	})
}

// landFleetYAML is the fleet: three tasks in worktrees of landRepo, each passing its
// own check, b breaking the repository's check (sh check.sh) once a has landed.
const landFleetYAML = `name: land-demo
isolation: worktree
land: {check: "sh check.sh"}
tasks:
  - {id: a, goal: Write a.txt, pane: a-term, check_shell: "test -f a.txt"}
  - {id: b, goal: Write b.txt, pane: b-term, check_shell: "test -f b.txt"}
  - {id: c, goal: Write c.txt, pane: c-term, check_shell: "test -f c.txt", depends_on: [a]}
`

// runLand runs `land ID --json` (plus args) on dataDir, fails the test unless it exits with
// wantCode and prints a report, or if it changed the person's checkout (digest before), and
// returns the report.
func runLand(t *testing.T, repo, dataDir, before string, wantCode int, id string, args ...string) landReport {
	t.Helper()
	code, out, errs := runToEnd(t, exec.Command(testBinary(t), append([]string{"land", id, "--json", "--data-dir", dataDir}, args...)...))
	var rep landReport
	if err := json.Unmarshal([]byte(out), &rep); code != wantCode || err != nil {
		t.Fatalf("land %s %v: exit %d (want %d), %v\n%s\n%s", id, args, code, wantCode, err, out, errs)
	}
	if checkoutDigest(t, repo) != before {
		t.Fatalf("land changed the person's checkout:\n%s", out)
	}
	return rep
}

// The scenario, through `fleet run` and the CLI: a and c land; b passes its own
// check but breaks the repository's once a has landed, so it is refused and sent back to its
// agent with the failing output; after `fleet resume` it fixes and verifies again, and the
// next `land` lands it. The person's checkout, uncommitted work and all, never changes.
func TestLandCLIRefusesWhatBreaksTheTargetAndLandsItOnceFixed(t *testing.T) {
	m := landFleetModel(t)
	repo, dataDir := landRepo(t), t.TempDir()
	before := checkoutDigest(t, repo)
	code, out, errs := runToEnd(t, fleetCmd(t, m, landFleetYAML, repo, dataDir, "--json"))
	if code != cli.ExitOK {
		t.Fatalf("fleet run: exit %d\n%s\n%s", code, out, errs)
	}
	fleetID := lastJSONField(out, "fleetId")
	if fleetID == "" {
		t.Fatalf("fleet run printed no fleet id:\n%s", out)
	}
	mainBefore := gitRun(t, repo, "rev-parse", "main")
	if got := checkoutDigest(t, repo); got != before {
		t.Fatal("fleet run changed the person's checkout")
	}

	land := func(wantCode int) landReport {
		t.Helper()
		return runLand(t, repo, dataDir, before, wantCode, fleetID)
	}
	rep := land(cli.ExitLandRefused)
	if got := rep.statuses(); got != "a=landed b=refused c=landed" {
		t.Fatalf("first land: %s\n%+v", got, rep)
	}
	b := rep.outcome("b")
	if !b.SentBack || !strings.Contains(b.Detail, "b.txt is not compatible with a.txt") || !strings.Contains(b.Detail, "sh check.sh") {
		t.Errorf("b's refusal (want the repository check's output, sent back to its agent): %+v", b)
	}
	if files := gitRun(t, repo, "ls-tree", "--name-only", "main"); !strings.Contains(files, "a.txt") || !strings.Contains(files, "c.txt") || strings.Contains(files, "b.txt") {
		t.Errorf("main after the first land holds:\n%s", files)
	}
	if gitRun(t, repo, "merge-base", "--is-ancestor", mainBefore, "main") != "" {
		t.Error("main did not move forward")
	}
	if !strings.Contains(rep.Note, "fleet resume "+fleetID) {
		t.Errorf("the report does not say how b's agent goes on: %q", rep.Note)
	}

	code, out, errs = fleetResume(t, m, fleetID, dataDir)
	if code != cli.ExitOK {
		t.Fatalf("fleet resume after b was sent back: exit %d\n%s\n%s", code, out, errs)
	}
	var sawFeedback bool
	for _, r := range m.requests("b-term") {
		sawFeedback = sawFeedback || strings.Contains(string(r.Body), "b.txt is not compatible with a.txt")
	}
	if !sawFeedback {
		t.Error("b's agent never saw the failing output of the repository's check")
	}

	rep = land(cli.ExitOK)
	if got := rep.statuses(); got != "a=already b=landed c=already" {
		t.Fatalf("second land: %s\n%+v", got, rep)
	}
	if got := gitRun(t, repo, "show", "main:b.txt"); got != "compatible" {
		t.Errorf("main's b.txt = %q", got)
	}
	// The report's command brings the person's files forward, keeping their own changes.
	i := strings.Index(rep.Note, "git -C ")
	if i < 0 {
		t.Fatalf("the report gives no command to bring the checkout forward: %q", rep.Note)
	}
	if out, err := exec.Command("sh", "-c", rep.Note[i:]).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", rep.Note[i:], err, out)
	}
	for file, want := range map[string]string{"a.txt": "A\n", "b.txt": "compatible\n", "c.txt": "C\n",
		"README": "the person's edit, not committed\n", "notes.txt": "the person's own notes\n"} {
		if b, _ := os.ReadFile(filepath.Join(repo, file)); string(b) != want {
			t.Errorf("after the suggested command, %s holds %q, want %q", file, b, want)
		}
	}
	if st := gitRun(t, repo, "status", "--porcelain"); st != "M README\n?? notes.txt" {
		t.Errorf("git status after the suggested command:\n%s", st)
	}

	landed := filepath.Join(t.TempDir(), "landed")
	gitRun(t, repo, "worktree", "add", "-q", "--detach", landed, "main")
	if out, err := exec.Command("sh", "-c", "cd "+landed+" && sh check.sh").CombinedOutput(); err != nil {
		t.Errorf("the repository's check fails on what landed: %v\n%s", err, out)
	}

	var f struct {
		Tasks []struct {
			ID       string
			Worktree struct {
				Dir, Branch string
				Pruned      bool
			}
			Review struct {
				Land  string
				Story []struct{ Kind, Text string }
			}
		}
	}
	if show := fleetShow(t, fleetID, dataDir, &f); len(f.Tasks) != 3 {
		t.Fatalf("fleet show:\n%s", show)
	}
	for _, task := range f.Tasks {
		var kinds []string
		for _, n := range task.Review.Story {
			kinds = append(kinds, n.Kind)
		}
		want := "landed"
		if task.ID == "b" {
			want = "refused reopened landed"
		}
		if strings.Join(kinds, " ") != want || task.Review.Land != "landed" {
			t.Errorf("task %s's story: %v (land %q), want %s", task.ID, kinds, task.Review.Land, want)
		}
		if _, err := os.Stat(task.Worktree.Dir); err == nil || !task.Worktree.Pruned {
			t.Errorf("task %s's worktree %s is still there after it landed", task.ID, task.Worktree.Dir)
		}
		if exec.Command("git", "-C", repo, "rev-parse", "--verify", "refs/heads/"+task.Worktree.Branch).Run() == nil {
			t.Errorf("task %s's branch %s is still there after it landed", task.ID, task.Worktree.Branch)
		}
	}
}

type landReport struct {
	Outcomes []struct {
		TaskID, Status, Detail, Commit string
		SentBack                       bool
	}
	Note string
}

func (r landReport) statuses() string {
	var s []string
	for _, o := range r.Outcomes {
		s = append(s, o.TaskID+"="+o.Status)
	}
	return strings.Join(s, " ")
}

func (r landReport) outcome(task string) (o struct {
	TaskID, Status, Detail, Commit string
	SentBack                       bool
}) {
	for _, x := range r.Outcomes {
		if x.TaskID == task {
			return x
		}
	}
	return o
}

// A goal run with --worktree lands like a fleet task: a repository check that fails on the
// result refuses it (left with the person, as asked) and moves nothing; once the check
// passes it lands, its worktree and branch go, and landing again says it already has.
func TestLandCLILandsAGoalRunInItsOwnWorktree(t *testing.T) {
	repo, dataDir := landRepo(t), t.TempDir()
	before := checkoutDigest(t, repo)
	out := runGoalInWorktree(t, repo, dataDir, "echo made > made.txt", "grep -qx made made.txt")
	id, dir := goalWorktree(t, out)
	mainBefore := gitRun(t, repo, "rev-parse", "main")

	land := func(wantCode int, args ...string) landReport {
		t.Helper()
		return runLand(t, repo, dataDir, before, wantCode, id, args...)
	}
	rep := land(cli.ExitLandRefused, "--check", "test -f approved.txt || { echo approved.txt is missing; exit 1; }", "--on-refuse", "person")
	if len(rep.Outcomes) != 1 || rep.Outcomes[0].Status != "refused" || rep.Outcomes[0].SentBack || !strings.Contains(rep.Outcomes[0].Detail, "approved.txt is missing") {
		t.Fatalf("a goal whose repository check fails: %+v", rep)
	}
	if gitRun(t, repo, "rev-parse", "main") != mainBefore {
		t.Fatal("main moved although the check failed")
	}
	rep = land(cli.ExitOK, "--check", "grep -qx made made.txt")
	if len(rep.Outcomes) != 1 || rep.Outcomes[0].Status != "landed" || !strings.Contains(rep.Outcomes[0].Detail, "grep -qx made made.txt") {
		t.Fatalf("the goal once its check passes: %+v", rep)
	}
	if got := gitRun(t, repo, "show", "main:made.txt"); got != "made" {
		t.Errorf("main's made.txt = %q", got)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("the goal's worktree %s is still there after it landed", dir)
	}
	if exec.Command("git", "-C", repo, "rev-parse", "--verify", "refs/heads/goal/"+id).Run() == nil {
		t.Error("the goal's branch is still there after it landed")
	}
	if rep = land(cli.ExitOK); rep.Outcomes[0].Status != "already" {
		t.Errorf("landing again: %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(repo, "made.txt")); !os.IsNotExist(err) {
		t.Error("landing wrote into the person's checkout")
	}
}

// The scenario in the browser UI, through `serve`: the fleet's three tasks verify in
// their worktrees; "Land fleet" lands a and c and refuses b — it passes its own check, but
// the repository's fails once a has landed — showing the failing output and that b went back
// to its agent. In the app b's agent goes on at once, fixes and verifies again, and landing
// the fleet again lands b. The person's checkout, uncommitted work and all, never changes.
func TestLandUIRefusesWhatBreaksTheTargetAndLandsItOnceFixed(t *testing.T) {
	m := landFleetModel(t)
	repo := landRepo(t)
	before := checkoutDigest(t, repo)
	srv, ctx := openAppWithModel(t, m.srv)
	token := apiToken(t, srv.URL)
	var f struct{ ID string }
	apiCall(t, "POST", srv.URL+"/api/rpc/CreateFleet", token, map[string]any{
		"yaml":     landFleetYAML,
		"policy":   map[string]any{"risk": "write_local", "sandboxDir": repo},
		"settings": map[string]any{"criticIntervalSteps": 0},
	}, &f)
	if f.ID == "" {
		t.Fatal("CreateFleet answered no fleet id")
	}
	outcome := func(task, status string) string {
		return `document.querySelector('[data-testid=land-fleet-outcome][data-task=` + task + `]')?.dataset.status === '` + status + `'`
	}
	openFleetDashboard(t, ctx,
		chromedp.WaitVisible(`[data-testid=fleet-detail]`),
		waitJS(fleetNodeStatus("a", "completed")), waitJS(fleetNodeStatus("b", "completed")), waitJS(fleetNodeStatus("c", "completed")))

	step(t, ctx, "Land fleet: a and c land, b is refused with the repository check's output and sent back",
		chromedp.Click(`[data-testid=fleet-land]`),
		chromedp.WaitVisible(`[data-testid=land-fleet-dialog]`),
		waitJS(`(document.querySelector('[data-testid=land-fleet-dialog]')?.textContent ?? '').includes('sh check.sh')`),
		chromedp.Click(`[data-testid=land-fleet-button]`),
		waitJS(outcome("a", "landed")), waitJS(outcome("b", "refused")), waitJS(outcome("c", "landed")),
		waitJS(`(document.querySelector('[data-testid=land-fleet-outcome][data-task=b] [data-testid=land-fleet-detail]')?.textContent ?? '').includes('b.txt is not compatible with a.txt')`),
		waitJS(`!!document.querySelector('[data-testid=land-fleet-outcome][data-task=b] [data-testid=land-fleet-sent-back]')`))
	axeCheck(t, ctx, "land fleet, one task refused", `[data-testid=land-fleet-dialog]`)
	shot(t, ctx, "land-fleet-refused")
	if files := gitRun(t, repo, "ls-tree", "--name-only", "main"); !strings.Contains(files, "a.txt") || !strings.Contains(files, "c.txt") || strings.Contains(files, "b.txt") {
		t.Fatalf("main after the first landing holds:\n%s", files)
	}
	if checkoutDigest(t, repo) != before {
		t.Fatal("landing changed the person's checkout")
	}

	// b's agent goes on at once with the failure: its fix is committed on its branch when it
	// has verified again.
	waitWithin(t, 90*time.Second, "b's agent to fix b.txt on its branch after it was sent back", func() bool {
		out, _ := exec.Command("git", "-C", repo, "show", "fleet/"+f.ID+"/b:b.txt").Output()
		return strings.TrimSpace(string(out)) == "compatible"
	})
	step(t, ctx, "b verified again; Land fleet lands it",
		waitJS(fleetNodeStatus("b", "completed")),
		chromedp.Click(`[data-testid=land-fleet-button]`),
		waitJS(outcome("b", "landed")), waitJS(outcome("a", "already")), waitJS(outcome("c", "already")))
	shot(t, ctx, "land-fleet-landed")
	if got := gitRun(t, repo, "show", "main:b.txt"); got != "compatible" {
		t.Errorf("main's b.txt = %q", got)
	}
	if checkoutDigest(t, repo) != before {
		t.Error("landing changed the person's checkout")
	}
	var sawFailure bool
	for _, r := range m.requests("b-term") {
		sawFailure = sawFailure || strings.Contains(string(r.Body), "b.txt is not compatible with a.txt")
	}
	if !sawFailure {
		t.Error("b's agent was never given the repository check's failing output")
	}
}
