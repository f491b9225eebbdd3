package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/rpc"
	"github.com/clusterspace/clusterspace/backend/tools"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// DefaultFleetRisk is the ceiling of a fleet run from the window when the request names none:
// the New Goal dialog's default, so a fleet can work in its terminals and no further unasked.
const DefaultFleetRisk = tools.WriteLocal

// FleetsResult is every fleet, newest first, and the concurrency a file without one runs at.
type FleetsResult struct {
	Fleets             []fleet.Fleet `json:"fleets"`
	ConcurrencyDefault int           `json:"concurrencyDefault"`
}

// ParseFleetArgs is a fleet file for the Composer to check: YAML text, or the same keys as JSON.
type ParseFleetArgs struct {
	YAML string `json:"yaml"`
}

// ParsedFleet is a fleet file as the Composer reads it back: its tasks and its canonical text.
type ParsedFleet struct {
	File fleet.File `json:"file"`
	YAML string     `json:"yaml"`
}

// CreateFleetArgs is a fleet file to store and start, and how its tasks run: an absent policy
// (or one without "risk") runs at DefaultFleetRisk, absent settings take the defaults.
type CreateFleetArgs struct {
	YAML     string         `json:"yaml"`
	Policy   *policy.Policy `json:"policy,omitempty"`
	Settings *goal.Settings `json:"settings,omitempty"`
}

// UnmarshalJSON starts the policy at the default ceiling, so a policy sent without "risk"
// keeps write_local rather than dropping to read_only. Unknown fields are refused.
func (a *CreateFleetArgs) UnmarshalJSON(b []byte) error {
	type plain CreateFleetArgs
	p := plain{Policy: &policy.Policy{Ceiling: DefaultFleetRisk}}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return err
	}
	*a = CreateFleetArgs(p)
	return nil
}

// FleetYAML is a fleet's file as YAML, to run again or edit in the Composer.
type FleetYAML struct {
	Name string `json:"name"`
	YAML string `json:"yaml"`
}

// FleetBulkArgs applies one action (pause, resume, abort, retry, steer with text) to a
// selection of a fleet's tasks.
type FleetBulkArgs struct {
	ID      string       `json:"id"`
	TaskIDs []string     `json:"taskIds"`
	Action  fleet.Action `json:"action"`
	Text    string       `json:"text,omitempty"`
}

// UnmarshalJSON reads the arguments strictly, and also under task_ids, the name the REST route
// documented before the wire took one casing: a client written then still works.
func (a *FleetBulkArgs) UnmarshalJSON(b []byte) error {
	type plain FleetBulkArgs
	var aux struct {
		plain
		Legacy []string `json:"task_ids"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&aux); err != nil {
		return err
	}
	*a = FleetBulkArgs(aux.plain)
	if a.TaskIDs == nil {
		a.TaskIDs = aux.Legacy
	}
	return nil
}

// FleetBulkResult is what a bulk action did to each task, and the fleet after it.
type FleetBulkResult struct {
	Outcomes []fleet.Outcome `json:"outcomes"`
	Fleet    fleet.Fleet     `json:"fleet"`
}

// errFleetsOff answers the calls of a door that runs without fleets.
var errFleetsOff = &StatusError{Status: http.StatusServiceUnavailable, Err: errors.New("fleets are not running in this server; a server started by `clusterspace serve` runs them")}

// parseFleetText reads a fleet file; an empty one is refused naming the file.
func parseFleetText(text string) (fleet.File, error) {
	if len(bytes.TrimSpace([]byte(text))) == 0 {
		return fleet.File{}, &StatusError{Status: http.StatusBadRequest, Field: "file", Err: errors.New("the fleet file is empty: give name and tasks")}
	}
	return fleet.Parse([]byte(text))
}

// standInPane is an existing terminal pane, for checking the goals of tasks whose panes the
// fleet will make ("" when there is none).
func standInPane(ctx context.Context, ws *workspace.Service) string {
	if ws == nil {
		return ""
	}
	list, err := ws.List(ctx)
	if err != nil {
		return ""
	}
	for _, w := range list.Workspaces {
		for _, p := range w.Panes {
			if p.Kind == workspace.KindTerminal {
				return p.ID
			}
		}
	}
	return ""
}

func addFleets(t *rpc.Table, s Services) {
	fl := s.Fleets
	// on runs fn when the door has fleets.
	on := func(fn func() error) error {
		if fl == nil {
			return errFleetsOff
		}
		return fn()
	}
	rpc.Add(t, rpc.Method{Name: "ListFleets", Route: "GET /api/fleets"}, func(ctx context.Context, _ rpc.None) (out FleetsResult, err error) {
		err = on(func() (err error) {
			out.Fleets, err = fl.List(ctx)
			out.ConcurrencyDefault = fleet.DefaultConcurrency
			return err
		})
		return out, err
	})
	rpc.Add(t, rpc.Method{Name: "GetFleet", Route: "GET /api/fleets/{id}"}, func(ctx context.Context, a IDArgs) (f fleet.Fleet, err error) {
		err = on(func() (err error) { f, err = fl.Get(ctx, a.ID); return err })
		return f, err
	})
	// ParseFleet and CreateFleet have no REST route here: theirs (POST /api/fleets/parse, POST
	// /api/fleets) also take the file as YAML text, so backend/server reads the body and runs
	// these calls.
	rpc.Add(t, rpc.Method{Name: "ParseFleet"}, func(ctx context.Context, a ParseFleetArgs) (ParsedFleet, error) {
		file, err := parseFleetText(a.YAML)
		if err != nil {
			return ParsedFleet{}, err
		}
		text, err := fleet.Format(file)
		return ParsedFleet{File: file, YAML: string(text)}, err
	})
	// Every task's goal is checked first, as the Goal Runner would check it (the provider, the
	// sandbox, each criterion), with a stand-in pane, so a refusal names the task and field
	// before anything runs and leaves no workspace behind.
	rpc.Add(t, rpc.Method{Name: "CreateFleet"}, func(ctx context.Context, a CreateFleetArgs) (f fleet.Fleet, err error) {
		err = on(func() error {
			file, err := parseFleetText(a.YAML)
			if err != nil {
				return err
			}
			spec := fleet.Spec{Policy: policy.Policy{Ceiling: DefaultFleetRisk}}
			if a.Policy != nil {
				spec.Policy = *a.Policy
			}
			if a.Settings != nil {
				spec.Settings = *a.Settings
			}
			if err := fl.Precheck(ctx, file, spec, standInPane(ctx, s.Workspaces)); err != nil {
				return err
			}
			f, err = fl.Create(ctx, file, spec)
			return err
		})
		return f, err
	})
	rpc.Add(t, rpc.Method{Name: "ExportFleet", Route: "GET /api/fleets/{id}/yaml"}, func(ctx context.Context, a IDArgs) (out FleetYAML, err error) {
		err = on(func() error {
			f, err := fl.Get(ctx, a.ID)
			if err != nil {
				return err
			}
			text, err := fleet.Format(f.File())
			out = FleetYAML{Name: f.Name, YAML: string(text)}
			return err
		})
		return out, err
	})
	// The controls' other refusals say the fleet is in a state they do not fit: 409.
	rpc.Add(t, rpc.Method{Name: "AbortFleet", Route: "POST /api/fleets/{id}/abort"}, func(ctx context.Context, a IDArgs) (f fleet.Fleet, err error) {
		err = on(func() error {
			if err := fl.Abort(ctx, a.ID); err != nil {
				return Conflict(err)
			}
			f, err = fl.Get(ctx, a.ID)
			return err
		})
		return f, err
	})
	rpc.Add(t, rpc.Method{Name: "ResumeFleet", Route: "POST /api/fleets/{id}/resume"}, func(ctx context.Context, a IDArgs) (f fleet.Fleet, err error) {
		err = on(func() (err error) {
			f, err = fl.Resume(ctx, a.ID)
			return Conflict(err)
		})
		return f, err
	})
	rpc.Add(t, rpc.Method{Name: "FleetBulk", Route: "POST /api/fleets/{id}/tasks/bulk"}, func(ctx context.Context, a FleetBulkArgs) (out FleetBulkResult, err error) {
		err = on(func() (err error) {
			if out.Outcomes, err = fl.Bulk(ctx, a.ID, a.TaskIDs, a.Action, a.Text); err != nil {
				return err
			}
			out.Fleet, err = fl.Get(ctx, a.ID)
			return err
		})
		return out, err
	})
}
