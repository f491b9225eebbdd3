package secrets

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"
)

// minMasked is the shortest value masked at all: a shorter one (a PIN-like "abc") would
// turn every occurrence of a common fragment in every output into a marker and hide little.
// Sources with values that are often no secret at all ("1", "true", a port) use a higher
// floor of their own (mcp.json's env and headers).
const minMasked = 4

// Masker replaces every secret the app holds with a marker naming its kind, never its value:
// "[secret: login password]". It is the one place that knows the values; the agent runs every
// tool result, the arguments it records and publishes, and the approval requests through it,
// the engine its log records and pane summaries.
//
// Values come two ways. The vault holds (Hold) each secret it stores or reads, so saved login
// passwords, provider API keys and SSH passwords are known from the moment they exist,
// without reading the keyring again per call. Sources (Watch) are asked at every Mask: they
// answer from memory (mcp.json as last loaded), so a value added there counts from the next
// Mask. A value once known stays masked for the life of the process, whatever the vault or a
// source says later: a password changed or deleted in Settings, a token taken out of mcp.json,
// may still sit in a page's field or a terminal's scrollback.
//
// A Masker is safe for concurrent use; a nil *Masker masks nothing.
type Masker struct {
	mu      sync.Mutex
	held    map[string]string // value → kind
	sources []Source
	said    []map[string]string // what each source said last, so an unchanged answer costs no work
	// r does the masking; nil after a change, rebuilt by the next Mask.
	r *strings.Replacer
}

// Source lists values to mask, each with the kind its marker names. It is called at every
// Mask, so it answers from memory and never calls the Masker.
type Source func() map[string]string

// NewMasker returns a masker that knows no secret yet.
func NewMasker() *Masker { return &Masker{held: map[string]string{}} }

// Marker is what a secret of kind is replaced with.
func Marker(kind string) string { return "[secret: " + kind + "]" }

// Hold makes the masker hide value, as a secret of kind, from now on. The kind a value was
// first known as stays.
func (m *Masker) Hold(value, kind string) {
	if m == nil || len(value) < minMasked {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.held[value]; ok {
		return // the vault reads its secrets often: most Holds change nothing
	}
	m.held[value] = kind
	m.r = nil
}

// Watch adds a source of values asked at every Mask.
func (m *Masker) Watch(src Source) {
	if m == nil || src == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sources = append(m.sources, src)
	m.said = append(m.said, nil)
	m.r = nil
}

// Mask returns text with every secret replaced by its marker. Each value is also found in
// the form a JSON string holds it (quotes, backslashes and, as Go writes them, <>& escaped),
// since tool results are often JSON. Masking masked text changes nothing: a marker already
// there is kept as it is, even where a secret's value happens to appear inside it.
func (m *Masker) Mask(text string) string {
	if m == nil || text == "" {
		return text
	}
	r := m.replacer()
	if r == nil {
		return text
	}
	return r.Replace(text)
}

// replacer polls the sources and returns the replacer for what is known now (nil: nothing).
func (m *Masker) replacer() *strings.Replacer {
	m.mu.Lock()
	sources := slices.Clone(m.sources)
	m.mu.Unlock()
	// Asked without the lock: a source may take its own locks.
	now := make([]map[string]string, len(sources))
	for i, src := range sources {
		now[i] = src()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range now {
		if i >= len(m.said) || maps.Equal(now[i], m.said[i]) {
			continue
		}
		m.said[i] = now[i]
		for v, kind := range now[i] {
			if _, ok := m.held[v]; !ok && len(v) >= minMasked {
				m.held[v] = kind
				m.r = nil
			}
		}
	}
	if m.r == nil {
		m.r = m.build()
	}
	if m.r == empty {
		return nil
	}
	return m.r
}

// empty stands for "nothing to mask", so that an idle masker is not rebuilt at every Mask.
var empty = strings.NewReplacer()

// build makes the replacer for the values known now. m.mu held.
func (m *Masker) build() *strings.Replacer {
	kinds := m.held
	if len(kinds) == 0 {
		return empty
	}
	// Every form of every value, each replaced by its value's marker.
	repl := map[string]string{}
	markers := map[string]bool{}
	for _, v := range slices.Sorted(maps.Keys(kinds)) {
		mk := Marker(cleanKind(kinds[v]))
		markers[mk] = true
		for _, form := range forms(v) {
			if _, ok := repl[form]; !ok {
				repl[form] = mk
			}
		}
	}
	// The replacer tries its patterns in the order given. Markers first, each replaced by
	// itself: masked text passes through unchanged (a value that is part of a marker, such as
	// "login password", leaves the marker whole). Then the longest forms: a secret that
	// contains another is masked whole, not around the shorter one.
	var args []string
	for _, mk := range slices.Sorted(maps.Keys(markers)) {
		args = append(args, mk, mk)
	}
	olds := slices.Collect(maps.Keys(repl))
	slices.SortFunc(olds, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	for _, old := range olds {
		args = append(args, old, repl[old])
	}
	return strings.NewReplacer(args...)
}

// forms are the ways a value appears in text: as it is, and inside a JSON string as Go and
// JavaScript's JSON.stringify write it (the first escapes <, > and &, the second does not).
func forms(v string) []string {
	out := []string{v}
	for _, html := range []bool{false, true} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if enc.Encode(v) != nil {
			continue
		}
		esc := strings.TrimSuffix(b.String(), "\n")
		esc = esc[1 : len(esc)-1] // without the quotes
		if !slices.Contains(out, esc) {
			out = append(out, esc)
		}
	}
	return out
}

// cleanKind keeps a marker valid inside a JSON string and unmistakable as one: no quotes,
// backslashes, brackets or control characters from a name someone typed.
func cleanKind(kind string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == '"' || r == '\\' || r == '[' || r == ']' || r == 0x7f {
			return '_'
		}
		return r
	}, kind)
}

// kindOf is the kind of a vault entry, from its name: the first and last parts of
// "login/<id>/password" ("login password"), "provider/<id>/api_key" ("provider api key").
// The id is left out: it means nothing to whoever reads the marker.
func kindOf(name string) string {
	parts := strings.Split(name, "/")
	kind := parts[0]
	if len(parts) > 1 {
		kind += " " + parts[len(parts)-1]
	}
	return strings.ReplaceAll(kind, "_", " ")
}
