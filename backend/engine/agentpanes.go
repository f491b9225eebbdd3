package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/clusterspace/clusterspace/backend/agentpane"
	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/panes"
	"github.com/clusterspace/clusterspace/backend/terminal"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// A goal's pane starts as its template: the launch settings its pane holds (a fleet task's
// `template:`, or a pane the person made from a template) give the command, its arguments
// and its environment, confined or not. A pane made from an agent template also gets a
// private config dir with its credentials (see backend/agentpane) and, in a confined goal,
// reach to its provider's API host.

// goalPane is what a goal's pane runs: the spec from its launch settings (the shell when it
// has none) and its agent template, if it is one.
type goalPane struct {
	spec  terminal.Spec
	agent *workspace.Template
}

// paneLaunch reads the goal's pane's launch settings from its workspace.
func (e *Engine) paneLaunch(ctx context.Context, paneID string) goalPane {
	gp := goalPane{spec: terminal.Spec{PaneID: paneID}}
	_, p, err := e.Workspaces.Find(ctx, paneID)
	if err != nil || p.Kind != workspace.KindTerminal || p.Launch == nil {
		return gp // a pane in no workspace (tests, the CLI's own) runs the shell
	}
	gp.spec = panes.LaunchSpec(p, 0, 0) // names the program's recogniser too
	if t, ok := workspace.TemplateIn(e.Workspaces.Templates(), p.Launch.Template); ok && agentpane.IsAgent(t) && p.Launch.Command != "" {
		gp.agent = &t
	}
	return gp
}

// agentCredentials are the credentials of a pane made from agent template t: the provider
// the person assigned to it in Settings (zero: none, so the person's own login).
func (e *Engine) agentCredentials(ctx context.Context, t workspace.Template) (agentpane.Credentials, error) {
	keys, err := config.LoadAgentKeys(ctx, e.Store)
	if err != nil {
		return agentpane.Credentials{}, err
	}
	id := keys.Providers[t.ID]
	if id == "" {
		return agentpane.Credentials{}, nil
	}
	r, err := e.Providers.Resolve(ctx, id)
	if err != nil {
		return agentpane.Credentials{}, fmt.Errorf("the provider assigned to the %s template in Settings: %w", t.ID, err)
	}
	if r.APIKey == "" {
		return agentpane.Credentials{}, fmt.Errorf("the provider %q assigned to the %s template in Settings has no API key: add it in Settings → Providers", r.Name, t.ID)
	}
	return agentpane.Credentials{BaseURL: r.BaseURL, Key: r.APIKey, Model: r.Model, Provider: r.Name}, nil
}

// agentHosts are the provider hosts the agent of the goal's pane reaches (nil: no agent).
func (e *Engine) agentHosts(ctx context.Context, g goal.Goal) []string {
	gp := e.paneLaunch(ctx, g.Spec.PaneID)
	if gp.agent == nil {
		return nil
	}
	creds, err := e.agentCredentials(ctx, *gp.agent)
	if err == nil && creds.Key != "" {
		if hp := agentpane.HostPort(creds.BaseURL); hp != "" {
			return []string{hp}
		}
	}
	return slices.Clone(gp.agent.Hosts)
}

// prepareAgent makes the private config dir of the goal's agent pane under scratch (the
// goal's own writable dir) and adds what it gives to spec; it returns the notice for the
// goal's story.
func (e *Engine) prepareAgent(ctx context.Context, g goal.Goal, gp goalPane, scratch string, confined bool, spec *terminal.Spec) (string, error) {
	if gp.agent == nil {
		return "", nil
	}
	creds, err := e.agentCredentials(ctx, *gp.agent)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(scratch, "agent-"+gp.agent.ID)
	s, err := agentpane.Prepare(*gp.agent, agentpane.Options{Dir: dir, WorkDir: spec.Dir, Confined: confined, Creds: creds,
		MCP: e.paneMCP(g.Spec.PaneID, confined)})
	if err != nil {
		return "", err
	}
	spec.Env = append(spec.Env, s.Env...)
	return fmt.Sprintf("the pane runs the %s template (%s) with a private config dir, %s; %s", gp.agent.ID, gp.agent.Name, dir, s.Notice), nil
}
