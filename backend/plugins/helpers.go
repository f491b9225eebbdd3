package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

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
