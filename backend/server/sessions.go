package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"
)

// Sessions make a token worth something only while the login that issued it is live. The
// signing key sits in the data dir, where a goal's shell (or any process of the same user) can
// read it and sign tokens; the session table lives only in this process's memory, so a forged
// token names no live session and is refused. It is deliberately not persisted: anything
// written to the data dir could be read or planted the same way as the key. A restart
// therefore asks every browser to log in again.

// maxSessions bounds the table: each login adds one, and an owner has a few browsers, not
// hundreds. Past it the session that was refreshed longest ago is dropped.
const maxSessions = 64

// sessionIDBytes is 128 bits: unguessable, and short enough for every token to carry.
const sessionIDBytes = 16

var (
	errSessionEnded = errors.New("this login session has ended (logged out, refreshed token reused, or the server restarted)")
	errRefreshReuse = errors.New("this refresh token was already used, so it may have been stolen; the session is ended")
)

type session struct {
	id string
	// refreshID is the jti of the one refresh token that may be used next: each refresh
	// rotates it, so a refresh token works once.
	refreshID string
	// expires is when the latest refresh token expires; past it the session is dead anyway.
	expires time.Time
	// done is closed when the session is revoked, ending its WebSockets at once.
	done chan struct{}
}

type sessionTable struct {
	mu sync.Mutex
	m  map[string]*session
}

func newSessionTable() *sessionTable { return &sessionTable{m: map[string]*session{}} }

func randomID(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// create adds a session whose next refresh token has the id refreshID.
func (t *sessionTable) create(refreshID string, expires, now time.Time) *session {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pruneLocked(now)
	if len(t.m) >= maxSessions {
		var oldest *session
		for _, s := range t.m {
			if oldest == nil || s.expires.Before(oldest.expires) {
				oldest = s
			}
		}
		t.revokeLocked(oldest.id)
	}
	s := &session{id: randomID(sessionIDBytes), refreshID: refreshID, expires: expires, done: make(chan struct{})}
	t.m[s.id] = s
	return s
}

// live returns the session if it has not been revoked or run out.
func (t *sessionTable) live(id string, now time.Time) (*session, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.m[id]
	if !ok || !now.Before(s.expires) {
		return nil, errSessionEnded
	}
	return s, nil
}

// rotate accepts refresh token usedID once: it becomes nextID. A second use of the same
// token means two parties hold it, so the whole session is revoked.
func (t *sessionTable) rotate(id, usedID, nextID string, expires, now time.Time) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.m[id]
	if !ok || !now.Before(s.expires) {
		return errSessionEnded
	}
	if s.refreshID != usedID {
		t.revokeLocked(id)
		return errRefreshReuse
	}
	s.refreshID, s.expires = nextID, expires
	return nil
}

func (t *sessionTable) revoke(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.revokeLocked(id)
}

func (t *sessionTable) revokeLocked(id string) {
	if s, ok := t.m[id]; ok {
		close(s.done)
		delete(t.m, id)
	}
}

func (t *sessionTable) pruneLocked(now time.Time) {
	for id, s := range t.m {
		if !now.Before(s.expires) {
			t.revokeLocked(id)
		}
	}
}
