package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/dop251/goja"

	"github.com/clusterspace/clusterspace/backend/fsroot"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// helpers are what a plugin's ctx offers: the only ways out of its runtime, each judged the
// way the caller's own calls are.
type helpers struct {
	p    *plugin
	vm   *goja.Runtime
	ctx  context.Context
	call tools.Call
	w    *watchdog
	n    atomic.Int32
}

func (h *helpers) object() *goja.Object {
	o := h.vm.NewObject()
	o.Set("fetch", h.fetch)
	o.Set("readFile", h.readFile)
	o.Set("goalId", h.call.GoalID)
	o.Set("dir", h.call.Dir)
	return o
}

// throw raises a JavaScript Error the plugin may catch.
func (h *helpers) throw(format string, args ...any) {
	panic(h.vm.NewGoError(fmt.Errorf(format, args...)))
}

// helperTool is a helper's call as the policy sees it: "NAME.fetch" at its own risk.
type helperTool struct {
	name string
	risk tools.Risk
}

func (t helperTool) Name() string { return t.name }
func (t helperTool) Description() string {
	return "a request the plugin makes through ctx.fetch"
}
func (t helperTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (t helperTool) Risk() tools.Risk        { return t.risk }
func (t helperTool) Run(context.Context, tools.Call) (tools.Result, error) {
	return tools.Errorf("%s runs only from inside its plugin", t.name), nil
}

// fetch is ctx.fetch(url, {method, headers, body}): a GET (or HEAD) is network_get, any other
// method network_write. The caller's policy decides it as a call of its own (and may ask the
// person) before it is sent. It returns {status, ok, headers, text, json()}.
func (h *helpers) fetch(c goja.FunctionCall) goja.Value {
	raw := c.Argument(0).String()
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		h.throw("ctx.fetch: %q is not an http(s) URL", raw)
	}
	method, body := "GET", ""
	headers := map[string]string{}
	if opt := c.Argument(1); !goja.IsUndefined(opt) && !goja.IsNull(opt) {
		var o struct {
			Method  string            `json:"method"`
			Headers map[string]string `json:"headers"`
			Body    string            `json:"body"`
		}
		b, err := json.Marshal(opt.Export())
		if err == nil {
			err = json.Unmarshal(b, &o)
		}
		if err != nil {
			h.throw("ctx.fetch: the options must be {method, headers, body} with string values (%v)", err)
		}
		if o.Method != "" {
			method = strings.ToUpper(o.Method)
		}
		headers, body = o.Headers, o.Body
	}
	gate := tools.GateFrom(h.ctx)
	if gate == nil {
		h.throw("ctx.fetch is only available when a goal or a chat calls the plugin")
	}
	h.w.pause()
	defer h.w.resume()
	if err := h.allow(gate, method, raw); err != nil {
		h.throw("ctx.fetch %s %s was not allowed: %v", method, raw, err)
	}
	// A yes that comes after the call was stopped (while the person was asked) sends nothing:
	// whoever ran the call has moved on without it.
	if err := h.ctx.Err(); err != nil {
		h.throw("ctx.fetch %s %s was not sent: the call was stopped while it waited (%v)", method, raw, context.Cause(h.ctx))
	}
	req, err := http.NewRequestWithContext(h.ctx, method, raw, strings.NewReader(body))
	if err != nil {
		h.throw("ctx.fetch: %v", err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	// A redirect is a request to an address nobody judged: it is decided as a call of its own
	// before it is sent, like the first.
	client := *h.p.set.opts.HTTPClient
	if h.call.Sandbox != "" {
		client = confinedClient(client)
	}
	var refused error
	client.CheckRedirect = func(next *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		if err := h.allow(gate, next.Method, next.URL.String()); err != nil {
			refused = fmt.Errorf("it was redirected to %s %s, which was not allowed: %w", next.Method, next.URL, err)
			return refused
		}
		if check := h.p.set.opts.HTTPClient.CheckRedirect; check != nil {
			return check(next, via)
		}
		return nil
	}
	resp, err := client.Do(req)
	switch {
	case refused != nil:
		h.throw("ctx.fetch %s %s: %v", method, raw, refused)
	case err != nil:
		h.throw("ctx.fetch %s: %v", raw, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxHelperBytes+1))
	if err != nil {
		h.throw("ctx.fetch %s: reading the answer: %v", raw, err)
	}
	truncated := len(data) > MaxHelperBytes
	if truncated {
		data = data[:MaxHelperBytes]
	}
	text := string(data)
	hdrs := h.vm.NewObject()
	for k := range resp.Header {
		hdrs.Set(strings.ToLower(k), resp.Header.Get(k))
	}
	o := h.vm.NewObject()
	o.Set("status", resp.StatusCode)
	o.Set("ok", resp.StatusCode >= 200 && resp.StatusCode < 300)
	o.Set("headers", hdrs)
	o.Set("text", text)
	o.Set("truncated", truncated)
	o.Set("json", func(goja.FunctionCall) goja.Value {
		v, err := parseJSON(h.vm, text)
		if err != nil {
			h.throw("ctx.fetch %s: the answer is not JSON (%s)", raw, errorText(err))
		}
		return v
	})
	return o
}

// allow asks the caller's gate about one request ctx.fetch would send: "NAME.fetch", a call
// of its own, at network_get for a GET or HEAD and network_write for any other method.
func (h *helpers) allow(gate tools.Gate, method, rawURL string) error {
	risk := tools.NetworkGet
	if method != "GET" && method != "HEAD" {
		risk = tools.NetworkWrite
	}
	args, _ := json.Marshal(map[string]string{"url": rawURL, "method": method})
	sub := tools.Call{ID: fmt.Sprintf("%s.fetch-%d", h.call.ID, h.n.Add(1)), Name: h.p.name + ".fetch", Args: args}
	return gate(h.ctx, helperTool{name: sub.Name, risk: risk}, sub)
}

// readFile is ctx.readFile(path): a file inside the caller's dir (a goal's sandbox or work
// dir), never the app's data dir, at most MaxHelperBytes, as text. The path is judged as the
// kernel resolves it, then opened beneath the dir (fsroot), and what was opened is judged again:
// a link swapped in between the check and the open cannot lead outside or into the data dir.
func (h *helpers) readFile(c goja.FunctionCall) goja.Value {
	given := c.Argument(0).String()
	dir := h.call.Dir
	if dir == "" {
		h.throw("ctx.readFile: this call has no work dir to read in (only a goal's sandbox or work dir can be read)")
	}
	p := given
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	p = filepath.Clean(p)
	inside, err := policy.Contains(dir, p)
	if _, beneath := fsroot.Beneath(dir, p); err != nil || !inside || !beneath {
		h.throw("ctx.readFile: %q is outside %s, the only dir a plugin may read", given, dir)
	}
	h.refuseHidden(given, p)
	if h.p.set.beforeOpen != nil {
		h.p.set.beforeOpen(p)
	}
	f, err := fsroot.Open(dir, p)
	var escape *fsroot.EscapeError
	switch {
	case errors.As(err, &escape):
		h.throw("ctx.readFile: %q is outside %s, the only dir a plugin may read (it leads out through a symbolic link)", given, dir)
	case errors.Is(err, fs.ErrNotExist):
		h.throw("ctx.readFile: %q does not exist", given)
	case err != nil:
		h.throw("ctx.readFile: %q cannot be read: %v", given, err)
	}
	defer f.Close()
	// Judged again by what was opened: a link inside the dir may have been swapped to point
	// into the data dir since the check above. Where the system cannot say, the check stands.
	if where, err := fsroot.Where(f); err == nil {
		h.refuseHidden(given, where)
	} else if !errors.Is(err, errors.ErrUnsupported) {
		h.throw("ctx.readFile: %q cannot be read: where it leads cannot be checked (%v)", given, err)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxHelperBytes+1))
	if err != nil {
		h.throw("ctx.readFile: %q cannot be read: %v", given, err)
	}
	if len(data) > MaxHelperBytes {
		h.throw("ctx.readFile: %q is larger than %d bytes", given, MaxHelperBytes)
	}
	return h.vm.ToValue(string(data))
}

// refuseHidden throws when path lies in one of the dirs plugins never read (the app's data dir).
func (h *helpers) refuseHidden(given, path string) {
	for _, hidden := range h.p.set.opts.Hidden {
		if in, err := policy.Contains(hidden, path); err == nil && in {
			h.throw("ctx.readFile: %q is in the app's own data dir, which plugins may not read", given)
		}
	}
}
