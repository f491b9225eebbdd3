package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/clusterspace/clusterspace/backend/review"
	"github.com/clusterspace/clusterspace/backend/rpc"
)

// A ref ("FLEET_ID/TASK_ID", or a goal id) holds a slash, so the review's REST routes take it
// as a query parameter or in the body, never in the path.

// GetChangesArgs asks for a page of a change: one file's patch, else the files' from offset
// (limit files, 0: review.DefaultLimit).
type GetChangesArgs struct {
	Ref    string `json:"ref"`
	File   string `json:"file,omitempty"`
	Offset int    `json:"offset,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

// RefArgs names a change.
type RefArgs struct {
	Ref string `json:"ref"`
}

// ReviewCommentsResult is a change's comments, sent or not, oldest first.
type ReviewCommentsResult struct {
	Comments []review.Comment `json:"comments"`
}

// AddReviewCommentArgs is a comment on a change: on a line of a file (side "new", the
// default, or "old"), on a file (line 0), or on the whole change (no file).
type AddReviewCommentArgs struct {
	Ref  string `json:"ref"`
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	Side string `json:"side,omitempty"`
	Body string `json:"body"`
}

// SendReviewArgs sends a change's unsent comments, and a note, to its agent.
type SendReviewArgs struct {
	Ref  string `json:"ref"`
	Note string `json:"note,omitempty"`
}

// errReviewOff answers the calls of a door that runs without the review.
var errReviewOff = &StatusError{Status: http.StatusServiceUnavailable, Err: errors.New("review is not running in this server; a server started by `clusterspace serve` has it")}

// reviewError classifies the review's refusals: a mistake in a field (400 naming it), a ref
// or comment that names nothing (404), and work in a state a send does not fit, or that
// refused to re-open (409).
func reviewError(err error, key string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, review.ErrBusy) || errors.Is(err, review.ErrNothingToSend) || errors.Is(err, review.ErrSent) {
		return Conflict(err)
	}
	// A re-open refused is the work's state, unless the refusal was a mistake of the request
	// or named something gone, which Classify maps as the services' own errors.
	var re *review.ReopenError
	if errors.As(err, &re) {
		if status, _ := Classify(re.Err); status == http.StatusInternalServerError {
			return Conflict(err)
		}
		return err
	}
	return featureError(err, namesField(func(e *review.FieldError) string { return e.Field }), review.ErrNotFound, key)
}

func addReview(t *rpc.Table, s Services) {
	rv := s.Review
	// on runs fn when the door has the review.
	on := func(key string, fn func() error) error {
		if rv == nil {
			return errReviewOff
		}
		return reviewError(fn(), key)
	}
	rpc.Add(t, rpc.Method{Name: "GetChanges", Route: "GET /api/review/changes"}, func(ctx context.Context, a GetChangesArgs) (p review.ChangesPage, err error) {
		err = on("ref", func() (err error) {
			p, err = rv.Changes(ctx, a.Ref, review.ChangesOptions{File: a.File, Offset: a.Offset, Limit: a.Limit})
			return err
		})
		return p, err
	})
	rpc.Add(t, rpc.Method{Name: "ListReviewComments", Route: "GET /api/review/comments"}, func(ctx context.Context, a RefArgs) (out ReviewCommentsResult, err error) {
		err = on("ref", func() (err error) { out.Comments, err = rv.Comments(ctx, a.Ref); return err })
		return out, err
	})
	rpc.Add(t, rpc.Method{Name: "AddReviewComment", Route: "POST /api/review/comments", Status: http.StatusCreated}, func(ctx context.Context, a AddReviewCommentArgs) (c review.Comment, err error) {
		err = on("ref", func() (err error) {
			c, err = rv.AddComment(ctx, a.Ref, review.NewComment{File: a.File, Line: a.Line, Side: a.Side, Body: a.Body})
			return err
		})
		return c, err
	})
	rpc.Do(t, rpc.Method{Name: "DeleteReviewComment", Route: "DELETE /api/review/comments/{id}"}, func(ctx context.Context, a IDArgs) error {
		return on("id", func() error { return rv.DeleteComment(ctx, a.ID) })
	})
	rpc.Add(t, rpc.Method{Name: "SendReview", Route: "POST /api/review/send"}, func(ctx context.Context, a SendReviewArgs) (out review.Sent, err error) {
		err = on("ref", func() (err error) { out, err = rv.Send(ctx, a.Ref, a.Note); return err })
		return out, err
	})
}
