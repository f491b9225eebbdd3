package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// axe-core (an npm devDependency of the frontend, installed by `npm ci`) checks a screen for
// what keeps people from reading or working it: contrast, names of controls, focus order,
// dialogs without a label. axeCheck injects it into the page the browser shows and fails the
// test on every serious or critical violation, naming the rule, the element and how to fix it.

var (
	axeOnce   sync.Once
	axeSource string
	axeErr    error
)

func axeScript(t testing.TB) string {
	t.Helper()
	axeOnce.Do(func() {
		b, err := os.ReadFile(filepath.Join("frontend", "node_modules", "axe-core", "axe.min.js"))
		if err != nil {
			axeErr = fmt.Errorf("axe-core is not installed: run scripts/setup.sh (npm ci in frontend): %w", err)
			return
		}
		axeSource = string(b)
	})
	if axeErr != nil {
		t.Fatal(axeErr)
	}
	return axeSource
}

// axeViolation is what axe reports of one rule, cut to what a person needs to fix it.
type axeViolation struct {
	ID      string `json:"id"`
	Impact  string `json:"impact"`
	Help    string `json:"help"`
	Targets []struct {
		Target  []string `json:"target"`
		Summary string   `json:"failureSummary"`
	} `json:"nodes"`
}

// axeViolations runs axe on the document (or the elements a CSS selector picks) and returns
// the serious and critical violations of WCAG 2 A and AA.
func axeViolations(t testing.TB, ctx context.Context, within string) []axeViolation {
	t.Helper()
	inject := `if (!window.axe) { ` + axeScript(t) + ` } true`
	ctxSel := "document"
	if within != "" {
		ctxSel = fmt.Sprintf("document.querySelector(%q)", within)
	}
	run := fmt.Sprintf(`axe.run(%s, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}, resultTypes: ['violations']})
  .then(r => JSON.stringify(r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
    .map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map(n => ({target: n.target, failureSummary: n.failureSummary}))}))))`, ctxSel)
	var ok bool
	var raw string
	actx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Run(actx,
		chromedp.Evaluate(inject, &ok),
		chromedp.Evaluate(run, &raw, func(p *cdpruntime.EvaluateParams) *cdpruntime.EvaluateParams { return p.WithAwaitPromise(true) }),
	); err != nil {
		t.Fatalf("run axe-core: %v", err)
	}
	var vs []axeViolation
	if err := json.Unmarshal([]byte(raw), &vs); err != nil {
		t.Fatalf("axe-core's answer %q: %v", raw, err)
	}
	return vs
}

// axeCheck fails the test with every serious or critical accessibility violation on the
// screen named by screen (for the message); within limits the check to part of the page.
func axeCheck(t testing.TB, ctx context.Context, screen, within string) {
	t.Helper()
	vs := axeViolations(t, ctx, within)
	if len(vs) == 0 {
		return
	}
	shot(t, ctx, "axe-"+sanitize(screen))
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, "\n  %s (%s): %s", v.ID, v.Impact, v.Help)
		for _, n := range v.Targets {
			fmt.Fprintf(&b, "\n    at %s: %s", strings.Join(n.Target, " "), strings.ReplaceAll(n.Summary, "\n", " "))
		}
	}
	t.Errorf("screen %q has %d serious or critical accessibility violations:%s", screen, len(vs), b.String())
}
