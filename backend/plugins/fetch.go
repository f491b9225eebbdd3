package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/dop251/goja"

	"github.com/clusterspace/clusterspace/backend/tools"
)

// fetchTool is one request of ctx.fetch as a call of its own ("NAME.fetch"), run through the
// calling agent's Call.Nested: the owner's decider judges it (network_get for GET and HEAD,
// network_write for any other method; its address for a confined goal), the person is asked
// when it says so, it is a step of the goal's story, and it is cut off when the goal stops.
// The request is built and sent only inside Run, which runs only once the call was allowed:
// a denied fetch cannot leave the process, however the answers and the load race.
type fetchTool struct {
	helperTool
	send func(ctx context.Context) (tools.Result, error)
}

func (t fetchTool) Run(ctx context.Context, _ tools.Call) (tools.Result, error) { return t.send(ctx) }

// fetched is what one sent request brought back.
type fetched struct {
	status    int
	statusMsg string
	header    http.Header
	data      []byte
}

// fetch is ctx.fetch(url, {method, headers, body}). It returns {status, ok, headers, text,
// json()}. A redirect is a request to an address nobody judged: it is a call of its own,
// decided before it is sent, like the first.
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
	if h.call.Nested == nil {
		h.throw("ctx.fetch is only available when a goal or a chat calls the plugin")
	}
	h.w.pause()
	defer h.w.resume()
	client := *h.p.set.opts.HTTPClient
	if h.call.Sandbox != "" {
		client = confinedClient(client)
	}
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	target, m, b := u, method, body
	var got *fetched
	for hop := 0; ; hop++ {
		if got, err = h.request(&client, m, target.String(), headers, b); err != nil {
			if hop == 0 {
				h.throw("ctx.fetch %s %s was not allowed: %v", method, raw, err)
			}
			h.throw("ctx.fetch %s %s: it was redirected to %s %s, which was not allowed: %v", method, raw, m, target, err)
		}
		loc := got.header.Get("Location")
		if got.status < 300 || got.status > 399 || got.status == http.StatusNotModified || loc == "" {
			break
		}
		if hop+1 >= maxRedirects {
			h.throw("ctx.fetch %s %s: stopped after %d redirects", method, raw, maxRedirects)
		}
		next, err := target.Parse(loc)
		if err != nil {
			h.throw("ctx.fetch %s %s: a redirect to %q, which is not a URL", method, raw, loc)
		}
		if got.status == http.StatusSeeOther || ((got.status == http.StatusMovedPermanently || got.status == http.StatusFound) && m == http.MethodPost) {
			m, b = http.MethodGet, "" // as browsers and net/http do
		}
		target = next
	}
	return h.response(raw, got)
}

// request sends one request as a nested call; it returns why not when it was refused or
// could not be sent.
func (h *helpers) request(client *http.Client, method, rawURL string, headers map[string]string, body string) (*fetched, error) {
	risk := tools.NetworkGet
	if method != http.MethodGet && method != http.MethodHead {
		risk = tools.NetworkWrite
	}
	var mu sync.Mutex // the answer is written on the tool's goroutine, read here
	var got *fetched
	tool := fetchTool{helperTool: helperTool{name: h.p.name + ".fetch", risk: risk}, send: func(ctx context.Context) (tools.Result, error) {
		req, err := http.NewRequestWithContext(ctx, method, rawURL, strings.NewReader(body))
		if err != nil {
			return tools.Errorf("%v", err), nil
		}
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			return tools.Errorf("%s %s: %v", method, rawURL, err), nil
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(io.LimitReader(resp.Body, MaxHelperBytes+1))
		if err != nil {
			return tools.Errorf("%s %s: reading the answer: %v", method, rawURL, err), nil
		}
		mu.Lock()
		got = &fetched{status: resp.StatusCode, statusMsg: resp.Status, header: resp.Header, data: data}
		mu.Unlock()
		return tools.Result{Text: fmt.Sprintf("%s %s: %s, %d bytes", method, rawURL, resp.Status, len(data))}, nil
	}}
	args, _ := json.Marshal(map[string]string{"url": rawURL, "method": method})
	res, err := h.call.Nested(h.ctx, tool, args)
	mu.Lock()
	defer mu.Unlock()
	switch {
	case err != nil:
		return nil, err
	case got == nil && res.IsError:
		return nil, errors.New(strings.TrimSpace(res.Text))
	case got == nil:
		return nil, errors.New("it was not sent")
	}
	return got, nil
}

// response is what ctx.fetch gives the script.
func (h *helpers) response(raw string, got *fetched) goja.Value {
	data := got.data
	truncated := len(data) > MaxHelperBytes
	if truncated {
		data = data[:MaxHelperBytes]
	}
	text := string(data)
	hdrs := h.vm.NewObject()
	for k := range got.header {
		hdrs.Set(strings.ToLower(k), got.header.Get(k))
	}
	o := h.vm.NewObject()
	o.Set("status", got.status)
	o.Set("ok", got.status >= 200 && got.status < 300)
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
