package tools

// The browser tools' arguments, as the model sends them (their descriptions are what it
// reads of each field).

// paneParams is the browser pane a tool acts on; every browser tool's params embed it.
type paneParams struct {
	PaneID string `json:"pane_id" desc:"Id of the browser pane."`
}

type navigateParams struct {
	paneParams
	URL string `json:"url" desc:"Address to open; a bare host such as example.com gets https://."`
}

type contentParams struct {
	paneParams
	MaxChars *int `json:"max_chars,omitempty" default:"8000" desc:"At most this many characters (1-50000)."`
	Cursor   int  `json:"cursor,omitempty" default:"0" desc:"Character offset to read from, as returned by the previous call."`
}

type clickParams struct {
	paneParams
	Selector string `json:"selector" desc:"CSS selector of the element to click."`
}

type smartClickParams struct {
	paneParams
	Selector  string `json:"selector,omitempty" desc:"CSS selector, tried first."`
	AriaLabel string `json:"aria_label,omitempty" desc:"The element's aria-label (exact, else contained)."`
	Role      string `json:"role,omitempty" desc:"ARIA role (button, link, checkbox, tab, menuitem, …), with text naming the element."`
	Text      string `json:"text,omitempty" desc:"The element's name or visible text."`
}

type typeParams struct {
	paneParams
	Text      string `json:"text" desc:"Text to type; \\n presses Enter."`
	Selector  string `json:"selector,omitempty" desc:"CSS selector of the field; without it (and without aria_label/text) the text goes to whatever has focus."`
	AriaLabel string `json:"aria_label,omitempty" desc:"Find the field by aria-label instead."`
	Label     string `json:"label,omitempty" desc:"Find the field by its label, placeholder or name instead."`
	Clear     *bool  `json:"clear,omitempty" default:"true" desc:"Replace the field's content (with a selector)."`
	Submit    bool   `json:"submit,omitempty" desc:"Press Enter after typing."`
}

type keypressParams struct {
	paneParams
	Key       string   `json:"key" desc:"Key name (Enter, Tab, Escape, Backspace, Delete, ArrowUp, ArrowDown, ArrowLeft, ArrowRight, Home, End, PageUp, PageDown, F1-F12) or one character."`
	Modifiers []string `json:"modifiers,omitempty" desc:"Held keys: ctrl, alt, shift, meta."`
}

type scrollParams struct {
	paneParams
	Direction string `json:"direction,omitempty" enum:"down|up|left|right" default:"down"`
	Pixels    *int   `json:"pixels,omitempty" default:"600" desc:"How far, in CSS pixels."`
	Selector  string `json:"selector,omitempty" desc:"Scroll with the mouse over this element (a scrollable list or panel); default the page."`
}

type selectParams struct {
	paneParams
	Selector string   `json:"selector" desc:"CSS selector of the <select>."`
	Values   []string `json:"values" desc:"Option values or visible labels to choose (one for a single select)."`
}

type checkParams struct {
	paneParams
	Selector string `json:"selector,omitempty" desc:"CSS selector of the checkbox, radio button or switch."`
	Text     string `json:"text,omitempty" desc:"Or its label or visible text."`
	Checked  *bool  `json:"checked,omitempty" default:"true" desc:"The state wanted; it is clicked only if it differs."`
}

type hoverParams struct {
	paneParams
	Selector string `json:"selector,omitempty" desc:"CSS selector of the element."`
	Text     string `json:"text,omitempty" desc:"Or its name or visible text."`
}

type clickAtParams struct {
	paneParams
	X      float64 `json:"x" desc:"CSS pixels from the viewport's left edge (as in a viewport screenshot)."`
	Y      float64 `json:"y" desc:"CSS pixels from the viewport's top edge."`
	Button string  `json:"button,omitempty" enum:"left|middle|right" default:"left"`
	Clicks *int    `json:"clicks,omitempty" default:"1" desc:"2 for a double click."`
}

type dragParams struct {
	paneParams
	FromSelector string   `json:"from_selector,omitempty" desc:"Element to press on; or give from_x and from_y."`
	FromX        *float64 `json:"from_x,omitempty"`
	FromY        *float64 `json:"from_y,omitempty"`
	ToSelector   string   `json:"to_selector,omitempty" desc:"Element to release over; or give to_x and to_y."`
	ToX          *float64 `json:"to_x,omitempty"`
	ToY          *float64 `json:"to_y,omitempty"`
}

type waitSelectorParams struct {
	paneParams
	Selector string `json:"selector" desc:"CSS selector to wait for."`
	State    string `json:"state,omitempty" enum:"visible|attached|hidden|detached" default:"visible"`
	waitParams
}

type waitNavParams struct {
	paneParams
	waitParams
}

type waitTextParams struct {
	paneParams
	Text string `json:"text" desc:"Text to wait for (case-insensitive, spacing ignored)."`
	waitParams
}

type queryParams struct {
	paneParams
	Selector string `json:"selector" desc:"CSS selector."`
}

type queryAllParams struct {
	paneParams
	Selector string `json:"selector" desc:"CSS selector."`
	Limit    *int   `json:"limit,omitempty" default:"20" desc:"At most this many elements (1-200)."`
}

type axtreeParams struct {
	paneParams
	MaxNodes *int `json:"max_nodes,omitempty" default:"300" desc:"At most this many lines (1-2000)."`
}

type cookiesParams struct {
	paneParams
	URLs []string `json:"urls,omitempty" desc:"URLs whose cookies to list; default the page's."`
}

type setCookieParams struct {
	paneParams
	Name     string `json:"name"`
	Value    string `json:"value"`
	URL      string `json:"url,omitempty" desc:"URL the cookie belongs to; default the page's."`
	Domain   string `json:"domain,omitempty"`
	Path     string `json:"path,omitempty"`
	Expires  int64  `json:"expires,omitempty" desc:"Unix time it expires; default a session cookie."`
	Secure   bool   `json:"secure,omitempty"`
	HTTPOnly bool   `json:"http_only,omitempty"`
	SameSite string `json:"same_site,omitempty" enum:"Strict|Lax|None"`
}

type indexParams struct {
	paneParams
	Index int `json:"index" desc:"Number of the element in the last browser_screenshot_annotated."`
}

type jsParams struct {
	paneParams
	Code string `json:"code" desc:"JavaScript to run in the page; the value of the last expression (or of a return) comes back as JSON. Top-level await works."`
}

type logParams struct {
	paneParams
	Limit *int `json:"limit,omitempty" default:"20" desc:"How many of the latest entries."`
}

type verifyParams struct {
	paneParams
	ExpectedState string `json:"expected_state" desc:"What the page should show if the work succeeded, concretely: \"a green 'Saved' banner and the new row 'Invoice 42' in the table\"."`
}

type describeParams struct {
	paneParams
	Prompt string `json:"prompt,omitempty" desc:"What to pay particular attention to."`
}

type setFilesParams struct {
	paneParams
	Selector string   `json:"selector" desc:"CSS selector of the <input type=file>."`
	Paths    []string `json:"paths" desc:"Paths of the files to choose (relative ones are in your sandbox or working directory)."`
}

type saveParams struct {
	paneParams
	Path string `json:"path,omitempty" desc:"File to write (a relative path is in your sandbox or working directory); default a new file in the app's data dir."`
}

// waitParams is how long a waiting browser tool waits; waitFor reads it.
type waitParams struct {
	TimeoutMS *int `json:"timeout_ms,omitempty" default:"10000" desc:"Wait at most this long (1-120000 ms)."`
}

func (w waitParams) timeoutMS() *int { return w.TimeoutMS }
