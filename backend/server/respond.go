package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/clusterspace/clusterspace/backend/api"

	"github.com/clusterspace/clusterspace/backend/workspace"
)

// maxBodyBytes bounds request bodies; the largest is a workspace import (1 MiB), which the UI
// sends as a JSON string (ImportWorkspace's text), where each quote and backslash of the file
// takes two bytes: twice the file's limit lets the import itself say a file is too large.
const maxBodyBytes = 2*workspace.MaxImportBytes + 1024

type errorBody struct {
	Error      string `json:"error"`
	Field      string `json:"field,omitempty"`
	RetryAfter int    `json:"retryAfter,omitempty"`
	// Busy lists the panes a refused removal would interrupt, for the UI's confirm dialog.
	Busy []workspace.BusyPane `json:"busy,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) // Best effort: the client may have gone.
}

func writeError(w http.ResponseWriter, status int, msg, field string) {
	writeJSON(w, status, errorBody{Error: msg, Field: field})
}

// writeServiceError maps a service error to a status a client can act on, as the table's
// calls do (api.Classify).
func writeServiceError(w http.ResponseWriter, err error) {
	status, body := api.Classify(err)
	writeJSON(w, status, body)
}

// decodeBody reads a JSON body into v, refusing unknown fields, oversized bodies, a bare
// `null` (which would leave v as it is and pass for an empty request) and anything after the
// value, with a message that names the problem.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	return decodeBodyLimit(w, r, v, maxBodyBytes)
}

// decodeBodyLimit is decodeBody with its own size bound, for routes whose bodies are small.
func decodeBodyLimit(w http.ResponseWriter, r *http.Request, v any, limit int64) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	dec.DisallowUnknownFields()
	var raw json.RawMessage
	err := dec.Decode(&raw)
	if err == nil {
		var extra json.RawMessage
		switch more := dec.Decode(&extra); {
		case more == nil:
			writeError(w, http.StatusBadRequest, "request body: there is more after the JSON value; send exactly one JSON object", "")
			return false
		case !errors.Is(more, io.EOF):
			err = more
		}
	}
	if err == nil && string(bytes.TrimSpace(raw)) == "null" {
		writeError(w, http.StatusBadRequest, "request body: null is not a request; send a JSON object", "")
		return false
	}
	if err == nil {
		strict := json.NewDecoder(bytes.NewReader(raw))
		strict.DisallowUnknownFields()
		err = strict.Decode(v)
	}
	if err != nil {
		msg := err.Error()
		var typ *json.UnmarshalTypeError
		var tooBig *http.MaxBytesError
		switch {
		case errors.Is(err, io.EOF):
			msg = "the request body is empty; send a JSON object"
		case errors.Is(err, os.ErrDeadlineExceeded):
			writeError(w, http.StatusRequestTimeout, "the request body arrived too slowly and was cut off: send it again, all at once", "")
			return false
		case errors.As(err, &typ):
			writeError(w, http.StatusBadRequest, fmt.Sprintf("%s: should be %s, got %s", typ.Field, typ.Type, typ.Value), typ.Field)
			return false
		case errors.As(err, &tooBig):
			msg = fmt.Sprintf("the request body is larger than %d bytes", tooBig.Limit)
		case strings.HasPrefix(msg, "json: unknown field "):
			field := strings.Trim(strings.TrimPrefix(msg, "json: unknown field "), `"`)
			writeError(w, http.StatusBadRequest, fmt.Sprintf("%s: unknown field; check the spelling", field), field)
			return false
		}
		writeError(w, http.StatusBadRequest, "request body: "+msg, "")
		return false
	}
	return true
}
