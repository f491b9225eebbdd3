package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/clusterspace/clusterspace/backend/api"
)

// maxFleetFileBytes bounds a fleet file sent to the server: 200 tasks of a few lines each
// fit many times over.
const maxFleetFileBytes = 512 << 10

// The fleets' other calls (list, get, export, abort, resume, bulk) are the table's (package
// api). Creating and checking a fleet keep their routes here: their body may be the file as
// YAML text, which is not the JSON arguments the table reads; each runs the table's call.
func (s *Server) fleetRoutes() []route {
	return []route{
		{"POST", "/api/fleets", false, s.fleetFileCall("CreateFleet", http.StatusCreated)},
		{"POST", "/api/fleets/parse", false, s.fleetFileCall("ParseFleet", http.StatusOK)},
	}
}

// fleetErrorBody is a refused fleet file's answer: the task as well as the field, for the
// Composer to put the message next to the right task's field.
type fleetErrorBody = api.ErrorBody

// fleetFileCall serves a call whose arguments are a fleet file: the body is YAML text (any
// text type), a JSON fleet file, or the call's JSON arguments {"yaml", "policy"?, "settings"?}.
func (s *Server) fleetFileCall(name string, status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxFleetFileBytes))
		if err != nil {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the fleet file is larger than %d bytes", maxFleetFileBytes), "file")
			return
		}
		args, ok := fleetFileArgs(w, r, name, body)
		if !ok {
			return
		}
		res, err := s.calls.Call(r.Context(), name, args)
		if err != nil {
			writeServiceError(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		w.Write(append(res, '\n'))
	}
}

// fleetFileArgs turns a fleet request's body into the call's arguments. A JSON body with
// "yaml" is the arguments themselves (a check ignores the run options the form may send);
// any other body is the file, whose JSON form is YAML too: one parser reads both.
func fleetFileArgs(w http.ResponseWriter, r *http.Request, name string, body []byte) (json.RawMessage, bool) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/json" {
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(body, &keys); err != nil || keys == nil {
			writeError(w, http.StatusBadRequest, "request body: send a JSON object: the fleet file's keys, or {\"yaml\": text, \"policy\", \"settings\"}", "")
			return nil, false
		}
		if _, ok := keys["yaml"]; ok {
			if name == "ParseFleet" {
				delete(keys, "policy")
				delete(keys, "settings")
				b, _ := json.Marshal(keys)
				return b, true
			}
			return bytes.Clone(body), true
		}
	}
	b, _ := json.Marshal(map[string]string{"yaml": string(body)})
	return b, true
}
