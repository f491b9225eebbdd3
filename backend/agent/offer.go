package agent

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// Offering tools by need (Agent.ByNeed). A request sends the core tools, the groups the
// work's situation calls for (a browser pane, a fleet), and whatever find_tools found since;
// the rest wait behind find_tools (tools/offer.go, tools/find.go).
//
// The list only grows, and only at its end: the first request's tools sorted by name, then
// each addition in the order it came. The provider caches the request's prefix, tools first,
// so a list that changed in the middle would make every later request pay for its whole
// conversation again; an addition at the end costs that once.
//
// What was added is read back from the conversation (find_tools' results, and calls of tools
// not offered yet) rather than stored apart, so a goal resumed after a restart, or a chat's
// next loop, offers the same list.
//
// A call of a tool that exists but is not offered yet is not refused: it runs through the
// same guard, policy and approval as any other (deciding a call never looks at the offer),
// and the tool is offered from then on. Refusing it would only cost a turn: the offer saves
// tokens, it is no boundary.

// situationTimeout bounds the look at the caller's workspace before a request: it reads the
// panes the per-turn context shows anyway, so it is quick, but a stuck read must not hold
// the turn.
const situationTimeout = time.Second

// toolOffer is the list sent so far with ByNeed.
type toolOffer struct {
	names []string        // in the order sent
	has   map[string]bool // the same, to look up
	// scanned is how much of the conversation the list was brought up to date with.
	scanned int
}

// offerFor brings the offer up to date with the conversation and the situation and returns
// the tools this request sends.
func (a *Agent) offerFor(conv []llm.Message) []llm.ToolDef {
	defs := a.mayCall()
	if !a.byNeed(defs) {
		return toolDefs(defs)
	}
	need := a.needs(defs)
	if a.offer.has == nil {
		a.firstOffer(defs, need)
	}
	// The conversation only grows, so what was read of it stays read; a shorter one is
	// another conversation, read from its start.
	if len(conv) < a.offer.scanned {
		a.offer.scanned = 0
	}
	for _, name := range foundIn(conv[a.offer.scanned:]) {
		a.add(defs, name)
	}
	a.offer.scanned = len(conv)
	for _, d := range defs {
		if slices.Contains(need, tools.GroupOf(d)) {
			a.add(defs, d.Name)
		}
	}
	return a.sent(defs)
}

// offeredDefs lists the tools the agent has been sent so far: every one it may call without
// ByNeed, else the offer (the first one if no request was made yet, as when a resumed goal
// finishes a batch before its first turn).
func (a *Agent) offeredDefs() []llm.ToolDef {
	defs := a.mayCall()
	if !a.byNeed(defs) {
		return toolDefs(defs)
	}
	if a.offer.has == nil {
		a.firstOffer(defs, a.needs(defs))
	}
	return a.sent(defs)
}

// mayCall is every tool the agent may call (Offer), sorted by name.
func (a *Agent) mayCall() []tools.Definition {
	if a.Registry == nil {
		return nil
	}
	all := a.Registry.Definitions()
	defs := all[:0]
	for _, d := range all {
		if a.offered(d.Name) {
			defs = append(defs, d)
		}
	}
	return defs
}

// find looks name up in defs, which are sorted by name.
func find(defs []tools.Definition, name string) (tools.Definition, bool) {
	i, ok := slices.BinarySearchFunc(defs, name, func(d tools.Definition, n string) int { return strings.Compare(d.Name, n) })
	if !ok {
		return tools.Definition{}, false
	}
	return defs[i], true
}

// byNeed: asked for, and find_tools is there for the agent to call. A registry without it
// (the small ones of tests) or a persona's tools list that leaves it out sends every tool,
// since nothing held back could be found.
func (a *Agent) byNeed(defs []tools.Definition) bool {
	if !a.ByNeed {
		return false
	}
	_, ok := find(defs, tools.ToolFindTools)
	return ok
}

// needs are the groups beyond the core that the work calls for now: those its owner named,
// and the browser when its workspace holds a browser pane. The workspace is looked at only
// while a browser tool is missing from the offer: the offer never shrinks, so once they are
// all in it the look would change nothing.
func (a *Agent) needs(defs []tools.Definition) []tools.Group {
	var need []tools.Group
	if a.Browser {
		need = append(need, tools.GroupBrowser)
	}
	if a.Fleet {
		need = append(need, tools.GroupFleet)
	}
	if a.Browser || !a.lacks(defs, tools.GroupBrowser) {
		return need
	}
	ctx, cancel := context.WithTimeout(context.Background(), situationTimeout)
	defer cancel()
	return append(need, a.Registry.Situation(ctx, tools.Call{PaneID: a.PaneID, WorkspaceID: a.WorkspaceID})...)
}

// lacks reports whether a tool of group g that the agent may call is not offered yet.
func (a *Agent) lacks(defs []tools.Definition, g tools.Group) bool {
	for _, d := range defs {
		if !a.offer.has[d.Name] && tools.GroupOf(d) == g {
			return true
		}
	}
	return false
}

// firstOffer starts the offer: the core tools and the needed groups, sorted by name.
func (a *Agent) firstOffer(defs []tools.Definition, need []tools.Group) {
	a.offer = toolOffer{has: map[string]bool{}}
	for _, d := range defs {
		if g := tools.GroupOf(d); g == tools.GroupCore || slices.Contains(need, g) {
			a.add(defs, d.Name)
		}
	}
}

// add puts name at the end of the offer, if the agent may call it and has not got it.
func (a *Agent) add(defs []tools.Definition, name string) {
	if _, ok := find(defs, name); ok && !a.offer.has[name] {
		a.offer.names = append(a.offer.names, name)
		a.offer.has[name] = true
	}
}

// sent is the offer as definitions, in its order. A tool gone from the registry since (a
// plugin file removed) is left out: offering it would only invite a failing call.
func (a *Agent) sent(defs []tools.Definition) []llm.ToolDef {
	out := make([]llm.ToolDef, 0, len(a.offer.names))
	for _, name := range a.offer.names {
		if d, ok := find(defs, name); ok {
			out = append(out, toolDef(d))
		}
	}
	return out
}

// foundIn lists, in the order of the conversation, the tools it shows the model wanting:
// those a find_tools result found, and those the model called.
func foundIn(conv []llm.Message) []string {
	var names []string
	for _, m := range conv {
		for _, p := range m.Parts {
			switch {
			case p.Kind == llm.PartToolCall && p.ToolCall != nil:
				names = append(names, p.ToolCall.Name)
			case p.Kind == llm.PartToolResult && p.ToolResult != nil && p.ToolResult.Name == tools.ToolFindTools && !p.ToolResult.IsError:
				names = append(names, tools.FoundTools(p.ToolResult.Text)...)
			}
		}
	}
	return names
}

// toolDefs is every tool of defs, in their order: the list without ByNeed.
func toolDefs(defs []tools.Definition) []llm.ToolDef {
	var out []llm.ToolDef
	for _, d := range defs {
		out = append(out, toolDef(d))
	}
	return out
}

func toolDef(d tools.Definition) llm.ToolDef {
	return llm.ToolDef{Name: d.Name, Description: d.Description, Schema: d.Schema}
}
