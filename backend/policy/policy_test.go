package policy

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/tools"
)

func TestContainsResistsEscapes(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	sandbox := filepath.Join(base, "sandbox")
	evil := filepath.Join(base, "sandbox-evil")
	os.MkdirAll(filepath.Join(sandbox, "sub"), 0o755)
	os.MkdirAll(evil, 0o755)
	os.Symlink(base, filepath.Join(sandbox, "out"))                               // a directory link out
	os.Symlink(filepath.Join(base, "secret"), filepath.Join(sandbox, "dangling")) // points out, target missing
	os.Symlink(filepath.Join(sandbox, "sub"), filepath.Join(base, "in-link"))     // a link from outside into the sandbox

	cases := []struct {
		path string
		want bool
	}{
		{sandbox, true},
		{filepath.Join(sandbox, "a.txt"), true},
		{filepath.Join(sandbox, "sub", "new", "deep.txt"), true}, // not created yet
		{"relative/file.txt", true},
		{filepath.Join(sandbox, "sub", "..", "a.txt"), true},
		{filepath.Join(sandbox, "..", "x"), false},
		{"../x", false},
		{filepath.Join(sandbox, "sub", "..", "..", "sandbox-evil", "f"), false},
		{evil, false}, // the prefix trick
		{filepath.Join(evil, "f"), false},
		{filepath.Join(sandbox, "out", "etc"), false},
		{filepath.Join(sandbox, "dangling"), false},
		{filepath.Join(base, "in-link", "f"), true}, // resolves inside
		{"/etc/passwd", false},
		// ".." after a symlink applies to where the link points, as in the kernel: out/.. is
		// base's parent, so these are outside although they read as inside once cleaned.
		{sandbox + "/out/../x", false},
		{"out/../x", false},
		{"out/../sandbox/x", false}, // base/../sandbox is not the sandbox
		{"out/sandbox/x", true},     // base/sandbox/x is the sandbox
		{"sub/../x", true},          // a real directory: .. stays inside
		{sandbox + "/sub/./../sub/x", true},
		{"loop/x", false},
	}
	os.Symlink("loop", filepath.Join(sandbox, "loop")) // a link to itself: refused, not followed forever
	for _, c := range cases {
		got, err := Contains(sandbox, c.path)
		if err != nil && c.path != "loop/x" {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		if got != c.want {
			t.Errorf("Contains(sandbox, %q) = %v, want %v", c.path, got, c.want)
		}
	}
}

type fileTool struct {
	tools.Tool
	risk tools.Risk
	name string
}

func (f fileTool) Name() string     { return f.name }
func (f fileTool) Risk() tools.Risk { return f.risk }
func (f fileTool) Paths(args json.RawMessage) ([]string, error) {
	var a struct{ Path string }
	err := json.Unmarshal(args, &a)
	return []string{a.Path}, err
}

func registry() *tools.Registry {
	r := tools.NewRegistry()
	noop := func(ctx context.Context, c tools.Call, p struct{}) (tools.Result, error) { return tools.Result{}, nil }
	r.Register(tools.New("read_x", "", tools.ReadOnly, noop), tools.New("net_x", "", tools.NetworkWrite, noop),
		tools.New("pay_x", "", tools.SpendsMoney, noop))
	return r
}

func TestCheckOrderAndReasons(t *testing.T) {
	t.Parallel()
	sandbox := t.TempDir()
	reg := registry()
	p, err := Policy{Ceiling: tools.WriteLocal, SandboxDir: sandbox, Denied: []string{"pay_x"}}.Validate(reg)
	if err != nil {
		t.Fatal(err)
	}
	get := func(n string) tools.Tool { t, _ := reg.Get(n); return t }
	write := fileTool{name: "write_file", risk: tools.WriteLocal}

	cases := []struct {
		tool    tools.Tool
		args    string
		granted []string
		want    Decision
		reason  string
	}{
		{get("read_x"), `{}`, nil, Allow, ""},
		{get("net_x"), `{}`, nil, Ask, "network_write, above this goal's ceiling write_local"},
		{get("net_x"), `{}`, []string{"net_x"}, Allow, "allowed for this goal"},
		{get("pay_x"), `{}`, []string{"pay_x"}, Deny, "deny list"},
		{write, `{"Path":"notes.txt"}`, nil, Allow, ""},
		{write, `{"Path":"../escape.txt"}`, nil, Ask, "outside the sandbox"},
		{write, `{"Path":"../escape.txt"}`, []string{"write_file"}, Ask, "outside the sandbox"},
		{write, `{"Path":"` + sandbox + `-evil/x"}`, nil, Ask, "outside the sandbox"},
	}
	for i, c := range cases {
		v := p.Check(c.tool, tools.Call{Args: json.RawMessage(c.args)}, c.granted)
		if v.Decision != c.want || !strings.Contains(v.Reason, c.reason) {
			t.Errorf("case %d (%s %s): %v %q, want %v containing %q", i, c.tool.Name(), c.args, v.Decision, v.Reason, c.want, c.reason)
		}
	}
	allowOnly := Policy{Ceiling: tools.SpendsMoney, Allowed: []string{"read_x"}}
	if v := allowOnly.Check(get("net_x"), tools.Call{}, nil); v.Decision != Ask || !strings.Contains(v.Reason, "allow list") {
		t.Errorf("outside the allow list: %+v", v)
	}
}

func TestValidateRefusesAtStart(t *testing.T) {
	t.Parallel()
	reg := registry()
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o600)
	for field, p := range map[string]Policy{
		"allowedTools": {Allowed: []string{"no_such_tool"}},
		"deniedTools":  {Allowed: []string{"read_x"}, Denied: []string{"read_x"}},
		"sandboxDir":   {SandboxDir: "/does/not/exist"},
		"risk":         {Ceiling: tools.Risk(9)},
	} {
		_, err := p.Validate(reg)
		fe, ok := err.(*FieldError)
		if !ok || fe.Field != field {
			t.Errorf("%s: got %v", field, err)
		}
	}
	if _, err := (Policy{SandboxDir: file}).Validate(reg); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("file as sandbox: %v", err)
	}
}

// payTool is a tool whose calls to a "checkout" look like spending money.
type payTool struct{ fileTool }

func (payTool) RiskFor(args json.RawMessage) (tools.Risk, string) {
	if strings.Contains(string(args), "checkout") {
		return tools.SpendsMoney, "the page looks like a checkout"
	}
	return tools.NetworkGet, ""
}

func TestCallRiskRaisesAboveTheDeclaredLevel(t *testing.T) {
	t.Parallel()
	p := Policy{Ceiling: tools.NetworkWrite}
	tool := payTool{fileTool{name: "browser_click", risk: tools.NetworkGet}}
	if v := p.Check(tool, tools.Call{Args: json.RawMessage(`{"url":"/home"}`)}, nil); v.Decision != Allow {
		t.Fatalf("an ordinary page: %+v", v)
	}
	v := p.Check(tool, tools.Call{Args: json.RawMessage(`{"url":"/checkout"}`)}, []string{"browser_click"})
	if v.Decision != Ask || !strings.Contains(v.Reason, "spends_money") || !strings.Contains(v.Reason, "looks like a checkout") {
		t.Fatalf("a checkout, even with the tool allowed for the goal: %+v", v)
	}
	if v := (Policy{Ceiling: tools.SpendsMoney}).Check(tool, tools.Call{Args: json.RawMessage(`{"url":"/checkout"}`)}, nil); v.Decision != Allow {
		t.Fatalf("a spends_money ceiling: %+v", v)
	}
}
