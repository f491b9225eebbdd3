package browser

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

//go:embed page.js
var pageHelper string

// PageError is a mistake in what was asked of the page (no such element, a bad selector, a
// covered element): the caller, often a model, can fix it and try again.
type PageError struct{ Msg string }

func (e *PageError) Error() string { return e.Msg }

func pageErrorf(format string, args ...any) error {
	return &PageError{Msg: fmt.Sprintf(format, args...)}
}

// Actionable reports whether err is about the page or the request (a model can act on it:
// fix a selector, reconnect a crashed tab, pick a known pane) rather than the machine failing.
func Actionable(err error) bool {
	if err == nil || errors.Is(err, ErrClosed) || errors.Is(err, ErrNoChromium) || errors.Is(err, context.Canceled) {
		return false
	}
	var pe *PageError
	var ne *NavigationError
	return errors.As(err, &pe) || errors.As(err, &ne) || errors.Is(err, ErrNoPane) || errors.Is(err, ErrNoTab) ||
		errors.Is(err, ErrCrashed) || errors.Is(err, ErrNoHistory) || errors.Is(err, context.DeadlineExceeded) ||
		strings.Contains(err.Error(), "did not answer")
}

// Element describes one element of a page, as the model reads it.
type Element struct {
	Index    int    `json:"index,omitempty"` // its number in the last annotated screenshot
	Tag      string `json:"tag"`
	Role     string `json:"role,omitempty"`
	Name     string `json:"name,omitempty"`
	Text     string `json:"text,omitempty"`
	Selector string `json:"selector,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Href     string `json:"href,omitempty"`
	Value    string `json:"value,omitempty"`
	Checked  *bool  `json:"checked,omitempty"`
	Disabled bool   `json:"disabled,omitempty"`
	Visible  bool   `json:"visible"`
	X        int    `json:"x"`
	Y        int    `json:"y"`
	Width    int    `json:"width"`
	Height   int    `json:"height"`
}

// Locator says which element to act on. Given several, they are tried as a fallback chain:
// selector → aria-label → role + text → visible text (aria-label and text stand in for each
// other, so a text alone is tried as a label, an interactive element's name, then visible text).
type Locator struct {
	Selector  string `json:"selector,omitempty"`
	AriaLabel string `json:"ariaLabel,omitempty"`
	Role      string `json:"role,omitempty"`
	Text      string `json:"text,omitempty"`
}

func (l Locator) empty() bool {
	return l.Selector == "" && l.AriaLabel == "" && l.Role == "" && l.Text == ""
}

// Hit is where an action landed: the element, how it was found, and the point clicked.
type Hit struct {
	Strategy string  `json:"strategy"` // selector | aria-label | role+text | text | index
	Element  Element `json:"element"`
	X        float64 `json:"x"`
	Y        float64 `json:"y"`
}

type aimResult struct {
	Hit
	Error   string   `json:"error"`
	Covered *Element `json:"covered"`
}

// eval runs expr in the page after installing the helper (window.__clusterspace, "cs" in
// expr) and decodes its JSON value into out (if not nil).
func (t *tab) eval(ctx context.Context, expr string, out any) error {
	src := pageHelper + "\n;(() => { const cs = window.__clusterspace; return (" + expr + "); })()"
	var res *runtime.RemoteObject
	var exc *runtime.ExceptionDetails
	err := t.run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		res, exc, err = runtime.Evaluate(src).WithReturnByValue(true).WithAwaitPromise(true).Do(ctx)
		return err
	}))
	if err != nil {
		return err
	}
	if exc != nil {
		return fmt.Errorf("page helper failed: %s", exceptionText(exc))
	}
	if out == nil || res == nil || len(res.Value) == 0 {
		return nil
	}
	return json.Unmarshal(res.Value, out)
}

func exceptionText(exc *runtime.ExceptionDetails) string {
	if exc.Exception != nil && exc.Exception.Description != "" {
		return strings.SplitN(exc.Exception.Description, "\n    at ", 2)[0]
	}
	return exc.Text
}

func jsArg(v any) string {
	b, _ := json.Marshal(v) // Best effort: strings, numbers and string slices always marshal.
	return string(b)
}

// aim locates an element and scrolls it to the middle of the viewport, refusing one whose
// centre is covered by another element, as a real click would land on the cover.
func (t *tab) aim(ctx context.Context, expr string) (Hit, error) {
	var r aimResult
	if err := t.eval(ctx, expr, &r); err != nil {
		return Hit{}, err
	}
	if r.Error != "" {
		return Hit{}, &PageError{Msg: r.Error}
	}
	if r.Covered != nil {
		return r.Hit, pageErrorf("the %s is covered at its centre (%.0f, %.0f) by %s: close or scroll away what covers it, or use browser_click_at if the cover is the target",
			describe(r.Element), r.X, r.Y, describe(*r.Covered))
	}
	if r.Element.Disabled {
		return r.Hit, pageErrorf("the %s is disabled: fill in what it needs first", describe(r.Element))
	}
	return r.Hit, nil
}

func locateExpr(loc Locator) string {
	return "cs.locate(" + jsArg(map[string]string{"selector": loc.Selector, "ariaLabel": loc.AriaLabel, "role": loc.Role, "text": loc.Text}) + ")"
}

// describe names an element in a few words: `button "Save" (#save)`.
func describe(e Element) string {
	kind := e.Role
	if kind == "" {
		kind = e.Tag
	}
	s := kind
	if e.Name != "" {
		s += fmt.Sprintf(" %q", clipText(e.Name, 60))
	}
	if e.Selector != "" {
		s += " (" + e.Selector + ")"
	}
	return s
}

// String describes the element and its state: `textbox "Name" (#name) value="Ada"`.
func (e Element) String() string {
	s := describe(e)
	if e.Value != "" {
		s += fmt.Sprintf(" value=%q", e.Value)
	}
	if e.Checked != nil {
		s += fmt.Sprintf(" checked=%v", *e.Checked)
	}
	if e.Disabled {
		s += " disabled"
	}
	if e.Href != "" {
		s += " href=" + e.Href
	}
	if !e.Visible {
		s += " (not visible)"
	}
	return s
}

// String says where the page is: `Page: "Title" — URL`, with its HTTP error or loading state.
func (p PageInfo) String() string {
	s := fmt.Sprintf("Page: %q — %s", p.Title, p.URL)
	if p.Status >= 400 {
		s += fmt.Sprintf(" (HTTP %d)", p.Status)
	}
	if p.Loading {
		s += " (still loading)"
	}
	if p.Download {
		s += " (the address was a download: it was saved to the downloads folder)"
	}
	if p.Prompt != nil {
		s += "\nWaiting: " + p.Prompt.String() + ". Wait for the answer (browser_wait_for_navigation) rather than working around it."
	}
	return s
}

func clipText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// agentTab is the pane's active tab, ready for an agent action: the action is logged and
// marked for WaitNavigation.
func (m *Manager) agentTab(paneID, action, detail string) (*tab, error) {
	_, t, err := m.tab(paneID, "")
	if err != nil {
		return nil, err
	}
	if _, err := t.live(); err != nil {
		return nil, err
	}
	t.actionStarted()
	m.record(t, action, detail, "")
	return t, nil
}

// settleStart is how long an action's page gets to start a navigation it triggers (a
// click on a link starts loading within a few frames); settleLoad bounds the wait for
// that page to load, so the caller sees where the action led.
const (
	settleStart = 150 * time.Millisecond
	settleLoad  = 10 * time.Second
)

// settle waits briefly after an action for a navigation it triggered, and for its load.
func (t *tab) settle(ctx context.Context) {
	t.mu.Lock()
	mark := t.markSeq
	t.mu.Unlock()
	if t.wait(ctx, settleStart, func() bool { return t.loading || t.navSeq > mark }) {
		t.wait(ctx, settleLoad, func() bool { return !t.loading })
	}
}

// Page is where the pane's active tab is now.
func (m *Manager) Page(paneID string) (PageInfo, error) {
	_, t, err := m.tab(paneID, "")
	if err != nil {
		return PageInfo{}, err
	}
	if _, err := t.live(); err != nil {
		return t.pageInfo(), err
	}
	return t.pageInfo(), nil
}

// Click clicks an element found by loc with trusted mouse events at its centre.
func (m *Manager) Click(ctx context.Context, paneID string, loc Locator) (Hit, error) {
	if loc.empty() {
		return Hit{}, pageErrorf("say which element: a CSS selector, an aria-label, a role with its text, or its visible text")
	}
	t, err := m.agentTab(paneID, "click", fmt.Sprintf("%+v", loc))
	if err != nil {
		return Hit{}, err
	}
	return m.clickHit(ctx, t, locateExpr(loc))
}

// ClickIndex clicks element index of the last annotated screenshot.
func (m *Manager) ClickIndex(ctx context.Context, paneID string, index int) (Hit, error) {
	t, err := m.agentTab(paneID, "click_by_index", fmt.Sprint(index))
	if err != nil {
		return Hit{}, err
	}
	return m.clickHit(ctx, t, fmt.Sprintf("cs.locateIndex(%d)", index))
}

func (m *Manager) clickHit(ctx context.Context, t *tab, expr string) (Hit, error) {
	h, err := t.aim(ctx, expr)
	if err != nil {
		return h, err
	}
	if err := t.run(ctx, clickActions(h.X, h.Y, input.Left, 1, 0)...); err != nil {
		return h, err
	}
	t.settle(ctx)
	return h, nil
}

// ClickAt clicks the viewport point (x, y) in CSS pixels.
func (m *Manager) ClickAt(ctx context.Context, paneID string, x, y float64, button string, count int) error {
	t, err := m.agentTab(paneID, "click_at", fmt.Sprintf("%.0f,%.0f", x, y))
	if err != nil {
		return err
	}
	w, h := t.size()
	if x < 0 || y < 0 || x >= float64(w) || y >= float64(h) {
		return pageErrorf("(%.0f, %.0f) is outside the %dx%d viewport", x, y, w, h)
	}
	count = max(count, 1)
	var acts []chromedp.Action
	for i := 1; i <= count; i++ {
		c := clickActions(x, y, mouseButton(button), int64(i), 0)
		if i > 1 {
			c = c[1:]
		}
		acts = append(acts, c...)
	}
	if err := t.run(ctx, acts...); err != nil {
		return err
	}
	t.settle(ctx)
	return nil
}

func (t *tab) size() (int, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.width, t.height
}

// Hover moves the mouse to the centre of an element.
func (m *Manager) Hover(ctx context.Context, paneID string, loc Locator) (Hit, error) {
	t, err := m.agentTab(paneID, "hover", fmt.Sprintf("%+v", loc))
	if err != nil {
		return Hit{}, err
	}
	h, err := t.aim(ctx, locateExpr(loc))
	if err != nil {
		return h, err
	}
	return h, t.run(ctx, input.DispatchMouseEvent(input.MouseMoved, h.X, h.Y))
}

// TypeOptions say what to type where.
type TypeOptions struct {
	Locator Locator // empty: type into whatever has focus
	Text    string
	// Clear replaces the field's content (select all, then type over it).
	Clear  bool
	Submit bool // press Enter afterwards
}

// Type focuses the element, optionally clears it, and types the text with real key events.
// It returns the element (nil without a locator) and the field's value afterwards.
func (m *Manager) Type(ctx context.Context, paneID string, o TypeOptions) (*Hit, string, error) {
	t, err := m.agentTab(paneID, "type", fmt.Sprintf("%d characters into %+v", len([]rune(o.Text)), o.Locator))
	if err != nil {
		return nil, "", err
	}
	var hit *Hit
	if !o.Locator.empty() {
		h, err := t.aim(ctx, locateExpr(o.Locator))
		if err != nil {
			return nil, "", err
		}
		hit = &h
		var f struct {
			Error        string `json:"error"`
			HasSelection bool   `json:"hasSelection"`
		}
		if err := t.eval(ctx, fmt.Sprintf("cs.focusTarget(%v)", o.Clear), &f); err != nil {
			return hit, "", err
		}
		if f.Error != "" {
			return hit, "", &PageError{Msg: f.Error}
		}
		if f.HasSelection {
			// Deleting the selection with a real Backspace fires the events a person's would.
			if err := t.run(ctx, typeActions("\b")...); err != nil {
				return hit, "", err
			}
		}
	}
	acts := typeActions(o.Text)
	if o.Submit {
		acts = append(acts, typeActions("\r")...)
	}
	if err := t.run(ctx, acts...); err != nil {
		return hit, "", err
	}
	t.settle(ctx)
	var value string
	if hit != nil && !o.Submit {
		t.eval(ctx, "cs.targetValue()", &value) // Best effort: the value is a courtesy.
	}
	return hit, value, nil
}

// Press presses a key (a DOM key name or a character) with modifiers.
func (m *Manager) Press(ctx context.Context, paneID, key string, modifiers []string) error {
	acts, err := pressActions(key, modifiers)
	if err != nil {
		return &PageError{Msg: err.Error()}
	}
	t, err := m.agentTab(paneID, "keypress", strings.Join(append(modifiers, key), "+"))
	if err != nil {
		return err
	}
	if err := t.run(ctx, acts...); err != nil {
		return err
	}
	t.settle(ctx)
	return nil
}

// ScrollState is the page's scroll position and how far it can go.
type ScrollState struct {
	X    int `json:"x"`
	Y    int `json:"y"`
	MaxX int `json:"maxX"`
	MaxY int `json:"maxY"`
}

// Scroll turns the mouse wheel by (dx, dy) CSS pixels over the element found by loc (or the
// viewport's centre), then reports where the page is.
func (m *Manager) Scroll(ctx context.Context, paneID string, loc Locator, dx, dy float64) (ScrollState, error) {
	t, err := m.agentTab(paneID, "scroll", fmt.Sprintf("%.0f,%.0f", dx, dy))
	if err != nil {
		return ScrollState{}, err
	}
	w, h := t.size()
	x, y := float64(w)/2, float64(h)/2
	if !loc.empty() {
		var r aimResult
		if err := t.eval(ctx, "(() => { const f = cs.find("+jsArg(map[string]string{"selector": loc.Selector, "ariaLabel": loc.AriaLabel, "role": loc.Role, "text": loc.Text})+
			"); if (!f.el) return {error: f.error}; const r = f.el.getBoundingClientRect(); return {x: r.left + r.width/2, y: r.top + r.height/2}; })()", &r); err != nil {
			return ScrollState{}, err
		}
		if r.Error != "" {
			return ScrollState{}, &PageError{Msg: r.Error}
		}
		x, y = math.Min(math.Max(r.X, 0), float64(w-1)), math.Min(math.Max(r.Y, 0), float64(h-1))
	}
	var before ScrollState
	t.eval(ctx, "cs.scrollState()", &before) // Best effort: only used to wait for the move.
	if err := t.run(ctx, input.DispatchMouseEvent(input.MouseMoved, x, y), input.DispatchMouseEvent(input.MouseWheel, x, y).WithDeltaX(dx).WithDeltaY(dy)); err != nil {
		return ScrollState{}, err
	}
	// The wheel scrolls asynchronously: wait briefly for the position to settle.
	var st ScrollState
	deadline := time.Now().Add(500 * time.Millisecond)
	for {
		if err := t.eval(ctx, "cs.scrollState()", &st); err != nil {
			return st, err
		}
		if st != before || time.Now().After(deadline) {
			return st, nil
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// SelectOption chooses options of a <select> by value or label; it returns the labels chosen.
func (m *Manager) SelectOption(ctx context.Context, paneID, selector string, values []string) ([]string, error) {
	t, err := m.agentTab(paneID, "select_option", selector+" = "+strings.Join(values, ", "))
	if err != nil {
		return nil, err
	}
	var r struct {
		Error    string   `json:"error"`
		Selected []string `json:"selected"`
	}
	if err := t.eval(ctx, "cs.select("+jsArg(selector)+", "+jsArg(values)+")", &r); err != nil {
		return nil, err
	}
	if r.Error != "" {
		return nil, &PageError{Msg: r.Error}
	}
	return r.Selected, nil
}

// SetChecked clicks a checkbox, radio or switch if its state differs from checked; it reports
// whether it clicked, and the state after.
func (m *Manager) SetChecked(ctx context.Context, paneID string, loc Locator, checked bool) (Hit, bool, error) {
	t, err := m.agentTab(paneID, "check", fmt.Sprintf("%+v = %v", loc, checked))
	if err != nil {
		return Hit{}, false, err
	}
	h, err := t.aim(ctx, locateExpr(loc))
	if err != nil {
		return h, false, err
	}
	if h.Element.Checked == nil {
		return h, false, pageErrorf("the %s is not a checkbox, radio button or switch: use browser_click", describe(h.Element))
	}
	if *h.Element.Checked == checked {
		return h, false, nil
	}
	if err := t.run(ctx, clickActions(h.X, h.Y, input.Left, 1, 0)...); err != nil {
		return h, false, err
	}
	t.settle(ctx)
	var now Element
	if err := t.eval(ctx, "cs.target && cs.target.isConnected ? cs.describe(cs.target) : null", &now); err == nil && now.Checked != nil {
		h.Element = now
	}
	return h, true, nil
}

// DragEnd is one end of a drag: an element or a viewport point.
type DragEnd struct {
	Locator Locator
	X, Y    float64
}

// dragSteps is how many mouse moves a drag makes between its ends: pages that track the
// pointer (sliders, sortable lists) need to see it travel.
const dragSteps = 10

// Drag presses the mouse at from, moves it to to in steps, and releases it there.
func (m *Manager) Drag(ctx context.Context, paneID string, from, to DragEnd) error {
	t, err := m.agentTab(paneID, "drag", fmt.Sprintf("%+v -> %+v", from, to))
	if err != nil {
		return err
	}
	point := func(e DragEnd) (float64, float64, error) {
		if e.Locator.empty() {
			return e.X, e.Y, nil
		}
		h, err := t.aim(ctx, locateExpr(e.Locator))
		return h.X, h.Y, err
	}
	x0, y0, err := point(from)
	if err != nil {
		return err
	}
	x1, y1, err := point(to)
	if err != nil {
		return err
	}
	acts := []chromedp.Action{
		input.DispatchMouseEvent(input.MouseMoved, x0, y0),
		input.DispatchMouseEvent(input.MousePressed, x0, y0).WithButton(input.Left).WithButtons(1).WithClickCount(1),
	}
	for i := 1; i <= dragSteps; i++ {
		f := float64(i) / dragSteps
		acts = append(acts, input.DispatchMouseEvent(input.MouseMoved, x0+(x1-x0)*f, y0+(y1-y0)*f).WithButton(input.Left).WithButtons(1))
	}
	acts = append(acts, input.DispatchMouseEvent(input.MouseReleased, x1, y1).WithButton(input.Left).WithClickCount(1))
	if err := t.run(ctx, acts...); err != nil {
		return err
	}
	t.settle(ctx)
	return nil
}
