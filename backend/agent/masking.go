package agent

import (
	"bytes"
	"encoding/json"
	"runtime"
	"sync"
	"time"
	"weak"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// Masker hides the secrets the app holds (saved passwords, API keys, MCP servers' tokens) in
// a text, replacing each with a marker that names its kind; *secrets.Masker is one. It must
// be safe for concurrent use: the calls of a parallel group finish at the same time.
type Masker interface {
	Mask(text string) string
}

// maskers holds the masker of each registry's agents. A goal, a chat and a fleet task each
// build their agents in their own package, but all over the engine's one registry: keyed by
// it, the masker reaches every agent without a field each owner must remember to set. The
// key is weak, so a registry dropped (a test's engine) takes its entry with it.
var maskers sync.Map // weak.Pointer[tools.Registry] → Masker

// SetMasker makes every agent over reg mask, with m, what it records, publishes and returns
// of each call: the result, the arguments, the approval request. nil m masks nothing.
func SetMasker(reg *tools.Registry, m Masker) {
	if reg == nil {
		return
	}
	key := weak.Make(reg)
	if m == nil {
		maskers.Delete(key)
		return
	}
	if _, had := maskers.Swap(key, m); !had {
		runtime.AddCleanup(reg, func(k weak.Pointer[tools.Registry]) { maskers.Delete(k) }, key)
	}
}

func (a *Agent) masker() Masker {
	if a.Registry == nil {
		return nil
	}
	m, ok := maskers.Load(weak.Make(a.Registry))
	if !ok {
		return nil
	}
	return m.(Masker)
}

func (a *Agent) maskText(s string) string {
	if m := a.masker(); m != nil {
		return m.Mask(s)
	}
	return s
}

// maskResult masks a result's text. Its pictures stay as they are: a page that shows a
// secret in plain sight shows it in a screenshot too, and no marker can be drawn over it.
func (a *Agent) maskResult(r llm.ToolResult) llm.ToolResult {
	r.Text = a.maskText(r.Text)
	return r
}

// maskArgs masks the strings of a call's JSON arguments. Each string is masked as decoded,
// so a secret the model wrote with escapes (\u0041) is found too, and the JSON stays valid
// whatever the secret holds; arguments with nothing to mask come back byte for byte.
func (a *Agent) maskArgs(raw json.RawMessage) json.RawMessage {
	m := a.masker()
	if m == nil || len(raw) == 0 {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers are written back as they came
	var v any
	if dec.Decode(&v) != nil {
		return json.RawMessage(m.Mask(string(raw))) // not JSON: masked as text
	}
	v, changed := maskValue(m, v)
	if !changed {
		return raw
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return json.RawMessage(m.Mask(string(raw)))
	}
	return json.RawMessage(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

func maskValue(m Masker, v any) (any, bool) {
	switch v := v.(type) {
	case string:
		masked := m.Mask(v)
		return masked, masked != v
	case []any:
		changed := false
		for i, e := range v {
			var c bool
			v[i], c = maskValue(m, e)
			changed = changed || c
		}
		return v, changed
	case map[string]any:
		out := make(map[string]any, len(v))
		changed := false
		for k, e := range v {
			mk := m.Mask(k)
			me, c := maskValue(m, e)
			out[mk] = me
			changed = changed || c || mk != k
		}
		return out, changed
	}
	return v, false
}

// record is the call as it is recorded and shown: its arguments masked. The tool itself runs
// with the arguments as the model wrote them.
func (a *Agent) record(c llm.ToolCall, args json.RawMessage) CallRecord {
	shown := a.maskArgs(args)
	c.Args, c.RawArgs = a.maskArgs(c.Args), a.maskText(c.RawArgs)
	return CallRecord{Call: c, Args: shown, Start: time.Now()}
}

// MaskerOf is the masker SetMasker gave reg (nil: none), for a door that runs reg's tools
// outside an agent (the MCP server) and must mask what it hands out the same way.
func MaskerOf(reg *tools.Registry) Masker {
	if reg == nil {
		return nil
	}
	m, ok := maskers.Load(weak.Make(reg))
	if !ok {
		return nil
	}
	return m.(Masker)
}
