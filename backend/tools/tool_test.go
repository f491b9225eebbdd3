package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

type echoParams struct {
	Text   string   `json:"text" desc:"what to echo"`
	Times  int      `json:"times,omitempty" default:"1"`
	Mode   string   `json:"mode,omitempty" enum:"plain|loud"`
	Tags   []string `json:"tags,omitempty"`
	Pretty *bool    `json:"pretty"`
}

func echoTool(ran *int) Tool {
	return New("echo", "Echo text back.", ReadOnly, func(ctx context.Context, c Call, p echoParams) (Result, error) {
		*ran++
		return Result{Text: strings.Repeat(p.Text, max(p.Times, 1))}, nil
	})
}

func TestSchemaFollowsTheParamsType(t *testing.T) {
	var s map[string]any
	json.Unmarshal(echoTool(new(int)).Schema(), &s)
	props := s["properties"].(map[string]any)
	if props["text"].(map[string]any)["description"] != "what to echo" || props["times"].(map[string]any)["type"] != "integer" {
		t.Fatalf("schema %v", s)
	}
	if props["times"].(map[string]any)["default"] != float64(1) || len(props["mode"].(map[string]any)["enum"].([]any)) != 2 {
		t.Fatalf("default/enum: %v", props)
	}
	if props["tags"].(map[string]any)["items"].(map[string]any)["type"] != "string" {
		t.Fatalf("array items: %v", props["tags"])
	}
	req := s["required"].([]any)
	if len(req) != 1 || req[0] != "text" || s["additionalProperties"] != false {
		t.Fatalf("required %v", req)
	}
}

// Fields many tools share are declared once in a struct their params embed: the model sees
// them as the tool's own arguments, required as they are, and they decode into the params.
func TestEmbeddedParamsAreTheToolsOwnArguments(t *testing.T) {
	type shared struct {
		Target string `json:"target" desc:"what to act on"`
	}
	type params struct {
		shared
		Loud bool `json:"loud,omitempty"`
	}
	var got params
	tool := New("act", "Act on a target.", ReadOnly, func(ctx context.Context, c Call, p params) (Result, error) {
		got = p
		return Result{}, nil
	})
	var s map[string]any
	json.Unmarshal(tool.Schema(), &s)
	props := s["properties"].(map[string]any)
	target, _ := props["target"].(map[string]any)
	if len(props) != 2 || target["description"] != "what to act on" || props["loud"] == nil {
		t.Fatalf("an embedded struct's fields are not the tool's arguments: %v", props)
	}
	if req := s["required"].([]any); len(req) != 1 || req[0] != "target" {
		t.Fatalf("required %v, want [target]", req)
	}
	res, _ := tool.Run(context.Background(), Call{Args: json.RawMessage(`{"target":"pane-1","loud":true}`)})
	if res.IsError || got.Target != "pane-1" || !got.Loud {
		t.Fatalf("a call with the embedded argument: %+v, params %+v", res, got)
	}
	if res, _ := tool.Run(context.Background(), Call{Args: json.RawMessage(`{"loud":true}`)}); !res.IsError || !strings.Contains(res.Text, "target") {
		t.Fatalf("a call without the embedded required argument ran: %+v", res)
	}
}

func TestBadArgumentsNeverRunTheTool(t *testing.T) {
	ran := 0
	tool := echoTool(&ran)
	for args, want := range map[string]string{
		`{}`:                          "missing required argument(s): text",
		`{"text": 5}`:                 `argument "text" should be string`,
		`{"text": "a", "txet": "b"}`:  `unknown argument "txet"`,
		`not json`:                    "not a JSON object",
		`{"text": "a", "times": 1.5}`: `argument "times" should be int`,
	} {
		res, err := tool.Run(context.Background(), Call{Name: "echo", Args: json.RawMessage(args)})
		if err != nil || !res.IsError || !strings.Contains(res.Text, want) {
			t.Errorf("%s: got %+v, %v; want an error result containing %q", args, res, err, want)
		}
	}
	if ran != 0 {
		t.Fatalf("the tool ran %d times with bad arguments", ran)
	}
	res, _ := tool.Run(context.Background(), Call{Args: json.RawMessage(`{"text":"ab","times":2}`)})
	if res.IsError || res.Text != "abab" || ran != 1 {
		t.Fatalf("good call: %+v", res)
	}
}

func TestRegistryAndRisk(t *testing.T) {
	r := NewRegistry()
	r.Register(echoTool(new(int)))
	if _, ok := r.Get("echo"); !ok || len(r.Definitions()) != 1 || r.Definitions()[0].Risk != ReadOnly {
		t.Fatal("registry lost the tool")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a duplicate name was accepted")
		}
	}()
	b, _ := json.Marshal(Definition{Risk: NetworkGet})
	if !strings.Contains(string(b), `"network_get"`) {
		t.Fatalf("risk JSON %s", b)
	}
	if _, err := ParseRisk("spends-money"); err == nil {
		t.Fatal("a misspelt risk parsed")
	}
	if r, _ := ParseRisk("spends_money"); r != SpendsMoney || !(ReadOnly < WriteLocal && WriteLocal < NetworkGet && NetworkGet < NetworkWrite && NetworkWrite < SpendsMoney) {
		t.Fatal("ladder order")
	}
	r.Register(echoTool(new(int)))
}
