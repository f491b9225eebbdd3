package rpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
)

// Errors turns a call's error into an HTTP status and the JSON body the client reads. The
// table knows nothing of the services' errors; the door that serves it passes this in.
type Errors func(err error) (status int, body any)

// Route is a handler for one pattern of http.ServeMux ("METHOD /path").
type Route struct {
	Pattern string
	Handler http.HandlerFunc
}

// HTTP serves the table: POST /api/rpc/{name} with the arguments as the body, and every
// call's REST route. maxBody bounds request bodies.
func (t *Table) HTTP(errs Errors, maxBody int64) []Route {
	out := []Route{{"POST /api/rpc/{name}", func(w http.ResponseWriter, r *http.Request) {
		m, ok := t.Lookup(r.PathValue("name"))
		if !ok {
			writeErr(w, errs, &UnknownError{Name: r.PathValue("name")})
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			writeErr(w, errs, bodyError(err))
			return
		}
		t.serve(w, r, m, http.StatusOK, body, errs)
	}}}
	for _, m := range t.Methods() {
		rests := m.Also
		if m.Route != "" {
			rests = append([]REST{{m.Route, m.Status}}, rests...)
		}
		// The arguments' JSON names and the route's wildcards are known once, when the table is
		// served: a route that names an argument the call lacks is a mistake of the table.
		fields := jsonFields(m.Args)
		for _, rest := range rests {
			names := pathNames(rest.Route)
			for _, name := range names {
				if _, ok := fields[name]; !ok {
					panic(fmt.Sprintf("rpc: %s's route names {%s}, which its arguments lack", m.Name, name))
				}
			}
			out = append(out, Route{rest.Route, func(w http.ResponseWriter, r *http.Request) {
				args, err := restArgs(w, r, m, fields, names, maxBody)
				if err != nil {
					writeErr(w, errs, err)
					return
				}
				t.serve(w, r, m, rest.Status, args, errs)
			}})
		}
	}
	return out
}

func (t *Table) serve(w http.ResponseWriter, r *http.Request, m *Method, status int, args []byte, errs Errors) {
	res, err := t.Call(r.Context(), m.Name, args)
	if err != nil {
		writeErr(w, errs, err)
		return
	}
	if !m.HasResult() {
		if status == 0 || status == http.StatusOK {
			status = http.StatusNoContent
		}
		w.WriteHeader(status)
		return
	}
	if status == 0 {
		status = http.StatusOK
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(res, '\n'))
}

// restArgs builds a REST request's arguments: the JSON body (when there is one), with the
// path values and the query parameters set on the fields of the same
// names. A body may not name a field the path names.
func restArgs(w http.ResponseWriter, r *http.Request, m *Method, fields map[string]reflect.Type, pathNames []string, maxBody int64) ([]byte, error) {
	obj := map[string]json.RawMessage{}
	if r.Method != http.MethodGet && r.Method != http.MethodDelete && r.Method != http.MethodHead {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			return nil, bodyError(err)
		}
		switch {
		case len(strings.TrimSpace(string(body))) == 0:
			// A change (PUT, PATCH) says what to change; an action (POST) may need nothing.
			if r.Method == http.MethodPut || r.Method == http.MethodPatch {
				return nil, &ArgsError{Msg: "the request body is empty; send a JSON object"}
			}
		case m.Body != "":
			obj[m.Body] = body
		case r.Method == http.MethodPost && strings.TrimSpace(string(body)) == "null":
			// An action's route read no body before it was a call of the table; a client that
			// sends null for "nothing" is still served.
		default:
			if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
				// Let the strict decoder say what is wrong with it.
				return body, nil
			}
		}
	}
	set := func(name, value string, fromPath bool) error {
		typ, ok := fields[name]
		if !ok {
			return &ArgsError{Field: name, Msg: fmt.Sprintf("%s: unknown query parameter; check the spelling", name)}
		}
		if _, dup := obj[name]; dup && fromPath {
			return &ArgsError{Field: name, Msg: fmt.Sprintf("%s: given in the path; leave it out of the body", name)}
		}
		v, err := scalar(typ, value)
		if err != nil {
			return &ArgsError{Field: name, Msg: fmt.Sprintf("%s: %v", name, err)}
		}
		obj[name] = v
		return nil
	}
	for _, name := range pathNames {
		if err := set(name, r.PathValue(name), true); err != nil {
			return nil, err
		}
	}
	for name, vs := range r.URL.Query() {
		if _, inBody := obj[name]; len(vs) > 0 && !inBody {
			if err := set(name, vs[0], false); err != nil {
				return nil, err
			}
		}
	}
	return json.Marshal(obj)
}

// scalar is a path value or query parameter as the JSON of the field's type.
func scalar(typ reflect.Type, value string) (json.RawMessage, error) {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch typ.Kind() {
	case reflect.String:
		return json.Marshal(value)
	case reflect.Bool:
		b, err := strconv.ParseBool(value)
		if err != nil {
			return nil, fmt.Errorf("should be true or false, got %q", value)
		}
		return json.Marshal(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("should be a whole number, got %q", value)
		}
		return json.Marshal(n)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return nil, fmt.Errorf("should be a number, got %q", value)
		}
		return json.Marshal(f)
	}
	return nil, fmt.Errorf("cannot be given in a URL (a %s)", typ)
}

// pathNames lists a route's {wildcards}.
func pathNames(route string) []string {
	var out []string
	for rest := route; ; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return out
		}
		out = append(out, strings.TrimSuffix(rest[i+1:i+j], "..."))
		rest = rest[i+j+1:]
	}
}

func bodyError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return &ArgsError{Msg: fmt.Sprintf("the request body is larger than %d bytes", tooBig.Limit)}
	}
	return &ArgsError{Msg: "the request body could not be read: " + err.Error()}
}

// HeaderSetter is an error body that also says something in the response's headers (e.g. a
// lockout's Retry-After).
type HeaderSetter interface {
	SetHeaders(h http.Header)
}

func writeErr(w http.ResponseWriter, errs Errors, err error) {
	status, body := errs(err)
	if hs, ok := body.(HeaderSetter); ok {
		hs.SetHeaders(w.Header())
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}
