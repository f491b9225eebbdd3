package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// replaceMasker is a masker of one value.
type replaceMasker struct{ secret, marker string }

func (m replaceMasker) Mask(s string) string { return strings.ReplaceAll(s, m.secret, m.marker) }

// With a masker on its registry, the agent masks a secret wherever a call is recorded,
// published or returned for the model: in the tool's result, in the arguments of the record
// and of the tool_started event, in an approval request (stored and announced), and in a
// denial's text. The tool itself runs with the arguments as the model wrote them.
func TestSecretsMaskedWhereverACallGoes(t *testing.T) {
	t.Parallel()
	const secret, marker = `S3cret-"agent"-7Qx`, "[secret: test]"
	b := newBench(t, func(tool tools.Tool, call tools.Call) agent.Verdict {
		if call.Name == "http_post" {
			return agent.Verdict{Decision: policy.Ask, Reason: "posting " + string(call.Args), Risk: tools.NetworkWrite}
		}
		return agent.Verdict{Decision: policy.Allow}
	})
	var ran []string
	b.a.Registry.Register(tools.New("reveal", "Show the token.", tools.ReadOnly, func(_ context.Context, _ tools.Call, p struct {
		Hint string `json:"hint"`
	}) (tools.Result, error) {
		ran = append(ran, p.Hint)
		out, _ := json.Marshal(map[string]string{"token": secret})
		return tools.Result{Text: "plain " + secret + " json " + string(out)}, nil
	}))
	agent.SetMasker(b.a.Registry, escapingMasker{replaceMasker{secret, marker}})
	ctx := context.Background()
	go func() {
		req := <-b.asked
		b.a.Approvals.Answer(ctx, req.ID, agent.ApprovalDeny, "") // Best effort: the test fails below if not.
	}()
	hint, _ := json.Marshal(map[string]string{"hint": secret})
	post, _ := json.Marshal(map[string]string{"url": "https://x.example/?k=" + secret})
	batch := b.a.RunCalls(ctx, []llm.ToolCall{tc("c1", "reveal", string(hint)), tc("c2", "http_post", string(post))})

	if len(ran) != 1 || ran[0] != secret {
		t.Errorf("the tool ran with %q, want the arguments as written", ran)
	}
	if got := batch.Results[0].Text; got != `plain `+marker+` json {"token":"`+marker+`"}` {
		t.Errorf("the model gets %q", got)
	}
	if !strings.Contains(batch.Results[1].Text, "The user denied this call") {
		t.Errorf("denied call: %+v", batch.Results[1])
	}
	seen, _ := json.Marshal(map[string]any{"results": batch.Results, "records": b.records, "events": b.events})
	stored, err := b.st.Approvals(ctx, false)
	if err != nil || len(stored) != 1 {
		t.Fatalf("stored approvals: %+v %v", stored, err)
	}
	storedJSON, _ := json.Marshal(stored)
	for what, text := range map[string]string{"the results, records and events": string(seen), "the stored approval": string(storedJSON)} {
		if strings.Contains(text, "S3cret") {
			t.Errorf("%s hold the secret: %s", what, text)
		}
		if !strings.Contains(text, marker) {
			t.Errorf("%s lack the marker: %s", what, text)
		}
	}
	if !strings.Contains(string(b.records[0].Args), marker) || !json.Valid(b.records[0].Args) {
		t.Errorf("recorded args: %s", b.records[0].Args)
	}
}

// escapingMasker also masks the secret as a JSON string holds it, as secrets.Masker does.
type escapingMasker struct{ replaceMasker }

func (m escapingMasker) Mask(s string) string {
	esc, _ := json.Marshal(m.secret)
	return strings.ReplaceAll(m.replaceMasker.Mask(s), string(esc[1:len(esc)-1]), m.marker)
}
