package llmtest

import (
	"regexp"
	"slices"
	"strconv"
	"sync"
)

// paneRe finds the pane a goal's prompt names (backend/goal writes "You are working in pane X.").
var paneRe = regexp.MustCompile(`You are working in pane ([A-Za-z0-9_.-]+)\.`)

// Pane is the pane the request's goal prompt names, or "" when it names none: what tells
// apart the agents of many panes (a fleet's tasks) that share one scripted server.
func (r Request) Pane() string {
	if m := paneRe.FindSubmatch(r.Body); m != nil {
		return string(m[1])
	}
	return ""
}

// Panes answers, from one scripted server, for the agents of many panes: each request goes
// to answer with the pane it names and the turn it is at, and is kept, by pane and in the
// order the requests came, for a test to read.
type Panes struct {
	answer func(pane string, turn int, req Request) Reply

	mu    sync.Mutex
	order []string             // "pane:turn" in the order the requests came
	byID  map[string][]Request // by pane
}

// ByPane makes a Panes; a request that names no pane is answered with the text
// "no pane in this request" and not kept.
func ByPane(answer func(pane string, turn int, req Request) Reply) *Panes {
	return &Panes{answer: answer, byID: map[string][]Request{}}
}

// Reply is the script's reply, repeated for ever, that answers every request through p.
func (p *Panes) Reply() Reply {
	return Reply{Repeat: 1 << 30, Compute: func(req Request) Reply {
		pane := req.Pane()
		if pane == "" {
			return Text("no pane in this request")
		}
		turn := req.AssistantTurns()
		p.mu.Lock()
		p.order = append(p.order, pane+":"+strconv.Itoa(turn))
		p.byID[pane] = append(p.byID[pane], req)
		p.mu.Unlock()
		return p.answer(pane, turn, req)
	}}
}

// Requests is what the agent of pane has asked so far, oldest first.
func (p *Panes) Requests(pane string) []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.byID[pane])
}

// Order is every request so far as "pane:turn", in the order they came.
func (p *Panes) Order() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.order)
}
