package criterion

import (
	"fmt"
	"strconv"
	"strings"
)

// The criterion keys: `goal run`'s flags (check_shell is --check-shell) and a fleet task's
// YAML keys, one vocabulary so a task reads like the command that would run it alone.
const (
	KeyCheckShell    = "check_shell"
	KeyExitCode      = "exit_code"
	KeyCheckTimeout  = "check_timeout"
	KeyCheckQuestion = "check_question"
	KeyThreshold     = "threshold"
	KeyCheckJSON     = "check_json"
	KeyJSONSource    = "json_source"
	KeyCheckManual   = "check_manual"
	KeyCheckVisual   = "check_visual"
	KeyVisualPane    = "visual_pane"
)

// Keys lists every criterion key; the check_* ones each pick a kind.
var Keys = []string{KeyCheckShell, KeyExitCode, KeyCheckTimeout, KeyCheckQuestion, KeyThreshold,
	KeyCheckJSON, KeyJSONSource, KeyCheckManual, KeyCheckVisual, KeyVisualPane}

// IsBoolKey reports whether a key takes no value (check_manual).
func IsBoolKey(k string) bool { return k == KeyCheckManual }

// Builder collects criterion keys into a Spec, as `goal run`'s flags and a fleet task's keys
// give them.
type Builder struct {
	spec  Spec
	kinds []string // the check_* keys given, in order
}

// Set applies one key. A bad value is an error saying what the key takes.
func (b *Builder) Set(key, value string) error {
	c := &b.spec
	switch key {
	case KeyCheckShell:
		c.Kind, c.Command = KindShell, value
	case KeyCheckQuestion:
		c.Kind, c.Question = KindModelQuestion, value
	case KeyCheckJSON:
		c.Kind, c.Expr = KindJSONPredicate, value
	case KeyCheckVisual:
		c.Kind, c.Question = KindVisual, value
	case KeyCheckManual:
		if v, err := strconv.ParseBool(value); err != nil || !v {
			return fmt.Errorf("%s takes true (or leave it out)", key)
		}
		c.Kind = KindManual
	case KeyExitCode:
		n, err := strconv.Atoi(strings.TrimSpace(value))
		if err != nil {
			return fmt.Errorf("%s takes a whole number, got %q", key, value)
		}
		c.ExitCode = n
		return nil
	case KeyCheckTimeout:
		if err := c.Timeout.Set(value); err != nil {
			return fmt.Errorf("%s: %v", key, err)
		}
		return nil
	case KeyThreshold:
		c.Threshold = value
		return nil
	case KeyJSONSource:
		c.Source = value
		return nil
	case KeyVisualPane:
		c.PaneID = value
		return nil
	default:
		return fmt.Errorf("unknown criterion key %q: use one of %s", key, strings.Join(Keys, ", "))
	}
	b.kinds = append(b.kinds, key)
	return nil
}

// Kinds is how many check_* keys were given.
func (b *Builder) Kinds() int { return len(b.kinds) }

// Given names the check_* keys given, in order.
func (b *Builder) Given() []string { return b.kinds }

// Spec returns the criterion: an error if more than one kind was given. With none it returns
// a Spec of no kind (the caller picks its default or refuses).
func (b *Builder) Spec() (Spec, error) {
	if len(b.kinds) > 1 {
		return Spec{}, fmt.Errorf("give one criterion, not %s: they pick different kinds", strings.Join(b.kinds, " and "))
	}
	return b.spec, nil
}
