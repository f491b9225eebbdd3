package main

import "testing"

func TestWebkitEnvTurnsDMABUFOffOnlyWithoutAGPU(t *testing.T) {
	unset := func(string) (string, bool) { return "", false }
	if name, value, ok := webkitEnvFor(unset, false); !ok || name != dmabufEnv || value != "1" {
		t.Fatalf("no GPU render node: got %q=%q (%v), want %s=1", name, value, ok, dmabufEnv)
	}
	if name, _, ok := webkitEnvFor(unset, true); ok {
		t.Fatalf("a machine with a GPU must keep WebKit's default, got %s", name)
	}
	chosen := func(n string) (string, bool) { return "0", n == dmabufEnv }
	if name, _, ok := webkitEnvFor(chosen, false); ok {
		t.Fatalf("the person's own %s must be kept, got %s", dmabufEnv, name)
	}
}
