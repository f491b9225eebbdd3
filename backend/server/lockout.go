package server

import (
	"sync"
	"time"
)

// lockTiers: after this many failed logins in a row from one address, refuse logins from it
// for this long. The steps grow so a person who mistypes waits seconds while a guesser is
// slowed to a few tries an hour.
var lockTiers = []struct {
	failures int
	lock     time.Duration
}{
	{8, 30 * time.Minute},
	{5, 5 * time.Minute},
	{3, 30 * time.Second},
}

// lockMemory is how long an address's failures are remembered after its last one.
const lockMemory = 24 * time.Hour

// Lockout counts failed logins per client address.
type Lockout struct {
	mu      sync.Mutex
	now     func() time.Time
	clients map[string]*lockState
}

type lockState struct {
	failures int
	until    time.Time
	last     time.Time
}

// NewLockout returns an empty lockout using the given clock.
func NewLockout(now func() time.Time) *Lockout {
	return &Lockout{now: now, clients: map[string]*lockState{}}
}

// Locked reports how long addr must still wait, if it is locked out.
func (l *Lockout) Locked(addr string) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st, ok := l.clients[addr]
	if !ok {
		return 0, false
	}
	if wait := st.until.Sub(l.now()); wait > 0 {
		return wait, true
	}
	return 0, false
}

// Fail records a failed login and returns the lock it triggers (0 for none).
func (l *Lockout) Fail(addr string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.forgetOld(now)
	st := l.clients[addr]
	if st == nil {
		st = &lockState{}
		l.clients[addr] = st
	}
	st.failures++
	st.last = now
	for _, tier := range lockTiers {
		if st.failures >= tier.failures {
			st.until = now.Add(tier.lock)
			return tier.lock
		}
	}
	return 0
}

// Succeed clears addr's failures.
func (l *Lockout) Succeed(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.clients, addr)
}

// forgetOld drops addresses quiet for lockMemory, so the map cannot grow without bound.
func (l *Lockout) forgetOld(now time.Time) {
	for addr, st := range l.clients {
		if now.Sub(st.last) > lockMemory && now.After(st.until) {
			delete(l.clients, addr)
		}
	}
}
