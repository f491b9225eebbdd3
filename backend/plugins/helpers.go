package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/dop251/goja"

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
	risk := tools.NetworkGet
	if method != "GET" && method != "HEAD" {
		risk = tools.NetworkWrite
	}
	gate := tools.GateFrom(h.ctx)
	if gate == nil {
		h.throw("ctx.fetch is only available when a goal or a chat calls the plugin")
	}
	args, _ := json.Marshal(map[string]string{"url": raw, "method": method})
	sub := tools.Call{ID: fmt.Sprintf("%s.fetch-%d", h.call.ID, h.n.Add(1)), Name: h.p.name + ".fetch", Args: args}
	h.w.pause()
	defer h.w.resume()
	if err := gate(h.ctx, helperTool{name: sub.Name, risk: risk}, sub); err != nil {
		h.throw("ctx.fetch %s %s was not allowed: %v", method, raw, err)
	}
	req, err := http.NewRequestWithContext(h.ctx, method, raw, strings.NewReader(body))
	if err != nil {
		h.throw("ctx.fetch: %v", err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := h.p.set.opts.HTTPClient.Do(req)
	if err != nil {
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

// readFile is ctx.readFile(path): a file inside the caller's dir (a goal's sandbox or work
// dir), never the app's data dir, at most MaxHelperBytes, as text.
func (h *helpers) readFile(c goja.FunctionCall) goja.Value {
	p := c.Argument(0).String()
	dir := h.call.Dir
	if dir == "" {
		h.throw("ctx.readFile: this call has no work dir to read in (only a goal's sandbox or work dir can be read)")
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	inside, err := policy.Contains(dir, p)
	if err != nil || !inside {
		h.throw("ctx.readFile: %q is outside %s, the only dir a plugin may read", c.Argument(0).String(), dir)
	}
	for _, hidden := range h.p.set.opts.Hidden {
		if in, err := policy.Contains(hidden, p); err == nil && in {
			h.throw("ctx.readFile: %q is in the app's own data dir, which plugins may not read", c.Argument(0).String())
		}
	}
	f, err := os.Open(p)
	if err != nil {
		h.throw("ctx.readFile: %v", errors.Unwrap(err))
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.IsDir() {
		h.throw("ctx.readFile: %q is a directory", c.Argument(0).String())
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxHelperBytes+1))
	if err != nil {
		h.throw("ctx.readFile: %v", err)
	}
	if len(data) > MaxHelperBytes {
		h.throw("ctx.readFile: %q is larger than %d bytes", c.Argument(0).String(), MaxHelperBytes)
	}
	return h.vm.ToValue(string(data))
}
