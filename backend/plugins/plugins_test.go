package plugins

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/tools"
)

// writePlugin writes tools/NAME.js under a config dir.
func writePlugin(t testing.TB, configDir, file, src string) string {
	t.Helper()
	dir := filepath.Join(configDir, "tools")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, file)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const wordCount = `// Counts words.
module.exports = {
  name: "word_count",
  description: "Count the words of a text.",
  risk: "read_only",
  parameters: {type: "object", properties: {text: {type: "string"}, min: {type: "integer"}}, required: ["text"]},
  run(args, ctx) {
    const words = args.text.split(/\s+/).filter(w => w.length >= (args.min || 1));
    return {words: words.length};
  },
};
`

func builtin(name string) bool { return name == "list_panes" }

func tool(t *testing.T, s *Set, name string) tools.Tool {
	t.Helper()
	for _, tl := range s.Tools() {
		if tl.Name() == name {
			return tl
		}
	}
	t.Fatalf("plugin %s is not offered; status: %+v", name, s.Status())
	return nil
}

func run(t *testing.T, tl tools.Tool, call tools.Call) tools.Result {
	t.Helper()
	res, err := tl.Run(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestPluginIsOfferedWithItsSchemaAndRuns(t *testing.T) {
	cfg := t.TempDir()
	writePlugin(t, cfg, "word_count.js", wordCount)
	s := New(cfg, builtin, Options{})
	tl := tool(t, s, "word_count")
	if tl.Risk() != tools.ReadOnly || tl.Description() != "Count the words of a text." {
		t.Fatalf("declared risk/description lost: %v %q", tl.Risk(), tl.Description())
	}
	var schema map[string]any
	json.Unmarshal(tl.Schema(), &schema)
	if schema["additionalProperties"] != false || schema["required"].([]any)[0] != "text" {
		t.Fatalf("schema offered: %s", tl.Schema())
	}
	res := run(t, tl, tools.Call{ID: "c1", Name: "word_count", Args: json.RawMessage(`{"text":"one two  three"}`)})
	if res.IsError || res.Text != `{"words":3}` {
		t.Fatalf("result: %+v", res)
	}
}

// Arguments that do not fit the schema go back to the model naming the argument; the plugin
// never runs with them.
func TestPluginArgumentsAreDecodedStrictly(t *testing.T) {
	cfg := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	writePlugin(t, cfg, "strict.js", `module.exports = {
  description: "d", risk: "read_only",
  parameters: {type: "object", properties: {n: {type: "integer"}}, required: ["n"]},
  run(args, ctx) { return "RAN " + args.n },
};`)
	_ = marker
	s := New(cfg, builtin, Options{})
	tl := tool(t, s, "strict")
	for args, want := range map[string]string{
		`{}`:            `missing properties: ["n"]`,
		`{"n":"2"}`:     `argument n: type: 2 has type "string", want "integer"`,
		`{"n":2,"m":1}`: `unexpected additional properties ["m"]`,
		`[1]`:           `not a JSON object`,
		`{"n":2.5}`:     `want "integer"`,
	} {
		res := run(t, tl, tools.Call{ID: "c", Name: "strict", Args: json.RawMessage(args)})
		if !res.IsError || !strings.Contains(res.Text, want) || strings.Contains(res.Text, "RAN") {
			t.Errorf("%s: want an error containing %q, got %+v", args, want, res)
		}
	}
	if res := run(t, tl, tools.Call{ID: "c", Name: "strict", Args: json.RawMessage(`{"n":2}`)}); res.Text != "RAN 2" {
		t.Fatalf("good args: %+v", res)
	}
}

func TestPluginEndlessLoopIsEndedWithinItsBound(t *testing.T) {
	cfg := t.TempDir()
	writePlugin(t, cfg, "spin.js", `module.exports = {description: "spins", risk: "read_only", run() { while (true) {} }};`)
	s := New(cfg, builtin, Options{CallTimeout: time.Second})
	tl := tool(t, s, "spin")
	start := time.Now()
	res := run(t, tl, tools.Call{ID: "c", Name: "spin"})
	took := time.Since(start)
	if !res.IsError || !strings.Contains(res.Text, "ran longer than its bound of 1s") {
		t.Fatalf("result: %+v", res)
	}
	if took < time.Second || took > 3*time.Second {
		t.Fatalf("ended after %v, want about 1s", took)
	}
	t.Logf("while(true){} ended after %v (bound 1s)", took)
}

func TestPluginThatHoardsMemoryIsEnded(t *testing.T) {
	cfg := t.TempDir()
	writePlugin(t, cfg, "hoard.js", `module.exports = {description: "hoards", risk: "read_only", run() {
  const keep = [];
  for (;;) { keep.push(new Uint8Array(1 << 20)); }
}};`)
	s := New(cfg, builtin, Options{MemoryLimit: 64 << 20, CallTimeout: 30 * time.Second})
	start := time.Now()
	res := run(t, tool(t, s, "hoard"), tools.Call{ID: "c", Name: "hoard"})
	if !res.IsError || !strings.Contains(res.Text, "more than its bound of 64 MiB") {
		t.Fatalf("result: %+v", res)
	}
	t.Logf("hoarding plugin ended after %v", time.Since(start))
}

func TestPluginThatThrowsIsAToolErrorWithItsLine(t *testing.T) {
	cfg := t.TempDir()
	path := writePlugin(t, cfg, "boom.js", `module.exports = {
  description: "throws", risk: "read_only",
  run() {
    throw new Error("no such city");
  },
};`)
	res := run(t, tool(t, New(cfg, builtin, Options{}), "boom"), tools.Call{ID: "c", Name: "boom"})
	if !res.IsError || !strings.Contains(res.Text, "Error: no such city") || !strings.Contains(res.Text, path+":4") {
		t.Fatalf("result: %+v", res)
	}
}

// A bad file is reported with its file, line and field; the good plugins still load.
func TestPluginLoadErrorsNameFileAndLine(t *testing.T) {
	cfg := t.TempDir()
	writePlugin(t, cfg, "word_count.js", wordCount)
	syntax := writePlugin(t, cfg, "syntax.js", "module.exports = {\n  description: \"x\",\n  run() { return 1 +; },\n};")
	schema := writePlugin(t, cfg, "schema.js", "module.exports = {\n  description: \"x\", risk: \"read_only\",\n  parameters: {type: \"object\", properties: {a: {type: \"objekt\"}}},\n  run() {},\n};")
	notObject := writePlugin(t, cfg, "scalar.js", "module.exports = {\n  description: \"x\",\n  parameters: {type: \"string\"},\n  run() {},\n};")
	shadow := writePlugin(t, cfg, "shadow.js", "module.exports = {\n  name: \"list_panes\",\n  description: \"x\", run() {},\n};")
	dup := writePlugin(t, cfg, "zz_dup.js", "module.exports = {\n  name: \"word_count\",\n  description: \"x\", run() {},\n};")
	norun := writePlugin(t, cfg, "norun.js", "module.exports = {description: \"x\"};")
	throws := writePlugin(t, cfg, "throws.js", "\n\nthrow new Error(\"at load\");")
	st := New(cfg, builtin, Options{}).Status()
	if len(st.Plugins) != 1 || st.Plugins[0].Name != "word_count" {
		t.Fatalf("plugins: %+v", st.Plugins)
	}
	want := map[string]string{
		syntax:    syntax + ":3: syntax error: Unexpected token ;",
		schema:    schema + ":3: parameters: /properties/a/type: objekt is not a JSON type",
		notObject: notObject + ":3: parameters: must have \"type\": \"object\"",
		shadow:    shadow + ":2: name: \"list_panes\" is a built-in tool's name",
		dup:       dup + ":2: name: \"word_count\" is already the name of the plugin in",
		norun:     norun + ": run: missing",
		throws:    throws + ":3: loading it failed: Error: at load",
	}
	if len(st.Errors) != len(want) {
		t.Errorf("errors: %+v", st.Errors)
	}
	for _, e := range st.Errors {
		w, ok := want[e.File]
		if !ok || !strings.Contains(e.Error(), w) {
			t.Errorf("error for %s: %q, want it to contain %q", e.File, e.Error(), w)
		}
	}
}

func TestPluginRiskMissingOrUnknownIsNetworkWrite(t *testing.T) {
	cfg := t.TempDir()
	writePlugin(t, cfg, "a.js", `module.exports = {description: "x", run() {}};`)
	writePlugin(t, cfg, "b.js", `module.exports = {description: "x", risk: "harmless", run() {}};`)
	writePlugin(t, cfg, "c.js", `module.exports = {description: "x", risk: "network_get", run() {}};`)
	s := New(cfg, builtin, Options{})
	for name, want := range map[string]tools.Risk{"a": tools.NetworkWrite, "b": tools.NetworkWrite, "c": tools.NetworkGet} {
		if got := tool(t, s, name).Risk(); got != want {
			t.Errorf("%s: risk %v, want %v", name, got, want)
		}
	}
	for _, p := range s.Status().Plugins {
		if p.Name == "b" && !strings.Contains(p.Note, `"harmless" is not on the ladder`) {
			t.Errorf("note: %q", p.Note)
		}
	}
}

func TestPluginsReloadWhenAFileChanges(t *testing.T) {
	cfg := t.TempDir()
	s := New(cfg, builtin, Options{})
	if len(s.Tools()) != 0 {
		t.Fatal("tools from an empty dir")
	}
	writePlugin(t, cfg, "word_count.js", wordCount)
	waitUntil(t, func() bool { return len(s.Tools()) == 1 })
	writePlugin(t, cfg, "word_count.js", strings.Replace(wordCount, "Count the words of a text.", "Count words, v2.", 1))
	waitUntil(t, func() bool { return tool(t, s, "word_count").Description() == "Count words, v2." })
	os.Remove(filepath.Join(cfg, "tools", "word_count.js"))
	waitUntil(t, func() bool { return len(s.Tools()) == 0 })
}

func waitUntil(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatal("timed out")
}

// A plugin has no require, file system or network of its own.
func TestPluginHasNoRequireOrIO(t *testing.T) {
	cfg := t.TempDir()
	writePlugin(t, cfg, "probe.js", `module.exports = {description: "x", risk: "read_only", run() {
  return [typeof require, typeof process, typeof fetch, typeof XMLHttpRequest, typeof setTimeout].join(",");
}};`)
	res := run(t, tool(t, New(cfg, builtin, Options{}), "probe"), tools.Call{ID: "c", Name: "probe"})
	if res.Text != "undefined,undefined,undefined,undefined,undefined" {
		t.Fatalf("globals: %q", res.Text)
	}
}
