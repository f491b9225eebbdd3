package wire

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestWatchdog(t *testing.T) {
	t.Parallel()
	ctx, w, stop := Watch(context.Background(), 500*time.Millisecond)
	defer stop()
	for range 10 { // kicks keep it alive past its timeout
		time.Sleep(60 * time.Millisecond)
		w.Kick()
	}
	if ctx.Err() != nil {
		t.Fatal("fired while kicked")
	}
	w.Pause()
	time.Sleep(700 * time.Millisecond)
	if ctx.Err() != nil {
		t.Fatal("fired while paused")
	}
	w.Kick()
	<-ctx.Done()
	if !Idle(ctx) || !errors.Is(context.Cause(ctx), ErrIdle) {
		t.Fatalf("cause %v", context.Cause(ctx))
	}

	ctx2, _, stop2 := Watch(context.Background(), time.Hour)
	stop2()
	if Idle(ctx2) || ctx2.Err() == nil {
		t.Fatal("stop is not a plain cancel")
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	h := func(k, v string) http.Header { return http.Header{http.CanonicalHeaderKey(k): {v}} }
	tests := []struct {
		h    http.Header
		want time.Duration
	}{
		{nil, 0},
		{h("Retry-After", "3"), 3 * time.Second},
		{h("Retry-After", "0.5"), 500 * time.Millisecond},
		{h("Retry-After-Ms", "250"), 250 * time.Millisecond},
		{h("Retry-After", "soon"), 0},
	}
	for _, tc := range tests {
		if got := RetryAfter(tc.h); got != tc.want {
			t.Errorf("RetryAfter(%v) = %s, want %s", tc.h, got, tc.want)
		}
	}
	future := time.Now().Add(10 * time.Second).UTC().Format(http.TimeFormat)
	if got := RetryAfter(h("Retry-After", future)); got < 8*time.Second || got > 10*time.Second {
		t.Errorf("date Retry-After = %s", got)
	}
}
