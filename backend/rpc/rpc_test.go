package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

type moveArgs struct {
	ID    string   `json:"id"`
	Rows  int      `json:"rows"`
	Force bool     `json:"force,omitempty"`
	Tags  []string `json:"tags,omitempty"`
}

type moveResult struct {
	Moved []string          `json:"moved"`
	Notes map[string]string `json:"notes"`
	Args  moveArgs          `json:"args"`
}

type launchArgs struct {
	ID     string          `json:"id"`
	Launch json.RawMessage `json:"launch"`
}

var errRefused = errors.New("refused: the grid is busy")

func testTable() *Table {
	t := NewTable()
	Add(t, Method{Name: "Move", Route: "PUT /api/things/{id}/move", Also: []REST{{Route: "POST /api/things", Status: http.StatusCreated}}},
		func(_ context.Context, a moveArgs) (moveResult, error) {
			if a.Rows < 0 {
				return moveResult{}, errRefused
			}
			return moveResult{Args: a}, nil // Moved and Notes nil: the wire must say [] and {}
		})
	Do(t, Method{Name: "Drop", Route: "DELETE /api/things/{id}"}, func(context.Context, moveArgs) error { return nil })
	Add(t, Method{Name: "Launch", Route: "PUT /api/things/{id}/launch", Body: "launch"}, func(_ context.Context, a launchArgs) (launchArgs, error) {
		return a, nil
	})
	return t
}

func TestCallDecodesStrictlyAndAnswersEmptyListsNotNull(t *testing.T) {
	tab := testTable()
	res, err := tab.Call(context.Background(), "Move", json.RawMessage(`{"id":"a","rows":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res), `"moved":[]`) || !strings.Contains(string(res), `"notes":{}`) {
		t.Errorf("nil slices and maps must travel as [] and {}: %s", res)
	}
	cases := []struct{ args, field, text string }{
		{`{"id":"a","row":2}`, "row", "unknown field"},
		{`{"id":"a","rows":"2"}`, "rows", "should be int"},
		{`null`, "", "null is not a request"},
		{`{"id":"a"} {}`, "", "more after the JSON value"},
	}
	for _, c := range cases {
		_, err := tab.Call(context.Background(), "Move", json.RawMessage(c.args))
		var ae *ArgsError
		if !errors.As(err, &ae) || ae.Field != c.field || !strings.Contains(ae.Msg, c.text) {
			t.Errorf("%s: got %v, want an ArgsError on %q saying %q", c.args, err, c.field, c.text)
		}
	}
	if _, err := tab.Call(context.Background(), "Nope", nil); !errors.As(err, new(*UnknownError)) {
		t.Errorf("an unknown call: %v", err)
	}
	if res, err := tab.Call(context.Background(), "Drop", nil); err != nil || string(res) != "null" {
		t.Errorf("a call without a result answers null: %s %v", res, err)
	}
}

func serve(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	errs := func(err error) (int, any) {
		status := http.StatusInternalServerError
		var ae *ArgsError
		var ue *UnknownError
		switch {
		case errors.As(err, &ae):
			status = http.StatusBadRequest
		case errors.As(err, &ue):
			status = http.StatusNotFound
		case errors.Is(err, errRefused):
			status = http.StatusConflict
		}
		return status, map[string]string{"error": err.Error()}
	}
	for _, r := range testTable().HTTP(errs, 1<<10) {
		mux.HandleFunc(r.Pattern, r.Handler)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func do(t *testing.T, srv *httptest.Server, method, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestOneCallAnswersAtItsEnvelopeAndItsRESTRoutes(t *testing.T) {
	srv := serve(t)
	// The envelope: the arguments are the body.
	status, body := do(t, srv, "POST", "/api/rpc/Move", `{"id":"a","rows":3,"force":true}`)
	if status != 200 || !strings.Contains(body, `"args":{"id":"a","rows":3,"force":true}`) {
		t.Errorf("envelope: %d %s", status, body)
	}
	// The REST route: the path names the id, the query a flag, the body the rest.
	status, body = do(t, srv, "PUT", "/api/things/b%20c/move?force=true", `{"rows":4}`)
	if status != 200 || !strings.Contains(body, `"args":{"id":"b c","rows":4,"force":true}`) {
		t.Errorf("REST: %d %s", status, body)
	}
	// Another route of the same call, with its own status.
	if status, body = do(t, srv, "POST", "/api/things", `{"rows":1}`); status != http.StatusCreated {
		t.Errorf("create route: %d %s", status, body)
	}
	// A call without a result answers 204; its query fills its arguments.
	if status, body = do(t, srv, "DELETE", "/api/things/a?force=true", ""); status != http.StatusNoContent {
		t.Errorf("delete: %d %s", status, body)
	}
	// An action (POST) whose client sends null for "nothing"; a change (PUT) may not.
	if status, body = do(t, srv, "POST", "/api/things", `null`); status != http.StatusCreated {
		t.Errorf("POST with null: %d %s", status, body)
	}
	if status, body = do(t, srv, "PUT", "/api/things/a/move", `null`); status != http.StatusBadRequest || !strings.Contains(body, "null is not a request") {
		t.Errorf("PUT with null: %d %s", status, body)
	}
	// A body that is one argument (null included).
	status, body = do(t, srv, "PUT", "/api/things/a/launch", `null`)
	if status != 200 || !strings.Contains(body, `"launch":null`) {
		t.Errorf("whole-body argument: %d %s", status, body)
	}
	// Refusals, with the field or the part to blame.
	for _, c := range []struct {
		method, path, body string
		status             int
		text               string
	}{
		{"PUT", "/api/things/a/move", `{"id":"b","rows":1}`, 400, "given in the path"},
		{"PUT", "/api/things/a/move?bogus=1", `{"rows":1}`, 400, "bogus: unknown query parameter"},
		{"DELETE", "/api/things/a?force=maybe", "", 400, "force: should be true or false"},
		{"PUT", "/api/things/a/move", ``, 400, "the request body is empty"},
		{"PUT", "/api/things/a/move", `{"rows":1}]`, 400, "request body"},
		{"PUT", "/api/things/a/move", `{"rows":-1}`, 409, "grid is busy"},
		{"POST", "/api/rpc/Nope", `{}`, 404, "no call named"},
		{"POST", "/api/rpc/Move", `{"id":"` + strings.Repeat("x", 2000) + `"}`, 400, "larger than"},
	} {
		status, body := do(t, srv, c.method, c.path, c.body)
		if status != c.status || !strings.Contains(body, c.text) {
			t.Errorf("%s %s %.40s: %d %s, want %d with %q", c.method, c.path, c.body, status, body, c.status, c.text)
		}
	}
}
