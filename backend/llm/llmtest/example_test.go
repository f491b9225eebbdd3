package llmtest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/llm/providers"
)

// A test scripts two replies and drives a provider against them.
func ExampleNew() {
	srv := llmtest.New(nil, llmtest.Script{Replies: []llmtest.Reply{
		llmtest.Calls(llmtest.Call("read_file", map[string]string{"path": "go.mod"})),
		llmtest.Text("The module is clusterspace."),
	}})
	defer srv.Close()
	p, _ := providers.New(llm.Config{Name: "scripted", Kind: llm.KindOpenAI, BaseURL: srv.URL, Model: "scripted-model"})

	req := llm.Request{Messages: []llm.Message{llm.UserText("What is the module called?")}}
	s, _ := p.Stream(context.Background(), req)
	reply, _ := llm.Collect(s, nil)
	call := reply.Message.ToolCalls()[0]
	fmt.Println(reply.Finish, call.Name, string(call.Args))

	req.Messages = append(req.Messages, reply.Message, llm.ToolMessage(llm.ToolResult{CallID: call.ID, Name: call.Name, Text: "module github.com/clusterspace/clusterspace"}))
	s, _ = p.Stream(context.Background(), req)
	reply, _ = llm.Collect(s, nil)
	fmt.Println(reply.Message.Text())
	fmt.Println(len(srv.ChatRequests()), srv.Remaining())
	// Output:
	// tool_calls read_file {"path":"go.mod"}
	// The module is clusterspace.
	// 2 0
}

// TestExampleScript plays testdata/example.json through both protocols.
func TestExampleScript(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{llm.KindOpenAI, llm.KindAnthropic} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			script, err := llmtest.LoadScript("testdata/example.json")
			if err != nil {
				t.Fatal(err)
			}
			srv := llmtest.New(t, script)
			p, err := providers.New(llm.Config{Name: "example", Kind: kind, BaseURL: srv.URL, Model: "scripted-model", APIKey: script.APIKey, Timeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			turn := func(system string) (llm.Reply, error) {
				s, err := p.Stream(ctx, llm.Request{System: system, Messages: []llm.Message{llm.UserText("go")}})
				if err != nil {
					return llm.Reply{}, err
				}
				return llm.Collect(s, nil)
			}
			r, err := turn("agent") // 429, then the think + text reply
			if err != nil || r.Message.Text() != "I will read the file." || !strings.Contains(r.Message.Reasoning(), "file read first") {
				t.Fatalf("turn 1: %+v %v", r.Message, err)
			}
			if r, err = turn("You are the critic."); err != nil || !strings.HasPrefix(r.Message.Text(), "PROGRESSING") {
				t.Fatalf("critic: %+v %v", r.Message, err)
			}
			if r, err = turn("agent"); err != nil || len(r.Message.ToolCalls()) != 2 || r.Usage.InputTokens != 120 {
				t.Fatalf("turn 2: %+v %v", r, err)
			}
			r, err = turn("agent")
			if calls := r.Message.ToolCalls(); err != nil || len(calls) != 1 || string(calls[0].Args) != `{"summary": "done"}` {
				t.Fatalf("turn 3: %+v %v", r.Message, err)
			}
			if _, err = turn("agent"); !errors.Is(err, llm.Timeout) {
				t.Fatalf("turn 4 should stall into a timeout: %v", err)
			}
		})
	}
}
