package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/clusterspace/clusterspace/backend/pubsub"
)

// Subprotocols: browsers cannot set headers on a WebSocket, so the access token travels as a
// second subprotocol, "bearer.<token>"; the server answers with wsProtocol only.
const (
	wsProtocol     = "clusterspace.v1"
	wsBearerPrefix = "bearer."
)

// Close codes the client acts on (4000-4999 are for applications).
const (
	wsCloseTokenExpired = 4001 // refresh the token and reconnect
)

// wsWriteTimeout drops a client that cannot take a message for this long: a slow viewer
// must not hold events in memory forever.
const wsWriteTimeout = 10 * time.Second

// wsPingInterval keeps idle connections alive through proxies and finds dead peers.
const wsPingInterval = 30 * time.Second

func bearerFromProtocols(r *http.Request) string {
	for _, field := range r.Header.Values("Sec-WebSocket-Protocol") {
		for p := range strings.SplitSeq(field, ",") {
			if tok, ok := strings.CutPrefix(strings.TrimSpace(p), wsBearerPrefix); ok {
				return tok
			}
		}
	}
	return ""
}

// originAllowed accepts a request with no Origin (not a browser: the token still decides),
// one from the page the server itself served, or one listed in AllowedOrigins.
func (s *Server) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	return slices.ContainsFunc(s.cfg.AllowedOrigins, func(o string) bool { return strings.EqualFold(strings.TrimRight(o, "/"), origin) })
}

func (s *Server) websocket(w http.ResponseWriter, r *http.Request) {
	token := bearerFromProtocols(r)
	if token == "" {
		token, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	expires, sess, ok := s.verifyAccess(w, token, "log in first: send the access token as the subprotocol bearer.<token>")
	if !ok {
		return
	}
	if !s.originAllowed(r) {
		writeError(w, http.StatusForbidden, "WebSocket from origin "+r.Header.Get("Origin")+" refused: open the UI from this server, or start serve with --allowed-origin", "")
		return
	}
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols: []string{wsProtocol},
		// The origin was checked above, including the configured extra origins.
		InsecureSkipVerify: true,
	})
	if err != nil {
		return // Accept has already written the error response.
	}
	s.wg.Add(1)
	defer s.wg.Done()
	s.serveEvents(conn, expires, sess.done)
}

// wsReadLimit bounds one client message; pasted text into a terminal is the largest.
const wsReadLimit = 1 << 20

// serveEvents forwards every service's events to one client and acts on the client's messages
// (terminal input, attach, resize) until the client goes, the token expires, its session ends
// (logout), or the server shuts down.
func (s *Server) serveEvents(conn *websocket.Conn, expires time.Time, sessionDone <-chan struct{}) {
	conn.SetReadLimit(wsReadLimit)
	// peerCtx ends when the client goes away or the server stops. It must not carry the token
	// deadline: a read whose context ends closes the connection at once, before we could send
	// the "token expired" close code.
	peerCtx, peerGone := context.WithCancel(s.ctx)
	defer peerGone()
	ctx, cancel := context.WithDeadline(peerCtx, expires)
	defer cancel()

	out := make(chan pubsub.Envelope, pubsub.DefaultBuffer)
	send := func(e pubsub.Envelope) {
		select {
		case out <- e:
		case <-ctx.Done():
		}
	}
	var views pubsub.Views
	var workers sync.WaitGroup
	for _, src := range s.deps.Events {
		workers.Add(1)
		go func() {
			defer workers.Done()
			src(ctx, send)
		}()
	}
	workers.Add(1)
	go func() {
		defer workers.Done()
		defer peerGone()
		for {
			typ, msg, err := conn.Read(peerCtx)
			if err != nil {
				return
			}
			if typ == websocket.MessageText {
				s.handleClient(ctx, msg, &views, send)
			}
		}
	}()
	defer func() {
		cancel()
		conn.CloseNow() // ends the reader
		workers.Wait()
		views.StopAll()
	}()

	ping := time.NewTicker(wsPingInterval)
	defer ping.Stop()
	for {
		select {
		case e := <-out:
			b, err := json.Marshal(e)
			if err != nil {
				s.log.Error("encode event", "topic", e.Topic, "err", err)
				continue
			}
			wctx, wcancel := context.WithTimeout(ctx, wsWriteTimeout)
			err = conn.Write(wctx, websocket.MessageText, b)
			wcancel()
			if err != nil {
				return
			}
		case <-ping.C:
			pctx, pcancel := context.WithTimeout(ctx, wsWriteTimeout)
			err := conn.Ping(pctx)
			pcancel()
			if err != nil {
				return
			}
		case <-sessionDone:
			// The client's refresh then fails and it shows the login screen.
			conn.Close(wsCloseTokenExpired, "the session ended: log in again")
			return
		case <-ctx.Done():
			if peerCtx.Err() == nil {
				conn.Close(wsCloseTokenExpired, "access token expired: refresh and reconnect")
			}
			return
		}
	}
}
