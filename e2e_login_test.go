package main

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// A local process (a goal's shell, say) fails logins on purpose and locks out 127.0.0.1. A
// browser the server has not seen before shares that address and is locked too; the owner
// reads the one-time unlock code in serve's log, types it on the login screen and gets in.
func TestLoginUnlockCodeAfterALocalLockout(t *testing.T) {
	srv := startServe(t, t.TempDir(), e2ePassword)
	for range 10 {
		resp, err := http.Post(srv.URL+"/api/login", "application/json", strings.NewReader(`{"password":"guess"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	codes := regexp.MustCompile(`unlock_code=(\S+)`).FindAllStringSubmatch(srv.stderr.String(), -1)
	if len(codes) == 0 {
		t.Fatalf("serve logged no unlock code after the lockout:\n%s", srv.stderr)
	}
	code := codes[len(codes)-1][1]

	ctx := newBrowser(t)
	step(t, ctx, "the owner's fresh browser is locked out and offered the unlock field",
		chromedp.Navigate(srv.URL),
		chromedp.WaitVisible(`[data-testid=login-password]`),
		chromedp.SendKeys(`[data-testid=login-password]`, e2ePassword),
		chromedp.Click(`[data-testid=login-submit]`),
		waitJS(`(document.querySelector('[data-testid=login-error]')?.textContent ?? '').includes('unlock code')`),
		chromedp.WaitVisible(`[data-testid=login-unlock]`),
		waitJS(`document.querySelector('[data-testid=login-submit]').disabled === true`))
	step(t, ctx, "a wrong code is named as the problem",
		chromedp.SendKeys(`[data-testid=login-unlock]`, "AAAA-BBBB-CCCC"),
		chromedp.Click(`[data-testid=login-submit]`),
		waitJS(`(document.querySelector('[data-testid=login-error]')?.textContent ?? '').includes('not the one in the server')`),
		waitJS(`document.querySelector('[data-testid=login-unlock]').getAttribute('aria-invalid') === 'true'`))
	step(t, ctx, "the code from the log lets the owner in",
		chromedp.SendKeys(`[data-testid=login-unlock]`, strings.Repeat(kb.Backspace, 20)+code),
		chromedp.Click(`[data-testid=login-submit]`),
		chromedp.WaitVisible(`[data-testid=app-ready]`))
}
