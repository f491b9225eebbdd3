package llm

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// conversation is a goal prompt followed by n turns of a tool call and its result, each
// message about 100 tokens by the estimate.
func conversation(n int) Request {
	req := Request{System: "You are the agent.", Messages: []Message{UserText("GOAL " + strings.Repeat("g", 400))}}
	for i := range n {
		id := fmt.Sprintf("call_%d", i)
		req.Messages = append(req.Messages,
			AssistantMessage(Text(strings.Repeat("a", 380)), ToolCallPart(ToolCall{ID: id, Name: "read_file", Args: json.RawMessage(`{"path":"x"}`)})),
			ToolMessage(ToolResult{CallID: id, Name: "read_file", Text: strings.Repeat("r", 400)}),
		)
	}
	return req
}

// checkPairs fails if a tool result has no call before it.
func checkPairs(t *testing.T, msgs []Message) {
	t.Helper()
	calls := map[string]bool{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls() {
			calls[c.ID] = true
		}
		for _, r := range m.ToolResults() {
			if !calls[r.CallID] {
				t.Fatalf("tool result %s kept without its call", r.CallID)
			}
		}
	}
}

func total(req Request) int {
	n := estimateFixed(req)
	for _, m := range req.Messages {
		n += EstimateTokens(m)
	}
	return n
}

func TestFit(t *testing.T) {
	t.Parallel()
	big := conversation(10) // 21 messages, about 2,100 tokens
	tests := []struct {
		name        string
		req         Request
		budget      Budget
		wantDropped int
	}{
		{"unknown window keeps all", big, Budget{}, 0},
		{"fits", big, Budget{Window: 10_000, Reserve: 1000}, 0},
		{"over drops oldest turns", big, Budget{Window: 2_000, Reserve: 500}, 8},
		{"reserve defaults to max tokens", Request{System: big.System, Messages: big.Messages, MaxTokens: 1000}, Budget{Window: 2_000}, 12},
		{"hopeless keeps the goal and the latest turn", big, Budget{Window: 100, Reserve: 50}, 18},
		{"reported usage counts more than the estimate", big, Budget{Window: 4_000, Reserve: 500, Last: &Usage{InputTokens: 5_000, OutputTokens: 200}, LastMessages: 21}, 8},
		{"reported usage counts less than the estimate", big, Budget{Window: 2_000, Reserve: 500, Last: &Usage{InputTokens: 700, OutputTokens: 100}, LastMessages: 21}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, dropped := Fit(tc.req, tc.budget)
			if dropped != tc.wantDropped {
				t.Fatalf("dropped %d, want %d (estimate %d)", dropped, tc.wantDropped, total(tc.req))
			}
			if dropped == 0 {
				if len(got.Messages) != len(tc.req.Messages) {
					t.Fatalf("nothing dropped but %d messages became %d", len(tc.req.Messages), len(got.Messages))
				}
				return
			}
			if got.System != tc.req.System {
				t.Fatal("the system prompt changed")
			}
			if !strings.HasPrefix(got.Messages[0].Text(), "GOAL") {
				t.Fatalf("the goal prompt is not first: %q", got.Messages[0].Text())
			}
			notice := got.Messages[1].Text()
			if got.Messages[1].Role != RoleUser || !strings.Contains(notice, fmt.Sprintf("%d earlier messages were dropped", dropped)) {
				t.Fatalf("no notice after the goal: %+v", got.Messages[1])
			}
			if len(got.Messages) != len(tc.req.Messages)-dropped+1 {
				t.Fatalf("%d messages left, want %d", len(got.Messages), len(tc.req.Messages)-dropped+1)
			}
			last := tc.req.Messages[len(tc.req.Messages)-1]
			if got.Messages[len(got.Messages)-1].ToolResults()[0].CallID != last.ToolResults()[0].CallID {
				t.Fatal("the latest turn was dropped")
			}
			checkPairs(t, got.Messages)
			if len(tc.req.Messages) != 21 {
				t.Fatal("Fit changed the caller's slice")
			}
		})
	}
}

func TestFitKeepsParallelResultsWithTheirCalls(t *testing.T) {
	t.Parallel()
	req := Request{Messages: []Message{UserText("goal")}}
	for i := range 6 {
		a, b := fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i)
		req.Messages = append(req.Messages,
			AssistantMessage(ToolCallPart(ToolCall{ID: a, Name: "x"}), ToolCallPart(ToolCall{ID: b, Name: "y"})),
			ToolMessage(ToolResult{CallID: a, Text: strings.Repeat("r", 400)}),
			ToolMessage(ToolResult{CallID: b, Text: strings.Repeat("r", 400)}),
			UserText("steer "+strings.Repeat("s", 200)),
		)
	}
	for window := 300; window < 3_000; window += 50 {
		got, dropped := Fit(req, Budget{Window: window, Reserve: 100})
		checkPairs(t, got.Messages)
		if dropped > 0 && got.Messages[0].Text() != "goal" {
			t.Fatalf("window %d: goal prompt dropped", window)
		}
	}
}

func TestEstimateTokens(t *testing.T) {
	t.Parallel()
	if got := EstimateTokens(UserText(strings.Repeat("x", 400))); got != 104 {
		t.Errorf("400 chars = %d tokens, want 104", got)
	}
	withImage := UserText("look", Image{MediaType: "image/png", Data: []byte("png")})
	if got := EstimateTokens(withImage); got < imageTokens {
		t.Errorf("an image counts %d tokens, want at least %d", got, imageTokens)
	}
	shot := ToolMessage(ToolResult{CallID: "c", Text: "ok", Images: []Image{{MediaType: "image/png", Data: []byte("png")}}})
	if got := EstimateTokens(shot); got < imageTokens {
		t.Errorf("a screenshot result counts %d tokens, want at least %d", got, imageTokens)
	}
}
