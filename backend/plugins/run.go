package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"

	"github.com/clusterspace/clusterspace/backend/tools"
)

// Bounds of one plugin call. A plugin runs in a fresh runtime each call, so nothing it does
// outlives the call, and these bound what it can do within one.
const (
	// CallTimeout is the JavaScript time a call (and loading a file) may take: enough for
	// real work on text and JSON, short enough that an endless loop costs the goal seconds.
	// Time spent waiting in ctx helpers (a fetch, the person's approval of it) does not count.
	CallTimeout = 5 * time.Second
	// MemoryLimit is how much the Go heap may grow while a call runs before it is ended.
	// goja allocates on the Go heap and has no per-runtime limit, so the bound is measured
	// on the process's heap (runtime/metrics, every watchInterval): approximate, since other
	// work of the app allocates too, and a single builtin call allocating more at once (a
	// huge String.repeat) overshoots before the next look. It stops the runaway array, not
	// a precise quota.
	MemoryLimit = 256 << 20
	// maxStackDepth ends runaway recursion with a RangeError long before Go's stack limit.
	maxStackDepth = 2000
	// MaxHelperBytes caps what ctx.fetch and ctx.readFile hand to a plugin.
	MaxHelperBytes = 1 << 20
	// maxResultBytes caps what a call returns to the model.
	maxResultBytes = 256 << 10
	// FetchTimeout bounds one ctx.fetch request.
	FetchTimeout = 20 * time.Second
	// maxRedirects is how many redirects ctx.fetch follows, each decided like the request
	// (net/http's own default).
	maxRedirects = 10
	// watchInterval is how often the watchdog looks at the clock and the heap.
	watchInterval = 10 * time.Millisecond
)

var (
	errTimeout = errors.New("time bound")
	errMemory  = errors.New("memory bound")
)

// plugin is one loaded file, a tools.Tool.
type plugin struct {
	set     *Set
	file    string
	src     string
	program *goja.Program
	name    string
	desc    string
	risk    tools.Risk
	note    string
	args    *tools.ArgSchema
}

func (p *plugin) Name() string            { return p.name }
func (p *plugin) Description() string     { return p.desc }
func (p *plugin) Schema() json.RawMessage { return p.args.JSON() }
func (p *plugin) Risk() tools.Risk        { return p.risk }

// moduleExports is what a file's module.exports declares.
type moduleExports struct {
	name, description, risk any
	parameters              json.RawMessage
	hasRun                  bool
	run                     goja.Callable
	obj                     *goja.Object
}

// instance is a fresh runtime with the file loaded, watched by a watchdog from the start.
func (p *plugin) instance(ctx context.Context) (*goja.Runtime, *watchdog, moduleExports, error) {
	vm := goja.New()
	vm.SetMaxCallStackSize(maxStackDepth)
	w := watch(ctx, vm, p.set.opts.CallTimeout, p.set.opts.MemoryLimit)
	exp, err := p.load(vm)
	return vm, w, exp, err
}

// exports loads the file once in its own runtime to read its declarations (ctx nil: only
// the time and memory bounds apply).
func (p *plugin) exports(ctx context.Context) (moduleExports, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	_, w, exp, err := p.instance(ctx)
	w.stop()
	return exp, err
}

func (p *plugin) load(vm *goja.Runtime) (moduleExports, error) {
	var exp moduleExports
	wrapper, err := vm.RunProgram(p.program)
	if err != nil {
		return exp, err
	}
	fn, ok := goja.AssertFunction(wrapper)
	if !ok {
		return exp, errors.New("the module wrapper is not a function")
	}
	module := vm.NewObject()
	exportsObj := vm.NewObject()
	module.Set("exports", exportsObj)
	if _, err := fn(goja.Undefined(), module, exportsObj); err != nil {
		return exp, err
	}
	v := module.Get("exports")
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return exp, errors.New("module.exports is empty: set module.exports = {name, description, risk, parameters, run}")
	}
	obj := v.ToObject(vm)
	exp.obj = obj
	get := func(k string) any {
		x := obj.Get(k)
		if x == nil || goja.IsUndefined(x) {
			return nil
		}
		return x.Export()
	}
	exp.name, exp.description, exp.risk = get("name"), get("description"), get("risk")
	if params := obj.Get("parameters"); params != nil && !goja.IsUndefined(params) {
		s, err := stringify(vm, params)
		if err != nil {
			return exp, err
		}
		exp.parameters = json.RawMessage(s)
	}
	exp.run, exp.hasRun = goja.AssertFunction(obj.Get("run"))
	return exp, nil
}

// Run checks the arguments against the plugin's schema, then runs it bounded.
func (p *plugin) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	if _, err := p.args.Decode(call.Args); err != nil {
		return tools.Errorf("%s: %v. Call it again with arguments that match its schema.", p.name, err), nil
	}
	if len(call.Args) == 0 {
		call.Args = json.RawMessage("{}")
	}
	vm, w, exp, err := p.instance(ctx)
	defer w.stop()
	if err == nil && !exp.hasRun {
		err = errors.New("run is not a function any more")
	}
	var out goja.Value
	if err == nil {
		var args goja.Value
		args, err = parseJSON(vm, string(call.Args))
		if err == nil {
			h := &helpers{p: p, vm: vm, ctx: ctx, call: call, w: w}
			out, err = exp.run(exp.obj, args, h.object())
		}
	}
	if err == nil {
		out, err = settle(out)
	}
	if err == nil && ctx.Err() != nil {
		// Stopped while it ran: whatever it returned after that (a caught refusal) is not the
		// call's answer; the call ended with its context, however the script and the stop raced.
		err = context.Cause(ctx)
	}
	if err != nil {
		return p.failure(ctx, err)
	}
	text, err := resultText(vm, out)
	if err != nil {
		return tools.Errorf("plugin %s returned something that is not JSON (%v): return a string, number, array or plain object", p.name, err), nil
	}
	if len(text) > maxResultBytes {
		text = text[:maxResultBytes] + fmt.Sprintf("\n[cut: the result was %d bytes; the first %d are shown]", len(text), maxResultBytes)
	}
	return tools.Result{Text: text}, nil
}

// failure turns what ended a call into the result the model reads: the goal goes on.
func (p *plugin) failure(ctx context.Context, err error) (tools.Result, error) {
	switch {
	case errors.Is(err, errTimeout):
		return tools.Errorf("plugin %s was ended: it ran longer than its bound of %s (an endless loop?). It is in %s; do not call it again with the same arguments.",
			p.name, p.set.opts.CallTimeout, p.file), nil
	case errors.Is(err, errMemory):
		return tools.Errorf("plugin %s was ended: it used more than its bound of %d MiB of memory. It is in %s.",
			p.name, p.set.opts.MemoryLimit>>20, p.file), nil
	case ctx.Err() != nil:
		return tools.Result{}, context.Cause(ctx)
	}
	where := ""
	if line := errorLine(err); line > 0 {
		where = fmt.Sprintf(" (%s:%d)", p.file, line)
	}
	return tools.Errorf("plugin %s failed: %s%s", p.name, errorText(err), where), nil
}

// settle unwraps what an async run returned. There is no event loop: the ctx helpers are
// synchronous, so a promise still pending once run returns never settles.
func settle(v goja.Value) (goja.Value, error) {
	if v == nil {
		return v, nil
	}
	pr, ok := v.Export().(*goja.Promise)
	if !ok {
		return v, nil
	}
	switch pr.State() {
	case goja.PromiseStateFulfilled:
		return pr.Result(), nil
	case goja.PromiseStateRejected:
		return nil, fmt.Errorf("%s", pr.Result().String())
	default:
		return nil, errors.New("run returned a promise that never settled (ctx.fetch and ctx.readFile are synchronous: call them without await)")
	}
}

// resultText is a string as it is, anything else as JSON.
func resultText(vm *goja.Runtime, v goja.Value) (string, error) {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return "(the plugin returned nothing)", nil
	}
	if s, ok := v.Export().(string); ok {
		return s, nil
	}
	return stringify(vm, v)
}

func stringify(vm *goja.Runtime, v goja.Value) (string, error) {
	fn, ok := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("stringify"))
	if !ok {
		return "", errors.New("JSON.stringify is missing")
	}
	out, err := fn(goja.Undefined(), v)
	if err != nil {
		return "", errors.New(errorText(err))
	}
	if goja.IsUndefined(out) {
		return "", errors.New("it has no JSON form (a function?)")
	}
	return out.String(), nil
}

func parseJSON(vm *goja.Runtime, s string) (goja.Value, error) {
	fn, ok := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("parse"))
	if !ok {
		return nil, errors.New("JSON.parse is missing")
	}
	return fn(goja.Undefined(), vm.ToValue(s))
}

// errorText is a JavaScript error's message without goja's stack.
func errorText(err error) string {
	var ex *goja.Exception
	if errors.As(err, &ex) {
		if v := ex.Value(); v != nil {
			if o, ok := v.(*goja.Object); ok {
				if m := o.Get("message"); m != nil && !goja.IsUndefined(m) {
					name := "Error"
					if n := o.Get("name"); n != nil && !goja.IsUndefined(n) {
						name = n.String()
					}
					return name + ": " + m.String()
				}
			}
			return "threw " + v.String()
		}
	}
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		return fmt.Sprint(ie.Value())
	}
	return strings.TrimSpace(err.Error())
}

// errorLine is the file line a JavaScript error was thrown at (0 if unknown).
func errorLine(err error) int {
	var ex *goja.Exception
	if errors.As(err, &ex) {
		for _, f := range ex.Stack() {
			if pos := f.Position(); pos.Line > 0 {
				return pos.Line
			}
		}
	}
	return 0
}

// watchdog interrupts a runtime that used up its time (outside helpers), grew the heap past
// its bound, or whose context ended.
type watchdog struct {
	vm      *goja.Runtime
	paused  atomic.Int32
	stopped chan struct{}
	done    chan struct{}
}

var heapSample = "/memory/classes/heap/objects:bytes"

func heapBytes() uint64 {
	s := []metrics.Sample{{Name: heapSample}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

func watch(ctx context.Context, vm *goja.Runtime, budget time.Duration, memLimit uint64) *watchdog {
	w := &watchdog{vm: vm, stopped: make(chan struct{}), done: make(chan struct{})}
	base := heapBytes()
	go func() {
		defer close(w.done)
		tick := time.NewTicker(watchInterval)
		defer tick.Stop()
		var used time.Duration
		last := time.Now()
		for {
			select {
			case <-w.stopped:
				return
			case <-ctx.Done():
				vm.Interrupt(context.Cause(ctx))
				return
			case now := <-tick.C:
				if w.paused.Load() == 0 {
					used += now.Sub(last)
				}
				last = now
				if used > budget {
					vm.Interrupt(errTimeout)
					return
				}
				if h := heapBytes(); h > base && h-base > memLimit {
					vm.Interrupt(errMemory)
					return
				}
			}
		}
	}()
	return w
}

// pause stops the clock while a helper waits on the outside world; resume starts it again.
func (w *watchdog) pause()  { w.paused.Add(1) }
func (w *watchdog) resume() { w.paused.Add(-1) }

// stop ends the watchdog and waits for it, so no interrupt lands after the call.
func (w *watchdog) stop() {
	select {
	case <-w.stopped:
	default:
		close(w.stopped)
	}
	<-w.done
}
