package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/jpeg"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/browser"
	"github.com/clusterspace/clusterspace/backend/browser/browsertest"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/llm/providers"
	"github.com/clusterspace/clusterspace/backend/tools"
)

const bpane = "bpane"

// browserTools is a registry with the browser tools over a real manager (its Chromium shut
// down when the test ends), one pane open at the test site's path, and the site.
func browserTools(t *testing.T, path string, vision tools.Vision) (*tools.Registry, *browser.Manager, *browsertest.Site) {
	t.Helper()
	m, _ := browsertest.NewManager(t)
	site := browsertest.NewSite(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := m.Open(ctx, bpane, "ws", site.Page(path)); err != nil {
		t.Fatal(err)
	}
	r := tools.NewRegistry()
	tools.RegisterBrowser(r, m, vision)
	return r, m, site
}

func browse(t *testing.T, r *tools.Registry, name string, args map[string]any) tools.Result {
	t.Helper()
	if _, ok := args["pane_id"]; !ok {
		args["pane_id"] = bpane
	}
	res := call(t, r, name, args)
	if res.IsError {
		t.Fatalf("%s(%v) failed:\n%s", name, args, res.Text)
	}
	return res
}

func browseErr(t *testing.T, r *tools.Registry, name string, args map[string]any, wants ...string) {
	t.Helper()
	if _, ok := args["pane_id"]; !ok {
		args["pane_id"] = bpane
	}
	res := call(t, r, name, args)
	if !res.IsError {
		t.Fatalf("%s(%v) should fail:\n%s", name, args, res.Text)
	}
	mustContain(t, res, wants...)
}

// pageText is the text of an element of the pane's page.
func pageText(t *testing.T, r *tools.Registry, selector string) string {
	t.Helper()
	res := browse(t, r, "browser_execute_js", map[string]any{"code": "document.querySelector(" + jsonString(selector) + ").textContent"})
	var s string
	json.Unmarshal([]byte(strings.TrimPrefix(res.Text, "Result: ")), &s)
	return s
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

var browserRisks = map[string]tools.Risk{
	"browser_navigate": tools.NetworkGet, "browser_back": tools.NetworkGet, "browser_forward": tools.NetworkGet,
	"browser_reload": tools.NetworkGet, "browser_get_content": tools.ReadOnly, "browser_click": tools.NetworkWrite,
	"browser_smart_click": tools.NetworkWrite, "browser_type": tools.NetworkWrite, "browser_keypress": tools.NetworkWrite,
	"browser_scroll": tools.NetworkGet, "browser_select_option": tools.NetworkWrite, "browser_check": tools.NetworkWrite,
	"browser_hover": tools.NetworkGet, "browser_click_at": tools.NetworkWrite, "browser_drag": tools.NetworkWrite,
	"browser_set_files": tools.NetworkWrite, "browser_wait_for_selector": tools.ReadOnly, "browser_wait_for_navigation": tools.ReadOnly,
	"browser_wait_for_text": tools.ReadOnly, "browser_query": tools.ReadOnly, "browser_query_all": tools.ReadOnly,
	"browser_get_axtree": tools.ReadOnly, "browser_get_cookies": tools.ReadOnly, "browser_set_cookie": tools.WriteLocal,
	"browser_screenshot": tools.ReadOnly, "browser_screenshot_full_page": tools.ReadOnly, "browser_screenshot_annotated": tools.ReadOnly,
	"browser_click_by_index": tools.NetworkWrite, "browser_save_pdf": tools.WriteLocal, "browser_save_html": tools.WriteLocal,
	"browser_execute_js": tools.NetworkWrite, "browser_get_action_log": tools.ReadOnly, "browser_pane_doctor": tools.ReadOnly,
	"browser_verify_visual_state": tools.ReadOnly, "browser_describe_screen": tools.ReadOnly,
}

func TestBrowserToolsDeclareRiskAndSchema(t *testing.T) {
	t.Parallel()
	r := tools.NewRegistry()
	tools.RegisterBrowser(r, browser.NewManager(browser.Options{}), nil)
	want := map[string]tools.Risk{}
	for k, v := range browserRisks {
		want[k] = v
	}
	for _, d := range r.Definitions() {
		risk, ok := want[d.Name]
		if !ok || risk != d.Risk {
			t.Errorf("%s: risk %v, want %v (known %v)", d.Name, d.Risk, risk, ok)
		}
		delete(want, d.Name)
		var s struct {
			Required []string `json:"required"`
		}
		json.Unmarshal(d.Schema, &s)
		if len(s.Required) == 0 || s.Required[0] != "pane_id" {
			t.Errorf("%s: pane_id is not its first required argument: %s", d.Name, d.Schema)
		}
	}
	if len(want) != 0 {
		t.Fatalf("missing tools %v", want)
	}
	for _, name := range []string{"browser_set_files", "browser_save_pdf", "browser_save_html"} {
		tool, _ := r.Get(name)
		if _, ok := tool.(tools.PathUser); !ok {
			t.Errorf("%s does not report its paths to the sandbox check", name)
		}
	}
	tool, _ := r.Get("browser_set_files")
	paths, err := tool.(tools.PathUser).Paths(json.RawMessage(`{"pane_id":"p","selector":"#f","paths":["/etc/passwd","a.txt"]}`))
	if err != nil || fmt.Sprint(paths) != "[/etc/passwd a.txt]" {
		t.Fatalf("Paths = %v, %v", paths, err)
	}
	tool, _ = r.Get("browser_navigate")
	for url, want := range map[string]string{"file:///etc/passwd": "[/etc/passwd]", "view-source:FILE:///tmp/x.html": "[/tmp/x.html]", "https://example.com/": "[]"} {
		if paths, err := tool.(tools.PathUser).Paths(json.RawMessage(`{"pane_id":"p","url":"` + url + `"}`)); err != nil || fmt.Sprint(paths) != want {
			t.Errorf("navigate to %s: paths %v, %v; want %s", url, paths, err, want)
		}
	}
	tool, _ = r.Get("browser_save_pdf")
	if paths, _ := tool.(tools.PathUser).Paths(json.RawMessage(`{"pane_id":"p"}`)); len(paths) != 0 {
		t.Fatalf("a default path (the data dir) is not a sandbox path: %v", paths)
	}
}

func TestBrowserNavigationTools(t *testing.T) {
	r, _, site := browserTools(t, "/", nil)

	res := browse(t, r, "browser_navigate", map[string]any{"url": strings.TrimPrefix(site.Page("/list"), "http://")})
	mustContain(t, res, "Navigated.", `Page: "List"`, "/list")
	browse(t, r, "browser_navigate", map[string]any{"url": site.Page("/long")})
	mustContain(t, browse(t, r, "browser_back", map[string]any{}), `"List"`)
	mustContain(t, browse(t, r, "browser_forward", map[string]any{}), `"Long"`)
	mustContain(t, browse(t, r, "browser_reload", map[string]any{}), `"Long"`)

	// Paged content: the cursor of one page starts the next, and the pages add up.
	first := browse(t, r, "browser_get_content", map[string]any{"max_chars": 1000})
	mustContain(t, first, "Characters 0-", "More follows: call again with cursor", "Paragraph 1 of")
	cursor := regexp.MustCompile(`cursor (\d+)`).FindStringSubmatch(first.Text)[1]
	var n int
	fmt.Sscan(cursor, &n)
	second := browse(t, r, "browser_get_content", map[string]any{"max_chars": 50000, "cursor": n})
	mustContain(t, second, "This is the end of the text.", "The end of the long page.")
	if strings.Contains(second.Text, "Paragraph 1 of") {
		t.Fatal("the second page repeats the first")
	}

	// Mistakes go back to the model, naming what to do.
	browseErr(t, r, "browser_navigate", map[string]any{"pane_id": "nope", "url": site.Page("/")}, `"nope"`, "the browser panes are "+bpane)
	browseErr(t, r, "browser_forward", map[string]any{}, "No page in that direction")
	browseErr(t, r, "browser_navigate", map[string]any{"url": closedURL(t)}, "Could not load", "ERR_CONNECTION_REFUSED")
	browseErr(t, r, "browser_get_content", map[string]any{"max_chars": 0}, "max_chars 0 is out of range")
}

// closedURL is an address on this machine where nothing listens.
func closedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/"
}

func TestBrowserFormTools(t *testing.T) {
	r, _, site := browserTools(t, "/form", nil)

	mustContain(t, browse(t, r, "browser_type", map[string]any{"selector": "#name", "text": "Ada Lovelace"}), `value is now "Ada Lovelace"`)
	// Typing again replaces the content (clear defaults to true).
	mustContain(t, browse(t, r, "browser_type", map[string]any{"selector": "#name", "text": "Ada"}), `value is now "Ada"`)
	mustContain(t, browse(t, r, "browser_type", map[string]any{"label": "Email", "text": "ada@example.com"}), `"Email"`, `value is now "ada@example.com"`)
	mustContain(t, browse(t, r, "browser_select_option", map[string]any{"selector": "#color", "values": []string{"Green"}}), `["Green"]`)
	browseErr(t, r, "browser_select_option", map[string]any{"selector": "#color", "values": []string{"Purple"}}, `No option "Purple"`, `"Red"`)
	mustContain(t, browse(t, r, "browser_check", map[string]any{"selector": "#agree"}), "checked=true")
	mustContain(t, browse(t, r, "browser_check", map[string]any{"selector": "#agree"}), "already checked=true; nothing clicked")
	browse(t, r, "browser_type", map[string]any{"selector": "#notes", "text": "line one\nline two"})

	mustContain(t, browse(t, r, "browser_query", map[string]any{"selector": "#name"}), `value="Ada"`)
	mustContain(t, browse(t, r, "browser_query_all", map[string]any{"selector": "input", "limit": 2}), "3 element(s) match input; the first 2")

	res := browse(t, r, "browser_click", map[string]any{"selector": "#submit"})
	mustContain(t, res, `Clicked button "Send"`, `Page: "Submitted"`)
	mustContain(t, browse(t, r, "browser_wait_for_navigation", map[string]any{"timeout_ms": 5000}), `"Submitted"`)
	mustContain(t, browse(t, r, "browser_wait_for_text", map[string]any{"text": "name=Ada"}), "is on the page")
	for sel, want := range map[string]string{"#got-email": "email=ada@example.com", "#got-color": "color=g", "#got-agree": "agree=yes", "#got-notes": "notes=line one\nline two"} {
		if got := pageText(t, r, sel); got != want {
			t.Errorf("%s = %q, want %q", sel, got, want)
		}
	}
	browseErr(t, r, "browser_click", map[string]any{"selector": "#nothing"}, `No element found: tried selector "#nothing"`)
	browseErr(t, r, "browser_click", map[string]any{"selector": "a[["}, "Invalid CSS selector")

	// Typing into the focused element, and submitting with Enter.
	browse(t, r, "browser_navigate", map[string]any{"url": site.Page("/form")})
	browse(t, r, "browser_click", map[string]any{"selector": "#name"})
	browse(t, r, "browser_type", map[string]any{"text": "Grace", "submit": true})
	mustContain(t, browse(t, r, "browser_wait_for_navigation", map[string]any{}), `"Submitted"`)
	if got := pageText(t, r, "#got-name"); got != "name=Grace" {
		t.Errorf("submitted %q", got)
	}
}

func TestBrowserLocatorFallbackChain(t *testing.T) {
	r, _, _ := browserTools(t, "/aria", nil)
	tests := []struct {
		args     map[string]any
		strategy string
		out      string
	}{
		{map[string]any{"aria_label": "Close dialog"}, "aria-label", "closed"},
		{map[string]any{"selector": "#missing", "aria_label": "close"}, "aria-label", "closed"}, // selector fails, label contains
		{map[string]any{"role": "button", "text": "Save draft"}, "role+text", "saved"},
		{map[string]any{"role": "tab", "text": "settings"}, "role+text", "tab settings"},
		{map[string]any{"text": "Save draft"}, "role+text", "saved"}, // a text alone: no such label, then an element's name
		{map[string]any{"text": "Plain text"}, "text", "plain"},      // not interactive: found by visible text
		{map[string]any{"selector": "div[role=button]"}, "selector", "closed"},
	}
	for _, tt := range tests {
		browse(t, r, "browser_execute_js", map[string]any{"code": "document.getElementById('out').textContent = 'reset'"})
		res := browse(t, r, "browser_smart_click", tt.args)
		mustContain(t, res, "found by "+tt.strategy+".")
		if got := pageText(t, r, "#out"); got != tt.out {
			t.Errorf("%v clicked through to %q, want %q", tt.args, got, tt.out)
		}
	}
	browseErr(t, r, "browser_smart_click", map[string]any{"text": "No such thing"},
		`tried aria-label "No such thing", then role (any interactive) named "No such thing", then visible text "No such thing"`)
	browseErr(t, r, "browser_smart_click", map[string]any{}, "Say which element")
}

func TestBrowserTrustedInput(t *testing.T) {
	r, _, site := browserTools(t, "/trusted", nil)
	browse(t, r, "browser_click", map[string]any{"selector": "#btn"})
	browse(t, r, "browser_type", map[string]any{"selector": "#field", "text": "hi"})
	browse(t, r, "browser_keypress", map[string]any{"key": "a", "modifiers": []string{"ctrl"}})
	browse(t, r, "browser_keypress", map[string]any{"key": "Backspace"})
	browse(t, r, "browser_hover", map[string]any{"selector": "#hover"})
	browse(t, r, "browser_scroll", map[string]any{"direction": "down", "pixels": 100})
	mustContain(t, browse(t, r, "browser_query", map[string]any{"selector": "#btn"}), `"Press me"`)
	x, y := center(t, r, "#btn")
	browse(t, r, "browser_click_at", map[string]any{"x": x, "y": y, "clicks": 2})

	log := pageText(t, r, "#log")
	for _, want := range []string{"click trusted=true", "keydown h trusted=true", "input trusted=true", "keydown Control trusted=true",
		"keydown Backspace trusted=true", "mouseenter trusted=true", "wheel trusted=true", "dblclick trusted=true"} {
		if !strings.Contains(log, want) {
			t.Errorf("the page did not see %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "trusted=false") {
		t.Errorf("an untrusted event reached the page:\n%s", log)
	}
	// ctrl+a selected "hi" and Backspace deleted it, as on a keyboard.
	if v := browse(t, r, "browser_query", map[string]any{"selector": "#field"}); strings.Contains(v.Text, `value="hi"`) {
		t.Errorf("ctrl+a, Backspace did not clear the field:\n%s", v.Text)
	}

	// A covered element is reported, not clicked through its cover.
	browse(t, r, "browser_navigate", map[string]any{"url": site.Page("/covered")})
	browseErr(t, r, "browser_click", map[string]any{"selector": "#under"}, "is covered at its centre", "Cookie banner")
}

// center is the viewport point at the centre of an element.
func center(t *testing.T, r *tools.Registry, selector string) (float64, float64) {
	t.Helper()
	res := browse(t, r, "browser_execute_js", map[string]any{"code": "const b = document.querySelector(" + jsonString(selector) + ").getBoundingClientRect(); [b.left + b.width/2, b.top + b.height/2]"})
	var xy []float64
	if err := json.Unmarshal([]byte(strings.TrimPrefix(res.Text, "Result: ")), &xy); err != nil || len(xy) != 2 {
		t.Fatalf("no centre for %s: %s", selector, res.Text)
	}
	return xy[0], xy[1]
}

func TestBrowserAnnotatedClickByIndex(t *testing.T) {
	r, _, _ := browserTools(t, "/aria", nil)
	res := browse(t, r, "browser_screenshot_annotated", map[string]any{})
	if len(res.Images) != 1 {
		t.Fatalf("no picture: %+v", res)
	}
	for name, want := range map[string]string{`button "Save draft"`: "saved", `button "Close dialog"`: "closed", `tab "Settings"`: "tab settings"} {
		m := regexp.MustCompile(`\[(\d+)\] ` + regexp.QuoteMeta(name)).FindStringSubmatch(res.Text)
		if m == nil {
			t.Fatalf("%s is not listed:\n%s", name, res.Text)
		}
		var i int
		fmt.Sscan(m[1], &i)
		mustContain(t, browse(t, r, "browser_click_by_index", map[string]any{"index": i}), "found by index")
		if got := pageText(t, r, "#out"); got != want {
			t.Errorf("index %d (%s) clicked through to %q, want %q", i, name, got, want)
		}
	}
	browseErr(t, r, "browser_click_by_index", map[string]any{"index": 99}, "No element 99")
	if strings.Contains(browse(t, r, "browser_get_content", map[string]any{}).Text, "Save draft\n1") {
		t.Error("the numbered boxes were left on the page")
	}
}

func TestBrowserJSGuard(t *testing.T) {
	r, _, _ := browserTools(t, "/form", nil)
	for _, code := range []string{
		"document.querySelector('#submit').click()",
		"document.getElementById('name').value = 'x'",
		"el.dispatchEvent(new MouseEvent('click', {bubbles: true}))",
		"document.forms[0].submit()",
	} {
		browseErr(t, r, "browser_execute_js", map[string]any{"code": code}, "Refused: the script fakes user input", "browser_click", "browser_type")
	}
	mustContain(t, browse(t, r, "browser_execute_js", map[string]any{"code": "document.title"}), `Result: "Form"`)
	mustContain(t, browse(t, r, "browser_execute_js", map[string]any{"code": "const n = 6 * 7; return {n}"}), `Result: {"n":42}`)
	mustContain(t, browse(t, r, "browser_execute_js", map[string]any{"code": "await new Promise(r => setTimeout(() => r('late'), 50))"}), `"late"`)
	browseErr(t, r, "browser_execute_js", map[string]any{"code": "throw new Error('boom')"}, "The script threw", "boom")
	if got := pageText(t, r, "#name"); got != "" {
		t.Fatal("a refused script ran")
	}
}

func TestBrowserDragFilesAndWaits(t *testing.T) {
	r, _, site := browserTools(t, "/drag", nil)
	browse(t, r, "browser_drag", map[string]any{"from_selector": "#knob", "to_x": 300, "to_y": 40})
	if got := pageText(t, r, "#pos"); !strings.Contains(got, "dropped trusted=true") || strings.HasPrefix(got, "0 ") {
		t.Errorf("drag: %q", got)
	}
	browseErr(t, r, "browser_drag", map[string]any{"from_selector": "#knob"}, "say where the drag ends")

	browse(t, r, "browser_navigate", map[string]any{"url": site.Page("/upload")})
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.csv")
	os.WriteFile(a, []byte("hello"), 0o600)
	os.WriteFile(b, []byte("1,2,3"), 0o600)
	browse(t, r, "browser_set_files", map[string]any{"selector": "#file", "paths": []string{a, b}})
	if got := pageText(t, r, "#chosen"); got != "a.txt:5,b.csv:5" {
		t.Errorf("chosen files: %q", got)
	}
	browseErr(t, r, "browser_set_files", map[string]any{"selector": "#chosen", "paths": []string{a}}, "not a file input")
	browseErr(t, r, "browser_set_files", map[string]any{"selector": "#file", "paths": []string{"a.txt"}}, "is a relative path: give the full path")
	browseErr(t, r, "browser_set_files", map[string]any{"selector": "#file", "paths": []string{filepath.Join(dir, "missing")}}, "not a file that exists")

	browse(t, r, "browser_navigate", map[string]any{"url": site.Page("/list")})
	browse(t, r, "browser_click", map[string]any{"selector": "#add"})
	mustContain(t, browse(t, r, "browser_wait_for_selector", map[string]any{"selector": ".item:nth-child(3)"}), "is visible", `"Item 3"`)
	browse(t, r, "browser_click", map[string]any{"selector": "#add"})
	browse(t, r, "browser_wait_for_text", map[string]any{"text": "item 4", "timeout_ms": 3000})
	browse(t, r, "browser_click", map[string]any{"selector": "#clear"})
	browse(t, r, "browser_wait_for_selector", map[string]any{"selector": ".item", "state": "detached", "timeout_ms": 3000})
	browseErr(t, r, "browser_wait_for_selector", map[string]any{"selector": ".item", "timeout_ms": 300}, "did not become visible")
	browseErr(t, r, "browser_wait_for_text", map[string]any{"text": "never there", "timeout_ms": 300}, "did not appear")
	browseErr(t, r, "browser_wait_for_navigation", map[string]any{"timeout_ms": 300}, "No navigation")

	// A page that navigates by itself a moment after the click.
	browse(t, r, "browser_navigate", map[string]any{"url": site.Page("/nav")})
	browse(t, r, "browser_click", map[string]any{"selector": "#later"})
	mustContain(t, browse(t, r, "browser_wait_for_navigation", map[string]any{"timeout_ms": 5000}), `"Slow"`)
}

func TestBrowserCaptureAndInspect(t *testing.T) {
	r, m, site := browserTools(t, "/long", nil)
	res := browse(t, r, "browser_screenshot", map[string]any{})
	mustContain(t, res, "Saved a screenshot to ", "1280x800")
	checkThumbnail(t, res, 800*1024/1280)
	res = browse(t, r, "browser_screenshot_full_page", map[string]any{})
	var w, h int
	fmt.Sscanf(regexp.MustCompile(`(\d+)x(\d+)\)`).FindString(res.Text), "%dx%d)", &w, &h)
	if w < 1200 || w > 1280 || h <= 2000 {
		t.Fatalf("full page is %dx%d:\n%s", w, h, res.Text)
	}
	checkThumbnail(t, res, 0)

	dir := t.TempDir()
	res = browse(t, r, "browser_save_pdf", map[string]any{"path": filepath.Join(dir, "page.pdf")})
	if data, err := os.ReadFile(filepath.Join(dir, "page.pdf")); err != nil || !bytes.HasPrefix(data, []byte("%PDF")) {
		t.Fatalf("no PDF: %v\n%s", err, res.Text)
	}
	browse(t, r, "browser_save_html", map[string]any{"path": filepath.Join(dir, "page")})
	if data, _ := os.ReadFile(filepath.Join(dir, "page.html")); !bytes.Contains(data, []byte("The end of the long page.")) || !bytes.HasPrefix(data, []byte("<!DOCTYPE html>")) {
		t.Fatalf("HTML: %.200s", data)
	}
	mustContain(t, browse(t, r, "browser_save_html", map[string]any{}), m.ScreenshotsDir())
	// A relative path is the caller's directory (a goal's sandbox, which the policy judged),
	// never the app's own working directory; with no directory it is refused.
	save, _ := r.Get("browser_save_html")
	args := json.RawMessage(fmt.Sprintf(`{"pane_id":%q,"path":"relative.html"}`, bpane))
	if res, err := save.Run(context.Background(), tools.Call{Name: "browser_save_html", Args: args, Dir: dir}); err != nil || res.IsError {
		t.Fatalf("relative save: %v %s", err, res.Text)
	}
	if _, err := os.Stat(filepath.Join(dir, "relative.html")); err != nil {
		t.Fatalf("the relative path was not saved in the call's directory: %v", err)
	}
	if res, _ := save.Run(context.Background(), tools.Call{Name: "browser_save_html", Args: args}); !res.IsError || !strings.Contains(res.Text, "relative path") {
		t.Fatalf("a relative path with no directory: %s", res.Text)
	}
	if _, err := os.Stat("relative.html"); err == nil {
		t.Fatal("a relative save landed in the process's working directory")
	}

	browse(t, r, "browser_navigate", map[string]any{"url": site.Page("/form")})
	mustContain(t, browse(t, r, "browser_get_axtree", map[string]any{}), `heading "Sign up"`, `textbox "Name"`, `button "Send"`, `checkbox "I agree"`)
	mustContain(t, browse(t, r, "browser_get_axtree", map[string]any{"max_nodes": 3}), "the first 3 of")

	browse(t, r, "browser_navigate", map[string]any{"url": site.Page("/set-cookie")})
	mustContain(t, browse(t, r, "browser_get_cookies", map[string]any{}), `"name":"session"`, `"value":"abc123"`, `"expires":`)
	browse(t, r, "browser_set_cookie", map[string]any{"name": "theme", "value": "dark", "expires": time.Now().Add(time.Hour).Unix()})
	mustContain(t, browse(t, r, "browser_get_cookies", map[string]any{}), `"name":"theme"`, `"value":"dark"`)
	browseErr(t, r, "browser_set_cookie", map[string]any{"name": "x", "value": "y", "same_site": "Sometimes"}, "is not Strict, Lax or None")

	res = browse(t, r, "browser_get_action_log", map[string]any{"limit": 50})
	mustContain(t, res, "navigate "+site.Page("/form"), "set_cookie theme", "save_pdf")
	res = browse(t, r, "browser_pane_doctor", map[string]any{})
	mustContain(t, res, "alive=true cdp=true", "js=true", "No problems found.", "Chrome/")
}

// checkThumbnail asserts the result carries a JPEG at most 1024 wide (of height h if h > 0).
func checkThumbnail(t *testing.T, res tools.Result, h int) {
	t.Helper()
	if len(res.Images) != 1 || res.Images[0].MediaType != "image/jpeg" || res.Images[0].Path == "" {
		t.Fatalf("images: %+v", res.Images)
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(res.Images[0].Data))
	if err != nil || cfg.Width != 1024 || (h > 0 && cfg.Height != h) {
		t.Fatalf("thumbnail %dx%d, %v", cfg.Width, cfg.Height, err)
	}
	if _, err := os.Stat(res.Images[0].Path); err != nil {
		t.Fatal(err)
	}
}

// visionRig is a scripted vision model answering replies in order, as a tools.Vision.
func visionRig(t *testing.T, replies ...string) (*llmtest.Server, tools.Vision) {
	t.Helper()
	var rs []llmtest.Reply
	for _, r := range replies {
		rs = append(rs, llmtest.Text(r))
	}
	srv := llmtest.New(t, llmtest.Script{Replies: rs})
	p, err := providers.New(llm.Config{Name: "vision", Kind: llm.KindOpenAI, BaseURL: srv.OpenAIURL(), Model: "text-model", Timeout: 10 * time.Second, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return srv, tools.VisionFunc(func() (llm.Provider, string) { return p, "vision-model" })
}
