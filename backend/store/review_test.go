package store

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/review"
)

func TestReviewCommentsKeepTheirOrderAndSentTime(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	cs := []review.Comment{
		{ID: "rc-1", Ref: "fleet-1/a", File: "a.go", Line: 3, Side: "new", Body: "first", CreatedAt: now},
		{ID: "rc-2", Ref: "fleet-1/a", Side: "new", Body: "on the whole change\nsecond line", CreatedAt: now.Add(time.Millisecond)},
		{ID: "rc-3", Ref: "fleet-1/b", File: "b.go", Line: 1, Side: "old", Body: "another task's", CreatedAt: now},
		{ID: "rc-4", Ref: "fleet-1/a", File: "a.go", Side: "new", Body: "third", CreatedAt: now.Add(2 * time.Millisecond)},
	}
	for _, c := range cs {
		if err := s.AddReviewComment(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddReviewComment(ctx, cs[0]); err == nil {
		t.Fatal("a comment's id was stored twice")
	}
	got, err := s.ReviewComments(ctx, "fleet-1/a", false)
	if err != nil || !reflect.DeepEqual(got, []review.Comment{cs[0], cs[1], cs[3]}) {
		t.Fatalf("comments of fleet-1/a = %+v, %v", got, err)
	}
	sent := now.Add(time.Minute)
	if err := s.MarkReviewCommentsSent(ctx, []string{"rc-1", "rc-4"}, sent); err != nil {
		t.Fatal(err)
	}
	// Marking again keeps the first time.
	if err := s.MarkReviewCommentsSent(ctx, []string{"rc-1"}, sent.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	unsent, err := s.ReviewComments(ctx, "fleet-1/a", true)
	if err != nil || len(unsent) != 1 || unsent[0].ID != "rc-2" {
		t.Fatalf("unsent = %+v, %v", unsent, err)
	}
	one, err := s.ReviewComment(ctx, "rc-1")
	if err != nil || one.SentAt == nil || !one.SentAt.Equal(sent) {
		t.Fatalf("rc-1 = %+v, %v", one, err)
	}
	if err := s.DeleteReviewComment(ctx, "rc-2"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteReviewComment(ctx, "rc-2"); !errors.Is(err, review.ErrNotFound) {
		t.Fatalf("deleting it again: %v", err)
	}
	if _, err := s.ReviewComment(ctx, "rc-2"); !errors.Is(err, review.ErrNotFound) {
		t.Fatalf("reading a deleted comment: %v", err)
	}
	if none, err := s.ReviewComments(ctx, "fleet-9/x", false); err != nil || none == nil || len(none) != 0 {
		t.Fatalf("comments of a subject without any = %#v, %v", none, err)
	}
}
