package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/clusterspace/clusterspace/backend/internal/fileloc"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// FileName is the MCP servers' file in the config dir, in the format the ecosystem shares.
const FileName = "mcp.json"

// serverName is what a server's key may be: it becomes part of its tools' names
// (mcp__NAME__TOOL), which the model APIs limit to letters, digits, _ and -.
var serverName = regexp.MustCompile(`^[a-zA-Z0-9](?:[a-zA-Z0-9-]|_[a-zA-Z0-9-]){0,31}$`)

// ServerConfig is one entry of mcpServers: a command (stdio) or a URL (streamable HTTP),
// the risk its tools are judged at, and per-tool overrides.
type ServerConfig struct {
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Dir     string            `json:"cwd,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Risk is the level every tool of the server counts as (missing: network_write).
	Risk  string                `json:"risk,omitempty"`
	Tools map[string]ToolConfig `json:"tools,omitempty"`
	// Disabled keeps the entry without starting it.
	Disabled bool `json:"disabled,omitempty"`
	// Type is accepted as other clients write it ("stdio", "http", "streamable-http").
	Type string `json:"type,omitempty"`
}

// ToolConfig overrides one tool's risk.
type ToolConfig struct {
	Risk string `json:"risk"`
}

// FieldError is a mistake in mcp.json: where (a line, a field path) and what to do.
type FieldError struct {
	File  string `json:"file"`
	Line  int    `json:"line,omitempty"`
	Field string `json:"field,omitempty"`
	Msg   string `json:"message"`
}

func (e *FieldError) Error() string {
	return fileloc.String(e.File, e.Line, e.Field) + ": " + e.Msg
}

// ParseFile reads mcp.json: a file that is not JSON is one error with its line; a server
// entry that is wrong (an unknown field, a bad risk) is an error of its own, keyed by server,
// and the other servers stand. Keys beside mcpServers, which other clients' files carry, are
// left alone.
func ParseFile(path string, data []byte) (map[string]ServerConfig, map[string]error, error) {
	var f struct {
		Servers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			return nil, nil, &FieldError{File: path, Line: lineAt(data, syn.Offset), Msg: "not valid JSON: " + syn.Error()}
		case errors.As(err, &typ):
			return nil, nil, &FieldError{File: path, Line: lineAt(data, typ.Offset), Field: typ.Field,
				Msg: fmt.Sprintf("should be %s, got %s", typ.Type, typ.Value)}
		default:
			return nil, nil, &FieldError{File: path, Msg: err.Error()}
		}
	}
	servers := map[string]ServerConfig{}
	problems := map[string]error{}
	for name, raw := range f.Servers {
		sc, ferr := parseServer(name, raw)
		if ferr == nil {
			ferr = sc.check(name)
		}
		if ferr != nil {
			ferr.File, ferr.Line = path, lineOf(data, name)
			problems[name] = ferr
			continue
		}
		servers[name] = sc
	}
	return servers, problems, nil
}

// parseServer decodes one entry strictly: a misspelt field is named, not ignored.
func parseServer(name string, raw json.RawMessage) (ServerConfig, *FieldError) {
	var sc ServerConfig
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(&sc)
	if err == nil {
		return sc, nil
	}
	field := "mcpServers." + name
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return sc, &FieldError{Field: field + "." + typ.Field, Msg: fmt.Sprintf("should be %s, got %s", typ.Type, typ.Value)}
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return sc, &FieldError{Field: field + "." + strings.Trim(f, `"`),
			Msg: "unknown field: a server has command, args, env, cwd (stdio) or url, headers (HTTP), and risk, tools, disabled"}
	}
	return sc, &FieldError{Field: field, Msg: err.Error()}
}

func (sc ServerConfig) check(name string) *FieldError {
	field := func(f string) string { return "mcpServers." + name + f }
	if !serverName.MatchString(name) {
		return &FieldError{Field: field(""), Msg: "a server name is letters, digits and - (up to 32, single _ allowed): it becomes part of its tools' names mcp__NAME__TOOL"}
	}
	switch {
	case sc.Command == "" && sc.URL == "":
		return &FieldError{Field: field(""), Msg: `give "command" (a program that speaks MCP on stdio) or "url" (a streamable-HTTP endpoint)`}
	case sc.Command != "" && sc.URL != "":
		return &FieldError{Field: field(""), Msg: `give "command" or "url", not both`}
	case sc.URL != "":
		u, err := url.Parse(sc.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return &FieldError{Field: field(".url"), Msg: "not an http(s) URL"}
		}
		if len(sc.Env) > 0 || len(sc.Args) > 0 {
			return &FieldError{Field: field(".env"), Msg: `"args" and "env" are for a command; an HTTP server takes "headers"`}
		}
	case len(sc.Headers) > 0:
		return &FieldError{Field: field(".headers"), Msg: `"headers" are for a url; a command takes "env"`}
	}
	if sc.Risk != "" {
		if _, err := tools.ParseRisk(sc.Risk); err != nil {
			return &FieldError{Field: field(".risk"), Msg: err.Error()}
		}
	}
	for _, tool := range slices.Sorted(maps.Keys(sc.Tools)) {
		if _, err := tools.ParseRisk(sc.Tools[tool].Risk); err != nil {
			return &FieldError{Field: field(".tools." + tool + ".risk"), Msg: err.Error()}
		}
	}
	return nil
}

// riskOf is the level a tool of the server counts as: its override, the server's, else
// network_write (what an unknown tool counts as anywhere).
func (sc ServerConfig) riskOf(tool string) tools.Risk {
	if tc, ok := sc.Tools[tool]; ok {
		if r, err := tools.ParseRisk(tc.Risk); err == nil {
			return r
		}
	}
	if r, err := tools.ParseRisk(sc.Risk); err == nil && sc.Risk != "" {
		return r
	}
	return tools.UndeclaredRisk
}

func (sc ServerConfig) transport() string {
	if sc.URL != "" {
		return "http"
	}
	return "stdio"
}

// minSecret is the shortest env or header value treated as a secret. Every value of env and
// headers counts as one, but many are flags, ports or modes ("1", "true", "8080"): masking
// those would mangle every output that holds the same text, and protect nothing.
const minSecret = 6

// secrets are the values of env and headers, each with the kind a mask names ("MCP server
// github env GITHUB_TOKEN"): never shown, logged or sent anywhere else.
func (sc ServerConfig) secrets(server string) map[string]string {
	out := map[string]string{}
	add := func(v, kind string) {
		if _, ok := out[v]; !ok && len(v) >= minSecret {
			out[v] = kind
		}
	}
	for _, k := range slices.Sorted(maps.Keys(sc.Env)) {
		add(sc.Env[k], fmt.Sprintf("MCP server %s env %s", server, k))
	}
	for _, k := range slices.Sorted(maps.Keys(sc.Headers)) {
		v, kind := sc.Headers[k], fmt.Sprintf("MCP server %s header %s", server, k)
		add(v, kind)
		// "Bearer TOKEN": the token alone may show up too.
		if _, tok, ok := strings.Cut(v, " "); ok {
			add(tok, kind)
		}
	}
	return out
}

// masked replaces the values of a map with a mask, keeping the keys.
func masked(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k := range m {
		out[k] = "••••••"
	}
	return out
}

func lineAt(data []byte, offset int64) int {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	return bytes.Count(data[:offset], []byte("\n")) + 1
}

// lineOf is the line where key first appears as a JSON key (0 if nowhere).
func lineOf(data []byte, key string) int {
	i := bytes.Index(data, []byte(`"`+key+`"`))
	if i < 0 {
		return 0
	}
	return lineAt(data, int64(i))
}
