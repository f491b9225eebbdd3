package providers_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/llm/providers"
)

func asLLM(err error, target **llm.Error) bool { return errors.As(err, target) }

func TestNewRefusesInvalidConfig(t *testing.T) {
	t.Parallel()
	_, err := providers.New(llm.Config{Name: "x", Kind: "gemini", Model: "m"})
	var fe *llm.FieldError
	if !errors.As(err, &fe) || fe.Field != "kind" {
		t.Fatalf("err = %v, want a Kind field error", err)
	}
	if _, err := providers.New(llm.Config{Name: "x", Kind: llm.KindAnthropic, Model: "m"}); err == nil || !strings.Contains(err.Error(), "API key") {
		t.Fatalf("official Anthropic without a key: %v", err)
	}
}

func TestStreamedText(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, kind string) {
		r := newRig(t, kind, llmtest.Script{Replies: []llmtest.Reply{
			{Text: "Hello, world! The build is green.", Chunks: 6, Usage: &llmtest.Usage{Input: 1200, Output: 300}},
		}})
		reply, events := r.mustStream(t, ask("say hello"))
		if got := reply.Message.Text(); got != "Hello, world! The build is green." {
			t.Fatalf("text %q", got)
		}
		if n := len(kindsOf(events, llm.EventText)); n < 6 {
			t.Errorf("%d text deltas, want the 6 chunks streamed", n)
		}
		if last := events[len(events)-1]; last.Kind != llm.EventFinish || last.Finish != llm.FinishStop {
			t.Errorf("last event %+v, want finish stop", last)
		}
		if reply.Usage != (llm.Usage{InputTokens: 1200, OutputTokens: 300}) {
			t.Errorf("usage %+v", reply.Usage)
		}
		cost, ok := llm.Prices{"scripted-model": {InputPerMTok: 2.5, OutputPerMTok: 10}}.Cost(reply.Model, reply.Usage)
		if !ok || math.Abs(cost-0.006) > 1e-12 {
			t.Errorf("cost %v, %v; want $0.006", cost, ok)
		}
		rec := r.srv.ChatRequests()[0]
		if !rec.Stream || rec.System != "You are the agent." || rec.LastUser != "say hello" || rec.Model != "scripted-model" {
			t.Errorf("recorded %+v", rec)
		}
	})
}

func TestToolCallsFragmentedAndParallel(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, kind string) {
		r := newRig(t, kind, llmtest.Script{Replies: []llmtest.Reply{{
			Text: "Reading both.",
			ToolCalls: []llmtest.ToolCall{
				{ID: "call_a", Name: "read_file", Args: json.RawMessage(`{"path": "notes/a.txt", "lines": [1, 20]}`), Fragments: 7},
				{ID: "call_b", Name: "list_dir", Args: json.RawMessage(`{"path": "."}`), Fragments: 4},
			},
		}}})
		req := ask("read")
		req.Tools = []llm.ToolDef{
			{Name: "read_file", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "list_dir", Description: "List a folder.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
		}
		reply, events := r.mustStream(t, req)
		starts, deltas := kindsOf(events, llm.EventToolCallStart), kindsOf(events, llm.EventToolCallDelta)
		if len(starts) != 2 || starts[0].ToolCall.Name != "read_file" || starts[1].Index != 1 || starts[1].ToolCall.ID != "call_b" {
			t.Fatalf("starts %+v", starts)
		}
		perCall := map[int]string{}
		for _, d := range deltas {
			perCall[d.Index] += d.Text
		}
		if perCall[0] != `{"path":"notes/a.txt","lines":[1,20]}` || perCall[1] != `{"path":"."}` {
			t.Errorf("argument deltas joined: %v", perCall)
		}
		if len(deltas) < 7+4-1 {
			t.Errorf("%d argument deltas, want the fragments streamed", len(deltas))
		}
		calls := reply.Message.ToolCalls()
		if len(calls) != 2 || calls[0].ID != "call_a" || string(calls[0].Args) != `{"path":"notes/a.txt","lines":[1,20]}` || calls[1].Name != "list_dir" || calls[1].ArgsError != "" {
			t.Fatalf("calls %+v", calls)
		}
		if reply.Finish != llm.FinishToolCalls || reply.Message.Text() != "Reading both." {
			t.Errorf("finish %s text %q", reply.Finish, reply.Message.Text())
		}
		tools, _ := r.srv.ChatRequests()[0].JSON["tools"].([]any)
		if len(tools) != 2 {
			t.Errorf("%d tools sent", len(tools))
		}
	})
}

func TestMalformedToolArguments(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, kind string) {
		r := newRig(t, kind, llmtest.Script{Replies: []llmtest.Reply{{ToolCalls: []llmtest.ToolCall{
			{Name: "fenced", RawArgs: "```json\n{\"path\": \"a.txt\"}\n```", Fragments: 5},
			{Name: "overclosed", RawArgs: `{"n": {"m": 1}}}`},
			{Name: "cutoff", RawArgs: `{"path": "a.txt", "content": "hel`, Fragments: 4},
			{Name: "ambiguous", RawArgs: `{"a": 1} {"a": 2}`},
		}}}})
		reply, _ := r.mustStream(t, ask("go"))
		calls := reply.Message.ToolCalls()
		if len(calls) != 4 {
			t.Fatalf("%d calls", len(calls))
		}
		if string(calls[0].Args) != `{"path": "a.txt"}` || calls[0].ArgsError != "" || calls[0].RawArgs == "" {
			t.Errorf("fenced: %+v", calls[0])
		}
		if string(calls[1].Args) != `{"n": {"m": 1}}` || calls[1].ArgsError != "" {
			t.Errorf("overclosed: %+v", calls[1])
		}
		for _, c := range calls[2:] {
			if c.Args != nil || c.ArgsError == "" || !strings.Contains(c.ArgsError, c.Name+" was not run") {
				t.Errorf("%s: %+v", c.Name, c)
			}
			if res := c.ArgsErrorResult(); !res.IsError || res.CallID != c.ID {
				t.Errorf("%s: error result %+v", c.Name, res)
			}
		}
		if !strings.Contains(calls[2].ArgsError, "cut off") || !strings.Contains(calls[3].ArgsError, "2 JSON objects") {
			t.Errorf("errors do not say what was wrong: %q / %q", calls[2].ArgsError, calls[3].ArgsError)
		}
	})
}

func TestReasoningKeptOutOfTheAnswer(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, kind string) {
		r := newRig(t, kind, llmtest.Script{Replies: []llmtest.Reply{{
			Reasoning: "The separate reasoning channel.",
			Think:     "Tagged reasoning in the content.",
			Text:      "The answer.",
			Chunks:    23, // cuts the <think> tags across deltas
		}}})
		reply, events := r.mustStream(t, ask("think"))
		if got := reply.Message.Text(); got != "The answer." {
			t.Fatalf("answer %q", got)
		}
		for _, ev := range kindsOf(events, llm.EventText) {
			if strings.Contains(ev.Text, "think") || strings.Contains(ev.Text, "reasoning") || strings.ContainsAny(ev.Text, "<>") {
				t.Fatalf("reasoning leaked into the answer: %q", ev.Text)
			}
		}
		reasoning := reply.Message.Reasoning()
		if !strings.Contains(reasoning, "The separate reasoning channel.") || !strings.Contains(reasoning, "Tagged reasoning in the content.") {
			t.Fatalf("reasoning %q", reasoning)
		}
		if kind == llm.KindAnthropic && !strings.HasPrefix(reply.Message.Parts[0].Signature, "scripted-signature-") {
			t.Errorf("thinking block signature lost: %+v", reply.Message.Parts[0])
		}
	})
}

func TestLengthFinishIsAStall(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, kind string) {
		r := newRig(t, kind, llmtest.Script{Replies: []llmtest.Reply{{Text: "The list so far: 1, 2,", Finish: "length"}}},
			func(c *llm.Config) { c.MaxTokens = 64 })
		reply, _ := r.mustStream(t, ask("count"))
		if reply.Finish != llm.FinishLength || !strings.Contains(reply.Stall(), "max tokens limit (64)") {
			t.Fatalf("finish %s, stall %q", reply.Finish, reply.Stall())
		}
	})
}

func TestComplete(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, kind string) {
		r := newRig(t, kind, llmtest.Script{
			Roles: []llmtest.Role{{Name: "critic", Match: llmtest.Match{System: "You are the critic"}, Reply: llmtest.Text("STUCK: it repeats itself")}},
			Replies: []llmtest.Reply{{
				Reasoning: "hmm", Think: "tagged", Text: "Done.",
				ToolCalls: []llmtest.ToolCall{llmtest.Call("claim_complete", map[string]string{"summary": "ok"})},
				Usage:     &llmtest.Usage{Input: 50, Output: 9},
			}},
		})
		critic := llm.Request{System: "You are the critic. Judge the agent.", Messages: []llm.Message{llm.UserText("transcript")}}
		for range 2 { // a role answers as often as it matches
			got, err := r.p.Complete(ctx(t), critic)
			if err != nil {
				t.Fatal(err)
			}
			if got.Message.Text() != "STUCK: it repeats itself" || got.Finish != llm.FinishStop {
				t.Fatalf("critic reply %+v", got)
			}
		}
		reply, err := r.p.Complete(ctx(t), ask("finish"))
		if err != nil {
			t.Fatal(err)
		}
		calls := reply.Message.ToolCalls()
		if reply.Message.Text() != "Done." || reply.Message.Reasoning() != "hmmtagged" || len(calls) != 1 || string(calls[0].Args) != `{"summary":"ok"}` {
			t.Fatalf("reply %+v", reply.Message)
		}
		if reply.Usage != (llm.Usage{InputTokens: 50, OutputTokens: 9}) || reply.Finish != llm.FinishToolCalls {
			t.Fatalf("usage %+v finish %s", reply.Usage, reply.Finish)
		}
		reqs := r.srv.ChatRequests()
		if len(reqs) != 3 || reqs[0].Stream || reqs[0].Answer != "roles[critic]" || reqs[2].Answer != "replies[0]" {
			t.Fatalf("requests %+v", reqs)
		}
	})
}

func TestListModels(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, kind string) {
		r := newRig(t, kind, llmtest.Script{Models: []string{"alpha", "beta"}})
		models, err := r.p.ListModels(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		if len(models) != 2 || models[0].ID != "alpha" || models[1].ID != "beta" {
			t.Fatalf("models %+v", models)
		}
		if got := r.srv.Requests()[0].Protocol; got != kind {
			t.Errorf("served as %s", got)
		}
	})
}

func TestVisionModelAnswersImages(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, kind string) {
		r := newRig(t, kind, llmtest.Script{Replies: []llmtest.Reply{llmtest.Text("a cat"), llmtest.Text("plain")}},
			func(c *llm.Config) { c.VisionModel = "scripted-vision" })
		img := llm.Image{MediaType: "image/png", Data: pngBytes}
		r.mustStream(t, llm.Request{Messages: []llm.Message{llm.UserText("what is this?", img)}})
		r.mustStream(t, ask("no image"))
		reqs := r.srv.ChatRequests()
		if reqs[0].Model != "scripted-vision" || reqs[1].Model != "scripted-model" {
			t.Fatalf("models %s, %s", reqs[0].Model, reqs[1].Model)
		}
	})
}

func TestTestConnection(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, kind string) {
		r := newRig(t, kind, llmtest.Script{Models: []string{"scripted-model", "other"}})
		c := providers.Test(ctx(t), r.p, "scripted-model")
		if !c.OK || len(c.Models) != 2 || !strings.Contains(c.Message, "lists 2 models") {
			t.Fatalf("check %+v", c)
		}
		if c := providers.Test(ctx(t), r.p, "missing"); !c.OK || !strings.Contains(c.Message, `not "missing"`) {
			t.Fatalf("check %+v", c)
		}
		one := newRig(t, kind, llmtest.Script{Models: []string{"only"}})
		if c := providers.Test(ctx(t), one.p, ""); !c.OK || !strings.HasSuffix(c.Message, "lists 1 model") {
			t.Fatalf("one model: %+v", c)
		}

		noList := newRig(t, kind, llmtest.Script{NoModels: true, Replies: []llmtest.Reply{llmtest.Text("p")}})
		c = providers.Test(ctx(t), noList.p, "scripted-model")
		if !c.OK || !strings.Contains(c.Message, "answered") {
			t.Fatalf("fallback check %+v", c)
		}
		if got := noList.srv.ChatRequests()[0].JSON["max_tokens"]; got != 1.0 {
			t.Errorf("the fallback chat asked for %v tokens, want 1", got)
		}

		badKey := newRig(t, kind, llmtest.Script{APIKey: "sk-another-key-0000000"})
		c = providers.Test(ctx(t), badKey.p, "scripted-model")
		if c.OK || !strings.Contains(c.Message, "API key was refused") || len(badKey.srv.ChatRequests()) != 0 {
			t.Fatalf("bad key check %+v", c)
		}
		if strings.Contains(c.Message, testKey) {
			t.Fatal("the key is in the message")
		}
	})
}
