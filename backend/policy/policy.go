// Package policy decides, before every tool call, whether it runs, asks the user, or is
// refused: the goal's risk ceiling, its allow and deny lists, and its sandbox directory.
package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/clusterspace/clusterspace/backend/tools"
)

// Decision is what happens to a call.
type Decision int

const (
	Allow Decision = iota // run it
	Ask                   // ask the user first
	Deny                  // refuse without asking
)

func (d Decision) String() string {
	return [...]string{"allow", "ask", "deny"}[d]
}

// Verdict is a decision and the reason a person (and the model) is shown.
type Verdict struct {
	Decision Decision
	Reason   string
}

// Policy is one goal's rules. The zero value allows read_only tools only.
type Policy struct {
	Ceiling    tools.Risk `json:"risk"`
	SandboxDir string     `json:"sandboxDir,omitempty"`
	Allowed    []string   `json:"allowedTools,omitempty"`
	Denied     []string   `json:"deniedTools,omitempty"`
	// RequireStepProtocol refuses mutating tools until a step is declared (enforced by the runner).
	RequireStepProtocol bool `json:"requireStepProtocol,omitempty"`
}

// FieldError names the policy field that is wrong.
type FieldError struct{ Field, Msg string }

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Validate checks a policy against the registry before a goal starts, so a mistake shows at
// start and not at the first tool call. It returns the policy with the sandbox made absolute
// and symlink-free.
func (p Policy) Validate(reg *tools.Registry) (Policy, error) {
	if p.Ceiling < tools.ReadOnly || p.Ceiling > tools.SpendsMoney {
		return p, &FieldError{"risk", fmt.Sprintf("%v is not on the risk ladder", p.Ceiling)}
	}
	for field, list := range map[string][]string{"allowedTools": p.Allowed, "deniedTools": p.Denied} {
		for _, name := range list {
			if _, ok := reg.Get(name); !ok {
				return p, &FieldError{field, fmt.Sprintf("unknown tool %q; known tools: %s", name, strings.Join(reg.Names(), ", "))}
			}
		}
	}
	for _, name := range p.Allowed {
		if slices.Contains(p.Denied, name) {
			return p, &FieldError{"deniedTools", fmt.Sprintf("%q is on both the allow and the deny list; pick one", name)}
		}
	}
	if p.SandboxDir != "" {
		dir, err := filepath.Abs(p.SandboxDir)
		if err == nil {
			dir, err = filepath.EvalSymlinks(dir)
		}
		if err != nil {
			return p, &FieldError{"sandboxDir", fmt.Sprintf("%q does not exist: create it or pick another", p.SandboxDir)}
		}
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			return p, &FieldError{"sandboxDir", fmt.Sprintf("%q is not a directory: pick a directory", p.SandboxDir)}
		}
		p.SandboxDir = dir
	}
	return p, nil
}

// Check decides one call. Order: the deny list refuses outright; then anything outside the
// allow list, above the ceiling, or touching a path outside the sandbox asks the user.
// granted lists tools the user allowed for the rest of this goal.
func (p Policy) Check(t tools.Tool, call tools.Call, granted []string) Verdict {
	name := t.Name()
	if slices.Contains(p.Denied, name) {
		return Verdict{Deny, fmt.Sprintf("%s is on this goal's deny list", name)}
	}
	var reasons []string
	if len(p.Allowed) > 0 && !slices.Contains(p.Allowed, name) {
		reasons = append(reasons, fmt.Sprintf("%s is not on this goal's allow list", name))
	}
	// A call may be riskier than its tool's declared level (a browser action on a payment page).
	raised := false
	if risk, why := tools.RiskOf(t, call.Args); risk > p.Ceiling {
		reason := fmt.Sprintf("%s is %s, above this goal's ceiling %s", name, risk, p.Ceiling)
		if why != "" {
			reason += " (" + why + ")"
			raised = risk > t.Risk()
		}
		reasons = append(reasons, reason)
	}
	if pu, ok := t.(tools.PathUser); ok && p.SandboxDir != "" {
		paths, err := pu.Paths(call.Args)
		if err != nil {
			reasons = append(reasons, fmt.Sprintf("the paths of this %s call could not be read (%v)", name, err))
		}
		for _, path := range paths {
			inside, err := Contains(p.SandboxDir, path)
			if err != nil || !inside {
				reasons = append(reasons, fmt.Sprintf("%q is outside the sandbox %s", path, p.SandboxDir))
			}
		}
	}
	if len(reasons) == 0 {
		return Verdict{Allow, ""}
	}
	// "Allow for this goal" covers the tool's ceiling and list checks, never a sandbox escape
	// or a call raised above its tool's level (a payment): each of those is asked again.
	if slices.Contains(granted, name) && !raised && !slices.ContainsFunc(reasons, func(r string) bool { return strings.Contains(r, "outside the sandbox") }) {
		return Verdict{Allow, "allowed for this goal by the user"}
	}
	return Verdict{Ask, strings.Join(reasons, "; ")}
}

// Contains reports whether path lies inside dir, comparing cleaned, absolute, symlink-resolved
// paths, so "/sandbox-evil" is not inside "/sandbox" and neither ".." nor a symlink gets out.
// A path that does not exist yet is judged by its deepest existing ancestor (where it would
// be created). Relative paths are taken relative to dir.
func Contains(dir, path string) (bool, error) {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false, fmt.Errorf("sandbox %q: %w", dir, err)
	}
	root, err = filepath.Abs(root)
	if err != nil {
		return false, err
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	resolved, err := resolveExisting(filepath.Clean(path))
	if err != nil {
		return false, err
	}
	rel, err := filepath.Rel(root, resolved)
	if err != nil {
		return false, nil
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))), nil
}

// maxSymlinkHops bounds symlink resolution, as the kernel does (ELOOP after 40).
const maxSymlinkHops = 40

// resolveExisting resolves symlinks in the longest existing prefix of path and appends the
// rest. A dangling symlink is followed to where it points, since creating the file would
// write there.
func resolveExisting(path string) (string, error) {
	for hops := 0; hops < maxSymlinkHops; hops++ {
		resolved, err := filepath.EvalSymlinks(path)
		if err == nil {
			return resolved, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		// A dangling symlink at the end: follow its target by hand.
		if target, lerr := os.Readlink(path); lerr == nil {
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(path), target)
			}
			path = filepath.Clean(target)
			continue
		}
		parent := filepath.Dir(path)
		if parent == path {
			return path, nil
		}
		base, err := resolveExisting(parent)
		if err != nil {
			return "", err
		}
		return filepath.Join(base, filepath.Base(path)), nil
	}
	return "", fmt.Errorf("%q: too many levels of symbolic links", path)
}
