// Package catalog holds what people keep as files in the config dir to shape the agent:
// personas (who the agent is), skills (how-to texts it can load), task templates and pane
// templates. Built-in defaults are embedded; a user file with the same id overrides one.
//
// This file is the contract the goal runner, the chat and the fleets build on; the loader
// (front matter, overrides, reload on change) lives beside it.
package catalog

import (
	"strings"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// Persona is personas/ID.md: front matter name, description, capabilities, tools,
// temperature, max_tokens; the body is its system prompt.
type Persona struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Description  string   `json:"description,omitempty"`
	Capabilities []string `json:"capabilities,omitempty"`
	// Tools narrows what the persona may call (nil: whatever the caller allows).
	Tools       []string `json:"tools,omitempty"`
	Skills      []string `json:"skills,omitempty"` // attached up front
	Temperature *float64 `json:"temperature,omitempty"`
	MaxTokens   int      `json:"maxTokens,omitempty"`
	Prompt      string   `json:"prompt"`
	// Source is the file it came from ("builtin:ID" for an embedded default).
	Source string `json:"source"`
}

// Skill is skills/ID.md: front matter name, domain, description, prerequisites; the body is
// the how-to text.
type Skill struct {
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	Domain        string   `json:"domain,omitempty"`
	Description   string   `json:"description,omitempty"`
	Prerequisites []string `json:"prerequisites,omitempty"`
	Body          string   `json:"body"`
	Source        string   `json:"source"`
}

// alwaysOffered are the tools a persona's list cannot take away: the goal tools (without
// claim_complete a goal could never end) and the skill tools (a persona may need a how-to).
func alwaysOffered(name string) bool {
	return tools.IsGoalTool(name) || name == ToolListSkills || name == ToolLoadSkill
}

// Apply shapes agent a as persona p: its prompt (and the given skills' texts) join the
// system prompt, its temperature and max_tokens reach every request, and its tools list
// narrows what a is offered — never widens it, and never takes the goal tools away.
func (p Persona) Apply(a *agent.Agent, skills ...Skill) {
	var parts []string
	if a.Instructions != "" {
		parts = append(parts, a.Instructions)
	}
	if strings.TrimSpace(p.Prompt) != "" {
		parts = append(parts, "## Persona: "+p.Name+"\n"+strings.TrimSpace(p.Prompt))
	}
	for _, s := range skills {
		parts = append(parts, "## Skill: "+s.Name+"\n"+strings.TrimSpace(s.Body))
	}
	a.Instructions = strings.Join(parts, "\n\n")
	if p.Temperature != nil {
		t := *p.Temperature
		a.Temperature = &t
	}
	if p.MaxTokens > 0 {
		a.Model.MaxTokens = p.MaxTokens
	}
	if len(p.Tools) > 0 {
		allowed := make(map[string]bool, len(p.Tools))
		for _, t := range p.Tools {
			allowed[t] = true
		}
		prev := a.Offer
		a.Offer = func(name string) bool {
			return (allowed[name] || alwaysOffered(name)) && (prev == nil || prev(name))
		}
	}
}
