package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// settingsTabs are the Settings sections, as their tab buttons' test ids name them.
var settingsTabs = []string{"providers", "prices", "terminal", "ssh", "logins", "personas", "skills", "templates", "plugins", "mcp"}

// settingsFit measures the open Settings dialog: whether its tab row and close button lie inside
// its box, and every tab label whose text is cut or that something else covers.
const settingsFit = `(() => {
  const dlg = document.querySelector('[data-testid=settings]');
  if (!dlg) return JSON.stringify({problems: ['the Settings dialog is not open']});
  const box = dlg.getBoundingClientRect();
  const problems = [];
  const inside = (el, what) => {
    const r = el.getBoundingClientRect();
    if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
      problems.push(what + ' at ' + [r.left, r.top, r.right, r.bottom].map(Math.round).join(',') +
        ' is not inside the dialog at ' + [box.left, box.top, box.right, box.bottom].map(Math.round).join(','));
    if (r.right > innerWidth + 0.5 || r.bottom > innerHeight + 0.5) problems.push(what + ' is outside the window');
    return r;
  };
  inside(dlg.querySelector('[role=tablist]'), 'the tab row');
  const close = dlg.querySelector('[data-testid=settings-close]');
  const cr = inside(close, 'the close button');
  const hit = document.elementFromPoint(cr.left + cr.width / 2, cr.top + cr.height / 2);
  if (!close.contains(hit)) problems.push('the close button is covered by ' + (hit?.outerHTML ?? 'nothing').slice(0, 80));
  for (const tab of dlg.querySelectorAll('[role=tab]')) {
    const label = tab.textContent.trim();
    const r = inside(tab, 'tab "' + label + '"');
    if (tab.scrollWidth > tab.clientWidth) problems.push('tab "' + label + '" is cut: ' + tab.scrollWidth + ' px of text in ' + tab.clientWidth + ' px');
    const h = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    if (!tab.contains(h)) problems.push('tab "' + label + '" is hidden under ' + (h?.outerHTML ?? 'nothing').slice(0, 80));
  }
  return JSON.stringify({problems});
})()`

// checkSettingsFit fails the test with every part of the Settings header that does not fit.
func checkSettingsFit(t *testing.T, ctx context.Context, size string) {
	t.Helper()
	var raw string
	step(t, ctx, "measure Settings at "+size, chromedp.Evaluate(settingsFit, &raw))
	var got struct{ Problems []string }
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatalf("measure Settings: %q: %v", raw, err)
	}
	if len(got.Problems) > 0 {
		shot(t, ctx, "settings-fit-"+size)
		t.Errorf("at %s the Settings header does not fit its dialog:\n  %s", size, strings.Join(got.Problems, "\n  "))
	}
}

// focusInSettings is true while the keyboard focus is inside the Settings dialog, so Esc and
// Tab reach it.
const focusInSettings = `document.querySelector('[data-testid=settings]')?.contains(document.activeElement) === true`

// A new user's walk through Settings in the served UI: the dialog holds its ten tabs and its
// close button at a laptop's window and a narrow one; after saving a form the focus is still in
// the dialog, so Esc closes it and the focus goes back to the gear that opened it; "Test
// connection" on an empty provider form says which field to fill; and no tab, list or form has a
// serious accessibility problem.
func TestWalkthroughSettings(t *testing.T) {
	_, ctx := openApp(t)

	for _, sz := range []struct{ w, h int64 }{{1280, 800}, {900, 700}, {800, 600}} {
		size := fmt.Sprintf("%dx%d", sz.w, sz.h)
		step(t, ctx, "open Settings at "+size,
			chromedp.EmulateViewport(sz.w, sz.h),
			chromedp.Click(`[data-testid=settings-open]`),
			chromedp.WaitVisible(`[data-testid=settings]`),
			chromedp.WaitVisible(`[data-testid=providers-tab]`))
		checkSettingsFit(t, ctx, size)
		shot(t, ctx, "settings-"+size)
		step(t, ctx, "close Settings at "+size,
			chromedp.KeyEvent(kb.Escape),
			waitJS(`!document.querySelector('[data-testid=settings]')`))
	}
	step(t, ctx, "back to 1280x800", chromedp.EmulateViewport(1280, 800))

	// The empty add form's test names the key field and what to type, not an internal id.
	step(t, ctx, "Test connection on an empty provider form",
		chromedp.Click(`[data-testid=settings-open]`),
		chromedp.WaitVisible(`[data-testid=providers-tab]`),
		chromedp.Click(`[data-testid=provider-add]`),
		chromedp.WaitVisible(`[data-testid=provider-form]`),
		chromedp.Click(`[data-testid=provider-form-test]`),
		waitJS(`!!document.querySelector('[data-testid=field-error][data-field=apiKey]') || !!document.querySelector('[data-testid=provider-form-test-result]')`))
	var formText string
	step(t, ctx, "read the provider form", chromedp.Evaluate(`document.querySelector('[data-testid=provider-form]').innerText`, &formText))
	if !strings.Contains(formText, "API key: enter the OpenAI key to test this provider") || strings.Contains(formText, "unsaved") {
		shot(t, ctx, "settings-empty-test")
		t.Errorf("Test connection on an empty form should say %q under the API key, without the internal name \"unsaved\"; the form reads:\n%s",
			"API key: enter the OpenAI key to test this provider", formText)
	}
	shot(t, ctx, "settings-provider-form-empty-test")
	axeCheck(t, ctx, "Settings → Providers, the add form", `[data-testid=settings]`)

	// Save a provider: the form goes, the focus stays in the dialog.
	step(t, ctx, "save a provider",
		chromedp.SendKeys(`[data-testid=provider-name]`, "Local"),
		chromedp.SendKeys(`[data-testid=provider-base-url]`, "http://127.0.0.1:9/v1"),
		chromedp.SendKeys(`[data-testid=provider-model]`, "small"),
		chromedp.Click(`[data-testid=provider-save]`),
		chromedp.WaitVisible(rowSel("Local")))
	step(t, ctx, "after Save the focus is in Settings", waitJS(focusInSettings))
	axeCheck(t, ctx, "Settings → Providers, the list", `[data-testid=settings]`)
	step(t, ctx, "Esc closes Settings and the focus goes back to the gear",
		chromedp.KeyEvent(kb.Escape),
		waitJS(`!document.querySelector('[data-testid=settings]')`),
		waitJS(`document.activeElement === document.querySelector('[data-testid=settings-open]')`))

	// The SSH and Logins forms: after Save and after Cancel the focus is still in the dialog.
	step(t, ctx, "open Settings → SSH servers, add one",
		chromedp.Click(`[data-testid=settings-open]`),
		chromedp.Click(`[data-testid=settings-tab-ssh]`),
		chromedp.Click(`[data-testid=ssh-add]`),
		chromedp.WaitVisible(`[data-testid=ssh-form]`))
	axeCheck(t, ctx, "Settings → SSH servers, the add form", `[data-testid=settings]`)
	step(t, ctx, "save the SSH server",
		chromedp.SendKeys(`[data-testid=ssh-name]`, "Build box"),
		chromedp.SendKeys(`[data-testid=ssh-host]`, "build.invalid"),
		chromedp.Click(`[data-testid=ssh-save]`),
		chromedp.WaitVisible(`[data-testid=ssh-row][data-name="Build box"]`),
		waitJS(focusInSettings))
	shot(t, ctx, "settings-ssh-list")
	step(t, ctx, "open and cancel the Logins form",
		chromedp.Click(`[data-testid=settings-tab-logins]`),
		chromedp.Click(`[data-testid=login-add]`),
		chromedp.WaitVisible(`[data-testid=login-form]`))
	axeCheck(t, ctx, "Settings → Logins, the add form", `[data-testid=settings]`)
	step(t, ctx, "save a login",
		chromedp.SendKeys(`[data-testid=login-origin]`, "https://staging.example.com"),
		chromedp.SendKeys(`[data-testid=login-username]`, "me"),
		chromedp.SendKeys(`[data-testid=settings] [data-testid=login-password]`, "pw-123456"),
		chromedp.Click(`[data-testid=login-save]`),
		chromedp.WaitVisible(`[data-testid=login-row]`),
		waitJS(focusInSettings))

	// Delete asks first: Esc answers the question, not Settings; after the delete the focus is
	// still in Settings.
	step(t, ctx, "Esc on the delete question keeps Settings open",
		chromedp.Click(`[data-testid=settings-tab-ssh]`),
		chromedp.Click(`[data-testid=ssh-row][data-name="Build box"] [data-testid=ssh-delete]`),
		chromedp.WaitVisible(`[data-testid=confirm-dialog]`),
		chromedp.KeyEvent(kb.Escape),
		waitJS(`!document.querySelector('[data-testid=confirm-dialog]') && !!document.querySelector('[data-testid=settings]')`),
		waitJS(focusInSettings))
	step(t, ctx, "delete the SSH server",
		chromedp.Click(`[data-testid=ssh-row][data-name="Build box"] [data-testid=ssh-delete]`),
		chromedp.Click(`[data-testid=confirm-ok]`),
		chromedp.WaitVisible(`[data-testid=ssh-empty]`),
		waitJS(focusInSettings))

	// Every tab, with what it lists, has no serious or critical accessibility violation, in the
	// light palette and the dark one.
	for _, scheme := range []string{"light", "dark"} {
		step(t, ctx, "the system asks for "+scheme,
			systemScheme(scheme),
			waitJS(fmt.Sprintf(`document.documentElement.dataset.theme === %q`, scheme)))
		for _, tab := range settingsTabs {
			step(t, ctx, "open the tab "+tab,
				chromedp.Click(fmt.Sprintf(`[data-testid=settings-tab-%s]`, tab)),
				waitJS(fmt.Sprintf(`document.querySelector('[data-testid=settings-tab-%s]').getAttribute('aria-selected') === 'true'`, tab)),
				// Loaded: no spinner left in the section.
				waitJS(`!!document.querySelector('#settings-body') && !document.querySelector('#settings-body .spinner')`),
				chromedp.Sleep(200*time.Millisecond))
			axeCheck(t, ctx, fmt.Sprintf("Settings → %s (%s)", tab, scheme), `[data-testid=settings]`)
			step(t, ctx, "the focus is in Settings on the tab "+tab, waitJS(focusInSettings))
		}
	}
	step(t, ctx, "Esc from a tab closes Settings",
		chromedp.KeyEvent(kb.Escape),
		waitJS(`!document.querySelector('[data-testid=settings]')`))
}
