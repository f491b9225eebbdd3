package catalog

import (
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"

	"github.com/clusterspace/clusterspace/backend/workspace"
)

// Limits on what a persona may ask of the model: providers take temperatures in [0, 2];
// a max_tokens above a million is a typo for something smaller.
const (
	maxTemperature = 2.0
	maxMaxTokens   = 1_000_000
)

// idPattern is what a file name (without extension) must look like to be an id: it goes into
// flags, URLs and fleet files.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// envNamePattern is what an environment variable's name looks like.
var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func parsePersona(id string, d *document) (Persona, *Problem) {
	p := Persona{ID: id, Prompt: d.body}
	dc := d.decoderFor(id, &p.Name, &p.Description, "capabilities", "tools", "skills", "temperature", "max_tokens")
	dc.strs("capabilities", &p.Capabilities)
	dc.strs("tools", &p.Tools)
	dc.strs("skills", &p.Skills)
	dc.number("temperature", &p.Temperature)
	dc.integer("max_tokens", &p.MaxTokens)
	if dc.err != nil {
		return p, dc.err
	}
	if t := p.Temperature; t != nil && (*t < 0 || *t > maxTemperature) {
		return p, d.problem("temperature", "is %g; give a number from 0 (focused) to %g (loose), or leave it out for the provider's", *t, maxTemperature)
	}
	if p.MaxTokens < 0 || p.MaxTokens > maxMaxTokens {
		return p, d.problem("max_tokens", "is %d; give the most tokens a reply may have (1 to %d), or leave it out", p.MaxTokens, maxMaxTokens)
	}
	if _, ok := d.fields["tools"]; ok && len(p.Tools) == 0 {
		return p, d.problem("tools", "is empty, which would leave the persona no tool at all; list the tools it may call, or leave the field out for all")
	}
	if p.Prompt == "" {
		return p, &Problem{File: d.file, Field: "body", Message: "is empty: after the closing --- write the persona's instructions"}
	}
	return p, nil
}

func parseSkill(id string, d *document) (Skill, *Problem) {
	s := Skill{ID: id, Body: d.body}
	dc := d.decoderFor(id, &s.Name, &s.Description, "domain", "prerequisites")
	dc.str("domain", &s.Domain)
	dc.strs("prerequisites", &s.Prerequisites)
	if dc.err != nil {
		return s, dc.err
	}
	if s.Body == "" {
		return s, &Problem{File: d.file, Field: "body", Message: "is empty: after the closing --- write how to do it"}
	}
	return s, nil
}

func parseTask(id string, d *document) (Task, *Problem) {
	t := Task{ID: id, Goal: d.body}
	dc := d.decoderFor(id, &t.Name, &t.Description, "category", "personas", "steps", "criterion", "parameters")
	dc.str("category", &t.Category)
	dc.strs("personas", &t.Personas)
	dc.raw("steps", &t.Steps, "a list of steps, each with title, action and criterion")
	dc.str("criterion", &t.Criterion)
	var params map[string]string
	dc.raw("parameters", &params, "a map of parameter name to what to ask, such as {service: The service to deploy}")
	if dc.err != nil {
		return t, dc.err
	}
	if t.Goal == "" {
		return t, &Problem{File: d.file, Field: "body", Message: "is empty: after the closing --- write the goal the task sets"}
	}
	if t.Criterion == "" {
		return t, d.problem("criterion", "is missing: say how to tell the task is done (criterion: …)")
	}
	for i, s := range t.Steps {
		if strings.TrimSpace(s.Title) == "" || strings.TrimSpace(s.Action) == "" {
			return t, d.problem("steps", "step %d needs a title and an action", i+1)
		}
	}
	t.Parameters = t.findParameters(params)
	for name := range params {
		if !slices.ContainsFunc(t.Parameters, func(p Parameter) bool { return p.Name == name }) {
			return t, d.problem("parameters", "%q is described but no {{%s}} uses it; use it in the text or remove it", name, name)
		}
	}
	return t, nil
}

// PaneTemplate is templates/ID.md (or .yaml): what a terminal pane can run instead of the
// shell. Front matter name, command, args, install, and for an agent CLI config_env, wire and
// hosts (see workspace.Template); the body describes it.
type PaneTemplate struct {
	// Template's fields are inline on the wire; the generated TypeScript extends it.
	workspace.Template `tstype:",extends"`

	Description string `json:"description,omitempty"`
	Source      string `json:"source"`
}

func parseTemplate(id string, d *document) (PaneTemplate, *Problem) {
	t := PaneTemplate{Template: workspace.Template{ID: id}, Description: d.body}
	dc := d.decoderFor(id, &t.Name, &t.Description, "command", "args", "install", "config_env", "wire", "hosts")
	dc.str("command", &t.Command)
	dc.raw("args", &t.Args, "a list of arguments, such as [--flag, value]")
	dc.str("install", &t.Install)
	dc.str("config_env", &t.ConfigEnv)
	dc.str("wire", &t.Wire)
	dc.strs("hosts", &t.Hosts)
	if dc.err != nil {
		return t, dc.err
	}
	if id == "custom" || id == "shell" {
		return t, &Problem{File: d.file, Field: "id", Message: fmt.Sprintf("%q is built in (the person's shell, or a command given each time) and cannot be replaced; name the file differently", id)}
	}
	if t.Command == "" {
		return t, d.problem("command", "is missing: name the program the pane runs (command: htop)")
	}
	if strings.ContainsAny(t.Command, "\x00\n") {
		return t, d.problem("command", "must be one line: the program, with its arguments under args")
	}
	if t.ConfigEnv != "" && !envNamePattern.MatchString(t.ConfigEnv) {
		return t, d.problem("config_env", "%q is not a variable name; name the variable the tool reads its config dir from (config_env: CLAUDE_CONFIG_DIR)", t.ConfigEnv)
	}
	if t.Wire != "" && t.Wire != "anthropic" && t.Wire != "openai" {
		return t, d.problem("wire", "is %q; give anthropic or openai (the protocol of the provider a key assigned to the template must speak)", t.Wire)
	}
	for _, h := range t.Hosts {
		if host, port, err := net.SplitHostPort(h); err != nil || host == "" || port == "" {
			return t, d.problem("hosts", "%q is not host:port; list the provider's API hosts, such as [api.anthropic.com:443]", h)
		}
	}
	return t, nil
}
