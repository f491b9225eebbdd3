package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/browser"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/tools"
)

func TestBrowserVisualVerification(t *testing.T) {
	srv, vision := visionRig(t, "YES\nThe Sign up heading and the form are shown.", "no.\nThere is no success banner.",
		"UNCLEAR\nThe page is blank.", "It might be there.", "A sign-up form with Name and Email fields and a Send button.")
	r, m, _ := browserTools(t, "/form", vision)

	for _, want := range []struct{ verdict, explanation string }{
		{"YES", "The Sign up heading and the form are shown."},
		{"NO", "There is no success banner."},
		{"UNCLEAR", "The page is blank."},
		{"UNCLEAR", "the judge did not answer YES, NO or UNCLEAR: It might be there."},
	} {
		res := browse(t, r, "browser_verify_visual_state", map[string]any{"expected_state": "a sign-up form"})
		var v struct{ Verdict, Explanation, Screenshot_path string }
		if err := json.Unmarshal([]byte(res.Text), &v); err != nil {
			t.Fatalf("%v: %s", err, res.Text)
		}
		if v.Verdict != want.verdict || v.Explanation != want.explanation {
			t.Errorf("got %+v, want %+v", v, want)
		}
		if _, err := os.Stat(v.Screenshot_path); err != nil || !strings.HasPrefix(v.Screenshot_path, m.ScreenshotsDir()) {
			t.Errorf("screenshot %q: %v", v.Screenshot_path, err)
		}
	}
	mustContain(t, browse(t, r, "browser_describe_screen", map[string]any{"prompt": "the buttons"}), "Send button", "(screenshot: ")

	reqs := srv.ChatRequests()
	if len(reqs) != 5 {
		t.Fatalf("%d model calls, want 5", len(reqs))
	}
	for i, req := range reqs {
		body := string(req.Body)
		if !strings.Contains(body, `"image_url"`) || !strings.Contains(body, "data:image/png;base64,iVBORw0KGgo") {
			t.Errorf("call %d sent no PNG image part:\n%.400s", i, body)
		}
		if req.Model != "vision-model" {
			t.Errorf("call %d asked model %q, want the vision model", i, req.Model)
		}
	}
	if reqs[0].System != browser.VisualJudgePrompt || !strings.Contains(reqs[0].LastUser, "a sign-up form") {
		t.Errorf("judge prompt: system %q, user %q", reqs[0].System, reqs[0].LastUser)
	}
	if !strings.Contains(reqs[4].LastUser, "the buttons") {
		t.Errorf("describe prompt: %q", reqs[4].LastUser)
	}
}

func TestBrowserVisualCheckAndNoVisionModel(t *testing.T) {
	_, vision := visionRig(t, "NO\nThe list has two items.", "YES\nThe list has three items.")
	r, m, _ := browserTools(t, "/list", nil)
	ctx := context.Background()

	// The goal runner's visual criterion: fails, then (after the work) passes.
	ok, detail, err := tools.VisualCheck(ctx, m, vision, bpane, "Does the list show three items?")
	if err != nil || ok || !strings.Contains(detail, "answered NO") || !strings.Contains(detail, "two items") {
		t.Fatalf("first check: %v %q %v", ok, detail, err)
	}
	browse(t, r, "browser_click", map[string]any{"selector": "#add"})
	ok, detail, err = tools.VisualCheck(ctx, m, vision, bpane, "Does the list show three items?")
	if err != nil || !ok || !strings.Contains(detail, "answered YES") {
		t.Fatalf("second check: %v %q %v", ok, detail, err)
	}
	if _, _, err := tools.VisualCheck(ctx, m, vision, "ghost", "?"); err == nil || !strings.Contains(err.Error(), bpane) {
		t.Fatalf("a missing pane: %v", err)
	}

	// No vision model: the tools and the check name the setting to change.
	browseErr(t, r, "browser_verify_visual_state", map[string]any{"expected_state": "x"}, "Settings → Providers → Vision model")
	browseErr(t, r, "browser_describe_screen", map[string]any{}, "Settings → Providers → Vision model")
	none := tools.VisionFunc(func() (llm.Provider, string) { return nil, "" })
	if _, _, err := tools.VisualCheck(ctx, m, none, bpane, "?"); err == nil || !strings.Contains(err.Error(), "Vision model") {
		t.Fatalf("no vision model: %v", err)
	}
}

func TestBrowserMoneyGateRaisesRisk(t *testing.T) {
	r, _, site := browserTools(t, "/form", nil)
	risk := func(name string, args map[string]any) (tools.Risk, string) {
		tool, _ := r.Get(name)
		if _, ok := args["pane_id"]; !ok {
			args["pane_id"] = bpane
		}
		b, _ := json.Marshal(args)
		return tools.RiskOf(tool, b)
	}
	if got, why := risk("browser_navigate", map[string]any{"url": site.Page("/form")}); got != tools.NetworkGet || why != "" {
		t.Errorf("navigate to a form: %v %q", got, why)
	}
	if got, why := risk("browser_navigate", map[string]any{"url": site.Page("/checkout")}); got != tools.SpendsMoney || !strings.Contains(why, "checkout") {
		t.Errorf("navigate to a checkout: %v %q", got, why)
	}
	if got, _ := risk("browser_click", map[string]any{"selector": "#submit"}); got != tools.NetworkWrite {
		t.Errorf("click on a form: %v", got)
	}
	if got, why := risk("browser_type", map[string]any{"text": "4242 4242 4242 4242"}); got != tools.SpendsMoney || !strings.Contains(why, "card number") {
		t.Errorf("typing a card number: %v %q", got, why)
	}
	browse(t, r, "browser_navigate", map[string]any{"url": site.Page("/checkout")})
	for _, name := range []string{"browser_click", "browser_smart_click", "browser_type", "browser_keypress", "browser_click_at", "browser_execute_js", "browser_click_by_index"} {
		if got, why := risk(name, map[string]any{}); got != tools.SpendsMoney || why == "" {
			t.Errorf("%s on a checkout page: %v %q", name, got, why)
		}
	}
	if got, _ := risk("browser_get_content", map[string]any{}); got != tools.ReadOnly {
		t.Errorf("reading a checkout page: %v", got)
	}
}

// Typing into a password-like field and uploading files ask the person first (the chat
// honours tools.Confirmer whatever its ask-above level); ordinary fields do not.
func TestBrowserConfirmsSecretsAndUploads(t *testing.T) {
	r, _, _ := browserTools(t, "/login", nil)
	confirm := func(name string, args map[string]any) string {
		tool, _ := r.Get(name)
		c, ok := tool.(tools.Confirmer)
		if !ok {
			t.Fatalf("%s cannot ask the person first", name)
		}
		if _, ok := args["pane_id"]; !ok {
			args["pane_id"] = bpane
		}
		b, _ := json.Marshal(args)
		return c.Confirm(context.Background(), b)
	}
	for _, tc := range []struct {
		args map[string]any
		want string // "" = no question
	}{
		{map[string]any{"selector": "#user", "text": "ada"}, ""},
		{map[string]any{"selector": "#pw", "text": "hunter2"}, "password field"},
		{map[string]any{"label": "Code", "text": "123456"}, "one-time-code"},
		{map[string]any{"aria_label": "Card PIN", "text": "1234"}, "takes a secret"},
		{map[string]any{"selector": "#nope", "text": "x"}, ""}, // not found: browser_type reports it
	} {
		if got := confirm("browser_type", tc.args); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("browser_type %v: asks %q, want %q", tc.args, got, tc.want)
		}
	}
	// Without a locator the text goes to the focused element.
	browse(t, r, "browser_click", map[string]any{"selector": "#pw"})
	if got := confirm("browser_type", map[string]any{"text": "hunter2"}); !strings.Contains(got, "password field") {
		t.Errorf("typing into the focused password field asks %q", got)
	}
	browse(t, r, "browser_click", map[string]any{"selector": "#user"})
	if got := confirm("browser_type", map[string]any{"text": "ada"}); got != "" {
		t.Errorf("typing into the focused user field asks %q", got)
	}
	if got := confirm("browser_set_files", map[string]any{"selector": "#file", "paths": []string{"/tmp/report.pdf"}}); !strings.Contains(got, "/tmp/report.pdf") {
		t.Errorf("uploading asks %q", got)
	}
	if got := confirm("browser_type", map[string]any{"pane_id": "nope", "text": "x"}); !strings.Contains(got, "could not be checked") {
		t.Errorf("a field that cannot be checked asks %q", got)
	}
}
