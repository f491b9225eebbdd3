package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// pollEvery is how often the waits look at the page again.
const pollEvery = 100 * time.Millisecond

// Content is one page of a tab's visible text.
type Content struct {
	URL   string `json:"url"`
	Title string `json:"title"`
	Text  string `json:"text"`
	// From and Next are rune offsets into the whole text; More says whether text follows Next.
	From  int  `json:"from"`
	Next  int  `json:"next"`
	Total int  `json:"total"`
	More  bool `json:"more"`
}

// Content returns the visible text of the active tab from rune offset cursor, at most
// maxChars runes, cut at a line break where one is near.
func (m *Manager) Content(ctx context.Context, paneID string, cursor, maxChars int) (Content, error) {
	_, t, err := m.tab(paneID, "")
	if err != nil {
		return Content{}, err
	}
	var text string
	if err := t.eval(ctx, "cs.text()", &text); err != nil {
		return Content{}, err
	}
	info := t.pageInfo()
	runes := []rune(text)
	c := Content{URL: info.URL, Title: info.Title, Total: len(runes)}
	if cursor < 0 || cursor > len(runes) {
		return c, pageErrorf("cursor %d is past the end of the text (%d characters)", cursor, len(runes))
	}
	end := min(cursor+maxChars, len(runes))
	if end < len(runes) {
		// Prefer to end at a line break in the last fifth of the page.
		for i := end; i > cursor+maxChars*4/5; i-- {
			if runes[i-1] == '\n' {
				end = i
				break
			}
		}
	}
	c.From, c.Next, c.More, c.Text = cursor, end, end < len(runes), string(runes[cursor:end])
	return c, nil
}

// Query describes the elements matching a CSS selector (at most limit) and how many match.
func (m *Manager) Query(ctx context.Context, paneID, selector string, limit int) ([]Element, int, error) {
	_, t, err := m.tab(paneID, "")
	if err != nil {
		return nil, 0, err
	}
	var r struct {
		Error string    `json:"error"`
		Count int       `json:"count"`
		Items []Element `json:"items"`
	}
	if err := t.eval(ctx, "cs.query("+jsArg(selector)+", "+jsArg(limit)+")", &r); err != nil {
		return nil, 0, err
	}
	if r.Error != "" {
		return nil, 0, &PageError{Msg: r.Error}
	}
	return r.Items, r.Count, nil
}

// Selector states WaitForSelector waits for.
const (
	StateAttached = "attached"
	StateVisible  = "visible"
	StateHidden   = "hidden"
	StateDetached = "detached"
)

// WaitForSelector waits until an element matching selector reaches state; it returns the
// first match (nil for hidden/detached) and whether the state was reached in time.
func (m *Manager) WaitForSelector(ctx context.Context, paneID, selector, state string, timeout time.Duration) (*Element, bool, error) {
	_, t, err := m.tab(paneID, "")
	if err != nil {
		return nil, false, err
	}
	switch state {
	case "":
		state = StateVisible
	case StateAttached, StateVisible, StateHidden, StateDetached:
	default:
		return nil, false, pageErrorf("unknown state %q: use attached, visible, hidden or detached", state)
	}
	var found *Element
	ok, err := poll(ctx, timeout, func() (bool, error) {
		var r struct {
			Error   string   `json:"error"`
			Count   int      `json:"count"`
			Visible int      `json:"visible"`
			First   *Element `json:"first"`
		}
		if err := t.eval(ctx, "cs.selectorState("+jsArg(selector)+")", &r); err != nil {
			return false, transient(err)
		}
		if r.Error != "" {
			return false, &PageError{Msg: r.Error}
		}
		found = r.First
		switch state {
		case StateAttached:
			return r.Count > 0, nil
		case StateVisible:
			return r.Visible > 0, nil
		case StateHidden:
			return r.Visible == 0, nil
		}
		return r.Count == 0, nil
	})
	return found, ok, err
}

// WaitForText waits until the active tab's visible text contains text (case-insensitive).
func (m *Manager) WaitForText(ctx context.Context, paneID, text string, timeout time.Duration) (bool, error) {
	_, t, err := m.tab(paneID, "")
	if err != nil {
		return false, err
	}
	want := strings.ToLower(strings.Join(strings.Fields(text), " "))
	return poll(ctx, timeout, func() (bool, error) {
		var page string
		if err := t.eval(ctx, "cs.text()", &page); err != nil {
			return false, transient(err)
		}
		return strings.Contains(strings.ToLower(strings.Join(strings.Fields(page), " ")), want), nil
	})
}

// transient keeps polling through a page that is between documents (the helper's context
// was destroyed by a navigation), and stops on anything else.
func transient(err error) error {
	if strings.Contains(err.Error(), "context") && !errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// poll calls check until it reports true, fails, ctx ends or timeout passes.
func poll(ctx context.Context, timeout time.Duration, check func() (bool, error)) (bool, error) {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := check()
		if err != nil || ok {
			return ok, err
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(pollEvery):
		}
	}
}

// axNode is a node of Accessibility.getFullAXTree, read leniently: newer Chromiums send
// enum values (ignored reasons, property names) that the generated protocol types reject.
type axNode struct {
	NodeID     string       `json:"nodeId"`
	Ignored    bool         `json:"ignored"`
	Role       *axValue     `json:"role"`
	Name       *axValue     `json:"name"`
	Value      *axValue     `json:"value"`
	Properties []axProperty `json:"properties"`
	ParentID   string       `json:"parentId"`
	ChildIDs   []string     `json:"childIds"`
}

type axValue struct {
	Value any `json:"value"`
}

type axProperty struct {
	Name  string   `json:"name"`
	Value *axValue `json:"value"`
}

// axStates are the properties worth showing next to a node.
var axStates = map[string]bool{"checked": true, "disabled": true, "expanded": true, "selected": true, "focused": true, "required": true, "pressed": true}

// AXTree renders the active tab's accessibility tree as indented lines (`role "name"`),
// skipping ignored and nameless generic nodes, at most maxNodes lines; it also returns how
// many lines the whole tree has.
func (m *Manager) AXTree(ctx context.Context, paneID string, maxNodes int) (string, int, error) {
	_, t, err := m.tab(paneID, "")
	if err != nil {
		return "", 0, err
	}
	var res struct {
		Nodes []*axNode `json:"nodes"`
	}
	err = t.run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		return cdp.Execute(ctx, "Accessibility.getFullAXTree", struct{}{}, &res)
	}))
	if err != nil {
		return "", 0, err
	}
	byID := map[string]*axNode{}
	for _, n := range res.Nodes {
		byID[n.NodeID] = n
	}
	var b strings.Builder
	lines, total := 0, 0
	var walk func(n *axNode, depth int)
	walk = func(n *axNode, depth int) {
		role, name := axString(n.Role), axString(n.Name)
		boring := role == "InlineTextBox" || (name == "" && (role == "generic" || role == "none" || role == "LineBreak"))
		if !n.Ignored && !boring {
			total++
			if lines < maxNodes {
				lines++
				b.WriteString(strings.Repeat("  ", depth))
				b.WriteString(role)
				if name != "" {
					fmt.Fprintf(&b, " %q", clipText(name, 120))
				}
				if v := axString(n.Value); v != "" {
					fmt.Fprintf(&b, " value=%q", clipText(v, 80))
				}
				for _, p := range n.Properties {
					if v := axString(p.Value); axStates[p.Name] && v != "" && v != "false" {
						fmt.Fprintf(&b, " %s=%s", p.Name, v)
					}
				}
				b.WriteByte('\n')
			}
			depth++
		}
		for _, id := range n.ChildIDs {
			if c := byID[id]; c != nil {
				walk(c, depth)
			}
		}
	}
	for _, n := range res.Nodes {
		if n.ParentID == "" {
			walk(n, 0)
		}
	}
	return b.String(), total, nil
}

func axString(v *axValue) string {
	if v == nil || v.Value == nil {
		return ""
	}
	if s, ok := v.Value.(string); ok {
		return strings.TrimSpace(s)
	}
	return fmt.Sprint(v.Value)
}

// Cookie is one browser cookie.
type Cookie struct {
	Name     string    `json:"name"`
	Value    string    `json:"value"`
	Domain   string    `json:"domain,omitempty"`
	Path     string    `json:"path,omitempty"`
	URL      string    `json:"url,omitempty"` // set only: the URL the cookie belongs to (default: the tab's)
	Expires  time.Time `json:"expires,omitzero"`
	Secure   bool      `json:"secure,omitempty"`
	HTTPOnly bool      `json:"httpOnly,omitempty"`
	SameSite string    `json:"sameSite,omitempty"` // Strict | Lax | None
}

// Cookies lists the cookies sent to urls (default: the active tab's URL).
func (m *Manager) Cookies(ctx context.Context, paneID string, urls []string) ([]Cookie, error) {
	_, t, err := m.tab(paneID, "")
	if err != nil {
		return nil, err
	}
	if len(urls) == 0 {
		urls = []string{t.currentURL()}
	}
	var raw []*network.Cookie
	err = t.run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		raw, err = network.GetCookies().WithURLs(urls).Do(ctx)
		return err
	}))
	if err != nil {
		return nil, err
	}
	out := make([]Cookie, 0, len(raw))
	for _, c := range raw {
		ck := Cookie{Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path, Secure: c.Secure, HTTPOnly: c.HTTPOnly, SameSite: c.SameSite.String()}
		if !c.Session && c.Expires > 0 {
			ck.Expires = time.Unix(int64(c.Expires), 0).UTC()
		}
		out = append(out, ck)
	}
	return out, nil
}

// SetCookie stores a cookie in the pane's profile (for c.URL, default the tab's URL).
func (m *Manager) SetCookie(ctx context.Context, paneID string, c Cookie) error {
	t, err := m.agentTab(paneID, "set_cookie", c.Name)
	if err != nil {
		return err
	}
	if c.URL == "" && c.Domain == "" {
		c.URL = t.currentURL()
	}
	p := network.SetCookie(c.Name, c.Value).WithSecure(c.Secure).WithHTTPOnly(c.HTTPOnly)
	if c.URL != "" {
		p = p.WithURL(c.URL)
	}
	if c.Domain != "" {
		p = p.WithDomain(c.Domain)
	}
	if c.Path != "" {
		p = p.WithPath(c.Path)
	}
	if !c.Expires.IsZero() {
		exp := cdpTime(c.Expires)
		p = p.WithExpires(&exp)
	}
	switch strings.ToLower(c.SameSite) {
	case "":
	case "strict":
		p = p.WithSameSite(network.CookieSameSiteStrict)
	case "lax":
		p = p.WithSameSite(network.CookieSameSiteLax)
	case "none":
		p = p.WithSameSite(network.CookieSameSiteNone)
	default:
		return pageErrorf("the same_site value %q is not Strict, Lax or None", c.SameSite)
	}
	return t.run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		// SetCookie reports a refused cookie (a bad domain for the URL) only as an error.
		if err := p.Do(ctx); err != nil {
			return pageErrorf("the browser refused the cookie %q: %v (check url and domain)", c.Name, err)
		}
		return nil
	}))
}

// Evaluate runs JavaScript in the active tab (top-level await allowed; a body with return
// statements runs as a function) and returns its value as JSON.
func (m *Manager) Evaluate(ctx context.Context, paneID, code string) (json.RawMessage, error) {
	t, err := m.agentTab(paneID, "execute_js", clipText(code, 200))
	if err != nil {
		return nil, err
	}
	run := func(src string, repl bool) (*runtime.RemoteObject, *runtime.ExceptionDetails, error) {
		var res *runtime.RemoteObject
		var exc *runtime.ExceptionDetails
		err := t.run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
			var err error
			res, exc, err = runtime.Evaluate(src).WithReplMode(repl).WithReturnByValue(true).WithAwaitPromise(true).Do(ctx)
			return err
		}))
		return res, exc, err
	}
	// The code runs in a block, so its declarations do not clash with the next call's; a
	// top-level return makes it a function body, a top-level await needs REPL mode.
	res, exc, err := run("{\n"+code+"\n}", false)
	if err == nil && exc != nil {
		switch msg := exceptionText(exc); {
		case strings.Contains(msg, "Illegal return statement"):
			res, exc, err = run("(async () => {\n"+code+"\n})()", false)
		case strings.Contains(msg, "await is only valid"):
			res, exc, err = run(code, true)
		case strings.HasPrefix(msg, "SyntaxError"):
			res, exc, err = run(code, false)
		}
	}
	if err != nil {
		return nil, err
	}
	if exc != nil {
		return nil, pageErrorf("the script threw: %s", exceptionText(exc))
	}
	if res == nil || res.Type == runtime.TypeUndefined || len(res.Value) == 0 {
		if res != nil && res.Description != "" && res.Type != runtime.TypeUndefined {
			b, _ := json.Marshal(res.Description)
			return b, nil
		}
		return json.RawMessage("null"), nil
	}
	return json.RawMessage(res.Value), nil
}

// checkMoneyLater reads the page's payment signals after a load, so the money gate can
// answer without touching the page (see MoneyPage).
func (m *Manager) checkMoneyLater(t *tab, c *conn) {
	if !m.ops.Enter() {
		return
	}
	go func() {
		defer m.ops.Done()
		ctx, cancel := context.WithTimeout(c.ctx, 3*time.Second)
		defer cancel()
		var text string
		if err := t.eval(ctx, "cs.moneySignals()", &text); err != nil {
			return // Best effort: the URL alone still counts.
		}
		u := t.currentURL()
		t.update(func() { t.money = MoneyPage(u, text) })
	}()
}

// MoneyReason says why the pane's active page looks like it spends money (checkout,
// payment, billing, banking), or "" if it does not. It reads cached state only.
func (m *Manager) MoneyReason(paneID string) string {
	_, t, err := m.tab(paneID, "")
	if err != nil {
		return ""
	}
	t.mu.Lock()
	u, cached := t.url, t.money
	t.mu.Unlock()
	if cached != "" {
		return cached
	}
	return MoneyPage(u, "")
}

// SecretField says why the field that typing with loc would fill holds a secret (a password,
// a card number, a one-time code), or "" if it does not; an empty loc means the focused
// element. A field it cannot find is not a secret: the typing itself will report it.
func (m *Manager) SecretField(ctx context.Context, paneID string, loc Locator) (string, error) {
	_, t, err := m.tab(paneID, "")
	if err != nil {
		return "", err
	}
	var why string
	err = t.eval(ctx, "cs.secretField("+jsArg(map[string]string{"selector": loc.Selector, "ariaLabel": loc.AriaLabel, "text": loc.Text})+")", &why)
	return why, err
}

func jsonString(v []byte, out *string) error  { return json.Unmarshal(v, out) }
func jsonNumber(v []byte, out *float64) error { return json.Unmarshal(v, out) }
