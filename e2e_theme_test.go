package main

import (
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// systemScheme makes the page's prefers-color-scheme answer light or dark, as the OS setting does.
func systemScheme(scheme string) chromedp.Action {
	return emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}})
}

// appBackground is the computed background of the app's root, as drawn.
const appBackground = `getComputedStyle(document.documentElement).backgroundColor + '|' + getComputedStyle(document.querySelector('.app')).color`

// TestThemeFollowsTheSystemUnlessChosen: in the served UI the app is light when the system asks
// for light and dark when it asks for dark, following a change live; a theme chosen in Settings
// wins over the system's and is still in force after a reload.
func TestThemeFollowsTheSystemUnlessChosen(t *testing.T) {
	srv := startServe(t, t.TempDir(), e2ePassword)
	ctx := newBrowser(t)
	step(t, ctx, "the system asks for light", systemScheme("light"))
	logIn(t, ctx, srv.URL, e2ePassword)
	var light, dark, chosen string
	step(t, ctx, "light palette",
		waitJS(`document.documentElement.dataset.theme === 'light'`),
		chromedp.Evaluate(appBackground, &light))
	step(t, ctx, "the system switches to dark",
		systemScheme("dark"),
		waitJS(`document.documentElement.dataset.theme === 'dark'`),
		chromedp.Evaluate(appBackground, &dark))
	if light == dark {
		t.Fatalf("the light and dark themes look the same: %s", light)
	}
	shot(t, ctx, "theme-dark")
	step(t, ctx, "choose light in Settings",
		chromedp.Click(`[data-testid=settings-open]`),
		chromedp.Click(`[data-testid=settings-tab-terminal]`),
		chromedp.SetValue(`[data-testid=theme-choice]`, "light"),
		chromedp.Evaluate(`document.querySelector('[data-testid=theme-choice]').dispatchEvent(new Event('change', {bubbles: true}))`, nil),
		waitJS(`document.documentElement.dataset.theme === 'light'`),
		chromedp.Click(`[data-testid=settings-close]`))
	step(t, ctx, "reload: the choice holds against the dark system",
		chromedp.Reload(),
		chromedp.WaitVisible(`[data-testid=app-ready]`),
		waitJS(`document.documentElement.dataset.theme === 'light'`),
		chromedp.Evaluate(appBackground, &chosen))
	if chosen != light {
		t.Errorf("chosen light theme draws %s, the system's light %s", chosen, light)
	}
	shot(t, ctx, "theme-light")
}
