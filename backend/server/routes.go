package server

import (
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/clusterspace/clusterspace/backend/workspace"
)

// route is one entry of the API table. Every route needs a valid access token unless public;
// a test walks this table to prove it.
type route struct {
	method  string
	pattern string
	public  bool
	handler http.HandlerFunc
}

func (s *Server) routes() []route {
	return slices.Concat(s.coreRoutes(), s.fleetRoutes())
}

func (s *Server) coreRoutes() []route {
	return []route{
		{"POST", "/api/login", true, s.login},
		{"POST", "/api/refresh", true, s.refresh},
		{"POST", "/api/logout", false, s.logout},
		{"GET", "/api/ws", true, s.websocket}, // checks its token itself: browsers send it as a subprotocol
		{"POST", "/api/workspaces/import", false, s.importWorkspace},
		{"GET", "/api/workspaces/{id}/export", false, s.exportWorkspace},
		// A step's picture: the table's GoalStepImage, at the REST route that names the path's
		// whole numbers in its own words.
		{"GET", "/api/goals/{id}/steps/{index}/images/{n}", false, s.goalStepImage},
	}
}

// maxConcurrentLogins caps password checks in flight: each is a bcrypt check (tens of ms of
// CPU), and logins need no token, so anyone who can connect could otherwise pile them up. A
// login takes a slot only once its body is read in full, so slow bodies cannot hold slots (the
// login read deadline and the server's read timeouts bound those). The owner logs in once; 32
// is far above any real use. Excess get 503 at once.
const maxConcurrentLogins = 32

// Login bodies are a password and perhaps an unlock code, sent by a browser together with the
// headers: maxLoginBodyBytes leaves room for a long passphrase (bcrypt reads 72 bytes), and
// loginBodyTimeout, counted from the end of the headers, is ample on a bad mobile link while a
// client that trickles its body is cut off long before the 30 s read timeout.
const (
	maxLoginBodyBytes = 8 << 10
	loginBodyTimeout  = 5 * time.Second
)

// login checks the password. Requests that are not a person's attempt at the password —
// from another site's page, not JSON, or with nothing typed — are refused before the lockout
// counts anything, so they cannot be used to lock the owner out.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if !s.originAllowed(r) {
		writeError(w, http.StatusForbidden, "login from origin "+r.Header.Get("Origin")+" refused: open the UI from this server, or start serve with --allowed-origin", "")
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, "send the login as JSON with Content-Type: application/json", "")
		return
	}
	var body struct {
		Password string `json:"password"`
		Unlock   string `json:"unlock"` // the one-time code the server logs when a lockout begins
	}
	if !s.readLoginBody(w, r, &body) {
		return
	}
	addr := clientAddr(r)
	// A browser that logged in here before is counted on its own, apart from its source.
	source := lockSource(addr)
	key := source
	var device string
	if c, err := r.Cookie(deviceCookie); err == nil && s.devices.known(c.Value) {
		device = c.Value
		key = "device " + device
	}
	unlocking := false
	if wait, locked := s.lockout.Locked(key); locked {
		if body.Unlock != "" && !s.unlock.matches(body.Unlock) {
			writeError(w, http.StatusBadRequest, "that unlock code is not the one in the server's log (each code works once; a new lockout logs a new one)", "unlock")
			return
		}
		if body.Unlock == "" {
			secs := int(math.Ceil(wait.Seconds()))
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			writeJSON(w, http.StatusTooManyRequests, errorBody{
				Error:      fmt.Sprintf("too many failed logins from %s: try again in %s, or enter the unlock code from the server's log", sourceName(source), roundWait(wait)),
				RetryAfter: secs,
			})
			return
		}
		unlocking = true
	}
	if body.Password == "" {
		writeError(w, http.StatusBadRequest, "enter the password", "password")
		return
	}
	select {
	case s.loginSlots <- struct{}{}:
	default:
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "too many logins in progress: try again in a second", "")
		return
	}
	ok := s.deps.Auth.CheckPassword(body.Password)
	<-s.loginSlots
	if !ok {
		lock := s.lockout.Fail(key)
		body := errorBody{Error: "wrong password", Field: "password"}
		if lock > 0 && !unlocking {
			body.Error += fmt.Sprintf("; too many failures, logins from %s are locked for %s", sourceName(source), roundWait(lock))
			body.RetryAfter = int(math.Ceil(lock.Seconds()))
			w.Header().Set("Retry-After", strconv.Itoa(body.RetryAfter))
		}
		s.log.Warn("failed login", "addr", addr, "source", source, "known_browser", device != "", "locked_for", lock)
		if lock > 0 {
			// Only the person who started the server reads its log: this is their way back in.
			s.log.Warn("logins locked after failed attempts; if you are the owner, enter this one-time unlock code on the login screen with your password",
				"addr", addr, "source", source, "unlock_code", s.unlock.current())
		}
		writeJSON(w, http.StatusUnauthorized, body)
		return
	}
	if unlocking {
		// The lock stays on the address (someone else caused it); this browser gets a device id
		// below and is counted on its own from now on.
		s.unlock.use()
	} else {
		s.lockout.Succeed(key)
	}
	http.SetCookie(w, &http.Cookie{Name: deviceCookie, Value: s.devices.trust(device), Path: "/api/login",
		MaxAge: int(deviceTTL / time.Second), HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	s.issue(w)
}

// readLoginBody decodes a login body under its own size bound and read deadline, before the
// login takes a slot: a client trickling its body is cut off (408) and never holds a slot.
func (s *Server) readLoginBody(w http.ResponseWriter, r *http.Request, v any) bool {
	limit := s.loginBodyTimeout
	if s.readTimeout > 0 && s.readTimeout < limit {
		limit = s.readTimeout // never extend the server's own read timeout
	}
	// Best effort: a ResponseWriter that cannot set deadlines (a test recorder) has no socket to
	// hold; net/http clears the deadline itself once the body is read to its end.
	http.NewResponseController(w).SetReadDeadline(time.Now().Add(limit))
	return decodeBodyLimit(w, r, v, maxLoginBodyBytes)
}

func roundWait(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%d s", int(math.Ceil(d.Seconds())))
	}
	return fmt.Sprintf("%d min", int(math.Ceil(d.Minutes())))
}

func (s *Server) issue(w http.ResponseWriter) {
	tokens, err := s.deps.Auth.Issue()
	if err != nil {
		writeError(w, http.StatusInternalServerError, "could not issue a token: "+err.Error(), "")
		return
	}
	writeJSON(w, http.StatusOK, tokens)
}

func (s *Server) refresh(w http.ResponseWriter, r *http.Request) {
	var body struct {
		RefreshToken string `json:"refreshToken"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	tokens, err := s.deps.Auth.Refresh(body.RefreshToken)
	if err != nil {
		if errors.Is(err, errRefreshReuse) {
			s.log.Warn("refresh token reused: session ended", "addr", clientAddr(r))
		}
		writeError(w, http.StatusUnauthorized, "the refresh token was refused ("+err.Error()+"): log in again", "refreshToken")
		return
	}
	writeJSON(w, http.StatusOK, tokens)
}

// logout ends the caller's session: its access and refresh tokens stop working at once.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if sess, ok := r.Context().Value(sessionKey{}).(*session); ok {
		s.deps.Auth.Logout(sess.id)
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) exportWorkspace(w http.ResponseWriter, r *http.Request) {
	data, name, err := s.deps.Workspaces.Export(r.Context(), r.PathValue("id"))
	if err != nil {
		writeServiceError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name))
	w.Write(data)
}

func (s *Server) importWorkspace(w http.ResponseWriter, r *http.Request) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, workspace.MaxImportBytes))
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("cannot import this file: it is larger than %d bytes", workspace.MaxImportBytes), "")
		return
	}
	ws, err := s.deps.Workspaces.Import(r.Context(), data)
	respond(w, http.StatusCreated, ws, err)
}

func respond(w http.ResponseWriter, status int, v any, err error) {
	if err != nil {
		writeServiceError(w, err)
		return
	}
	writeJSON(w, status, v)
}
