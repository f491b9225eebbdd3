package policy

import (
	"context"

	"github.com/clusterspace/clusterspace/backend/tools"
)

// Rule is one of an owner's own rules over a call, decided before its policy: a goal's step
// protocol and the files no goal may touch, a chat's confirmations and its ask-above level.
// It returns a verdict that stands, or ok false to leave the call to what follows.
type Rule func(ctx context.Context, t tools.Tool, call tools.Call) (v Verdict, ok bool)

// Decider is how one owner (a goal, a chat) decides every call it makes, the model's own and
// the nested ones (a recipe's steps, a plugin's fetch) alike: its rules in order, then its
// policy with the tools the person allowed for the owner's scope. The agent asks it; the
// person's approval follows an Ask.
type Decider struct {
	Policy Policy
	Rules  []Rule
	// Granted lists the tools the person allowed for the rest of the owner's work (nil: none).
	Granted func() []string
	// Refused words the policy's denial for the model (nil: its reason as it is); a rule's
	// verdict is its own words.
	Refused func(reason string) string
}

// Decide decides one call.
func (d Decider) Decide(ctx context.Context, t tools.Tool, call tools.Call) Verdict {
	for _, rule := range d.Rules {
		if v, ok := rule(ctx, t, call); ok {
			return v
		}
	}
	var granted []string
	if d.Granted != nil {
		granted = d.Granted()
	}
	v := d.Policy.Check(t, call, granted)
	if v.Decision == Deny && d.Refused != nil {
		v.Reason = d.Refused(v.Reason)
	}
	return v
}
