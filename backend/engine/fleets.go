package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/terminal"

	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// ensureFleetPanes makes the terminal panes a fleet's tasks name that no workspace holds:
// they go into workspaces of the fleet's own ("fleet-<id>", then "-2", … six panes each), so
// the window shows them and the pane tools find them like any other pane.
func (e *Engine) ensureFleetPanes(ctx context.Context, f fleet.Fleet, ids []string) error {
	if err := e.noteSSHPanes(ctx, f, ids); err != nil {
		return err
	}
	launches, err := e.fleetLaunches(f, ids)
	if err != nil {
		return err
	}
	prefix := "ws-" + f.ID
	var panes []workspace.Pane
	seen := map[string]bool{}
	add := func(id string) {
		if !seen[id] {
			seen[id] = true
			panes = append(panes, workspace.Pane{ID: id, Kind: workspace.KindTerminal, Label: id, Launch: launches[id]})
		}
	}
	// The fleet's workspaces keep the panes they hold.
	list, err := e.Workspaces.List(ctx)
	if err != nil {
		return err
	}
	for _, ws := range list.Workspaces {
		if strings.HasPrefix(ws.ID, prefix) {
			for _, p := range ws.Panes {
				add(p.ID)
			}
		}
	}
	missing := false
	for _, id := range ids {
		if !seen[id] && !e.Workspaces.HasPane(ctx, id) {
			add(id)
			missing = true
		}
	}
	if !missing {
		return nil
	}
	for i := 0; i*workspace.MaxGrid < len(panes); i++ {
		chunk := panes[i*workspace.MaxGrid : min(len(panes), (i+1)*workspace.MaxGrid)]
		id, name := prefix, "fleet "+f.Name
		if i > 0 {
			id, name = fmt.Sprintf("%s-%d", prefix, i+1), fmt.Sprintf("fleet %s (%d)", f.Name, i+1)
		}
		if _, err := e.Workspaces.Adopt(ctx, id, name, chunk); err != nil {
			return err
		}
	}
	return nil
}

// fleetLaunches fills the launch of each pane a task with `template:` names, from the
// launch templates the pane menu offers (the built-ins and the config dir's templates/); an
// unknown template is the file's mistake, named with the choices. The first task naming a
// pane decides how it starts.
func (e *Engine) fleetLaunches(f fleet.Fleet, ids []string) (map[string]*workspace.Launch, error) {
	out := map[string]*workspace.Launch{}
	for _, t := range f.Tasks {
		if t.Template == "" || !slices.Contains(ids, t.Pane) {
			continue
		}
		ts := e.Workspaces.Templates()
		if _, ok := workspace.TemplateIn(ts, t.Template); !ok {
			return nil, &fleet.FieldError{Task: fmt.Sprintf("%q", t.ID), Field: "template",
				Msg: fmt.Sprintf("%q is not a pane template; use one of %s (or add templates/%s.md to the config dir)", t.Template, templateIDs(ts), t.Template)}
		}
		l, err := workspace.LaunchFrom(ts, workspace.Launch{Template: t.Template})
		if err != nil {
			return nil, &fleet.FieldError{Task: fmt.Sprintf("%q", t.ID), Field: "template", Msg: err.Error()}
		}
		if _, ok := out[t.Pane]; !ok {
			out[t.Pane] = &l
		}
	}
	return out, nil
}

func templateIDs(ts []workspace.Template) string {
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = t.ID
	}
	return strings.Join(ids, ", ")
}

// SubscribeFleets streams fleet and task changes (the CLI follows a fleet with it) until ctx ends.
func (e *Engine) SubscribeFleets(ctx context.Context) <-chan pubsub.Event[fleet.Event] {
	return e.fleetEvents.Subscribe(ctx)
}

// resumesFleets names the doors that go on with interrupted fleets by themselves when they
// open: the window and `serve` live on, so a fleet cut off by a restart or a crash just
// continues there. A CLI command does one job and exits; `fleet resume ID` is its way.
var resumesFleets = map[string]bool{"desktop": true, "serve": true}

// resumeFleets resumes every interrupted fleet (stored as interrupted at a clean shutdown, or
// found running after a crash) when the door is one that lives on; verified tasks stay done.
func (e *Engine) resumeFleets(ctx context.Context, o options) {
	if !resumesFleets[o.command] {
		return
	}
	ids, err := e.Fleets.ResumeInterrupted(ctx)
	if err != nil {
		o.logger.Warn("fleets: resume the interrupted ones", "err", err)
	}
	if len(ids) > 0 {
		o.logger.Info("fleets: resumed after a restart", "fleets", ids)
	}
}

// noteSSHPanes resolves the saved SSH server each task with `ssh:` names (by name or id) and
// remembers it for the task's pane; an unknown server is the file's mistake, named.
func (e *Engine) noteSSHPanes(ctx context.Context, f fleet.Fleet, ids []string) error {
	var servers []config.SSHServer
	for _, t := range f.Tasks {
		if t.SSH == "" || !slices.Contains(ids, t.Pane) {
			continue
		}
		if servers == nil {
			var err error
			if servers, err = e.SSH.List(ctx); err != nil {
				return err
			}
		}
		i := slices.IndexFunc(servers, func(s config.SSHServer) bool { return s.ID == t.SSH || strings.EqualFold(s.Name, t.SSH) })
		if i < 0 {
			return &fleet.FieldError{Task: fmt.Sprintf("%q", t.ID), Field: "ssh",
				Msg: fmt.Sprintf("no saved SSH server is named %q: add it in the terminal's SSH menu (or Settings), then name it here", t.SSH)}
		}
		e.sshMu.Lock()
		if e.sshPanes == nil {
			e.sshPanes = map[string]string{}
		}
		e.sshPanes[t.Pane] = servers[i].ID
		e.sshMu.Unlock()
	}
	return nil
}

// fleetSSHTerminal gives the goal of an SSH task its terminal: a new tab in its pane logged
// in to the saved server (inside the pane's tmux session there). ok is false for any other
// goal. No sandbox confines a shell on another host: the goal's story says so.
func (e *Engine) fleetSSHTerminal(ctx context.Context, g goal.Goal) (notices []string, ok bool, err error) {
	e.sshMu.Lock()
	id, ok := e.sshPanes[g.Spec.PaneID]
	e.sshMu.Unlock()
	if !ok {
		return nil, false, nil
	}
	r, err := e.SSH.Resolve(ctx, id)
	if err != nil {
		return nil, true, fmt.Errorf("the task's SSH server: %w", err)
	}
	target := terminal.SSHTarget{Host: r.Host, Port: r.Port, User: r.User, KeyPath: r.KeyPath, Password: r.Password}
	tab, err := e.Terminals.Open(ctx, terminal.Spec{PaneID: g.Spec.PaneID, SSH: &target})
	if err != nil {
		return nil, true, err
	}
	if err := e.Terminals.SetActive(g.Spec.PaneID, tab.TabID); err != nil {
		return nil, true, err
	}
	if dir := g.Spec.Policy.SandboxDir; dir != "" {
		// The fleet file put this task on that host: its session is the goal's to use.
		if err := e.Terminals.AdmitTab(g.Spec.PaneID, tab.TabID, dir); err != nil {
			return nil, true, err
		}
	}
	return []string{fmt.Sprintf("the goal's terminal (tab %s) is an SSH session to %s: it runs on that host, where no sandbox confines it; "+
		"the policy still checks every tool call, and shell criteria run on this machine", tab.TabID, target)}, true, nil
}
