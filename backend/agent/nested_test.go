package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// bundle is a tool that runs other tools as nested calls of the agent's, as a recipe does.
func bundle(reg *tools.Registry, calls ...[2]string) tools.Tool {
	return tools.New("bundle", "Run several tools.", tools.ReadOnly, func(ctx context.Context, call tools.Call, _ struct{}) (tools.Result, error) {
		if call.Nested == nil {
			return tools.Errorf("no nested calls outside an agent"), nil
		}
		var out []string
		for _, c := range calls {
			tool, ok := reg.Get(c[0])
			if !ok {
				return tools.Errorf("no tool %s", c[0]), nil
			}
			res, err := call.Nested(ctx, tool, json.RawMessage(c[1]))
			if err != nil {
				return tools.Result{}, err
			}
			out = append(out, res.Text)
			if res.IsError {
				break
			}
		}
		return tools.Result{Text: strings.Join(out, " | ")}, nil
	})
}

// Each call a tool makes through the dispatcher is decided by the caller's check at its own
// risk, asks the person when the check says so, and is recorded under an id derived from the
// parent's; a refusal stops nothing the bundle did not choose to stop, and never runs the call.
func TestNestedCallsGoThroughTheCheckAndTheApprovals(t *testing.T) {
	var checked []string
	b := newBench(t, func(tool tools.Tool, call tools.Call) agent.Verdict {
		checked = append(checked, call.ID+" "+call.Name)
		risk, _ := tools.RiskOf(tool, call.Args)
		switch {
		case call.Name == "http_post" && strings.Contains(string(call.Args), "deny"):
			return agent.Verdict{Decision: policy.Deny, Reason: "refused by the test's policy", Risk: risk}
		case call.Name == "http_post":
			return agent.Verdict{Decision: policy.Ask, Reason: "network_write is above the ceiling", Risk: risk}
		}
		return agent.Verdict{Decision: policy.Allow, Risk: risk}
	})
	b.a.Registry.Register(bundle(b.a.Registry, [2]string{"run_check", `{}`}, [2]string{"http_post", `{"url":"https://a.example"}`}, [2]string{"http_post", `{"url":"https://deny.example"}`}))
	// run_check fails, so the bundle stops after its first step.
	res, _, _ := b.a.Call(context.Background(), tc("c1", "bundle", `{}`))
	if len(b.records) != 2 || b.records[0].Call.ID != "c1.1" || b.records[0].Call.Name != "run_check" || b.records[1].Call.ID != "c1" {
		t.Fatalf("records: %+v", b.records)
	}
	if !strings.Contains(res.Text, "connection refused") {
		t.Errorf("bundle result: %q", res.Text)
	}

	b.records, checked = nil, nil
	b.a.Registry = toolsWith(b, bundle(b.a.Registry, [2]string{"http_post", `{"url":"https://a.example"}`}, [2]string{"http_post", `{"url":"https://deny.example"}`}))
	go func() {
		a := <-b.asked
		if a.CallID != "c2.1" || a.Tool != "http_post" {
			t.Errorf("asked: %+v", a)
		}
		for {
			if _, err := b.a.Approvals.Answer(context.Background(), a.ID, agent.ApprovalAllowScope, ""); err == nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	res, _, _ = b.a.Call(context.Background(), tc("c2", "bundle", `{}`))
	if strings.Join(checked, ",") != "c2 bundle,c2.1 http_post,c2.2 http_post" {
		t.Errorf("checked: %v", checked)
	}
	if len(b.records) != 3 || !b.records[0].Ran || b.records[1].Ran || !strings.Contains(b.records[1].Result.Text, "refused by the test's policy") {
		t.Fatalf("records: %+v", b.records)
	}
	if !strings.Contains(res.Text, "posted to https://a.example | refused by the test's policy") {
		t.Errorf("bundle result: %q", res.Text)
	}
}

func toolsWith(b *bench, extra tools.Tool) *tools.Registry {
	reg := tools.NewRegistry()
	for _, n := range b.a.Registry.Names() {
		if n != "bundle" {
			tool, _ := b.a.Registry.Get(n)
			reg.Register(tool)
		}
	}
	reg.Register(extra)
	return reg
}
