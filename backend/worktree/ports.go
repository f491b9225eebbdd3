package worktree

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// Port ranges handed to pieces of work, so two of them can start the same dev server or
// database at once, each on its own PORT.
const (
	// FirstPort is where the ranges start: above the usual dev servers' defaults (3000,
	// 5173, 8000, 8080) and databases' (5432, 6379), below Linux's ephemeral ports (32768 up),
	// which the kernel hands out to outgoing connections.
	FirstPort = 20000
	// LastPort bounds the ranges: 1,000 ranges of PortsPerRange, far more tasks than ever run
	// at once.
	LastPort = 29999
	// PortsPerRange is how many ports each piece of work gets: a dev server, its API, a
	// database and a few spare.
	PortsPerRange = 10
)

// Ports hands out port ranges, one per owner (a fleet task). A range is held by an flock on
// a lock file of its own, so no other owner of this process nor of another process of the
// app (a `fleet run` next to the window) gets it while it is held, and the kernel releases
// it when the process ends. A new range is also only given once its ports are free (nothing
// listens on them). The zero value is ready to use.
type Ports struct {
	// Dir holds the lock files ("": clusterspace-ports-UID in the temporary dir).
	Dir string

	mu   sync.Mutex
	held map[string]portHold
}

type portHold struct {
	base int
	lock *os.File // nil: a recorded range another process holds (kept for the owner's sake)
}

func (p *Ports) dir() string {
	if p.Dir != "" {
		return p.Dir
	}
	return filepath.Join(os.TempDir(), "clusterspace-ports-"+strconv.Itoa(os.Getuid()))
}

// Reserve gives owner its range and returns its first port. An owner that holds one keeps
// it. want is the range the owner had before (a resumed task, whose shell and goal already
// know its PORT): it is kept even if another process holds it meanwhile, rather than change
// under the task's feet. Otherwise the first range no one holds and nothing listens on is
// taken.
func (p *Ports) Reserve(owner string, want int) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if h, ok := p.held[owner]; ok {
		return h.base, nil
	}
	if p.held == nil {
		p.held = map[string]portHold{}
	}
	dir := p.dir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, fmt.Errorf("cannot make the dir of port locks %s (%v): free some space or fix its permissions", dir, err)
	}
	if want > 0 {
		lock, _ := lockRange(dir, want) // nil when another process holds it: the task keeps its ports anyway
		p.held[owner] = portHold{base: want, lock: lock}
		return want, nil
	}
	taken := map[int]bool{}
	for _, h := range p.held {
		taken[h.base] = true
	}
	for base := FirstPort; base+PortsPerRange-1 <= LastPort; base += PortsPerRange {
		if taken[base] {
			continue
		}
		lock, err := lockRange(dir, base)
		if err != nil {
			continue
		}
		if !portsFree(base, PortsPerRange) {
			lock.Close()
			continue
		}
		p.held[owner] = portHold{base: base, lock: lock}
		return base, nil
	}
	return 0, fmt.Errorf("no range of %d free ports is left between %d and %d: end some tasks that run in worktrees, or stop what listens on those ports", PortsPerRange, FirstPort, LastPort)
}

// Holds reports whether owner has its range in this process.
func (p *Ports) Holds(owner string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.held[owner]
	return ok
}

// Release gives owner's range back.
func (p *Ports) Release(owner string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.release(owner)
}

// Retain gives back the ranges of every owner keep does not want any more (tasks that
// ended): ranges are released lazily, when one is asked for.
func (p *Ports) Retain(keep func(owner string) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for owner := range p.held {
		if !keep(owner) {
			p.release(owner)
		}
	}
}

func (p *Ports) release(owner string) {
	if h, ok := p.held[owner]; ok {
		if h.lock != nil {
			h.lock.Close() // closing drops the flock
		}
		delete(p.held, owner)
	}
}

// errRangeHeld: another owner holds the range.
var errRangeHeld = errors.New("the port range is held")

// lockRange takes the lock of the range starting at base, without waiting.
func lockRange(dir string, base int) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(base)+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, errRangeHeld
	}
	return f, nil
}

// portsFree reports whether nothing listens on any port of the range: each is bound for a
// moment on every address (which fails if anything listens on it, on any address).
func portsFree(base, n int) bool {
	for port := base; port < base+n; port++ {
		l, err := net.Listen("tcp", ":"+strconv.Itoa(port))
		if err != nil {
			return false
		}
		l.Close()
	}
	return true
}
