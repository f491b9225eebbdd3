package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/clusterspace/clusterspace/backend/browser"
)

// BrowserDriver is what the browser tools need from the browser panes; *browser.Manager
// implements it. Every call acts on the pane's active tab.
type BrowserDriver interface {
	Panes() []string
	Page(paneID string) (browser.PageInfo, error)
	Navigate(ctx context.Context, paneID, url string) (browser.PageInfo, error)
	Back(ctx context.Context, paneID string) (browser.PageInfo, error)
	Forward(ctx context.Context, paneID string) (browser.PageInfo, error)
	Reload(ctx context.Context, paneID string) (browser.PageInfo, error)
	WaitNavigation(ctx context.Context, paneID string, timeout time.Duration) (browser.PageInfo, bool, error)
	Content(ctx context.Context, paneID string, cursor, maxChars int) (browser.Content, error)
	Click(ctx context.Context, paneID string, loc browser.Locator) (browser.Hit, error)
	ClickIndex(ctx context.Context, paneID string, index int) (browser.Hit, error)
	ClickAt(ctx context.Context, paneID string, x, y float64, button string, count int) error
	Hover(ctx context.Context, paneID string, loc browser.Locator) (browser.Hit, error)
	Type(ctx context.Context, paneID string, o browser.TypeOptions) (*browser.Hit, string, error)
	Press(ctx context.Context, paneID, key string, modifiers []string) error
	Scroll(ctx context.Context, paneID string, loc browser.Locator, dx, dy float64) (browser.ScrollState, error)
	SelectOption(ctx context.Context, paneID, selector string, values []string) ([]string, error)
	SetChecked(ctx context.Context, paneID string, loc browser.Locator, checked bool) (browser.Hit, bool, error)
	Drag(ctx context.Context, paneID string, from, to browser.DragEnd) error
	// SetFiles chooses open files in a file input; the page gets copies (see browser.SetFiles).
	SetFiles(ctx context.Context, paneID, selector string, files []*os.File) (browser.Element, error)
	WaitForSelector(ctx context.Context, paneID, selector, state string, timeout time.Duration) (*browser.Element, bool, error)
	WaitForText(ctx context.Context, paneID, text string, timeout time.Duration) (bool, error)
	Query(ctx context.Context, paneID, selector string, limit int) ([]browser.Element, int, error)
	AXTree(ctx context.Context, paneID string, maxNodes int) (string, int, error)
	Cookies(ctx context.Context, paneID string, urls []string) ([]browser.Cookie, error)
	SetCookie(ctx context.Context, paneID string, c browser.Cookie) error
	SaveScreenshot(ctx context.Context, paneID string, fullPage bool) (browser.Shot, error)
	Annotate(ctx context.Context, paneID string) (browser.Shot, []browser.Element, error)
	// PDF and HTML render the page; the tool writes the file (dest is for the action log).
	PDF(ctx context.Context, paneID, dest string) ([]byte, error)
	HTML(ctx context.Context, paneID, dest string) ([]byte, error)
	// CapturePath is where a save with no path goes: a new name in the app's own data dir.
	CapturePath(paneID, ext string) string
	Evaluate(ctx context.Context, paneID, code string) (json.RawMessage, error)
	ActionLog(paneID string, n int) ([]browser.Action, error)
	Doctor(ctx context.Context, paneID string) (browser.Diagnosis, error)
	// MoneyReason says why the active page looks like it spends money ("" if not).
	MoneyReason(paneID string) string
	// SecretField says why the field typing would fill holds a secret ("" if not).
	SecretField(ctx context.Context, paneID string, loc browser.Locator) (string, error)
}

var _ BrowserDriver = (*browser.Manager)(nil)

// BrowserPane is the pane a browser tool's call acts on, or "" for other tools (and calls
// without a pane): goals and chat attach a picture of that pane to the tool's result.
func BrowserPane(toolName string, args json.RawMessage) string {
	if !strings.HasPrefix(toolName, "browser_") {
		return ""
	}
	var p paneParams
	if json.Unmarshal(args, &p) != nil {
		return ""
	}
	return p.PaneID
}

// gatedTool raises a tool's risk to spends_money when gate finds a money page.
type gatedTool struct {
	Tool
	gate func(args json.RawMessage) string
}

func (g gatedTool) RiskFor(args json.RawMessage) (Risk, string) {
	if why := g.gate(args); why != "" {
		return SpendsMoney, why
	}
	return g.Risk(), ""
}

// navigateTool is browser_navigate: gated, and a file:// URL is a path the sandbox check
// must see, or the browser would read what the goal may not.
type navigateTool struct{ gatedTool }

func (navigateTool) Paths(args json.RawMessage) ([]string, error) {
	var p navigateParams
	if err := json.Unmarshal(args, &p); err != nil {
		return nil, err
	}
	u := strings.TrimSpace(p.URL)
	if len(u) > len("view-source:") && strings.EqualFold(u[:len("view-source:")], "view-source:") {
		u = u[len("view-source:"):]
	}
	if len(u) < len("file:") || !strings.EqualFold(u[:len("file:")], "file:") {
		return nil, nil
	}
	parsed, err := url.Parse(u)
	if err != nil {
		return nil, err
	}
	return []string{parsed.Path}, nil
}

// typeTool is browser_type: gated on money pages, and it asks first before typing a secret.
type typeTool struct {
	gatedTool
	b BrowserDriver
}

func (t typeTool) Confirm(ctx context.Context, args json.RawMessage) string {
	var p typeParams
	if json.Unmarshal(args, &p) != nil {
		return "" // Bad arguments fail in Run, before anything is typed.
	}
	why, err := t.b.SecretField(ctx, p.PaneID, browser.Locator{Selector: p.Selector, AriaLabel: p.AriaLabel, Text: p.Label})
	if err != nil {
		// Not knowing what the field is must not let a secret through unasked.
		return fmt.Sprintf("typing into a field that could not be checked for secrets (%v)", err)
	}
	if why != "" {
		return "typing into " + why
	}
	return ""
}

// Limits and defaults of the browser tools, as the model is told them.
const (
	defaultContentChars = 8000
	maxContentChars     = 50_000
	defaultBrowserWait  = 10_000
	maxBrowserWait      = 120_000
	defaultQueryLimit   = 20
	maxQueryLimit       = 200
	defaultAXNodes      = 300
	maxAXNodes          = 2000
	defaultLogEntries   = 20
	maxJSResultChars    = 8000
	defaultScrollPixels = 600
)

// waiting is the handler of a browser tool that waits: fn gets the wait its params ask for;
// a wait out of range goes back to the model instead.
func waiting[P interface{ timeoutMS() *int }](fn func(ctx context.Context, p P, d time.Duration) (Result, error)) func(context.Context, Call, P) (Result, error) {
	return func(ctx context.Context, _ Call, p P) (Result, error) {
		d, bad := waitFor(p.timeoutMS())
		if bad != nil {
			return *bad, nil
		}
		return fn(ctx, p, d)
	}
}

// waitFor turns an optional timeout_ms into a duration, or says what is wrong with it.
func waitFor(ms *int) (time.Duration, *Result) {
	v, bad := intIn("timeout_ms", ms, defaultBrowserWait, 1, maxBrowserWait, "call again to keep waiting")
	return time.Duration(v) * time.Millisecond, bad
}

// intIn reads an optional int with a default and a range; out of range, the error names
// the range and, when given, what to do instead ("call again to keep waiting").
func intIn(name string, v *int, def, lo, hi int, instead ...string) (int, *Result) {
	n := def
	if v != nil {
		n = *v
	}
	if n < lo || n > hi {
		msg := fmt.Sprintf("%s %d is out of range: use %d-%d", name, n, lo, hi)
		for _, s := range instead {
			msg += ", and " + s
		}
		r := Errorf("%s.", msg)
		return 0, &r
	}
	return n, nil
}

// browserError turns the browser's errors into results the model can act on; a failure of
// the machine stays a Go error.
func browserError(err error) (Result, error) {
	if !browser.Actionable(err) {
		return Result{}, err
	}
	msg := err.Error()
	switch {
	case errors.Is(err, browser.ErrCrashed):
		msg += ". Ask the user to reconnect the pane, or call browser_pane_doctor."
	case errors.Is(err, context.DeadlineExceeded) || strings.Contains(msg, "did not answer"):
		msg += ". Call browser_pane_doctor to see what is wrong."
	}
	return Errorf("%s", upperFirst(msg)), nil
}

func upperFirst(s string) string {
	r := []rune(s)
	if len(r) > 0 {
		r[0] = unicode.ToUpper(r[0])
	}
	return string(r)
}

// pageLine is where the pane is, after an action.
func pageLine(b BrowserDriver, paneID string) string {
	p, err := b.Page(paneID)
	if err != nil {
		return "Page: unknown (" + err.Error() + ")"
	}
	return p.String()
}

func hitText(verb string, h browser.Hit) string {
	return fmt.Sprintf("%s %s at (%.0f, %.0f), found by %s.", verb, h.Element, h.X, h.Y, h.Strategy)
}

// RegisterBrowser adds the browser tools, driving the panes through b and judging
// screenshots with vision (nil: the visual tools say how to configure a vision model).
func RegisterBrowser(r *Registry, b BrowserDriver, vision Vision) {
	onMoneyPage := func(args json.RawMessage) string {
		var p paneParams
		json.Unmarshal(args, &p) // Best effort: a call without a pane acts on no page.
		if why := b.MoneyReason(p.PaneID); why != "" {
			return "acting on a page that looks like it spends money: " + why
		}
		return ""
	}
	gated := func(t Tool) Tool { return gatedTool{t, onMoneyPage} }
	page := func(text string, paneID string) Result { return Result{Text: text + "\n" + pageLine(b, paneID)} }
	nav := func(what string, p browser.PageInfo, err error) (Result, error) {
		if err != nil {
			return browserError(err)
		}
		return Result{Text: what + "\n" + p.String()}, nil
	}
	// move is a tool that moves the pane through its history (back, forward, reload).
	move := func(name, desc, done string, to func(ctx context.Context, paneID string) (browser.PageInfo, error)) Tool {
		return New(name, desc, NetworkGet, func(ctx context.Context, _ Call, p paneParams) (Result, error) {
			info, err := to(ctx, p.PaneID)
			return nav(done, info, err)
		})
	}
	// click clicks the element loc finds and shows the page after.
	click := func(ctx context.Context, paneID string, loc browser.Locator) (Result, error) {
		h, err := b.Click(ctx, paneID, loc)
		if err != nil {
			return browserError(err)
		}
		return page(hitText("Clicked", h), paneID), nil
	}

	r.Register(
		navigateTool{gatedTool{New("browser_navigate", "Open a URL in a browser pane and wait for it to load (at most 30 s). A bare host gets https://.",
			NetworkGet, func(ctx context.Context, _ Call, p navigateParams) (Result, error) {
				info, err := b.Navigate(ctx, p.PaneID, p.URL)
				return nav("Navigated.", info, err)
			}), func(args json.RawMessage) string {
			var p navigateParams
			json.Unmarshal(args, &p) // Best effort: bad arguments fail in Run.
			u, err := browser.NormalizeURL(p.URL)
			if err != nil {
				return ""
			}
			if why := browser.MoneyPage(u, ""); why != "" {
				return "navigating to a page that looks like it spends money: " + why
			}
			return ""
		}}},
		move("browser_back", "Go back one page in the pane's history.", "Went back.", b.Back),
		move("browser_forward", "Go forward one page in the pane's history.", "Went forward.", b.Forward),
		move("browser_reload", "Reload the pane's page.", "Reloaded.", b.Reload),
		New("browser_get_content", "Read the page's visible text, paged: pass the returned cursor to read on.", ReadOnly,
			func(ctx context.Context, _ Call, p contentParams) (Result, error) {
				n, bad := intIn("max_chars", p.MaxChars, defaultContentChars, 1, maxContentChars)
				if bad != nil {
					return *bad, nil
				}
				c, err := b.Content(ctx, p.PaneID, p.Cursor, n)
				if err != nil {
					return browserError(err)
				}
				more := "This is the end of the text."
				if c.More {
					more = fmt.Sprintf("More follows: call again with cursor %d.", c.Next)
				}
				return Result{Text: fmt.Sprintf("Page: %q — %s\nCharacters %d-%d of %d. %s\n---\n%s", c.Title, c.URL, c.From, c.Next, c.Total, more, c.Text)}, nil
			}),

		gated(New("browser_click", "Click the element matching a CSS selector with a real (trusted) mouse click at its centre; it is scrolled into view first. "+
			"A covered or disabled element is reported, not clicked.", NetworkWrite,
			func(ctx context.Context, _ Call, p clickParams) (Result, error) {
				return click(ctx, p.PaneID, browser.Locator{Selector: p.Selector})
			})),
		gated(New("browser_smart_click", "Click an element found by whatever you know of it, tried in order: selector → aria_label → role with text → visible text "+
			"(a text alone is also tried as a label and as an element's name). A real mouse click at its centre.", NetworkWrite,
			func(ctx context.Context, _ Call, p smartClickParams) (Result, error) {
				return click(ctx, p.PaneID, browser.Locator{Selector: p.Selector, AriaLabel: p.AriaLabel, Role: p.Role, Text: p.Text})
			})),
		typeTool{gatedTool{New("browser_type", "Type text with real key events: into the field found by selector (or aria_label, or label), which is focused and by default cleared first, "+
			"or into whatever has focus. submit presses Enter afterwards.", NetworkWrite,
			func(ctx context.Context, _ Call, p typeParams) (Result, error) {
				o := browser.TypeOptions{Locator: browser.Locator{Selector: p.Selector, AriaLabel: p.AriaLabel, Text: p.Label},
					Text: p.Text, Clear: p.Clear == nil || *p.Clear, Submit: p.Submit}
				h, value, err := b.Type(ctx, p.PaneID, o)
				if err != nil {
					return browserError(err)
				}
				what := fmt.Sprintf("Typed %d characters", len([]rune(p.Text)))
				if h != nil {
					what += " into " + h.Element.String()
				}
				if value != "" {
					what += fmt.Sprintf("; its value is now %q", value)
				}
				if p.Submit {
					what += ", then pressed Enter"
				}
				return page(what+".", p.PaneID), nil
			}), func(args json.RawMessage) string {
			var p typeParams
			json.Unmarshal(args, &p) // Best effort: bad arguments fail in Run.
			if browser.HasCardNumber(p.Text) {
				return "the text holds what looks like a payment card number"
			}
			return onMoneyPage(args)
		}}, b},
		gated(New("browser_keypress", "Press a key, optionally with modifiers (ctrl+a, shift+Tab), as real key events to the focused element.", NetworkWrite,
			func(ctx context.Context, _ Call, p keypressParams) (Result, error) {
				if err := b.Press(ctx, p.PaneID, p.Key, p.Modifiers); err != nil {
					return browserError(err)
				}
				return page("Pressed "+strings.Join(append(p.Modifiers, p.Key), "+")+".", p.PaneID), nil
			})),
		New("browser_scroll", "Scroll the page (or the element under selector) with the mouse wheel, and report the scroll position.", NetworkGet,
			func(ctx context.Context, _ Call, p scrollParams) (Result, error) {
				n, bad := intIn("pixels", p.Pixels, defaultScrollPixels, 1, 100_000)
				if bad != nil {
					return *bad, nil
				}
				dir, ok := map[string][2]float64{"down": {0, 1}, "up": {0, -1}, "left": {-1, 0}, "right": {1, 0}}[or(p.Direction, "down")]
				if !ok {
					return Errorf("direction %q is not one of down, up, left, right.", p.Direction), nil
				}
				dx, dy := dir[0]*float64(n), dir[1]*float64(n)
				st, err := b.Scroll(ctx, p.PaneID, browser.Locator{Selector: p.Selector}, dx, dy)
				if err != nil {
					return browserError(err)
				}
				return Result{Text: fmt.Sprintf("Scrolled %s %d px. The page is now at x=%d of %d, y=%d of %d.", or(p.Direction, "down"), n, st.X, st.MaxX, st.Y, st.MaxY)}, nil
			}),
		gated(New("browser_select_option", "Choose options of a <select> by value or visible label.", NetworkWrite,
			func(ctx context.Context, _ Call, p selectParams) (Result, error) {
				got, err := b.SelectOption(ctx, p.PaneID, p.Selector, p.Values)
				if err != nil {
					return browserError(err)
				}
				return Result{Text: fmt.Sprintf("Selected %q in %s.", got, p.Selector)}, nil
			})),
		gated(New("browser_check", "Set a checkbox, radio button or switch to checked (or unchecked) with a real click, only if it is not so already.", NetworkWrite,
			func(ctx context.Context, _ Call, p checkParams) (Result, error) {
				want := p.Checked == nil || *p.Checked
				h, clicked, err := b.SetChecked(ctx, p.PaneID, browser.Locator{Selector: p.Selector, Text: p.Text}, want)
				if err != nil {
					return browserError(err)
				}
				if !clicked {
					return Result{Text: fmt.Sprintf("%s was already checked=%v; nothing clicked.", h.Element, want)}, nil
				}
				return page(hitText("Clicked", h)+" It is now "+h.Element.String()+".", p.PaneID), nil
			})),
		New("browser_hover", "Move the mouse over an element (menus and tooltips that open on hover).", NetworkGet,
			func(ctx context.Context, _ Call, p hoverParams) (Result, error) {
				h, err := b.Hover(ctx, p.PaneID, browser.Locator{Selector: p.Selector, Text: p.Text})
				if err != nil {
					return browserError(err)
				}
				return Result{Text: hitText("Hovering over", h)}, nil
			}),
		gated(New("browser_click_at", "Click at a point of the viewport (CSS pixels, as in a viewport screenshot) with a real mouse click: for canvases and elements no locator finds.", NetworkWrite,
			func(ctx context.Context, _ Call, p clickAtParams) (Result, error) {
				clicks, bad := intIn("clicks", p.Clicks, 1, 1, 3)
				if bad != nil {
					return *bad, nil
				}
				if err := b.ClickAt(ctx, p.PaneID, p.X, p.Y, p.Button, clicks); err != nil {
					return browserError(err)
				}
				return page(fmt.Sprintf("Clicked at (%.0f, %.0f).", p.X, p.Y), p.PaneID), nil
			})),
		gated(New("browser_drag", "Drag with the mouse: press at the from element (or point), move in steps, release over the to element (or point).", NetworkWrite,
			func(ctx context.Context, _ Call, p dragParams) (Result, error) {
				from, bad := dragEnd("from", p.FromSelector, p.FromX, p.FromY)
				if bad != nil {
					return *bad, nil
				}
				to, bad := dragEnd("to", p.ToSelector, p.ToX, p.ToY)
				if bad != nil {
					return *bad, nil
				}
				if err := b.Drag(ctx, p.PaneID, from, to); err != nil {
					return browserError(err)
				}
				return page("Dragged.", p.PaneID), nil
			})),
	)
	registerBrowserReading(r, b, gated)
	registerBrowserFiles(r, b)
	registerBrowserCapture(r, b, vision, gated)
}

// dragEnd reads one end of a drag: a selector, or both coordinates.
func dragEnd(name, selector string, x, y *float64) (browser.DragEnd, *Result) {
	if selector != "" {
		return browser.DragEnd{Locator: browser.Locator{Selector: selector}}, nil
	}
	if x == nil || y == nil {
		r := Errorf("say where the drag %s: %s_selector, or both %s_x and %s_y.", map[string]string{"from": "starts", "to": "ends"}[name], name, name, name)
		return browser.DragEnd{}, &r
	}
	return browser.DragEnd{X: *x, Y: *y}, nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
