// Package mcp offers the tools of the MCP servers listed in the config dir's mcp.json
// (stdio commands and streamable-HTTP endpoints, through the official Go SDK) to the agent as
// mcp__SERVER__TOOL, each judged by the policy at the risk the file declares.
//
// One Manager serves an engine: its goals and chats share the servers. A server starts the
// first time tools are listed (a goal's or a chat's first turn), and ends when the engine
// closes (the app quits, serve stops, `goal run` or `fleet run` exits). A server that fails
// to start, stops answering or crashes is reported (Problems: the goal's rail and the chat
// get a notice; Status: Settings) and the rest go on; it is tried again on a later listing.
// Meanwhile the tools of a server that ran and then failed (a crash, a kill, an HTTP server
// gone) are withheld: not offered, but a call of one is told the server is not running, why
// (its exit status and last line of error output, or the connection's error) and what to do.
// A stdio server's stdout lines that are not JSON-RPC (a banner a library prints) are skipped.
package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clusterspace/clusterspace/backend/tools"
)

// Timing of servers.
const (
	// StartTimeout bounds a server's start: process up, initialize, tools listed. A goal's
	// first turn waits for it, so it is short; a server slower than this is reported.
	StartTimeout = 20 * time.Second
	// CallTimeout bounds one tool call: a hung server's call ends with an error the model reads.
	CallTimeout = 2 * time.Minute
	// retryAfter is how long a failed or crashed server rests before a listing starts it again.
	retryAfter = 30 * time.Second
	// rescanEvery is how often at most mcp.json is looked at for changes.
	rescanEvery = time.Second
	// stopGrace is how long a stdio server has to exit after its stdin closes, then again
	// after SIGTERM, before it is killed.
	stopGrace = 2 * time.Second
)

// Options adjust a Manager; zero values take the defaults above.
type Options struct {
	Logger       *slog.Logger
	StartTimeout time.Duration
	CallTimeout  time.Duration
}

// Manager holds the servers of one mcp.json.
type Manager struct {
	path string
	opts Options

	mu       sync.Mutex
	lastScan time.Time
	stamp    string
	fileErr  error
	bad      map[string]error
	servers  map[string]*server
	closed   bool
	// secrets are the env and header values of the servers loaded now (Secrets), swapped
	// whole on each reload so that Secrets takes no lock.
	secrets atomic.Pointer[map[string]string]
	// watchers are the goroutines that wait for a session to end; Close waits for them.
	watchers sync.WaitGroup
}

// New returns the manager of configDir/mcp.json. Nothing starts until tools are listed.
func New(configDir string, opts Options) *Manager {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = StartTimeout
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = CallTimeout
	}
	return &Manager{path: filepath.Join(configDir, FileName), opts: opts, servers: map[string]*server{}}
}

// Kind names the source on tool definitions.
func (m *Manager) Kind() string { return "mcp" }

// Tools starts the servers not running yet (at once, each within StartTimeout) and offers
// the tools of those that run.
func (m *Manager) Tools() []tools.Tool {
	servers := m.scan()
	m.startAll(servers, false)
	var out []tools.Tool
	for _, s := range servers {
		out = append(out, s.offered()...)
	}
	return out
}

// Withheld answers for a tool of a server that is failed or exited (tools.Withholder): not
// offered, but a call of it, planned from an earlier turn, gets a tool that says why the server
// is not running and what to do. It starts nothing.
func (m *Manager) Withheld(name string) (tools.Tool, bool) {
	for _, s := range m.scan() {
		if t, ok := s.withheld(name); ok {
			return t, true
		}
	}
	return nil, false
}

// Start starts every server now, retrying failed ones at once (Settings' "Start").
func (m *Manager) Start() {
	m.startAll(m.scan(), true)
}

func (m *Manager) startAll(servers []*server, force bool) {
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(func() { s.ensure(force) })
	}
	wg.Wait()
}

// Problems lists what is wrong: the file, a server entry, a server that failed or exited.
// Secrets never appear in them.
func (m *Manager) Problems() []string {
	servers := m.scan()
	m.mu.Lock()
	var out []string
	if m.fileErr != nil {
		out = append(out, fmt.Sprintf("MCP servers not loaded: %v", m.fileErr))
	}
	for _, name := range slices.Sorted(maps.Keys(m.bad)) {
		out = append(out, fmt.Sprintf("MCP server %s not loaded: %v", name, m.bad[name]))
	}
	m.mu.Unlock()
	for _, s := range servers {
		if p := s.problem(); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// scan re-reads mcp.json when it changed: servers whose entry changed or went away are
// stopped, new ones wait for the next listing. It returns the current servers, by name.
func (m *Manager) scan() []*server {
	m.mu.Lock()
	var stop []*server
	defer func() {
		for _, s := range stop {
			s.stop()
		}
	}()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	if m.lastScan.IsZero() || time.Since(m.lastScan) >= rescanEvery {
		m.lastScan = time.Now()
		stop = m.reload()
	}
	var out []*server
	for _, name := range slices.Sorted(maps.Keys(m.servers)) {
		out = append(out, m.servers[name])
	}
	return out
}

// reload reads the file if its size or time changed. m.mu held.
func (m *Manager) reload() (stop []*server) {
	stamp := "missing"
	info, err := os.Stat(m.path)
	if err == nil {
		stamp = fmt.Sprintf("%d|%d", info.Size(), info.ModTime().UnixNano())
	}
	if stamp == m.stamp {
		return nil
	}
	m.stamp = stamp
	configs := map[string]ServerConfig{}
	m.fileErr, m.bad = nil, nil
	switch data, err := os.ReadFile(m.path); {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		m.fileErr = fmt.Errorf("%s: cannot read it (%v)", m.path, err)
	default:
		configs, m.bad, m.fileErr = ParseFile(m.path, data)
	}
	for name, s := range m.servers {
		if cfg, ok := configs[name]; !ok || !sameConfig(cfg, s.cfg) {
			stop = append(stop, s)
			delete(m.servers, name)
		}
	}
	for name, cfg := range configs {
		if _, ok := m.servers[name]; !ok {
			m.servers[name] = newServer(m, name, cfg)
		}
	}
	all := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(m.servers)) {
		for v, kind := range m.servers[name].cfg.secrets(name) {
			if _, ok := all[v]; !ok {
				all[v] = kind
			}
		}
	}
	m.secrets.Store(&all)
	return stop
}

// Secrets are the env and header values of the servers as mcp.json was last loaded, each with
// the kind a mask names: every one counts as a secret (but see minSecret), to be masked
// wherever a tool's output could carry it (a server that echoes its environment). It answers
// from memory, without a lock, so it may be asked at every tool call (secrets.Source).
func (m *Manager) Secrets() map[string]string {
	if p := m.secrets.Load(); p != nil {
		return *p
	}
	return nil
}

func sameConfig(a, b ServerConfig) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// Close stops every server and waits until their processes are gone.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	servers := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		servers = append(servers, s)
	}
	m.servers = map[string]*server{}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(s.stop)
	}
	wg.Wait()
	m.watchers.Wait()
}

func (m *Manager) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// Status is mcp.json as Settings shows it: servers, their state and tools, with env and
// header values masked.
type Status struct {
	File    string         `json:"file"`
	Exists  bool           `json:"exists"`
	Error   string         `json:"error,omitempty"`
	Servers []ServerStatus `json:"servers"`
}

// ServerStatus is one server.
type ServerStatus struct {
	Name      string            `json:"name"`
	Transport string            `json:"transport"` // stdio or http
	Command   string            `json:"command,omitempty"`
	Args      []string          `json:"args,omitempty"`
	URL       string            `json:"url,omitempty"`
	Env       map[string]string `json:"env,omitempty"`     // values masked
	Headers   map[string]string `json:"headers,omitempty"` // values masked
	Risk      tools.Risk        `json:"risk"`
	// State: not_started, starting, running, failed, exited, disabled, invalid.
	State      string     `json:"state"`
	Error      string     `json:"error,omitempty"`
	PID        int        `json:"pid,omitempty"`
	Tools      []ToolInfo `json:"tools"`
	ToolErrors []string   `json:"toolErrors,omitempty"`
}

// ToolInfo is one tool of a server.
type ToolInfo struct {
	Name        string     `json:"name"` // as the model is offered it: mcp__SERVER__TOOL
	Tool        string     `json:"tool"` // as the server names it
	Description string     `json:"description"`
	Risk        tools.Risk `json:"risk"`
}

// Status describes the servers without starting any.
func (m *Manager) Status() Status {
	servers := m.scan()
	m.mu.Lock()
	st := Status{File: m.path, Servers: []ServerStatus{}}
	_, err := os.Stat(m.path)
	st.Exists = err == nil
	if m.fileErr != nil {
		st.Error = m.fileErr.Error()
	}
	for name, err := range m.bad {
		st.Servers = append(st.Servers, ServerStatus{Name: name, State: "invalid", Error: err.Error(), Tools: []ToolInfo{}})
	}
	m.mu.Unlock()
	for _, s := range servers {
		st.Servers = append(st.Servers, s.status())
	}
	sort.Slice(st.Servers, func(i, j int) bool { return st.Servers[i].Name < st.Servers[j].Name })
	return st
}
