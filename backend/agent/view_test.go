package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/llm/providers"
)

// randomTurn appends one random exchange to conv: an assistant call, its result (large or
// small, with or without pictures), now and then a user message with a picture.
func randomTurn(rng *rand.Rand, conv []llm.Message, i int) []llm.Message {
	img := llm.Image{MediaType: "image/png", Data: []byte{byte(i)}}
	id := fmt.Sprint("call-", i)
	conv = append(conv, llm.AssistantMessage(llm.ToolCallPart(llm.ToolCall{ID: id, Name: "noop", Args: json.RawMessage(`{}`)})))
	r := llm.ToolResult{CallID: id, Name: "noop", Text: strings.Repeat("o", 10+rng.IntN(2*stubChars))}
	for range rng.IntN(3) {
		r.Images = append(r.Images, img)
	}
	conv = append(conv, llm.ToolMessage(r))
	if rng.IntN(5) == 0 {
		conv = append(conv, llm.UserText(fmt.Sprint("look ", i), img))
	}
	return conv
}

// Request, built turn after turn on the view it kept, must send exactly what one pass over
// the whole conversation sent (Compaction.View, then KeepLastImages), and count it as
// llm.EstimateRequest does — through compactions coming and going, the newest messages
// replaced or dropped, another conversation handed over, and each handed over as a fresh
// copy (as goals do) or as the same slice.
func TestRequestOnTheKeptViewMatchesAFullPass(t *testing.T) {
	t.Parallel()
	for seed := range uint64(60) {
		rng := rand.New(rand.NewPCG(seed, 28))
		a := &Agent{Hooks: Hooks{StepOf: func(id string) int {
			var n int
			fmt.Sscanf(id, "call-%d", &n)
			return n
		}}}
		conv := []llm.Message{llm.UserText("GOAL: count")}
		for turn := range 80 {
			switch k := rng.IntN(20); {
			case k == 0 && len(conv) > 3: // a compaction, or a new one
				through := 1 + rng.IntN(len(conv)-1)
				a.Compaction = &Compaction{Head: 1, Through: through, Summary: fmt.Sprint("summary ", turn),
					StubThrough: through + rng.IntN(len(conv)-through+1)}
			case k == 1: // the compaction is dropped (a new conversation)
				a.Compaction = nil
			case k == 2 && len(conv) > 2: // the newest message is replaced
				conv = append(slices.Clone(conv[:len(conv)-1]), llm.UserText("replaced"))
			case k == 3 && len(conv) > 4: // the conversation is cut short
				conv = slices.Clone(conv[:len(conv)-rng.IntN(3)-1])
			case k == 4: // another conversation, as long or longer
				conv = append([]llm.Message{llm.UserText(fmt.Sprint("GOAL: other ", turn))}, conv[1:]...)
				conv = randomTurn(rng, conv, turn)
			default:
				conv = randomTurn(rng, conv, turn)
			}
			msgs := conv
			if rng.IntN(2) == 0 {
				msgs = slices.Clone(conv) // as the goal hands it over each turn
			}
			ctx := ""
			if rng.IntN(3) > 0 {
				ctx = fmt.Sprint("CHECKLIST ", turn)
			}
			got := a.Request(Turn{System: "sys", Messages: msgs, Context: ctx, NoTools: true})
			want := llm.KeepLastImages(a.Compaction.View(conv, a.stub), KeptImages)
			if ctx != "" {
				want = append(want, llm.UserText(llm.ContextText(ctx)))
			}
			gotJSON, _ := json.Marshal(got.Messages)
			wantJSON, _ := json.Marshal(want)
			if string(gotJSON) != string(wantJSON) || !reflect.DeepEqual(got.Messages, want) {
				t.Fatalf("seed %d, turn %d, compaction %+v:\n got %s\nwant %s", seed, turn, a.Compaction, gotJSON, wantJSON)
			}
			if n, full := a.tokens(got), llm.EstimateRequest(got); n != full {
				t.Fatalf("seed %d, turn %d: estimate %d from the kept counts, %d counted afresh", seed, turn, n, full)
			}
		}
	}
}

// A turn that appends two messages to a long conversation reads only those two: the rest is
// recognised, not copied or counted again. (A regression to a pass per turn shows as
// allocations that grow with the conversation.)
func TestRequestCostDoesNotGrowWithTheConversation(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	allocs := func(turns int) float64 {
		a := &Agent{}
		conv := []llm.Message{llm.UserText("GOAL: count")}
		for i := range turns {
			conv = randomTurn(rng, conv, i)
			a.Request(Turn{System: "sys", Messages: conv, Context: "now", NoTools: true})
		}
		i := turns
		return testing.AllocsPerRun(50, func() {
			conv = randomTurn(rng, conv, i)
			i++
			req := a.Request(Turn{System: "sys", Messages: conv, Context: "now", NoTools: true})
			a.tokens(req)
		})
	}
	short, long := allocs(20), allocs(2000)
	if long > short+4 {
		t.Fatalf("a turn allocates %.0f times after 2,000 steps, %.0f after 20: building the request grows with the conversation", long, short)
	}
}

func TestWindowInRefusals(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]int{
		"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.": 8192,
		"prompt is too long: 210000 tokens > 200000 maximum":                                                  200000,
		"the request exceeds the available context size (4096 tokens), try increasing it":                     4096,
		"input is too long": 0,
	} {
		if got := windowIn(msg); got != want {
			t.Errorf("windowIn(%q) = %d, want %d", msg, got, want)
		}
	}
}

// A server that refuses every request as too long, even the smallest: the turn is compacted
// and sent again a bounded number of times, then the refusal is returned. It never loops.
// (The summariser is refused too, so a plain digest stands in for its summary.)
func TestContextRefusalsNeverLoop(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t, llmtest.Script{ContextLimit: 10, Roles: []llmtest.Role{{Name: "summary", Match: llmtest.Match{System: "You compact"}, Reply: llmtest.Text("summary")}}})
	prov, err := providers.New(llm.Config{Name: "s", Kind: llm.KindOpenAI, BaseURL: srv.OpenAIURL(), Model: "m", APIKey: "k", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	a := &Agent{Model: Model{Provider: prov, Name: "s", ModelID: "m"}}
	var conv []llm.Message
	conv = append(conv, llm.UserText("GOAL: keep going"))
	for i := range 12 {
		conv = append(conv, llm.AssistantText(strings.Repeat("thinking ", 50+i)), llm.UserText("continue"))
	}
	_, err = a.Stream(context.Background(), Turn{System: "sys", Messages: conv})
	if !errors.Is(err, llm.ContextTooLong) {
		t.Fatalf("err %v", err)
	}
	refused := 0
	for _, q := range srv.ChatRequests() {
		if q.Answer == "context_length_exceeded" {
			refused++
		}
	}
	if refused > 1+maxContextRetries {
		t.Fatalf("%d refused requests for one turn: it looped", refused)
	}
	if a.Compaction == nil || a.Compaction.Head != 1 {
		t.Fatalf("compaction %+v: the goal prompt is not kept as the head", a.Compaction)
	}
	view := a.Compaction.View(conv, nil)
	if view[0].Text() != "GOAL: keep going" || !strings.HasPrefix(view[1].Text(), "[Earlier in this session") || view[len(view)-1].Text() != "continue" {
		t.Fatalf("view %v", view)
	}
}

// Between compactions the view only grows at its end: appending to the conversation never
// changes what was sent before.
func TestCompactedViewIsAppendOnly(t *testing.T) {
	t.Parallel()
	c := &Compaction{Head: 1, Through: 3, Summary: "S", StubThrough: 5}
	conv := []llm.Message{llm.UserText("goal"), llm.AssistantText("a"), llm.UserText("b"), llm.AssistantText("c"),
		llm.ToolMessage(llm.ToolResult{CallID: "x", Name: "t", Text: strings.Repeat("o", 2*stubChars)}), llm.UserText("d")}
	stub := func(r llm.ToolResult) (llm.ToolResult, bool) { r.Text = "stub"; return r, true }
	before := c.View(conv, stub)
	after := c.View(append(conv, llm.AssistantText("e")), stub)
	for i := range before {
		if before[i].Text() != after[i].Text() || len(before[i].ToolResults()) != len(after[i].ToolResults()) {
			t.Fatalf("message %d changed", i)
		}
	}
	if len(after) != len(before)+1 || before[3].ToolResults()[0].Text != "stub" || before[1].Text() != "S" {
		t.Fatalf("view %+v", before)
	}
}
