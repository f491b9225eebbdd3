package wire

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ErrIdle is the cause a Watchdog cancels with.
var ErrIdle = errors.New("the server sent nothing within the timeout")

// Watchdog cancels a request's context when the server has sent nothing for its timeout:
// neither the response headers nor the next piece of a stream. Waits between retries do
// not count; they are bounded by the retry policy.
type Watchdog struct {
	d     time.Duration
	timer *time.Timer
}

// Watch derives a context that the returned Watchdog cancels with ErrIdle after d of
// silence. Stop the watchdog and call cancel when the request is over.
func Watch(parent context.Context, d time.Duration) (context.Context, *Watchdog, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	w := &Watchdog{d: d, timer: time.AfterFunc(d, func() { cancel(ErrIdle) })}
	return ctx, w, func() { w.Stop(); cancel(context.Canceled) }
}

// Kick restarts the countdown: something arrived, or a new attempt began.
func (w *Watchdog) Kick() { w.timer.Reset(w.d) }

// Pause stops the countdown, for a wait the retry policy bounds.
func (w *Watchdog) Pause() { w.timer.Stop() }

// Stop ends the watch.
func (w *Watchdog) Stop() { w.timer.Stop() }

// Idle reports whether ctx (from Watch) was cancelled by the watchdog.
func Idle(ctx context.Context) bool { return errors.Is(context.Cause(ctx), ErrIdle) }

// Attempt is the middleware both SDKs accept, run once per attempt: it kicks the watchdog
// as the attempt starts and pauses it while the SDK waits to retry an error response.
// log is told about responses that will be retried.
func (w *Watchdog) Attempt(req *http.Request, next func(*http.Request) (*http.Response, error), log func(status int, retryAfter string)) (*http.Response, error) {
	w.Kick()
	res, err := next(req)
	switch {
	case err != nil:
		w.Pause()
	case res.StatusCode >= 400:
		w.Pause()
		if log != nil {
			log(res.StatusCode, res.Header.Get("Retry-After"))
		}
	default:
		w.Kick()
	}
	return res, err
}

// RetryAfter reads a Retry-After header in seconds (or Retry-After-Ms), 0 if absent.
func RetryAfter(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	if v := h.Get("Retry-After"); v != "" {
		if s, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && s > 0 {
			return time.Duration(s * float64(time.Second))
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(0, time.Until(t))
		}
	}
	return 0
}
