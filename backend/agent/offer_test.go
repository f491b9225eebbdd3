package agent_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/panes"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// panesOf is a workspace whose panes are of the kinds it holds; the test changes them.
type panesOf struct {
	mu    sync.Mutex
	kinds []string
}

func (p *panesOf) set(kinds ...string) {
	p.mu.Lock()
	p.kinds = kinds
	p.mu.Unlock()
}

func (p *panesOf) List(ctx context.Context, c panes.Caller, cursor string, limit int) (panes.Page, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var page panes.Page
	for i, k := range p.kinds {
		page.Items = append(page.Items, panes.Item{PaneID: string(rune('a' + i)), Kind: k})
	}
	return page, nil
}

// offerRegistry has tools of every group, named as the real ones are (the grouping is by
// name): the goal tools and a terminal tool (core), two browser tools, a rare browser action
// and a layout tool (found), a fleet tool, and find_tools.
func offerRegistry(ws tools.PaneLister) (*tools.Registry, *[]string) {
	ran := &[]string{}
	reg := tools.NewRegistry()
	reg.Register(tools.GoalTools()...)
	for _, name := range []string{"write_to_terminal", "browser_navigate", "browser_click", "browser_save_pdf", "focus_pane", "assign_task"} {
		reg.Register(tools.New(name, "Does "+strings.ReplaceAll(name, "_", " ")+" for the test.", tools.ReadOnly,
			func(ctx context.Context, c tools.Call, p struct{}) (tools.Result, error) {
				*ran = append(*ran, c.Name)
				return tools.Result{Text: "did " + c.Name}, nil
			}))
	}
	reg.Register(tools.FindTools(reg))
	if ws != nil {
		reg.SetPanes(ws)
	}
	return reg, ran
}

func offerAgent(reg *tools.Registry, checked *[]string) *agent.Agent {
	return &agent.Agent{Scope: "goal", ByNeed: true, Registry: reg, PaneID: "p1",
		Decider: decideBy(func(tool tools.Tool, _ tools.Call) agent.Verdict {
			*checked = append(*checked, tool.Name())
			return agent.Verdict{Decision: policy.Allow}
		})}
}

func names(defs []llm.ToolDef) []string {
	var out []string
	for _, d := range defs {
		out = append(out, d.Name)
	}
	return out
}

func offeredNames(a *agent.Agent, conv []llm.Message) []string {
	return names(a.Request(agent.Turn{System: "s", Messages: conv}).Tools)
}

// offerRig is an agent over offerRegistry (nil panes), what its check saw and what ran, and
// a goal's conversation that grows call by call.
type offerRig struct {
	reg     *tools.Registry
	a       *agent.Agent
	checked []string
	ran     *[]string
	conv    []llm.Message
}

func newOfferRig() *offerRig {
	r := &offerRig{conv: []llm.Message{llm.UserText("goal")}}
	r.reg, r.ran = offerRegistry(nil)
	r.a = offerAgent(r.reg, &r.checked)
	return r
}

// offered is what the agent offers for the conversation so far.
func (r *offerRig) offered() []string { return offeredNames(r.a, r.conv) }

// call runs one call through the agent and adds the call and its answer to the conversation,
// as the next turn sends it.
func (r *offerRig) call(ctx context.Context, id, name, args string) llm.ToolResult {
	c := llm.ToolCall{ID: id, Name: name, Args: []byte(args)}
	b := r.a.RunCalls(ctx, []llm.ToolCall{c})
	r.conv = append(r.conv, llm.AssistantMessage(llm.ToolCallPart(c)), llm.ToolMessage(b.Results...))
	return b.Results[0]
}

var coreOfTheTestRegistry = []string{"abort_with_report", "claim_complete", "complete_todo", "declare_step", "find_tools",
	"read_step_output", "verify_step", "write_to_terminal", "write_todos"}

// Without ByNeed, or without find_tools to find what is held back, every tool the agent may
// call is offered, sorted by name, as before.
func TestEveryToolIsOfferedWithoutByNeed(t *testing.T) {
	t.Parallel()
	reg, _ := offerRegistry(nil)
	a := &agent.Agent{Registry: reg}
	if got := offeredNames(a, nil); !slices.Equal(got, reg.Names()) {
		t.Errorf("without ByNeed: %v", got)
	}
	bare := tools.NewRegistry()
	bare.Register(tools.GoalTools()...)
	bare.Register(tools.New("browser_navigate", "Go.", tools.ReadOnly, func(context.Context, tools.Call, struct{}) (tools.Result, error) { return tools.Result{}, nil }))
	if got := offeredNames(&agent.Agent{ByNeed: true, Registry: bare}, nil); !slices.Equal(got, bare.Names()) {
		t.Errorf("without find_tools: %v", got)
	}
	// A persona's tools list that leaves find_tools out: its tools are all sent.
	persona := &agent.Agent{ByNeed: true, Registry: reg, Offer: func(n string) bool { return n != tools.ToolFindTools }}
	if got := offeredNames(persona, nil); len(got) != len(reg.Names())-1 || !slices.Contains(got, "browser_save_pdf") {
		t.Errorf("persona without find_tools: %v", got)
	}
}

// The first request offers the core tools sorted by name; what find_tools finds is offered
// from the next request on, added at the end, and an agent made anew over the same
// conversation (a resumed goal, a chat's next loop) offers the same list in the same order.
func TestFoundToolsAreAddedAtTheEnd(t *testing.T) {
	t.Parallel()
	r := newOfferRig()
	first := r.offered()
	if !slices.Equal(first, coreOfTheTestRegistry) {
		t.Fatalf("first offer %v, want %v", first, coreOfTheTestRegistry)
	}
	if res := r.call(t.Context(), "c1", tools.ToolFindTools, `{"query":"save the page as PDF"}`); res.IsError || !strings.Contains(res.Text, "- browser_save_pdf: ") {
		t.Fatalf("find_tools: %+v", res)
	}
	second := r.offered()
	if !slices.Equal(second[:len(first)], first) || !slices.Contains(second[len(first):], "browser_save_pdf") {
		t.Fatalf("second offer %v: not the first %v with browser_save_pdf after it", second, first)
	}
	if again := offeredNames(offerAgent(r.reg, &r.checked), r.conv); !slices.Equal(again, second) {
		t.Errorf("made anew over the same conversation: %v, before %v", again, second)
	}
	if got := r.offered(); !slices.Equal(got, second) {
		t.Errorf("nothing new, yet the offer changed: %v", got)
	}
}

// A call of a tool that exists but is not offered yet is decided like any other (the
// caller's check sees it) and runs; the tool is offered from then on, at the end.
func TestACallOfAToolNotOfferedYetRunsThroughTheCheck(t *testing.T) {
	t.Parallel()
	r := newOfferRig()
	first := r.offered()
	if res := r.call(t.Context(), "c1", "focus_pane", `{}`); res.IsError || !slices.Equal(r.checked, []string{"focus_pane"}) || !slices.Equal(*r.ran, []string{"focus_pane"}) {
		t.Fatalf("result %+v, checked %v, ran %v", res, r.checked, *r.ran)
	}
	if got := r.offered(); !slices.Equal(got, append(slices.Clone(first), "focus_pane")) {
		t.Errorf("after the call: %v", got)
	}
	// A name no tool has is answered as before, and the answer lists what is offered.
	if res := r.call(t.Context(), "c2", "teleport", `{}`); !res.IsError || !strings.Contains(res.Text, "find_tools") || strings.Contains(res.Text, "browser_click") {
		t.Errorf("unknown tool: %+v", res)
	}
}

// The browser tools come with a browser pane: one the workspace holds from the start is in the
// first offer; one opened later adds them at the end. A goal that looks at a page (Browser)
// has them from the start whatever its workspace holds. Rare page actions still wait.
func TestBrowserToolsComeWithABrowserPane(t *testing.T) {
	t.Parallel()
	ws := &panesOf{}
	reg, _ := offerRegistry(ws)
	var checked []string
	conv := []llm.Message{llm.UserText("goal")}

	ws.set("terminal")
	a := offerAgent(reg, &checked)
	first := offeredNames(a, conv)
	if slices.Contains(first, "browser_navigate") {
		t.Fatalf("browser tools without a browser pane: %v", first)
	}
	ws.set("terminal", "browser")
	later := offeredNames(a, conv)
	if !slices.Equal(later, append(slices.Clone(first), "browser_click", "browser_navigate")) {
		t.Errorf("after a browser pane opened: %v", later)
	}
	ws.set("terminal")
	if got := offeredNames(a, conv); !slices.Equal(got, later) {
		t.Errorf("a tool was taken away when the pane closed: %v", got)
	}

	ws.set("browser")
	fresh := offeredNames(offerAgent(reg, &checked), conv)
	if !slices.Contains(fresh, "browser_navigate") || slices.Contains(fresh, "browser_save_pdf") || !slices.IsSorted(fresh) {
		t.Errorf("a workspace with a browser pane from the start: %v", fresh)
	}
	ws.set()
	visual := offerAgent(reg, &checked)
	visual.Browser = true
	if got := offeredNames(visual, conv); !slices.Contains(got, "browser_click") || slices.Contains(got, "assign_task") {
		t.Errorf("Browser: %v", got)
	}
	fleet := offerAgent(reg, &checked)
	fleet.Fleet = true
	if got := offeredNames(fleet, conv); !slices.Contains(got, "assign_task") || slices.Contains(got, "browser_click") {
		t.Errorf("Fleet: %v", got)
	}
}
