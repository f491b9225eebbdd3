package tools

import (
	"slices"
)

// Source offers tools that come and go while the app runs: JavaScript plugins, the tools of
// MCP servers. Tools is asked whenever the registry lists or looks up tools, so it answers
// from what it holds (it may start what it needs the first time: an MCP server).
type Source interface {
	// Kind names the source on tool definitions and in Settings: "plugin", "mcp".
	Kind() string
	Tools() []Tool
}

// Reporter is implemented by sources that have problems to tell the person and the model
// about: a plugin that did not load, an MCP server that did not start. The agent puts each
// new one on the goal's rail or in the chat as a notice.
type Reporter interface {
	Problems() []string
}

// Withholder is implemented by sources that withhold tools for a while, such as the tools of
// an MCP server that crashed: they are not offered, but a call of one (the model planned it in
// an earlier turn) still finds a tool, which answers why it cannot run and what to do, where
// the model would otherwise read that there is no such tool.
type Withholder interface {
	Withheld(name string) (Tool, bool)
}

// withheld finds a tool that a source withholds now (see Withholder). A built-in name is
// never a source's.
func (r *Registry) withheld(name string) (Tool, bool) {
	if r.Builtin(name) {
		return nil, false
	}
	r.mu.RLock()
	sources := slices.Clone(r.sources)
	r.mu.RUnlock()
	for _, s := range sources {
		if w, ok := s.(Withholder); ok {
			if t, ok := w.Withheld(name); ok {
				return t, true
			}
		}
	}
	return nil, false
}

// AddSource adds a source of tools. A source tool whose name a tool registered in code
// already has is never offered: the built-in wins (sources refuse such names themselves).
func (r *Registry) AddSource(s Source) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sources = append(r.sources, s)
}

// Builtin reports whether name is a tool registered in code (not from a source).
func (r *Registry) Builtin(name string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	_, ok := r.tools[name]
	return ok
}

// Problems lists what the sources report as wrong now (see Reporter).
func (r *Registry) Problems() []string {
	r.mu.RLock()
	sources := slices.Clone(r.sources)
	r.mu.RUnlock()
	var out []string
	for _, s := range sources {
		if rep, ok := s.(Reporter); ok {
			out = append(out, rep.Problems()...)
		}
	}
	return out
}

type sourceTool struct {
	tool Tool
	kind string
}

// sourceTools lists the sources' tools, first name wins, built-in names left out. The
// sources are asked without the registry's lock held: they may take time (an MCP server
// starting) and must not block registrations.
func (r *Registry) sourceTools() []sourceTool {
	r.mu.RLock()
	sources := slices.Clone(r.sources)
	r.mu.RUnlock()
	if len(sources) == 0 {
		return nil
	}
	seen := map[string]bool{}
	var out []sourceTool
	for _, s := range sources {
		for _, t := range s.Tools() {
			if seen[t.Name()] || r.Builtin(t.Name()) {
				continue
			}
			seen[t.Name()] = true
			out = append(out, sourceTool{t, s.Kind()})
		}
	}
	return out
}
