package server

import (
	"crypto/rand"
	"crypto/subtle"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"
	"unicode"
)

// lockTiers: after this many failed logins in a row from one source, refuse logins from it
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

// lockMemory is how long a source's failures are remembered after its last one.
const lockMemory = 24 * time.Hour

// loopbackSource is the one lockout source of every loopback address. A process on this machine
// can dial from any of 127.0.0.0/8 (and ::1), so counting each address apart gave it 16 million
// fresh allowances: 120 guesses in 18 s from 127.x addresses locked nothing.
const loopbackSource = "loopback"

// ipv6SourceBits groups IPv6 clients by their /64: one host is normally handed a whole /64 and
// can pick any address in it, so per address an attacker would never run out. The cost is that
// hosts sharing a /64 share a lock, which a trusted-device cookie (below) lets the owner skip.
const ipv6SourceBits = 64

// lockSource is what failed logins from the IP host are counted against: "loopback" for every
// loopback address (127.0.0.0/8, ::1, ::ffff:127.x.y.z), the address itself for other IPv4, and
// the /64 for other IPv6. A host that is not an IP is its own source.
func lockSource(host string) string {
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap().WithZone("")
	switch {
	case ip.IsLoopback():
		return loopbackSource
	case ip.Is4():
		return ip.String()
	}
	p, _ := ip.Prefix(ipv6SourceBits) // cannot fail: 64 fits an IPv6 address
	return p.String()
}

// sourceName is a lockout source as a person reads it in an error message.
func sourceName(source string) string {
	if source == loopbackSource {
		return "this machine (any loopback address)"
	}
	return source
}

// Lockout counts failed logins per source (see lockSource).
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

// Locked reports how long key (a source, or a known device) must still wait, if it is locked out.
func (l *Lockout) Locked(key string) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st, ok := l.clients[key]
	if !ok {
		return 0, false
	}
	if wait := st.until.Sub(l.now()); wait > 0 {
		return wait, true
	}
	return 0, false
}

// Fail records a failed login and returns the lock it triggers (0 for none).
func (l *Lockout) Fail(key string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.forgetOld(now)
	st := l.clients[key]
	if st == nil {
		st = &lockState{}
		l.clients[key] = st
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

// Succeed clears key's failures.
func (l *Lockout) Succeed(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.clients, key)
}

// forgetOld drops keys quiet for lockMemory, so the map cannot grow without bound.
func (l *Lockout) forgetOld(now time.Time) {
	for key, st := range l.clients {
		if now.Sub(st.last) > lockMemory && now.After(st.until) {
			delete(l.clients, key)
		}
	}
}

// Trusted devices keep the owner's browser out of a lockout someone else causes. Every local
// process counts as the one loopback source, so a goal failing logins on purpose would otherwise
// lock the owner out too. A browser that once logged in holds a random device id in an HttpOnly
// cookie; its failures are counted against that id, and others' failures never touch it.
const (
	deviceCookie = "clusterspace_device"
	// deviceTTL is how long a browser stays trusted after its last successful login.
	deviceTTL = 30 * 24 * time.Hour
	// maxDevices bounds the table; past it the device that logged in longest ago is forgotten
	// (it falls back to being counted by its source).
	maxDevices = 256
)

// devices are the browser ids issued at successful logins, kept in memory only: an id on disk
// could be read by the same processes this guards against. A restart forgets them.
type devices struct {
	mu  sync.Mutex
	now func() time.Time
	m   map[string]time.Time // id -> expiry
}

func newDevices(now func() time.Time) *devices {
	return &devices{now: now, m: map[string]time.Time{}}
}

// known reports whether id was issued here and has not expired.
func (d *devices) known(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	exp, ok := d.m[id]
	return ok && d.now().Before(exp)
}

// trust issues (or renews) a device id and returns it.
func (d *devices) trust(id string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	if _, ok := d.m[id]; !ok {
		id = randomID(sessionIDBytes)
	}
	for k, exp := range d.m {
		if !now.Before(exp) {
			delete(d.m, k)
		}
	}
	if len(d.m) >= maxDevices {
		oldest, oldestExp := "", time.Time{}
		for k, exp := range d.m {
			if oldest == "" || exp.Before(oldestExp) {
				oldest, oldestExp = k, exp
			}
		}
		delete(d.m, oldest)
	}
	d.m[id] = now.Add(deviceTTL)
	return id
}

// unlockCode is the owner's way past a lockout someone else caused from the owner's own address
// (a local process, a page in another tab) before the owner's browser became a trusted device.
// When a lockout begins, the server writes a one-time code to its log, which only the person who
// started it reads; a login that carries the code is let through the lock (the password is still
// checked). The code is used up by the login it lets in; the next lockout logs a fresh one.
type unlockCode struct {
	mu   sync.Mutex
	code string
}

// unlockAlphabet leaves out letters people mistake for digits (I, L, O, U).
const unlockAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// current returns the code, making one if none is pending.
func (u *unlockCode) current() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.code == "" {
		b := make([]byte, 12) // 60 bits: no one guesses it through a rate-limited login
		rand.Read(b)
		for i := range b {
			b[i] = unlockAlphabet[int(b[i])%len(unlockAlphabet)]
		}
		u.code = fmt.Sprintf("%s-%s-%s", b[0:4], b[4:8], b[8:12])
	}
	return u.code
}

// matches reports whether typed is the pending code (case, spaces and dashes aside).
func (u *unlockCode) matches(typed string) bool {
	norm := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '-' || r == ' ' {
				return -1
			}
			return unicode.ToUpper(r)
		}, s)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.code != "" && subtle.ConstantTimeCompare([]byte(norm(typed)), []byte(norm(u.code))) == 1
}

// use consumes the code after the login it let in succeeded.
func (u *unlockCode) use() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.code = ""
}
