package land

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/clusterspace/clusterspace/backend/goal/criterion"
)

// RepoCheckTimeout bounds the repository's own check on a landing (a whole test suite).
const RepoCheckTimeout = 30 * time.Minute

// repoCheck is the repository's own check (its test command), run with bash in the result.
func repoCheck(command string) (Check, error) {
	c, err := criterion.Parse(criterion.Spec{Kind: criterion.KindShell, Command: command, Timeout: criterion.Duration(RepoCheckTimeout)}, criterion.Deps{})
	if err != nil {
		return Check{}, fmt.Errorf("the repository's land check %q: %w", command, err)
	}
	return verifyCheck(fmt.Sprintf("the repository's check `%s`", command), c), nil
}

// criterionCheck is the work's own criterion run again on the result, when it is a check a
// machine reruns from the files alone: a shell command, or a JSON predicate over a file or
// a command's output. A question to a model, a visual check or a person's review was
// verified when the work completed, and is said so (note) rather than run again. A check its
// agent wrote runs only inside its goal's sandbox, so it is not run here either.
func criterionCheck(spec criterion.Spec) (c *Check, note string, err error) {
	rerun := spec.Kind == criterion.KindShell ||
		(spec.Kind == criterion.KindJSONPredicate && (strings.HasPrefix(spec.Source, "file:") || strings.HasPrefix(spec.Source, "command:")))
	if !rerun {
		return nil, fmt.Sprintf("its criterion (%s) was verified when it completed; it is not a command, so it is not run again on the target", kindName(spec.Kind)), nil
	}
	if spec.ByModel {
		return nil, "its criterion was written by its agent, so it runs only inside its goal's sandbox, where it passed; it is not run again on the target", nil
	}
	parsed, err := criterion.Parse(spec, criterion.Deps{})
	if err != nil {
		return nil, "", fmt.Errorf("its criterion: %w", err)
	}
	chk := verifyCheck("its criterion ("+parsed.Describe()+")", parsed)
	return &chk, "", nil
}

func kindName(kind string) string {
	if kind == "" {
		return criterion.KindManual
	}
	return kind
}

func verifyCheck(name string, c criterion.Criterion) Check {
	return Check{Name: name, Run: func(ctx context.Context, dir string) (bool, string, error) {
		v, err := c.Verify(ctx, criterion.Evidence{WorkDir: dir})
		return v.Passed, v.Detail, err
	}}
}
