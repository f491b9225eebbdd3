package main

import (
	"fmt"
	"os"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/server"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// FleetRun is how a fleet started from the window runs: nil parts take the defaults
// (write_local, no sandbox, the default provider), as under `serve`.
type FleetRun struct {
	Policy   *policy.Policy `json:"policy"`
	Settings *goal.Settings `json:"settings"`
}

// ParsedFleet is a fleet file as the Composer reads it back: its tasks and its canonical text.
type ParsedFleet struct {
	File fleet.File `json:"file"`
	YAML string     `json:"yaml"`
}

// FleetBulkResult is what a bulk action did to each task, and the fleet after it.
type FleetBulkResult struct {
	Outcomes []fleet.Outcome `json:"outcomes"`
	Fleet    fleet.Fleet     `json:"fleet"`
}

// ListFleets returns every fleet, newest first.
func (a *App) ListFleets() ([]fleet.Fleet, error) { return a.eng.Fleets.List(a.ctx) }

// GetFleet returns one fleet with its tasks.
func (a *App) GetFleet(id string) (fleet.Fleet, error) { return a.eng.Fleets.Get(a.ctx, id) }

// ParseFleet checks a fleet file (YAML, or the same as JSON) for the Composer; a mistake names
// the task and field ("task \"b\": depends_on: …").
func (a *App) ParseFleet(text string) (ParsedFleet, error) {
	file, err := fleet.Parse([]byte(text))
	if err != nil {
		return ParsedFleet{}, err
	}
	out, err := fleet.Format(file)
	return ParsedFleet{File: file, YAML: string(out)}, err
}

// CreateFleet stores a fleet from its file and starts it; every task's goal is checked first.
func (a *App) CreateFleet(text string, run FleetRun) (fleet.Fleet, error) {
	file, err := fleet.Parse([]byte(text))
	if err != nil {
		return fleet.Fleet{}, err
	}
	spec := fleet.Spec{Policy: policy.Policy{Ceiling: server.DefaultFleetRisk}}
	if run.Policy != nil {
		spec.Policy = *run.Policy
	}
	if run.Settings != nil {
		spec.Settings = *run.Settings
	}
	// Checked first with a stand-in pane, so a refused fleet leaves no workspace behind.
	standIn := ""
	if list, err := a.eng.Workspaces.List(a.ctx); err == nil {
		for _, ws := range list.Workspaces {
			for _, p := range ws.Panes {
				if standIn == "" && p.Kind == workspace.KindTerminal {
					standIn = p.ID
				}
			}
		}
	}
	if err := a.eng.Fleets.Precheck(a.ctx, file, spec, standIn); err != nil {
		return fleet.Fleet{}, err
	}
	return a.eng.Fleets.Create(a.ctx, file, spec)
}

// ExportFleet returns the fleet's file as YAML.
func (a *App) ExportFleet(id string) (string, error) {
	f, err := a.eng.Fleets.Get(a.ctx, id)
	if err != nil {
		return "", err
	}
	out, err := fleet.Format(f.File())
	return string(out), err
}

// AbortFleet ends a fleet: its running goals are aborted, its waiting tasks will not start.
func (a *App) AbortFleet(id string) (fleet.Fleet, error) {
	if err := a.eng.Fleets.Abort(a.ctx, id); err != nil {
		return fleet.Fleet{}, err
	}
	return a.eng.Fleets.Get(a.ctx, id)
}

// ResumeFleet goes on with an interrupted fleet, keeping its verified tasks.
func (a *App) ResumeFleet(id string) (fleet.Fleet, error) { return a.eng.Fleets.Resume(a.ctx, id) }

// FleetBulk applies pause, resume, abort, retry or steer (with text) to a selection of tasks.
func (a *App) FleetBulk(id string, taskIDs []string, action, text string) (FleetBulkResult, error) {
	out, err := a.eng.Fleets.Bulk(a.ctx, id, taskIDs, fleet.Action(action), text)
	if err != nil {
		return FleetBulkResult{}, err
	}
	f, err := a.eng.Fleets.Get(a.ctx, id)
	return FleetBulkResult{Outcomes: out, Fleet: f}, err
}

// ListAgents returns every pane's agent for the dashboard's agent cards: role, purpose,
// status, current task with its progress, queue, history and inbox.
func (a *App) ListAgents() ([]fleet.Agent, error) { return a.eng.Fleets.Agents(a.ctx) }

// SetAgentRole gives a pane's agent a role (built-in or the user's own) and a purpose, checked
// as the set_agent_role tool checks them; a mistake names the field and changes nothing.
func (a *App) SetAgentRole(pane, role, purpose string) (fleet.AgentRecord, error) {
	return a.eng.Fleets.SetRole(a.ctx, fleet.Caller{User: true}, pane, role, purpose)
}

// SaveFleetFile asks where to save a fleet file (the Composer's Save YAML) and writes it there;
// a cancelled dialog saves nothing and is no error. The webview cannot download a file itself.
func (a *App) SaveFleetFile(name, text string) error {
	path, err := runtime.SaveFileDialog(a.ctx, runtime.SaveDialogOptions{
		Title: "Save fleet", DefaultFilename: name + ".yaml",
		Filters: []runtime.FileFilter{{DisplayName: "Fleet file (*.yaml)", Pattern: "*.yaml;*.yml"}},
	})
	if err != nil || path == "" {
		return err
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return fmt.Errorf("could not save the fleet to %q: %w", path, err)
	}
	return nil
}
