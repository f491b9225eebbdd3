package workspace

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Launch is what a terminal pane runs instead of the person's shell: a command with its
// arguments, working directory and environment. It is stored with the pane and used whenever
// the pane's terminal starts (opening the workspace, a restart, reconnect_pane).
type Launch struct {
	// Template is the template the settings came from ("shell", "claude", "codex", "aider",
	// "python", "custom", or one of the config dir's templates/); informational once the
	// fields are set.
	Template string   `json:"template,omitempty"`
	Command  string   `json:"command,omitempty"` // "" runs the person's shell
	Args     []string `json:"args,omitempty"`
	Dir      string   `json:"dir,omitempty"` // absolute; "" is the home directory
	Env      []string `json:"env,omitempty"` // NAME=value, added to the inherited environment
}

// Template is a ready-made launch: what people commonly run in a pane.
type Template struct {
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	Command string   `json:"command"` // "" for the shell; the program's name otherwise
	Args    []string `json:"args,omitempty"`
	// Install says how to get the command when it is missing, shown in the pane.
	Install string `json:"install,omitempty"`
	// An agent template's needs (see backend/agentpane): ConfigEnv names the variable that
	// points the tool at its config dir, which each pane gets privately and writable
	// (CLAUDE_CONFIG_DIR); Wire is the provider protocol a key assigned to it in Settings must
	// speak ("anthropic", "openai"); Hosts are its provider's API hosts (host:port) that a
	// confined goal's network proxy lets this pane reach.
	ConfigEnv string   `json:"configEnv,omitempty"`
	Wire      string   `json:"wire,omitempty"`
	Hosts     []string `json:"hosts,omitempty"`
}

// Templates are the built-in launch templates, in menu order. "custom" has no command of its
// own: the person (or the agent) gives one.
var Templates = []Template{
	{ID: "shell", Name: "Shell"},
	{ID: "claude", Name: "Claude Code", Command: "claude", Install: "npm install -g @anthropic-ai/claude-code",
		ConfigEnv: "CLAUDE_CONFIG_DIR", Wire: "anthropic", Hosts: []string{"api.anthropic.com:443"}},
	// --no-daemon: Codex otherwise starts a shared background server that outlives the pane
	// and would serve panes of other goals from inside (or outside) one goal's boundary.
	{ID: "codex", Name: "Codex CLI", Command: "codex", Args: []string{"--no-daemon"}, Install: "npm install -g @openai/codex",
		ConfigEnv: "CODEX_HOME", Wire: "openai", Hosts: []string{"api.openai.com:443"}},
	{ID: "aider", Name: "Aider", Command: "aider", Install: "python3 -m pip install aider-chat (or: pipx install aider-chat)"},
	{ID: "python", Name: "Python", Command: "python3", Install: "sudo apt install python3"},
	{ID: "custom", Name: "Custom command"},
}

// TemplateByID returns the built-in template with that id.
func TemplateByID(id string) (Template, bool) { return TemplateIn(Templates, id) }

// TemplateIn returns the template with that id from ts.
func TemplateIn(ts []Template, id string) (Template, bool) {
	i := slices.IndexFunc(ts, func(t Template) bool { return t.ID == id })
	if i < 0 {
		return Template{}, false
	}
	return ts[i], true
}

// TemplateIDs lists the built-in template ids, for messages naming the choices.
func TemplateIDs() string { return templateIDs(Templates) }

func templateIDs(ts []Template) string {
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = t.ID
	}
	return strings.Join(ids, ", ")
}

// LaunchFor fills a launch from a built-in template (see LaunchFrom).
func LaunchFor(l Launch) (Launch, error) { return LaunchFrom(Templates, l) }

// LaunchFrom fills a launch from one of the templates ts: its command and arguments unless l
// names its own. An unknown template is an error naming the choices.
func LaunchFrom(ts []Template, l Launch) (Launch, error) {
	if l.Template == "" {
		if l.Command == "" {
			l.Template = "shell"
		} else {
			l.Template = "custom"
		}
	}
	t, ok := TemplateIn(ts, l.Template)
	if !ok {
		return l, fieldErr("template", "%q is not a launch template; use one of %s", l.Template, templateIDs(ts))
	}
	if l.Command == "" && t.Command != "" {
		l.Command = t.Command
		if l.Args == nil {
			l.Args = slices.Clone(t.Args)
		}
	}
	if l.Template == "custom" && l.Command == "" {
		return l, fieldErr("command", "the custom template needs a command to run")
	}
	return l, ValidateLaunch(l)
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ValidateLaunch checks a launch's fields, naming the first bad one.
func ValidateLaunch(l Launch) error {
	if strings.ContainsAny(l.Command, "\x00\n") {
		return fieldErr("command", "must be one line")
	}
	for i, a := range l.Args {
		if strings.ContainsRune(a, 0) {
			return fieldErr(fmt.Sprintf("args[%d]", i), "must not contain NUL")
		}
	}
	if l.Dir != "" && !filepath.IsAbs(l.Dir) {
		return fieldErr("dir", "%q is not an absolute path; give the full path of the directory", l.Dir)
	}
	for i, kv := range l.Env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || !envName.MatchString(name) {
			return fieldErr(fmt.Sprintf("env[%d]", i), "%q is not NAME=value", kv)
		}
	}
	return nil
}
