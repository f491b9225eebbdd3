package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/browser"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// runIn runs a browser tool as a goal confined to dir calls it.
func runIn(t *testing.T, r *tools.Registry, dir, name string, args map[string]any) tools.Result {
	t.Helper()
	if _, ok := args["pane_id"]; !ok {
		args["pane_id"] = bpane
	}
	tool, ok := r.Get(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	b, _ := json.Marshal(args)
	res, err := tool.Run(context.Background(), tools.Call{Name: name, Args: b, Dir: dir})
	if err != nil {
		t.Fatalf("%s(%s): %v", name, b, err)
	}
	return res
}

// plant makes a sandbox dir and, outside it, a victim file the goal's shell links to.
func plant(t *testing.T) (sandbox, victim string) {
	t.Helper()
	sandbox = t.TempDir()
	victim = filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("the app's database"), 0o600); err != nil {
		t.Fatal(err)
	}
	return sandbox, victim
}

// The name the sandbox check judges is the file the tool writes: the extension is added
// first, so "out" is judged as out.html, and a link planted at out.html is seen.
func TestBrowserSavePathsAreTheFinalNames(t *testing.T) {
	t.Parallel()
	r := tools.NewRegistry()
	tools.RegisterBrowser(r, browser.NewManager(browser.Options{}), nil)
	for _, c := range []struct{ tool, path, want string }{
		{"browser_save_html", "out", "out.html"},
		{"browser_save_html", "sub/../out", "out.html"},
		{"browser_save_html", "page.HTML", "page.HTML"},
		{"browser_save_pdf", "/tmp/report", "/tmp/report.pdf"},
		{"browser_save_pdf", "report.pdf", "report.pdf"},
	} {
		tool, _ := r.Get(c.tool)
		paths, err := tool.(tools.PathUser).Paths(json.RawMessage(fmt.Sprintf(`{"pane_id":"p","path":%q}`, c.path)))
		if err != nil || len(paths) != 1 || paths[0] != c.want {
			t.Errorf("%s %q: paths %v, %v; want [%s]", c.tool, c.path, paths, err, c.want)
		}
	}

	sandbox, victim := plant(t)
	if err := os.Symlink(victim, filepath.Join(sandbox, "out.html")); err != nil {
		t.Fatal(err)
	}
	tool, _ := r.Get("browser_save_html")
	p := policy.Policy{Ceiling: tools.SpendsMoney, SandboxDir: sandbox}
	v := p.Check(tool, tools.Call{Name: "browser_save_html", Args: json.RawMessage(`{"pane_id":"p","path":"out"}`), Dir: sandbox}, nil)
	if v.Decision != policy.Ask || !strings.Contains(v.Reason, `"out.html" is outside the sandbox`) {
		t.Fatalf("the policy's verdict on saving to a planted out.html: %v %q", v.Decision, v.Reason)
	}
}

// A goal's shell links out.html (or out.pdf, or a folder) to a file outside the sandbox and
// asks to save to "out": the file outside is untouched and the model is told why.
func TestBrowserSaveFollowsNoLinkOutOfTheSandbox(t *testing.T) {
	r, _, _ := browserTools(t, "/long", nil)
	for _, c := range []struct{ tool, link, path, final string }{
		{"browser_save_html", "out.html", "out", "out.html"},
		{"browser_save_pdf", "out.pdf", "out", "out.pdf"},
		{"browser_save_html", "out.html", "/SANDBOX/out.html", "out.html"},
		{"browser_save_html", "docs", "docs/victim", "docs/victim.html"},
	} {
		sandbox, victim := plant(t)
		target := victim
		if c.link == "docs" {
			target = filepath.Dir(victim) // a folder link: the file is made beside the victim
		}
		if err := os.Symlink(target, filepath.Join(sandbox, c.link)); err != nil {
			t.Fatal(err)
		}
		res := runIn(t, r, sandbox, c.tool, map[string]any{"path": strings.Replace(c.path, "/SANDBOX", sandbox, 1)})
		if !res.IsError || !strings.Contains(res.Text, filepath.Join(sandbox, c.final)+" leads outside the sandbox "+sandbox) ||
			!strings.Contains(res.Text, "Nothing was saved") {
			t.Errorf("%s %q: %s", c.tool, c.path, res.Text)
		}
		if data, err := os.ReadFile(victim); err != nil || string(data) != "the app's database" {
			t.Errorf("%s %q overwrote the file outside the sandbox: %.40q %v", c.tool, c.path, data, err)
		}
		if _, err := os.Lstat(filepath.Join(filepath.Dir(victim), "victim.html")); err == nil {
			t.Errorf("%s %q made a file outside the sandbox", c.tool, c.path)
		}
	}
	// An ordinary name still saves, in a new folder if need be.
	sandbox := t.TempDir()
	mustContain(t, runIn(t, r, sandbox, "browser_save_html", map[string]any{"path": "pages/long"}), "Saved the page's HTML to "+filepath.Join(sandbox, "pages", "long.html"))
	if data, _ := os.ReadFile(filepath.Join(sandbox, "pages", "long.html")); !strings.Contains(string(data), "The end of the long page.") {
		t.Fatalf("HTML: %.200s", data)
	}
}

// A file chosen for upload that links outside the sandbox is refused; an ordinary one is
// chosen, and the page reads its content from a private copy, never from the sandbox path.
func TestBrowserUploadFollowsNoLinkOutOfTheSandbox(t *testing.T) {
	r, m, _ := browserTools(t, "/upload", nil)
	sandbox, victim := plant(t)
	if err := os.Symlink(victim, filepath.Join(sandbox, "report.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sandbox, "notes.txt"), []byte("my notes"), 0o600); err != nil {
		t.Fatal(err)
	}
	res := runIn(t, r, sandbox, "browser_set_files", map[string]any{"selector": "#file", "paths": []string{"notes.txt", "report.txt"}})
	if !res.IsError || !strings.Contains(res.Text, filepath.Join(sandbox, "report.txt")+" leads outside the sandbox") || !strings.Contains(res.Text, "No file was chosen") {
		t.Fatalf("a linked upload: %s", res.Text)
	}
	if got := pageText(t, r, "#chosen"); got != "nothing chosen" {
		t.Fatalf("the page got files after a refusal: %q", got)
	}

	mustContain(t, runIn(t, r, sandbox, "browser_set_files", map[string]any{"selector": "#file", "paths": []string{"notes.txt"}}), "Chose 1 file(s)")
	if got := pageText(t, r, "#chosen"); got != "notes.txt:8" {
		t.Fatalf("chosen: %q", got)
	}
	// Chromium reads a chosen file when the page (or the form) does: it reads the copy.
	os.WriteFile(filepath.Join(sandbox, "notes.txt"), []byte("swapped!"), 0o600)
	res = browse(t, r, "browser_execute_js", map[string]any{"code": "await document.getElementById('file').files[0].text()"})
	mustContain(t, res, `"my notes"`)
	copies, _ := filepath.Glob(filepath.Join(m.UploadsDir(), "*", "*", "notes.txt"))
	if len(copies) != 1 {
		t.Fatalf("private copies: %v", copies)
	}
	// Choosing again replaces the copies; closing the pane's tab removes them.
	mustContain(t, runIn(t, r, sandbox, "browser_set_files", map[string]any{"selector": "#file", "paths": []string{"notes.txt"}}), "Chose 1 file(s)")
	if again, _ := filepath.Glob(filepath.Join(m.UploadsDir(), "*", "*", "notes.txt")); len(again) != 1 || again[0] == copies[0] {
		t.Fatalf("copies after choosing again: %v (before %v)", again, copies)
	}
	m.ClosePane(bpane)
	if left, _ := filepath.Glob(filepath.Join(m.UploadsDir(), "*")); len(left) != 0 {
		t.Fatalf("copies left after the pane closed: %v", left)
	}
}
