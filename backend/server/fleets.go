package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/tools"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// maxFleetFileBytes bounds a fleet file sent to the server: 200 tasks of a few lines each
// fit many times over.
const maxFleetFileBytes = 512 << 10

// DefaultFleetRisk is the ceiling of a fleet run from the window when the request names none:
// the New Goal dialog's default, so a fleet can work in its terminals and no further unasked.
const DefaultFleetRisk = tools.WriteLocal

func (s *Server) fleetRoutes() []route {
	if s.deps.Fleets == nil {
		return nil
	}
	return []route{
		{"GET", "/api/fleets", false, s.listFleets},
		{"POST", "/api/fleets", false, s.createFleet},
		{"POST", "/api/fleets/parse", false, s.parseFleet},
		{"GET", "/api/fleets/{id}", false, s.getFleet},
		{"GET", "/api/fleets/{id}/yaml", false, s.exportFleet},
		{"POST", "/api/fleets/{id}/abort", false, s.abortFleet},
		{"POST", "/api/fleets/{id}/resume", false, s.resumeFleet},
		{"POST", "/api/fleets/{id}/tasks/bulk", false, s.bulkFleetTasks},
	}
}

// fleetRequest is a fleet as a request carries it: the file (YAML text, or the same keys as
// JSON), and how its tasks run.
type fleetRequest struct {
	File     fleet.File
	Policy   policy.Policy
	Settings goal.Settings
}

// fleetEnvelope is the JSON form with run options; a JSON body without "yaml" is the file itself.
type fleetEnvelope struct {
	YAML     string         `json:"yaml"`
	Policy   *policy.Policy `json:"policy"`
	Settings *goal.Settings `json:"settings"`
}

// readFleetRequest reads a fleet from the body: YAML text (any text type), a JSON fleet file,
// or {"yaml", "policy"?, "settings"?}. A mistake is answered here, naming the task and field.
func readFleetRequest(w http.ResponseWriter, r *http.Request) (fleetRequest, bool) {
	req := fleetRequest{Policy: policy.Policy{Ceiling: DefaultFleetRisk}}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxFleetFileBytes))
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the fleet file is larger than %d bytes", maxFleetFileBytes), "file")
		return req, false
	}
	text := body
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/json" {
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(body, &keys); err != nil || keys == nil {
			writeError(w, http.StatusBadRequest, "request body: send a JSON object: the fleet file's keys, or {\"yaml\": text, \"policy\", \"settings\"}", "")
			return req, false
		}
		if _, ok := keys["yaml"]; ok {
			// A policy without "risk" keeps the default ceiling rather than dropping to read_only.
			env := fleetEnvelope{Policy: &policy.Policy{Ceiling: DefaultFleetRisk}}
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&env); err != nil {
				field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
				if !strings.HasPrefix(err.Error(), "json: unknown field ") {
					field = ""
				}
				writeError(w, http.StatusBadRequest, "request body: "+err.Error()+"; send yaml, policy and settings", field)
				return req, false
			}
			req.Policy = *env.Policy
			if env.Settings != nil {
				req.Settings = *env.Settings
			}
			text = []byte(env.YAML)
		}
		// Otherwise the body is the file as JSON, which is YAML too: one parser for both.
	}
	if len(bytes.TrimSpace(text)) == 0 {
		writeError(w, http.StatusBadRequest, "the fleet file is empty: give name and tasks", "file")
		return req, false
	}
	req.File, err = fleet.Parse(text)
	if err != nil {
		writeFleetError(w, err)
		return req, false
	}
	return req, true
}

func (s *Server) listFleets(w http.ResponseWriter, r *http.Request) {
	fs, err := s.deps.Fleets.List(r.Context())
	if fs == nil {
		fs = []fleet.Fleet{}
	}
	respondFleet(w, http.StatusOK, map[string]any{"fleets": fs, "concurrencyDefault": fleet.DefaultConcurrency}, err)
}

// createFleet stores a fleet and starts it. Every task's goal is checked first, as the Goal
// Runner would check it (the provider, the sandbox, each criterion), so a refusal names the
// task and field before anything runs.
func (s *Server) createFleet(w http.ResponseWriter, r *http.Request) {
	req, ok := readFleetRequest(w, r)
	if !ok {
		return
	}
	spec := fleet.Spec{Policy: req.Policy, Settings: req.Settings}
	if err := s.deps.Fleets.Precheck(r.Context(), req.File, spec, s.standInPane(r)); err != nil {
		writeFleetError(w, err)
		return
	}
	f, err := s.deps.Fleets.Create(r.Context(), req.File, spec)
	respondFleet(w, http.StatusCreated, f, err)
}

// standInPane is an existing terminal pane, for checking the goals of tasks whose panes the
// fleet will make ("" when there is none).
func (s *Server) standInPane(r *http.Request) string {
	list, err := s.deps.Workspaces.List(r.Context())
	if err != nil {
		return ""
	}
	for _, ws := range list.Workspaces {
		for _, p := range ws.Panes {
			if p.Kind == workspace.KindTerminal {
				return p.ID
			}
		}
	}
	return ""
}

// parseFleet checks a fleet file for the Composer and answers its tasks, as Parse reads them,
// with the file in its canonical form; nothing is stored or started.
func (s *Server) parseFleet(w http.ResponseWriter, r *http.Request) {
	req, ok := readFleetRequest(w, r)
	if !ok {
		return
	}
	text, err := fleet.Format(req.File)
	respondFleet(w, http.StatusOK, map[string]any{"file": req.File, "yaml": string(text)}, err)
}

func (s *Server) getFleet(w http.ResponseWriter, r *http.Request) {
	f, err := s.deps.Fleets.Get(r.Context(), r.PathValue("id"))
	respondFleet(w, http.StatusOK, f, err)
}

// exportFleet answers the fleet's file as YAML ({name, yaml}): run again, or edited in the Composer.
func (s *Server) exportFleet(w http.ResponseWriter, r *http.Request) {
	f, err := s.deps.Fleets.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		writeFleetError(w, err)
		return
	}
	text, err := fleet.Format(f.File())
	respondFleet(w, http.StatusOK, map[string]string{"name": f.Name, "yaml": string(text)}, err)
}

func (s *Server) abortFleet(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := s.deps.Fleets.Abort(r.Context(), id); err != nil {
		writeFleetConflict(w, err)
		return
	}
	f, err := s.deps.Fleets.Get(r.Context(), id)
	respondFleet(w, http.StatusOK, f, err)
}

func (s *Server) resumeFleet(w http.ResponseWriter, r *http.Request) {
	f, err := s.deps.Fleets.Resume(r.Context(), r.PathValue("id"))
	if err != nil {
		writeFleetConflict(w, err)
		return
	}
	writeJSON(w, http.StatusOK, f)
}

// bulkFleetTasks applies {task_ids, action, text?} to a selection of the fleet's tasks and
// answers each task's outcome with the fleet as it is after.
func (s *Server) bulkFleetTasks(w http.ResponseWriter, r *http.Request) {
	var body struct {
		TaskIDs []string     `json:"task_ids"`
		Action  fleet.Action `json:"action"`
		Text    string       `json:"text"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	id := r.PathValue("id")
	out, err := s.deps.Fleets.Bulk(r.Context(), id, body.TaskIDs, body.Action, body.Text)
	if err != nil {
		writeFleetError(w, err)
		return
	}
	f, err := s.deps.Fleets.Get(r.Context(), id)
	respondFleet(w, http.StatusOK, map[string]any{"outcomes": out, "fleet": f}, err)
}

func respondFleet(w http.ResponseWriter, status int, v any, err error) {
	if err != nil {
		writeFleetError(w, err)
		return
	}
	writeJSON(w, status, v)
}

// fleetErrorBody names the task as well as the field, for the Composer to put the message
// next to the right task's field.
type fleetErrorBody struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
	Task  string `json:"task,omitempty"`
}

// writeFleetError maps the fleet service's errors: a mistake in the file 400 (task and field
// named), an unknown fleet 404, anything else as every service error is mapped.
func writeFleetError(w http.ResponseWriter, err error) { writeFleetErrorAs(w, err, false) }

// writeFleetConflict is writeFleetError for the controls (abort, resume): their other
// refusals say the fleet is in a state the control does not fit, 409.
func writeFleetConflict(w http.ResponseWriter, err error) { writeFleetErrorAs(w, err, true) }

func writeFleetErrorAs(w http.ResponseWriter, err error, conflict bool) {
	var fe *fleet.FieldError
	switch {
	case errors.As(err, &fe):
		task := fe.Task
		if u, uerr := strconv.Unquote(task); uerr == nil {
			task = u
		}
		writeJSON(w, http.StatusBadRequest, fleetErrorBody{Error: err.Error(), Field: fe.Field, Task: task})
	case errors.Is(err, fleet.ErrNotFound), errors.Is(err, goal.ErrNotFound):
		writeError(w, http.StatusNotFound, err.Error(), "")
	case conflict:
		writeError(w, http.StatusConflict, err.Error(), "")
	default:
		writeServiceError(w, err)
	}
}
