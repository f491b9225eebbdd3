package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/clusterspace/clusterspace/backend/goal"
)

// Precheck validates a fleet as Create would, making and starting nothing, so that a refused
// fleet leaves no workspace behind (Create makes the tasks' panes before the Goal Runner can
// check their goals). A task whose pane does not exist yet is checked as if it ran in standIn,
// an existing pane, so everything else about its goal is checked all the same; with standIn ""
// such a task's goal is left to Create.
func (s *Service) Precheck(ctx context.Context, file File, spec Spec, standIn string) error {
	if strings.TrimSpace(file.Name) == "" {
		return &FieldError{Field: "name", Msg: "must not be empty: name the fleet"}
	}
	if len(file.Tasks) == 0 {
		return &FieldError{Field: "tasks", Msg: "give at least one task"}
	}
	if spec.Concurrency > MaxConcurrency {
		return &FieldError{Field: "concurrency", Msg: fmt.Sprintf("at most %d", MaxConcurrency)}
	}
	if err := Validate(file.Tasks); err != nil {
		return err
	}
	f := Fleet{Name: file.Name, Spec: spec}
	for _, ts := range file.Tasks {
		t := Task{TaskSpec: ts}
		gs := s.goalSpec(&f, &t, "")
		err := s.goals.Check(ctx, gs)
		if missingPane(err) && standIn != "" {
			gs.PaneID = standIn
			err = s.goals.Check(ctx, gs)
		}
		if err != nil && !missingPane(err) {
			return taskError(ts.ID, err)
		}
	}
	return nil
}

// missingPane reports whether a goal was refused only for its pane, which Create makes.
func missingPane(err error) bool {
	var fe *goal.FieldError
	return errors.As(err, &fe) && fe.Field == "paneId"
}
