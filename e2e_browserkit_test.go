package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestLoginsAndRecipesEndToEnd: Settings → Logins adds a login (the password never shown
// after saving) and Reveal under serve asks for the server's password first; a browser pane's
// Recipes menu lists a saved recipe, asks for its param and runs it in the pane.
func TestLoginsAndRecipesEndToEnd(t *testing.T) {
	const saved = "e2e-PW-canary-4411"
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Search</title><input id="q"><p id="out">-</p>`)
	}))
	defer site.Close()
	srv := startServe(t, t.TempDir(), e2ePassword)
	token, paneID := makeBrowserPane(t, srv)
	apiCall(t, "POST", srv.URL+"/api/recipes", token, map[string]any{"name": "find", "description": "Type a query into the search box",
		"steps": []map[string]any{
			{"tool": "browser_navigate", "args": map[string]any{"url": site.URL + "/search"}},
			{"tool": "browser_type", "args": map[string]any{"selector": "#q", "text": "{{query}}"}},
		}}, nil)
	ctx := newBrowser(t)
	logIn(t, ctx, srv.URL, e2ePassword)

	step(t, ctx, "open Settings → Logins",
		chromedp.Click(`[data-testid=settings-open]`),
		chromedp.WaitVisible(`[data-testid=settings]`),
		chromedp.Click(`[data-testid=settings-tab-logins]`),
		chromedp.WaitVisible(`[data-testid=logins-empty]`))
	step(t, ctx, "a site that is not http(s) is refused at its field",
		chromedp.Click(`[data-testid=login-add]`),
		chromedp.SendKeys(`[data-testid=login-origin]`, "ftp://files.example"),
		chromedp.SendKeys(`[data-testid=login-username]`, "ada"),
		chromedp.SendKeys(`[data-testid=login-password]`, saved),
		chromedp.Click(`[data-testid=login-save]`),
		waitJS(`document.querySelector('[data-testid=login-origin]').getAttribute('aria-invalid') === 'true' && document.querySelector('[data-testid=field-error][data-field=origin]')?.textContent.includes('not an http or https address')`))
	step(t, ctx, "add the login",
		chromedp.SendKeys(`[data-testid=login-origin]`, strings.Repeat(kb.Backspace, 40)+"staging.example.com"),
		chromedp.Click(`[data-testid=login-save]`),
		chromedp.WaitVisible(`[data-testid=login-row][data-origin="https://staging.example.com"]`))
	if html := readJS[string](t, ctx, "page text", `JSON.stringify(document.body.innerHTML)`); strings.Contains(html, saved) {
		t.Fatal("the saved password is on the page after saving")
	}
	step(t, ctx, "Reveal asks for the server's password, then shows it",
		chromedp.Click(`[data-testid=login-reveal]`),
		chromedp.WaitVisible(`[data-testid=login-reveal-ask]`),
		chromedp.SendKeys(`[data-testid=login-reveal-password]`, "not-the-password"),
		chromedp.Click(`[data-testid=login-reveal-submit]`),
		waitJS(`(document.querySelector('[data-testid=settings-error]')?.textContent ?? '').includes('wrong password')`),
		chromedp.SendKeys(`[data-testid=login-reveal-password]`, e2ePassword),
		chromedp.Click(`[data-testid=login-reveal-submit]`),
		waitJS(fmt.Sprintf(`document.querySelector('[data-testid=login-revealed]')?.textContent === %q`, saved)),
		chromedp.Click(`[data-testid=settings-close]`))

	pane := paneSel(paneID)
	step(t, ctx, "the pane's Recipes menu lists the recipe and asks for its param",
		chromedp.Click(pane+` [data-testid=browser-recipes]`),
		chromedp.WaitVisible(`[data-testid=recipe-row][data-name=find]`),
		chromedp.Click(`[data-testid=recipe-row][data-name=find] [data-testid=recipe-choice]`),
		chromedp.WaitVisible(`[data-testid=recipe-param][data-param=query]`),
		waitJS(`document.querySelector('[data-testid=recipe-run]').disabled`),
		chromedp.SendKeys(`[data-testid=recipe-param][data-param=query]`, "gophers"),
		chromedp.Click(`[data-testid=recipe-run]`),
		waitJS(`(document.querySelector('[data-testid=recipe-outcome]')?.textContent ?? '').includes('Done: all 2 steps ran.')`))
	var page struct {
		Tabs []struct {
			URL    string `json:"url"`
			Active bool   `json:"active"`
		} `json:"tabs"`
	}
	apiCall(t, "GET", srv.URL+"/api/panes/"+paneID+"/browser/tabs", token, nil, &page)
	if len(page.Tabs) == 0 || !strings.HasSuffix(page.Tabs[0].URL, "/search") {
		t.Errorf("the pane after the run: %+v", page)
	}
}
