package criterion

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
)

// outcome is one evaluation of a predicate on a document.
type outcome struct {
	// kind is the result's type as JavaScript's typeof names it, with "null" and "array" told
	// apart from "object".
	kind    string
	boolean bool   // the result, when kind is "boolean"
	shown   string // the result as JSON.stringify writes it, or String(result) where it cannot
	// thrown names what the predicate threw (TypeError, RangeError, …); "" when it returned.
	thrown   string
	err      error  // why there is no result: the exception, or a failure of the engine
	timedOut bool   // stopped at evalTimeout
	values   string // the paths the predicate reads with the document's values, for the detail
}

// errTooSlow is what a predicate past evalTimeout is interrupted with.
var errTooSlow = errors.New("the predicate took too long")

// evaluate runs the predicate on a JSON document (already known to be valid) in a runtime of
// its own, so nothing one evaluation does is seen by another; the runtime has only what
// ECMAScript defines: no require, console, timers, file or network access.
func (p predicate) evaluate(ctx context.Context, doc string) outcome {
	vm := goja.New()
	done := make(chan outcome, 1)
	// running is closed when the document is read and the predicate starts: evalTimeout bounds
	// the predicate, while reading the document is bounded by its size (JSON.parse of the
	// largest, maxJSONBytes, takes a second or two on a slow machine).
	running := make(chan struct{})
	go func() {
		defer func() {
			// A panic of the engine fails this check, not the goal runner.
			if r := recover(); r != nil {
				done <- outcome{err: fmt.Errorf("the JavaScript engine failed: %v", r)}
			}
		}()
		done <- p.evaluateIn(vm, doc, running)
	}()
	select {
	case o := <-done:
		return o
	case <-running:
	case <-ctx.Done():
		return stopEvaluation(vm, done, ctx.Err())
	}
	timer := time.NewTimer(evalTimeout)
	defer timer.Stop()
	select {
	case o := <-done:
		return o
	case <-timer.C:
		return stopEvaluation(vm, done, errTooSlow)
	case <-ctx.Done():
		return stopEvaluation(vm, done, ctx.Err())
	}
}

// stopEvaluation interrupts an evaluation. The interrupt takes effect at the predicate's next
// JavaScript instruction; a built-in running natively (a huge Array.fill, JSON.parse) does not
// see it until it returns, which may take minutes, so past interruptGrace the evaluation is
// abandoned: it ends on its own, and its result is dropped.
func stopEvaluation(vm *goja.Runtime, done <-chan outcome, why error) outcome {
	vm.Interrupt(why)
	grace := time.NewTimer(interruptGrace)
	defer grace.Stop()
	select {
	case o := <-done:
		if o.err == nil || !isInterrupt(o.err) {
			return o // it finished just as it was stopped
		}
	case <-grace.C:
	}
	if why == errTooSlow {
		return outcome{timedOut: true}
	}
	return outcome{err: why}
}

func isInterrupt(err error) bool {
	var ie *goja.InterruptedError
	return errors.As(err, &ie)
}

// evaluateIn parses the document inside vm, binds its names, notes the values the detail
// lists, closes running, and runs the program. It runs on the evaluation's goroutine only.
func (p predicate) evaluateIn(vm *goja.Runtime, doc string, running chan<- struct{}) outcome {
	// eval and new Function parse too: without source maps they read no file either.
	vm.SetParserOptions(parser.WithDisableSourceMaps)
	vm.SetMaxCallStackSize(maxCallDepth)
	// JSON's own functions are taken before the document's fields are bound: a field named JSON
	// shadows the global, as it would in a script.
	jsonObj := vm.GlobalObject().Get("JSON").ToObject(vm)
	parse, _ := goja.AssertFunction(jsonObj.Get("parse"))
	stringify, _ := goja.AssertFunction(jsonObj.Get("stringify"))
	show := func(v goja.Value) string {
		if s, err := stringify(goja.Undefined(), v); err == nil && !goja.IsUndefined(s) {
			return s.String()
		}
		return v.String()
	}
	// JSON.parse, not a Go decoder: objects keep their key order, numbers are doubles, and
	// duplicate keys resolve, all as in any JavaScript engine.
	value, err := parse(goja.Undefined(), vm.ToValue(doc))
	if err != nil {
		return outcome{err: fmt.Errorf("JSON.parse refused the document: %w", err)}
	}
	roots := p.bind(vm, value)
	o := outcome{values: p.explain(vm, roots, show)}
	close(running)
	result, err := vm.RunProgram(p.program)
	if err != nil {
		o.err = err
		var ex *goja.Exception
		var so *goja.StackOverflowError
		switch {
		case errors.As(err, &so):
			// node throws a RangeError here; so does this, for a predicate that tries.
			o.thrown, o.err = "RangeError", fmt.Errorf("RangeError: the call stack went deeper than %d calls", maxCallDepth)
		case errors.As(err, &ex):
			o.thrown, o.err = errorName(ex.Value()), errors.New(ex.Value().String())
		}
		return o
	}
	o.kind = typeOf(result)
	if o.kind == "boolean" {
		o.boolean = result.ToBoolean()
	} else {
		o.shown = show(result)
	}
	return o
}

// bind makes the document's top-level fields global names, the whole document json (and
// response, unless a field has that name), and every other name the predicate reads that
// JavaScript does not define an undefined global: a field the document lacks reads as
// undefined, as `typeof x === "undefined"` and `x === undefined` expect, instead of throwing
// a ReferenceError. It returns the names so bound, whose paths the detail explains.
func (p predicate) bind(vm *goja.Runtime, value goja.Value) map[string]bool {
	global := vm.GlobalObject()
	bound := map[string]bool{}
	define := func(name string, v goja.Value) {
		// A global JavaScript makes read-only (undefined, NaN, Infinity) keeps its meaning; the
		// field is still json["NaN"].
		if global.DefineDataProperty(name, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE) == nil {
			bound[name] = true
		}
	}
	fields := map[string]bool{}
	if obj, ok := value.(*goja.Object); ok && obj.ClassName() == "Object" {
		for _, k := range obj.Keys() {
			fields[k] = true
			define(k, obj.Get(k))
		}
	}
	if !fields[responseName] {
		define(responseName, value)
	}
	define(wholeName, value)
	for _, name := range p.names {
		if !bound[name] && global.Get(name) == nil {
			define(name, goja.Undefined())
		}
	}
	return bound
}

// explain lists the paths the predicate reads that start at a bound name, with their values
// in the document.
func (p predicate) explain(vm *goja.Runtime, roots map[string]bool, show func(goja.Value) string) string {
	var parts []string
	for _, path := range p.paths {
		if !roots[path.parts[0].(string)] {
			continue // a global of JavaScript's own (Math, undefined), or a predicate's own name
		}
		if len(parts) == maxListedValues {
			parts = append(parts, "…")
			break
		}
		shown := "undefined (not in the JSON)"
		if v := lookup(vm, path.parts); v != nil && !goja.IsUndefined(v) {
			shown = clip(show(v), maxValueChars)
		}
		parts = append(parts, formatPath(path.parts)+" = "+shown)
	}
	if len(parts) == 0 {
		return "(the expression reads no field of the document)"
	}
	return strings.Join(parts, ", ")
}

// lookup follows a path from the global names as JavaScript's member access does, except that
// a step from undefined or null gives undefined rather than a TypeError.
func lookup(vm *goja.Runtime, path []any) goja.Value {
	v := vm.GlobalObject().Get(path[0].(string))
	for _, part := range path[1:] {
		if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
			return nil
		}
		key, _ := part.(string)
		if i, ok := part.(int); ok {
			key = strconv.Itoa(i)
		}
		v = v.ToObject(vm).Get(key)
	}
	return v
}

// typeOf is JavaScript's typeof, with "null" and "array" told apart from "object".
func typeOf(v goja.Value) string {
	switch {
	case v == nil || goja.IsUndefined(v):
		return "undefined"
	case goja.IsNull(v):
		return "null"
	case goja.IsNumber(v):
		return "number"
	case goja.IsString(v):
		return "string"
	case goja.IsBigInt(v):
		return "bigint"
	}
	switch x := v.(type) {
	case *goja.Symbol:
		return "symbol"
	case *goja.Object:
		if _, ok := goja.AssertFunction(x); ok {
			return "function"
		}
		if x.ClassName() == "Array" {
			return "array"
		}
		return "object"
	}
	if _, ok := v.Export().(bool); ok {
		return "boolean"
	}
	return "object"
}

// errorName is the name of what was thrown (TypeError, …), or "a thrown value" for a throw
// of something that is no error.
func errorName(v goja.Value) string {
	if obj, ok := v.(*goja.Object); ok {
		if name := obj.Get("name"); name != nil && goja.IsString(name) {
			return name.String()
		}
	}
	return "a thrown value"
}

// describeResult names a non-boolean result's type and shows it.
func describeResult(o outcome) string {
	shown := " (" + clip(o.shown, maxValueChars) + ")"
	switch o.kind {
	case "undefined":
		return "undefined (nothing: a name not in the JSON?)"
	case "null":
		return "null"
	case "number":
		return "a number" + shown
	case "string":
		return "a string" + shown
	case "array":
		return "an array" + shown
	case "object":
		return "an object" + shown
	case "function":
		return "a function"
	}
	return "a " + o.kind + shown
}
