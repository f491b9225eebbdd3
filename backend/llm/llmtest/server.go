package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/llm"
)

const (
	defaultModel     = "scripted-model"
	defaultChunks    = 3
	defaultFragments = 3
	// charsPerToken estimates usage when the script gives none, as real servers always report it.
	charsPerToken = 4
)

// Request is one request the server received.
type Request struct {
	Method string      `json:"method"`
	Path   string      `json:"path"`
	Header http.Header `json:"header"`
	Body   []byte      `json:"body,omitempty"`
	// JSON is the parsed body (nil when it is not JSON).
	JSON map[string]any `json:"json,omitempty"`
	// Protocol is "openai" (Chat Completions), "responses" (OpenAI's Responses API) or
	// "anthropic".
	Protocol string `json:"protocol"`
	Model    string `json:"model,omitempty"`
	Stream   bool   `json:"stream,omitempty"`
	System   string `json:"system,omitempty"`
	LastUser string `json:"lastUser,omitempty"`
	// Context is the agent's per-turn context message when the request ends with one (see
	// llm.ContextHeader): the checklist, the panes. LastUser skips it.
	Context string `json:"context,omitempty"`
	// Answer says what answered: "replies[2]", "roles[critic]", "models", "auth", "exhausted",
	// "context_length_exceeded".
	Answer string `json:"answer"`
	// CacheKey is the OpenAI-style prompt_cache_key the request carried.
	CacheKey string `json:"cacheKey,omitempty"`
	// Prefix is the request cut into cacheable segments (see CommonPrefix).
	Prefix prefix `json:"prefix"`
	// Usage is what the server reported for the request (nil when it failed).
	Usage *Usage `json:"usage,omitempty"`
	// At is when the request arrived.
	At time.Time `json:"at"`
}

// Server is a running scripted model server.
type Server struct {
	// URL is the server's root, e.g. http://127.0.0.1:40123. OpenAI-style clients use
	// URL+"/v1" as their base URL; Anthropic clients use URL.
	URL string

	t    testing.TB
	hs   *httptest.Server
	done chan struct{}
	once sync.Once

	mu       sync.Mutex
	cache    cache
	script   Script
	next     int // the next ordered reply
	served   int // how often it has been served
	requests []Request
	seq      int
}

// New starts a server on a loopback port. With t, it is closed when the test ends and an
// exhausted script fails the test; with nil, call Close.
func New(t testing.TB, script Script) *Server {
	s := newServer(t, script)
	s.hs = httptest.NewServer(s)
	s.URL = s.hs.URL
	if t != nil {
		t.Cleanup(s.Close)
	}
	return s
}

// Listen starts a server on addr ("127.0.0.1:0" picks a port); the scripted-model command
// uses it.
func Listen(addr string, script Script) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := newServer(nil, script)
	s.hs = httptest.NewUnstartedServer(s)
	s.hs.Listener.Close() // Best effort: the default listener is replaced unused.
	s.hs.Listener = ln
	s.hs.Start()
	s.URL = s.hs.URL
	return s, nil
}

func newServer(t testing.TB, script Script) *Server {
	if len(script.Models) == 0 {
		script.Models = []string{defaultModel}
	}
	return &Server{t: t, script: script, done: make(chan struct{})}
}

// OpenAIURL is the base URL for OpenAI-style clients.
func (s *Server) OpenAIURL() string { return s.URL + "/v1" }

// Config is a provider on this server, as a person would set one up: OpenAI-style, model
// "scripted", and no retries, so a failure shows at once.
func (s *Server) Config() llm.Config {
	return llm.Config{Name: "scripted", Kind: "openai", BaseURL: s.OpenAIURL(), Model: "scripted", MaxRetries: -1}
}

// Close stops the server, releasing stalled streams first.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.done)
		s.hs.Close()
	})
}

// Push appends ordered replies to the script.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script.Replies = append(s.script.Replies, replies...)
}

// Remaining is how many ordered replies are left, counting repeats.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for i := s.next; i < len(s.script.Replies); i++ {
		n += max(1, s.script.Replies[i].Repeat)
	}
	return n - s.served
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// ChatRequests returns the chat requests (not model listings) received so far.
func (s *Server) ChatRequests() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Method == http.MethodPost {
			out = append(out, r)
		}
	}
	return out
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.requests); n > 0 && s.script.ForgetBodies {
		s.requests[n-1].Body, s.requests[n-1].JSON = nil, nil
	}
	s.requests = append(s.requests, r)
}

// pick chooses the reply for a request.
func (s *Server) pick(rec Request) (Reply, string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, role := range s.script.Roles {
		if role.Match.matches(rec) {
			return role.Reply, "roles[" + role.Name + "]", true
		}
	}
	if s.next >= len(s.script.Replies) {
		return Reply{}, "exhausted", false
	}
	r := s.script.Replies[s.next]
	label := fmt.Sprintf("replies[%d]", s.next)
	s.served++
	if s.served >= max(1, r.Repeat) {
		s.next, s.served = s.next+1, 0
	}
	if r.Compute != nil {
		r = r.Compute(rec)
	}
	return r, label, true
}

func (m Match) matches(r Request) bool {
	return (m.System == "" || strings.Contains(r.System, m.System)) &&
		(m.LastUser == "" || strings.Contains(r.LastUser, m.LastUser)) &&
		(m.Model == "" || m.Model == r.Model) &&
		(m.Protocol == "" || m.Protocol == r.Protocol)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/v1")
	if path == "/_scripted/requests" {
		// Keys are masked here: this leaves the process, and end-to-end tests grep what
		// leaves for keys. In-process Requests keeps them, for assertions on what was sent.
		reqs := s.Requests()
		for i := range reqs {
			reqs[i].Header = maskKeys(reqs[i].Header)
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(reqs) // Best effort: the client may be gone.
		return
	}
	body, _ := io.ReadAll(r.Body) // Best effort: a short body parses as whatever arrived.
	rec := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Protocol: "openai", At: time.Now()}
	switch {
	case path == "/messages" || r.Header.Get("anthropic-version") != "":
		rec.Protocol = "anthropic"
	case path == "/responses":
		rec.Protocol = "responses"
	}
	if json.Unmarshal(body, &rec.JSON) == nil {
		parseChat(&rec)
		if rec.Protocol == "responses" {
			parseResponses(&rec)
		}
	}
	p := protocolFor(rec.Protocol)

	if !s.authorized(r, rec.Protocol) {
		rec.Answer = "auth"
		s.record(rec)
		p.fail(w, rec, Fault{Status: http.StatusUnauthorized})
		return
	}
	switch {
	case r.Method == http.MethodGet && path == "/models" && !s.script.NoModels:
		rec.Answer = "models"
		s.record(rec)
		p.models(w, s.script.Models)
		return
	case r.Method == http.MethodPost && (path == "/chat/completions" || path == "/messages" || path == "/responses"):
	default:
		rec.Answer = "no such endpoint"
		s.record(rec)
		p.fail(w, rec, Fault{Status: http.StatusNotFound, Message: fmt.Sprintf("scripted-model serves no %s %s", r.Method, r.URL.Path)})
		return
	}

	rec.Prefix = segments(rec)
	if limit, tokens := s.script.ContextLimit, len(body)/charsPerToken; limit > 0 && tokens > limit {
		rec.Answer = "context_length_exceeded"
		s.record(rec)
		tooLong(w, p, rec, tokens, limit)
		return
	}
	if msg := unansweredCalls(rec); msg != "" && !s.script.Lenient {
		rec.Answer = "unanswered_tool_calls"
		s.record(rec)
		p.fail(w, rec, Fault{Status: http.StatusBadRequest, Message: msg})
		return
	}
	reply, label, ok := s.pick(rec)
	rec.Answer = label
	if ok && (reply.Fault == nil || reply.Fault.Status == 0) {
		if reply.Usage == nil {
			reply.Usage = estimate(len(body), reply)
			s.mu.Lock()
			s.cache.account(rec, reply.Usage)
			s.mu.Unlock()
		}
		u := *reply.Usage
		rec.Usage = &u
	}
	s.mu.Lock()
	s.seq++
	seq := s.seq
	n := len(s.requests) + 1
	s.mu.Unlock()
	s.record(rec)
	if !ok {
		msg := fmt.Sprintf("scripted-model: the script is exhausted: request %d (%s %s) found no reply left; add one to the script", n, r.Method, r.URL.Path)
		if s.t != nil {
			s.t.Errorf("%s", msg)
		}
		// Clients must not retry this: the test should fail now, not after backoff.
		w.Header().Set("x-should-retry", "false")
		p.fail(w, rec, Fault{Status: http.StatusInternalServerError, Message: msg})
		return
	}
	if f := reply.Fault; f != nil && f.Status != 0 {
		p.fail(w, rec, *f)
		return
	}
	out := &output{w: w, req: r, done: s.done, delay: time.Duration(reply.ChunkDelayMs) * time.Millisecond, stallAt: -1}
	if f := reply.Fault; f != nil && f.Stall {
		out.stallAt = f.StallAfter
	}
	if rec.Stream {
		p.stream(out, rec, reply, seq)
	} else {
		p.whole(out, rec, reply, seq)
	}
}

func maskKeys(h http.Header) http.Header {
	h = h.Clone()
	if v := h.Get("Authorization"); v != "" {
		h.Set("Authorization", "Bearer "+llm.MaskKey(strings.TrimPrefix(v, "Bearer ")))
	}
	if v := h.Get("X-Api-Key"); v != "" {
		h.Set("X-Api-Key", llm.MaskKey(v))
	}
	return h
}

func (s *Server) authorized(r *http.Request, protocol string) bool {
	if s.script.APIKey == "" {
		return true
	}
	bearer := r.Header.Get("Authorization") == "Bearer "+s.script.APIKey
	if protocol == "anthropic" {
		return bearer || r.Header.Get("X-Api-Key") == s.script.APIKey
	}
	return bearer
}

// protocol is one wire format's way of answering.
type protocol interface {
	fail(w http.ResponseWriter, rec Request, f Fault)
	models(w http.ResponseWriter, ids []string)
	stream(o *output, rec Request, r Reply, seq int)
	whole(o *output, rec Request, r Reply, seq int)
}

func protocolFor(name string) protocol {
	switch name {
	case "anthropic":
		return anthropicProtocol{}
	case "responses":
		return responsesProtocol{}
	}
	return openaiProtocol{}
}

// output writes a response, honouring the reply's delay and stall.
type output struct {
	w       http.ResponseWriter
	req     *http.Request
	done    chan struct{}
	delay   time.Duration
	stallAt int // events to send before hanging; -1 never
	sent    int
	started bool
}

// stall hangs until the client or the server goes away.
func (o *output) stall() {
	if f, ok := o.w.(http.Flusher); ok && o.started {
		f.Flush()
	}
	select {
	case <-o.req.Context().Done():
	case <-o.done:
	}
}

// event writes one server-sent event; it reports false once the stream must stop.
func (o *output) event(name string, data any) bool {
	if o.sent == o.stallAt {
		o.stall()
		return false
	}
	if !o.started {
		o.started = true
		h := o.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		o.w.WriteHeader(http.StatusOK)
	}
	if o.delay > 0 && o.sent > 0 {
		select {
		case <-time.After(o.delay):
		case <-o.req.Context().Done():
			return false
		case <-o.done:
			return false
		}
	}
	var b bytes.Buffer
	if name != "" {
		fmt.Fprintf(&b, "event: %s\n", name)
	}
	switch d := data.(type) {
	case string:
		fmt.Fprintf(&b, "data: %s\n\n", d)
	default:
		fmt.Fprintf(&b, "data: %s\n", marshal(d))
	}
	o.sent++
	if _, err := o.w.Write(b.Bytes()); err != nil {
		return false
	}
	if f, ok := o.w.(http.Flusher); ok {
		f.Flush()
	}
	return true
}

// json writes a whole JSON response, unless the reply stalls first.
func (o *output) json(v any) {
	if o.stallAt >= 0 {
		o.stall()
		return
	}
	writeJSON(o.w, http.StatusOK, v)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(marshal(v)) // Best effort: the client may be gone.
}

// marshal encodes v on one line ending in a newline, leaving <, > and & as they are, as
// the real services do (a <think> tag arrives as "<think>", not "\u003cthink\u003e").
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v) // the values are maps and slices of plain values, which always encode
	return b.Bytes()
}

func retryAfterHeader(w http.ResponseWriter, f Fault) {
	if f.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(f.RetryAfter))
	}
}

// split cuts s into n pieces of about equal length, never inside a UTF-8 character.
func split(s string, n int) []string {
	if s == "" {
		return nil
	}
	runes := []rune(s)
	n = max(1, min(n, len(runes)))
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, string(runes[i*len(runes)/n:(i+1)*len(runes)/n]))
	}
	return out
}

// argsText is the argument text of a scripted call.
func (c ToolCall) argsText() string {
	if c.RawArgs != "" {
		return c.RawArgs
	}
	if len(c.Args) == 0 {
		return "{}"
	}
	var b bytes.Buffer
	if json.Compact(&b, c.Args) != nil {
		return string(c.Args)
	}
	return b.String()
}

// content is the reply's content, with the <think> text in front.
func (r Reply) content() string {
	if r.Think == "" {
		return r.Text
	}
	return "<think>" + r.Think + "</think>" + r.Text
}

func (r Reply) chunks() int {
	if r.Chunks > 0 {
		return r.Chunks
	}
	return defaultChunks
}

func (c ToolCall) fragments() int {
	if c.Fragments > 0 {
		return c.Fragments
	}
	return defaultFragments
}

func estimate(bodyLen int, r Reply) *Usage {
	out := len(r.content()) + len(r.Reasoning)
	for _, c := range r.ToolCalls {
		out += len(c.Name) + len(c.argsText())
	}
	return &Usage{Input: max(1, bodyLen/charsPerToken), Output: max(1, out/charsPerToken)}
}

// parseChat fills in the request's model, stream flag, system prompt and last user text.
func parseChat(rec *Request) {
	j := rec.JSON
	rec.Model, _ = j["model"].(string)
	rec.Stream, _ = j["stream"].(bool)
	rec.CacheKey, _ = j["prompt_cache_key"].(string)
	var system []string
	if rec.Protocol == "anthropic" {
		system = append(system, textOf(j["system"]))
	}
	msgs, _ := j["messages"].([]any)
	for _, m := range msgs {
		msg, _ := m.(map[string]any)
		role, _ := msg["role"].(string)
		text := textOf(msg["content"])
		switch {
		case role == "system" || role == "developer":
			system = append(system, text)
		case role == "user" && strings.HasPrefix(text, llm.ContextHeader):
			rec.Context = strings.TrimPrefix(text, llm.ContextHeader+"\n")
		case role == "user" && text != "":
			rec.LastUser, rec.Context = text, ""
		}
	}
	rec.System = strings.Join(system, "\n")
}

// textOf joins the text of a content value: a string, or a list of {type: text} parts.
func textOf(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, p := range c {
			if m, ok := p.(map[string]any); ok && m["type"] == "text" {
				if t, ok := m["text"].(string); ok {
					parts = append(parts, t)
				}
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// AssistantTurns counts the model's own turns in the request's messages (OpenAI or Anthropic):
// 0 on a conversation's first request, so a scripted reply can tell which turn it answers.
func (r Request) AssistantTurns() int {
	n := 0
	msgs, _ := r.JSON["messages"].([]any)
	for _, x := range msgs {
		if m, _ := x.(map[string]any); m["role"] == "assistant" {
			n++
		}
	}
	return n
}

// LastToolResult is the text of the newest tool result the request carries ("" if none), on
// either protocol: what a model would read before its next call.
func (r Request) LastToolResult() string {
	if out, ok := lastFunctionOutput(r.JSON); ok { // Responses
		return out
	}
	msgs, _ := r.JSON["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		m, _ := msgs[i].(map[string]any)
		if m["role"] == "tool" { // OpenAI
			return textOf(m["content"])
		}
		if blocks, ok := m["content"].([]any); ok { // Anthropic: a user turn of tool_result blocks
			for j := len(blocks) - 1; j >= 0; j-- {
				if b, _ := blocks[j].(map[string]any); b["type"] == "tool_result" {
					return textOf(b["content"])
				}
			}
		}
	}
	return ""
}
