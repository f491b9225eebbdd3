package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/clusterspace/clusterspace/backend/browser"
)

func registerBrowserReading(r *Registry, b BrowserDriver, gated func(Tool) Tool) {
	r.Register(
		New("browser_wait_for_selector", "Wait until an element matching a CSS selector is visible (or attached, hidden, detached).", ReadOnly,
			waiting(func(ctx context.Context, p waitSelectorParams, d time.Duration) (Result, error) {
				el, ok, err := b.WaitForSelector(ctx, p.PaneID, p.Selector, p.State, d)
				if err != nil {
					return browserError(err)
				}
				state := or(p.State, browser.StateVisible)
				if !ok {
					return Errorf("%s did not become %s within %v.\n%s", p.Selector, state, d, pageLine(b, p.PaneID)), nil
				}
				text := fmt.Sprintf("%s is %s.", p.Selector, state)
				if el != nil && (state == browser.StateVisible || state == browser.StateAttached) {
					text += " First match: " + el.String()
				}
				return Result{Text: text}, nil
			})),
		New("browser_wait_for_navigation", "Wait until the page navigates and loads. A navigation caused by your last action counts even if it already finished.", ReadOnly,
			waiting(func(ctx context.Context, p waitNavParams, d time.Duration) (Result, error) {
				info, ok, err := b.WaitNavigation(ctx, p.PaneID, d)
				if err != nil {
					return browserError(err)
				}
				if !ok {
					return Errorf("No navigation within %v.\n%s", d, info), nil
				}
				return Result{Text: "Navigated.\n" + info.String()}, nil
			})),
		New("browser_wait_for_text", "Wait until the page's visible text contains the text.", ReadOnly,
			waiting(func(ctx context.Context, p waitTextParams, d time.Duration) (Result, error) {
				ok, err := b.WaitForText(ctx, p.PaneID, p.Text, d)
				if err != nil {
					return browserError(err)
				}
				if !ok {
					return Errorf("%q did not appear within %v.\n%s", p.Text, d, pageLine(b, p.PaneID)), nil
				}
				return Result{Text: fmt.Sprintf("%q is on the page.", p.Text)}, nil
			})),
		New("browser_query", "Describe the first element matching a CSS selector: tag, role, name, text, value, state, position.", ReadOnly,
			func(ctx context.Context, _ Call, p queryParams) (Result, error) {
				els, n, err := b.Query(ctx, p.PaneID, p.Selector, 1)
				if err != nil {
					return browserError(err)
				}
				if n == 0 {
					return Errorf("No element matches %s.", p.Selector), nil
				}
				return Result{Text: fmt.Sprintf("%d element(s) match; the first: %s\nText: %s", n, els[0], els[0].Text)}, nil
			}),
		New("browser_query_all", "List the elements matching a CSS selector.", ReadOnly,
			func(ctx context.Context, _ Call, p queryAllParams) (Result, error) {
				limit, bad := intIn("limit", p.Limit, defaultQueryLimit, 1, maxQueryLimit)
				if bad != nil {
					return *bad, nil
				}
				els, n, err := b.Query(ctx, p.PaneID, p.Selector, limit)
				if err != nil {
					return browserError(err)
				}
				var sb strings.Builder
				fmt.Fprintf(&sb, "%d element(s) match %s", n, p.Selector)
				if n > len(els) {
					fmt.Fprintf(&sb, "; the first %d", len(els))
				}
				sb.WriteString(":\n")
				for i, e := range els {
					fmt.Fprintf(&sb, "%d. %s — %q\n", i+1, e, e.Text)
				}
				return Result{Text: sb.String()}, nil
			}),
		New("browser_get_axtree", "Read the page's accessibility tree (roles, names, states), indented: the page as a screen reader sees it.", ReadOnly,
			func(ctx context.Context, _ Call, p axtreeParams) (Result, error) {
				n, bad := intIn("max_nodes", p.MaxNodes, defaultAXNodes, 1, maxAXNodes)
				if bad != nil {
					return *bad, nil
				}
				tree, total, err := b.AXTree(ctx, p.PaneID, n)
				if err != nil {
					return browserError(err)
				}
				note := ""
				if total > n {
					note = fmt.Sprintf(" (the first %d of %d nodes; raise max_nodes for more)", n, total)
				}
				return Result{Text: fmt.Sprintf("Accessibility tree%s:\n%s", note, tree)}, nil
			}),
		New("browser_get_cookies", "List the cookies the browser sends to the page (or to urls).", ReadOnly,
			func(ctx context.Context, _ Call, p cookiesParams) (Result, error) {
				cs, err := b.Cookies(ctx, p.PaneID, p.URLs)
				if err != nil {
					return browserError(err)
				}
				out, _ := json.Marshal(cs) // Best effort: cookies are plain data.
				return Result{Text: fmt.Sprintf("%d cookie(s): %s", len(cs), out)}, nil
			}),
		New("browser_set_cookie", "Store a cookie in the pane's browser profile.", WriteLocal,
			func(ctx context.Context, _ Call, p setCookieParams) (Result, error) {
				c := browser.Cookie{Name: p.Name, Value: p.Value, URL: p.URL, Domain: p.Domain, Path: p.Path,
					Secure: p.Secure, HTTPOnly: p.HTTPOnly, SameSite: p.SameSite}
				if p.Expires > 0 {
					c.Expires = time.Unix(p.Expires, 0)
				}
				if err := b.SetCookie(ctx, p.PaneID, c); err != nil {
					return browserError(err)
				}
				return Result{Text: fmt.Sprintf("Cookie %q set.", p.Name)}, nil
			}),
		gated(New("browser_execute_js", "Run JavaScript in the page and get its value as JSON: for reading state no other tool shows. "+
			"Not for input: scripts that click, set values or dispatch events are refused; use the browser_click/type/select/check tools, which send real events.", NetworkWrite,
			func(ctx context.Context, _ Call, p jsParams) (Result, error) {
				if how := browser.FakesInput(p.Code); how != "" {
					return Errorf("Refused: the script fakes user input (%s). Pages can tell, and often ignore, such events. "+
						"Use browser_click or browser_smart_click to click, browser_type to enter text, browser_select_option, browser_check, "+
						"browser_keypress and browser_set_files: they send real input.", how), nil
				}
				v, err := b.Evaluate(ctx, p.PaneID, p.Code)
				if err != nil {
					return browserError(err)
				}
				text := string(v)
				if r := []rune(text); len(r) > maxJSResultChars {
					text = string(r[:maxJSResultChars]) + fmt.Sprintf("… (cut at %d of %d characters)", maxJSResultChars, len(r))
				}
				return Result{Text: "Result: " + text}, nil
			})),
		New("browser_get_action_log", "List the latest actions on the pane (yours and the page's: navigations, dialogs, downloads, crashes).", ReadOnly,
			func(ctx context.Context, _ Call, p logParams) (Result, error) {
				n, bad := intIn("limit", p.Limit, defaultLogEntries, 1, 200)
				if bad != nil {
					return *bad, nil
				}
				log, err := b.ActionLog(p.PaneID, n)
				if err != nil {
					return browserError(err)
				}
				var sb strings.Builder
				fmt.Fprintf(&sb, "The last %d action(s) on %s:\n", len(log), p.PaneID)
				for _, a := range log {
					fmt.Fprintf(&sb, "%s %s %s", a.Time.Format("15:04:05.000"), a.Action, a.Detail)
					if a.Error != "" {
						sb.WriteString(" error: " + a.Error)
					}
					sb.WriteString(" @ " + a.URL + "\n")
				}
				return Result{Text: sb.String()}, nil
			}),
		New("browser_pane_doctor", "Check a browser pane: is the tab alive, does the browser answer, do scripts run; and what to do if not.", ReadOnly,
			func(ctx context.Context, _ Call, p paneParams) (Result, error) {
				d, err := b.Doctor(ctx, p.PaneID)
				if err != nil {
					return browserError(err)
				}
				text := fmt.Sprintf("Tab %s: %q — %s\nalive=%v cdp=%v (%v) js=%v (%v)\nbrowser: %s pid %d, started in %v; viewers: %d",
					d.Tab.TabID, d.Tab.Title, d.Tab.URL, d.Alive, d.CDP, d.CDPLatency.Round(time.Microsecond), d.JS, d.JSLatency.Round(time.Microsecond),
					d.Browser, d.PID, d.LaunchTook.Round(time.Millisecond), d.Viewers)
				if len(d.Problems) == 0 {
					return Result{Text: text + "\nNo problems found."}, nil
				}
				return Result{Text: text + "\nProblems:\n- " + strings.Join(d.Problems, "\n- ")}, nil
			}),
	)
}
