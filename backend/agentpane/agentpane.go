// Package agentpane gives a terminal pane started from an agent template (Claude Code, Codex
// CLI) what the agent needs to start at its prompt inside a goal's boundary: a private,
// writable config dir (the template's ConfigEnv, e.g. CLAUDE_CONFIG_DIR) seeded so the tool
// skips its onboarding and trusts the working dir, its credentials, and the provider hosts a
// confined goal's proxy lets it reach.
//
// Credentials come from one of two places, never from the app's environment:
//   - a provider the person assigned to the template in Settings (its base URL, and its key
//     from the app's secret vault): the key is written to a 0600 file in the private dir,
//     which the tool reads through its own mechanism (Claude Code's apiKeyHelper, Codex's
//     auth.json); no variable of any process holds it;
//   - else the person's own login of that tool: its credential file in the person's home
//     (~/.claude/.credentials.json, ~/.codex/auth.json) is copied, 0600, into the private
//     dir. A copy, not a link: a confined goal may not write the person's home, and a token
//     the tool refreshes inside the pane must not change the person's file under them.
package agentpane

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/clusterspace/clusterspace/backend/workspace"
)

// keyFile is the name, inside the private dir, of the file holding an assigned key.
const keyFile = "clusterspace-api-key"

// Credentials are what the pane's agent authenticates with.
type Credentials struct {
	// BaseURL and Key are a provider the person assigned to the template ("" Key: use the
	// person's own login of the tool).
	BaseURL string
	Key     string
	// Model is the assigned provider's model ("" leaves the tool's default).
	Model string
	// Provider names the assigned provider in notices.
	Provider string
}

// Options say where and how the pane runs.
type Options struct {
	// Dir is the private config dir to make (inside the boundary's writable area).
	Dir string
	// WorkDir is where the agent works; it is marked trusted.
	WorkDir string
	// Home is the person's home dir, where their own logins are ("": os.UserHomeDir).
	Home string
	// Confined: the pane runs inside a goal's sandbox, whose boundary is the safety, so the
	// agent is allowed to run commands and write files there without asking each time.
	Confined bool
	Creds    Credentials
	// MCP is ClusterSpace's own MCP server for the agent (nil: none), see MCPServer.
	MCP *MCPServer
}

// Setup is what Prepare made.
type Setup struct {
	Env []string // the template's ConfigEnv=Dir, and what the tool needs besides
	// Hosts are host:port pairs the pane's agent must reach: the template's, or the assigned
	// provider's when one is.
	Hosts []string
	// Notice says, for the goal's story, where the credentials came from.
	Notice string
}

// IsAgent reports whether a template is an agent template that gets a private config dir.
func IsAgent(t workspace.Template) bool { return t.ConfigEnv != "" }

// Prepare makes the private config dir of a pane started from t and seeds it.
func Prepare(t workspace.Template, o Options) (Setup, error) {
	if !IsAgent(t) {
		return Setup{}, fmt.Errorf("template %q declares no config_env: it is not an agent template", t.ID)
	}
	if o.Dir == "" || !filepath.IsAbs(o.Dir) {
		return Setup{}, fmt.Errorf("the private config dir of a %s pane must be an absolute path, not %q", t.Name, o.Dir)
	}
	if o.Home == "" {
		o.Home, _ = os.UserHomeDir() // Best effort: without a home there is no own login to copy.
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return Setup{}, fmt.Errorf("making the %s pane's private config dir: %w", t.Name, err)
	}
	s := Setup{Env: []string{t.ConfigEnv + "=" + o.Dir}, Hosts: slices.Clone(t.Hosts)}
	if o.Creds.Key != "" {
		if err := writePrivate(filepath.Join(o.Dir, keyFile), []byte(o.Creds.Key)); err != nil {
			return Setup{}, err
		}
		if hp := HostPort(o.Creds.BaseURL); hp != "" {
			s.Hosts = []string{hp}
		}
		s.Notice = fmt.Sprintf("its %s authenticates with the key of provider %q, assigned to the %s template in Settings", t.Name, o.Creds.Provider, t.ID)
	} else {
		s.Notice = fmt.Sprintf("its %s uses the person's own login of the tool (copied into its private config dir); no key is assigned to the %s template in Settings", t.Name, t.ID)
	}
	var err error
	switch t.ConfigEnv {
	case "CLAUDE_CONFIG_DIR":
		err = seedClaude(o)
	case "CODEX_HOME":
		err = seedCodex(o)
	}
	if err != nil {
		return Setup{}, fmt.Errorf("seeding the %s pane's config dir %s: %w", t.Name, o.Dir, err)
	}
	return s, nil
}

// copyLogin copies the person's credential file rel (under home) to dst, 0600; a missing one
// is not an error (the tool then asks the person to log in, in the pane).
func copyLogin(home, rel, dst string) error {
	if home == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(home, rel))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading your own login of the tool (~/%s): %w", rel, err)
	}
	return writePrivate(dst, b)
}

// writePrivate writes b to path readable by this user only.
func writePrivate(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if err := f.Chmod(0o600); err != nil { // an older file may have had wider bits
		f.Close()
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// mergeJSON reads path's JSON object (none: empty), lets edit change it and writes it back:
// what the tool itself stored there on an earlier run (a resumed goal) is kept.
func mergeJSON(path string, edit func(m map[string]any)) error {
	m := map[string]any{}
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &m) // Best effort: a damaged file is replaced.
		if m == nil {
			m = map[string]any{}
		}
	}
	edit(m)
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writePrivate(path, b)
}

// HostPort is a URL's host:port, the scheme's port when it names none ("" for no http(s) URL).
func HostPort(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return ""
	}
	port := u.Port()
	switch {
	case port != "":
	case u.Scheme == "http":
		port = "80"
	case u.Scheme == "https":
		port = "443"
	default:
		return ""
	}
	if _, err := strconv.Atoi(port); err != nil {
		return ""
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}
