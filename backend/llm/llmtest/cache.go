package llmtest

import (
	"fmt"
	"hash/fnv"
	"net/http"
)

// The prompt cache is simulated the way each API documents it, so tests and benchmarks see
// the usage a real service would report:
//   - OpenAI caches automatically: the longest prefix a recent request with the same
//     prompt_cache_key (or, without one, the same model) already sent is read from the cache,
//     counted in 128-token steps from 1,024 tokens up, and reported as
//     prompt_tokens_details.cached_tokens (prompt_tokens still counts every input token).
//   - Anthropic caches only at cache_control breakpoints: a request writes the cache at each
//     of its breakpoints and reads the longest prefix an earlier request wrote; input_tokens
//     then counts only what follows, cache_read_input_tokens and cache_creation_input_tokens
//     the rest. A prefix under 1,024 tokens is not cached.
//
// Sizes are in tokens of ~4 bytes of the request's JSON, as the usage estimate is.
const (
	minCachedTokens = 1024
	openaiCacheStep = 128
	// openaiRecent is how many earlier requests per key the OpenAI cache compares against.
	openaiRecent = 4
)

// segment hashes: the request cut into the pieces a cache prefix is made of (each tool, the
// system prompt's blocks, each message, or for Anthropic each content block), with
// cache_control markers left out, so moving a breakpoint does not change the prefix.
type prefix struct {
	Hashes []uint64 `json:"hashes"` // cumulative: Hashes[i] covers segments 0..i
	Bytes  []int    `json:"bytes"`  // cumulative bytes of the same
	Marks  []int    `json:"marks"`  // segment indexes that carried cache_control
}

// segments cuts a parsed request into its prefix.
func segments(rec Request) prefix {
	var p prefix
	h := fnv.New64a()
	total := 0
	// add hashes v (its cache_control left out) and counts size bytes for it, so that the
	// segments add up to about the request's JSON.
	add := func(v any, size int, marked bool) {
		h.Write(marshal(v))
		total += size
		p.Hashes = append(p.Hashes, h.Sum64())
		p.Bytes = append(p.Bytes, total)
		if marked {
			p.Marks = append(p.Marks, len(p.Hashes)-1)
		}
	}
	plain := func(v any) {
		b := withoutCacheControl(v)
		add(b, len(marshal(b)), hasCacheControl(v))
	}
	j := rec.JSON
	tools, _ := j["tools"].([]any)
	for _, t := range tools {
		plain(t)
	}
	msgs, _ := j["messages"].([]any)
	if rec.Protocol != "anthropic" {
		for _, m := range msgs {
			plain(m)
		}
		return p
	}
	switch sys := j["system"].(type) {
	case string:
		plain(sys)
	case []any:
		for _, b := range sys {
			plain(b)
		}
	}
	for _, m := range msgs {
		msg, _ := m.(map[string]any)
		role, _ := msg["role"].(string)
		// The message's own framing counts with its first block.
		frame := len(`{"content":[],"role":""}`) + len(role)
		switch c := msg["content"].(type) {
		case string:
			add([]any{role, c}, frame+len(marshal(c)), false)
		case []any:
			for _, b := range c {
				block := withoutCacheControl(b)
				add([]any{role, block}, frame+len(marshal(block)), hasCacheControl(b))
				frame = 1 // the comma between blocks
			}
		}
	}
	return p
}

func hasCacheControl(v any) bool {
	m, ok := v.(map[string]any)
	return ok && m["cache_control"] != nil
}

func withoutCacheControl(v any) any {
	m, ok := v.(map[string]any)
	if !ok || m["cache_control"] == nil {
		return v
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		if k != "cache_control" {
			out[k] = x
		}
	}
	return out
}

// CommonPrefix is how many segments and bytes request b repeats of request a's prefix.
func CommonPrefix(a, b Request) (segs, bytes int) {
	n := min(len(a.Prefix.Hashes), len(b.Prefix.Hashes))
	for segs < n && a.Prefix.Hashes[segs] == b.Prefix.Hashes[segs] {
		segs++
	}
	if segs > 0 {
		bytes = a.Prefix.Bytes[segs-1]
	}
	return segs, bytes
}

// Segments is how many prefix segments the request has; PrefixBytes their size.
func (r Request) Segments() int { return len(r.Prefix.Hashes) }

// PrefixBytes is the size of the request's prefix segments.
func (r Request) PrefixBytes() int {
	if n := len(r.Prefix.Hashes); n > 0 {
		return r.Prefix.Bytes[n-1]
	}
	return 0
}

// Breakpoints is how many cache_control markers the request carried.
func (r Request) Breakpoints() int { return len(r.Prefix.Marks) }

// cache is the simulated prompt cache of one server.
type cache struct {
	recent  map[string][]prefix       // OpenAI: the last requests per key
	written map[string]map[uint64]int // Anthropic: prefixes written, per model, with their size
}

// account fills in the cached and cache-write tokens of an estimated usage, and records the
// request in the cache.
func (c *cache) account(rec Request, u *Usage) {
	p := rec.Prefix
	tokens := func(bytes int) int { return bytes / charsPerToken }
	if rec.Protocol != "anthropic" {
		if c.recent == nil {
			c.recent = map[string][]prefix{}
		}
		key := rec.CacheKey
		if key == "" {
			key = "model:" + rec.Model
		}
		best := 0
		for _, old := range c.recent[key] {
			_, b := CommonPrefix(Request{Prefix: old}, rec)
			best = max(best, b)
		}
		if t := tokens(best); t >= minCachedTokens {
			u.Cached = min(u.Input, t-t%openaiCacheStep)
		}
		list := append(c.recent[key], p)
		if len(list) > openaiRecent {
			list = list[len(list)-openaiRecent:]
		}
		c.recent[key] = list
		return
	}
	if c.written == nil {
		c.written = map[string]map[uint64]int{}
	}
	w := c.written[rec.Model]
	if w == nil {
		w = map[uint64]int{}
		c.written[rec.Model] = w
	}
	read := 0
	for i := len(p.Hashes) - 1; i >= 0; i-- {
		if b, ok := w[p.Hashes[i]]; ok {
			read = b
			break
		}
	}
	last := 0
	for _, m := range p.Marks {
		if b := p.Bytes[m]; tokens(b) >= minCachedTokens {
			w[p.Hashes[m]] = b
			last = max(last, b)
		}
	}
	u.Cached = min(u.Input, tokens(read))
	if last > read {
		u.CacheWrite = min(u.Input-u.Cached, tokens(last)-tokens(read))
	}
}

// tooLong answers a request past the script's context limit as each API does: HTTP 400,
// OpenAI's code context_length_exceeded, Anthropic's "prompt is too long".
func tooLong(w http.ResponseWriter, p protocol, rec Request, tokens, limit int) {
	f := Fault{Status: http.StatusBadRequest}
	if rec.Protocol == "anthropic" {
		f.Message = fmt.Sprintf("prompt is too long: %d tokens > %d maximum", tokens, limit)
	} else {
		f.Code = "context_length_exceeded"
		f.Message = fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", limit, tokens)
	}
	p.fail(w, rec, f)
}
