package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/clusterspace/clusterspace/backend/tools"
)

const catPlugin = `module.exports = {description: "x", risk: "read_only",
  parameters: {type: "object", properties: {path: {type: "string"}}, required: ["path"]},
  run(args, ctx) { try { return ctx.readFile(args.path) } catch (e) { return "REFUSED " + e.message } }};`

func TestPluginReadFileStaysInsideTheCallersDir(t *testing.T) {
	cfg, work, data := t.TempDir(), t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(work, "notes.txt"), []byte("inside"), 0o644)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(outside, []byte("outside"), 0o644)
	os.Symlink(outside, filepath.Join(work, "link.txt"))
	hiddenDir := filepath.Join(work, "data")
	os.Mkdir(hiddenDir, 0o700)
	os.WriteFile(filepath.Join(hiddenDir, "secrets.key"), []byte("key"), 0o600)
	_ = data
	writePlugin(t, cfg, "cat.js", `module.exports = {description: "x", risk: "read_only",
  parameters: {type: "object", properties: {path: {type: "string"}}, required: ["path"]},
  run(args, ctx) { try { return ctx.readFile(args.path) } catch (e) { return "REFUSED " + e.message } }};`)
	tl := tool(t, New(cfg, builtin, Options{Hidden: []string{hiddenDir}}), "cat")
	for path, want := range map[string]string{
		"notes.txt":                      "inside",
		filepath.Join(work, "notes.txt"): "inside",
		outside:                          "REFUSED ctx.readFile: \"" + outside + "\" is outside " + work,
		"link.txt":                       "REFUSED ctx.readFile: \"link.txt\" is outside",
		"../x":                           "REFUSED ctx.readFile: \"../x\" is outside",
		"data/secrets.key":               "REFUSED ctx.readFile: \"data/secrets.key\" is in the app's own data dir",
	} {
		args, _ := json.Marshal(map[string]string{"path": path})
		res := run(t, tl, tools.Call{ID: "c", Name: "cat", Args: args, Dir: work})
		if !strings.HasPrefix(res.Text, want) {
			t.Errorf("%s: %q, want %q", path, res.Text, want)
		}
	}
	res := run(t, tl, tools.Call{ID: "c", Name: "cat", Args: json.RawMessage(`{"path":"notes.txt"}`)})
	if !strings.Contains(res.Text, "REFUSED ctx.readFile: this call has no work dir") {
		t.Errorf("no dir: %q", res.Text)
	}
}

// ctx.fetch asks the caller's gate first, as a call of its own at network_get (a GET) or
// network_write (any other method); refused, nothing is sent.
func TestPluginFetchGoesThroughTheCallersGate(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		fmt.Fprintf(w, `{"method":%q}`, r.Method)
	}))
	defer srv.Close()
	cfg := t.TempDir()
	writePlugin(t, cfg, "get.js", `module.exports = {description: "x", risk: "read_only",
  parameters: {type: "object", properties: {url: {type: "string"}, method: {type: "string"}}, required: ["url"]},
  run(args, ctx) {
    try { const r = ctx.fetch(args.url, {method: args.method || "GET"}); return r.status + " " + r.json().method }
    catch (e) { return "REFUSED " + e.message }
  }};`)
	tl := tool(t, New(cfg, builtin, Options{}), "get")
	var asked []string
	gate := func(_ context.Context, sub tools.Tool, call tools.Call) error {
		asked = append(asked, fmt.Sprintf("%s %s", sub.Name(), sub.Risk()))
		if sub.Risk() > tools.NetworkGet {
			return errors.New("network_write is above the ceiling")
		}
		return nil
	}
	ctx, nested := context.Background(), viaGate(gate)
	call := func(args string) string {
		res, err := tl.Run(ctx, tools.Call{ID: "c", Name: "get", Nested: nested, Args: json.RawMessage(args)})
		if err != nil {
			t.Fatal(err)
		}
		return res.Text
	}
	if got := call(`{"url":"` + srv.URL + `"}`); got != "200 GET" {
		t.Fatalf("GET: %q", got)
	}
	if got := call(`{"url":"` + srv.URL + `","method":"post"}`); !strings.Contains(got, "REFUSED ctx.fetch POST "+srv.URL+" was not allowed: network_write is above the ceiling") {
		t.Fatalf("POST: %q", got)
	}
	if hits != 1 || strings.Join(asked, ",") != "get.fetch network_get,get.fetch network_write" {
		t.Fatalf("hits %d, asked %v", hits, asked)
	}
	if got := call(`{"url":"file:///etc/passwd"}`); !strings.Contains(got, "is not an http(s) URL") {
		t.Fatalf("file URL: %q", got)
	}
	res, _ := tl.Run(context.Background(), tools.Call{ID: "c", Name: "get", Args: json.RawMessage(`{"url":"` + srv.URL + `"}`)})
	if !strings.Contains(res.Text, "only available when a goal or a chat calls") || hits != 1 {
		t.Fatalf("no gate: %q", res.Text)
	}
}

// A link that points inside the caller's dir when ctx.readFile checks it, and is swapped (by
// the goal's own shell, racing the plugin) to point outside or into the app's data dir before
// the file is opened, is refused: the open itself stays beneath the dir and what it opened is
// judged again.
func TestPluginReadFileRefusesALinkSwappedAfterTheCheck(t *testing.T) {
	cfg, work := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(work, "notes.txt"), []byte("inside"), 0o644)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(outside, []byte("outside"), 0o644)
	hidden := filepath.Join(work, "data")
	os.Mkdir(hidden, 0o700)
	os.WriteFile(filepath.Join(hidden, "secrets.key"), []byte("key"), 0o600)
	writePlugin(t, cfg, "cat.js", catPlugin)
	s := New(cfg, builtin, Options{Hidden: []string{hidden}})
	tl := tool(t, s, "cat")

	for _, c := range []struct{ name, swapTo, want string }{
		{"to a file outside", outside, `REFUSED ctx.readFile: "link.txt" is outside ` + work},
		{"to the data dir", "data/secrets.key", `REFUSED ctx.readFile: "link.txt" is in the app's own data dir`},
	} {
		link := filepath.Join(work, "link.txt")
		os.Remove(link)
		if err := os.Symlink("notes.txt", link); err != nil {
			t.Fatal(err)
		}
		swapped := false
		s.beforeOpen = func(path string) {
			if path == link {
				os.Remove(link)
				swapped = os.Symlink(c.swapTo, link) == nil
			}
		}
		res := run(t, tl, tools.Call{ID: "c", Name: "cat", Args: json.RawMessage(`{"path":"link.txt"}`), Dir: work})
		if !swapped {
			t.Fatalf("%s: the link was not swapped between the check and the open", c.name)
		}
		if !strings.HasPrefix(res.Text, c.want) {
			t.Errorf("swapped %s: %q, want %q", c.name, res.Text, c.want)
		}
	}

	// A folder link inside the path is judged where it leads; one that stays inside is read.
	s.beforeOpen = nil
	os.Symlink(filepath.Dir(outside), filepath.Join(work, "docs"))
	os.Mkdir(filepath.Join(work, "real"), 0o755)
	os.WriteFile(filepath.Join(work, "real", "a.txt"), []byte("real a"), 0o644)
	os.Symlink("real", filepath.Join(work, "alias"))
	for path, want := range map[string]string{
		"docs/secret.txt": `REFUSED ctx.readFile: "docs/secret.txt" is outside ` + work,
		"alias/a.txt":     "real a",
		"real":            `REFUSED ctx.readFile: "real" cannot be read: ` + filepath.Join(work, "real") + " is a folder",
		"missing.txt":     `REFUSED ctx.readFile: "missing.txt" does not exist`,
	} {
		args, _ := json.Marshal(map[string]string{"path": path})
		if res := run(t, tl, tools.Call{ID: "c", Name: "cat", Args: args, Dir: work}); !strings.HasPrefix(res.Text, want) {
			t.Errorf("%s: %q, want %q", path, res.Text, want)
		}
	}
}

// A redirect is a request to an address the caller's gate has not judged: it is decided as a
// call of its own before it is sent, and refused, it never reaches the address it pointed to.
func TestPluginFetchAsksBeforeFollowingARedirect(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		fmt.Fprint(w, "reached "+r.URL.Path)
	}))
	defer other.Close()
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
	}))
	defer first.Close()
	cfg := t.TempDir()
	writePlugin(t, cfg, "get.js", `module.exports = {description: "x", risk: "read_only",
  parameters: {type: "object", properties: {url: {type: "string"}}, required: ["url"]},
  run(args, ctx) { try { return ctx.fetch(args.url).text } catch (e) { return "REFUSED " + e.message } }};`)
	tl := tool(t, New(cfg, builtin, Options{}), "get")
	var asked []string
	allowed := first.URL
	ctx, nested := context.Background(), viaGate(func(_ context.Context, sub tools.Tool, call tools.Call) error {
		var a struct{ URL, Method string }
		json.Unmarshal(call.Args, &a)
		asked = append(asked, sub.Name()+" "+a.Method+" "+a.URL)
		if !strings.HasPrefix(a.URL, allowed) {
			return errors.New("the user denied get.fetch")
		}
		return nil
	})
	res, err := tl.Run(ctx, tools.Call{ID: "c", Name: "get", Nested: nested, Args: json.RawMessage(`{"url":"` + first.URL + `/secret"}`)})
	if err != nil {
		t.Fatal(err)
	}
	want := "REFUSED ctx.fetch GET " + first.URL + "/secret: it was redirected to GET " + other.URL + "/secret, which was not allowed: the user denied get.fetch"
	if res.Text != want || elsewhere.Load() != 0 {
		t.Fatalf("a refused redirect: %q (want %q), %d request(s) reached it", res.Text, want, elsewhere.Load())
	}
	if strings.Join(asked, "\n") != "get.fetch GET "+first.URL+"/secret\nget.fetch GET "+other.URL+"/secret" {
		t.Fatalf("asked:\n%s", strings.Join(asked, "\n"))
	}
	allowed = "http://127.0.0.1"
	res, _ = tl.Run(ctx, tools.Call{ID: "c", Name: "get", Nested: nested, Args: json.RawMessage(`{"url":"` + first.URL + `/ok"}`)})
	if res.Text != "reached /ok" || elsewhere.Load() != 1 {
		t.Fatalf("an allowed redirect: %q, %d", res.Text, elsewhere.Load())
	}
}

// The call is stopped (the goal paused, the person closed the chat) while ctx.fetch waits for
// the person's answer, and the answer that then arrives is yes: nothing is sent, and the
// plugin's run ends with the call.
func TestPluginFetchAllowedAfterTheCallStoppedSendsNothing(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "sent")
	}))
	defer srv.Close()
	cfg := t.TempDir()
	writePlugin(t, cfg, "get.js", `module.exports = {description: "x", risk: "read_only",
  run(args, ctx) { let out = []; for (let i = 0; i < 2; i++) { try { out.push(ctx.fetch("`+srv.URL+`").text) } catch (e) { out.push("REFUSED " + e.message) } } return out.join("|") }};`)
	tl := tool(t, New(cfg, builtin, Options{}), "get")
	ctx, stop := context.WithCancel(context.Background())
	asking := make(chan struct{})
	var asked atomic.Int32
	nested := viaGate(func(gctx context.Context, _ tools.Tool, _ tools.Call) error {
		if asked.Add(1) == 1 {
			close(asking)
			<-gctx.Done() // the person answers only after the call was stopped
		}
		return nil // and the answer is yes
	})
	go func() { <-asking; stop() }()
	res, err := tl.Run(ctx, tools.Call{ID: "c", Name: "get", Nested: nested, Args: json.RawMessage(`{}`)})
	if hits.Load() != 0 {
		t.Fatalf("%d request(s) sent after the call was stopped: %+v %v", hits.Load(), res, err)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("the stopped call: %+v %v, want it ended as cancelled", res, err)
	}
}

// viaGate is the Nested an agent hands a running call, with gate as the owner's decision (and
// the person's answer): a nested call gate refuses is answered with why and never run; one it
// allows runs, unless the call was stopped meanwhile.
func viaGate(gate func(context.Context, tools.Tool, tools.Call) error) tools.Nested {
	return func(ctx context.Context, tool tools.Tool, args json.RawMessage) (tools.Result, error) {
		c := tools.Call{Name: tool.Name(), Args: args}
		if err := gate(ctx, tool, c); err != nil {
			return tools.Errorf("%v", err), nil
		}
		if err := ctx.Err(); err != nil {
			return tools.Result{}, context.Cause(ctx)
		}
		return tool.Run(ctx, c)
	}
}
