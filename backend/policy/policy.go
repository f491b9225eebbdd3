// Package policy decides, before every tool call, whether it runs, asks the user, or is
// refused: the goal's risk ceiling, its allow and deny lists, and its sandbox directory.
package policy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/clusterspace/clusterspace/backend/egress"
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
	// LocalPorts are ports on this machine the person opens to a confined goal with network
	// (a dev server of theirs); every other local service stays out of its reach. The app's
	// own ports are refused even if listed.
	LocalPorts []int `json:"localPorts,omitempty"`
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
	for _, port := range p.LocalPorts {
		if port < 1 || port > 65535 {
			return p, &FieldError{"localPorts", fmt.Sprintf("%d is not a TCP port: use 1-65535", port)}
		}
	}
	if len(p.LocalPorts) > 0 && p.SandboxDir == "" {
		return p, &FieldError{"localPorts", "opening local ports means something only to a goal with a sandbox: add a sandbox dir or remove them"}
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
	// A confined goal reaching a terminal outside its boundary (a person's pane, a tab its
	// sandbox does not hold) is the person's to allow each time, like filling a password.
	if bu, ok := t.(tools.BoundaryUser); ok && call.Sandbox != "" {
		if why := bu.Outside(call); why != "" {
			return Verdict{Ask, why}
		}
	}
	if or, ok := t.(tools.OutsideRunner); ok && call.Sandbox != "" {
		return Verdict{Ask, fmt.Sprintf("%s runs in %s, outside this goal's sandbox %s: the person allows it, every time", name, or.RunsOutside(), call.Sandbox)}
	}
	// Some calls are the person's to allow each time (filling a saved password): no ceiling,
	// allow list or earlier grant covers them.
	if aa, ok := t.(tools.AlwaysAsks); ok {
		if why := aa.AlwaysAsk(context.Background(), call.Args); why != "" {
			return Verdict{Ask, why}
		}
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
	if uu, ok := t.(tools.URLUser); ok && call.Sandbox != "" {
		urls, err := uu.URLs(call.Args)
		if err != nil {
			reasons = append(reasons, fmt.Sprintf("the addresses of this %s call could not be read (%v)", name, err))
		}
		rules := egress.Rules{}
		for _, port := range p.LocalPorts {
			rules.AllowLocal = append(rules.AllowLocal, "localhost:"+strconv.Itoa(port))
		}
		for _, u := range urls {
			if err := rules.CheckURL(context.Background(), u); err != nil {
				// Nobody can allow it: the app's services are out of a confined goal's reach.
				return Verdict{Deny, fmt.Sprintf("%s: %v", name, err)}
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

// Contains reports whether path lies inside dir, judging both the way the kernel resolves
// them: component by component, each symlink followed before a ".." after it is applied (so
// "sandbox/link/../x" with link pointing out lands out of the sandbox, where a lexical clean
// would have put it inside). A path that does not exist yet is judged by where it would be
// created; a dangling symlink by where it points. Relative paths are taken relative to dir.
func Contains(dir, path string) (bool, error) {
	root, err := Resolve("/", dir)
	if err != nil {
		return false, fmt.Errorf("sandbox %q: %w", dir, err)
	}
	target, err := Resolve(root, path)
	if err != nil {
		return false, err
	}
	rel, err := filepath.Rel(root, target)
	if err != nil {
		return false, nil
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))), nil
}

// maxSymlinkHops bounds symlink resolution, as the kernel does (ELOOP after 40).
const maxSymlinkHops = 40

// Resolve returns the absolute path the kernel would reach for path, taken relative to the
// absolute directory base when it is relative. Components that do not exist are appended as
// they are; the rest is resolved as the kernel walks it (see Contains).
func Resolve(base, path string) (string, error) {
	hops := 0
	return resolveFrom(filepath.Clean(base), path, &hops)
}

func resolveFrom(cur, path string, hops *int) (string, error) {
	if filepath.IsAbs(path) {
		cur = string(filepath.Separator)
	}
	for _, part := range strings.Split(path, string(filepath.Separator)) {
		switch part {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur) // cur is resolved, so its parent is the real one
			continue
		}
		next := filepath.Join(cur, part)
		info, err := os.Lstat(next)
		switch {
		case errors.Is(err, os.ErrNotExist):
			cur = next // not there yet: where it would be created
			continue
		case err != nil:
			return "", err
		case info.Mode()&os.ModeSymlink == 0:
			cur = next
			continue
		}
		if *hops++; *hops > maxSymlinkHops {
			return "", fmt.Errorf("%q: too many levels of symbolic links", next)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if cur, err = resolveFrom(cur, target, hops); err != nil {
			return "", err
		}
	}
	return cur, nil
}
