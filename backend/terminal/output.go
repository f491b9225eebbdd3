package terminal

import (
	"bytes"
	"context"
	"fmt"
	"time"
)

// Batching of output to viewers: a viewer gets a chunk when output has gone quiet, when a
// frame's worth of time has passed since the chunk began, or when the chunk is big, whichever
// comes first. The first output after a quiet frame is sent at once, so a keystroke's echo is
// not held back.
const (
	flushInterval = 16 * time.Millisecond // about one frame at 60 Hz
	flushBytes    = 64 << 10              // one WebSocket message's worth
	flushQuiet    = time.Millisecond      // a burst with a 1 ms gap has ended
)

// viewerLagLimit is how far a viewer may fall behind before it is dropped and resynchronised
// from the scrollback: 1 MiB is 16 full batches, over 10 ms of the fastest output a PTY
// produces here (~80 MB/s), so a viewer that keeps up never hits it, and one that cannot
// never makes the tab hold more than this for it.
const viewerLagLimit = 1 << 20

// streamRead is the size of a PTY read that starts a batch with a buffer big enough for all of
// it (a program printing fast fills reads of the kernel's 4 KiB); smaller ones (echoes, a prompt)
// start small.
const streamRead = 1 << 10

// handOver is the size from which a batch is handed to the viewer as it is rather than copied:
// copying a big batch would cost as much as the buffer it saves.
const handOver = 4 << 10

// viewerQueue is how many chunks may wait in a viewer's channel.
const viewerQueue = 4

// ResyncMarker precedes the replay in a Resync chunk, so a person sees why the screen was
// redrawn.
const ResyncMarker = "\x1b[0m\r\n\x1b[7m[clusterspace: this view fell behind and was resynchronised from the scrollback]\x1b[0m\r\n"

// Chunk is a piece of output for a viewer; Data is the receiver's to keep. When Resync is set
// the viewer fell behind and was dropped: Data is ResyncMarker and then the whole scrollback,
// and the client must reset its screen before writing it.
type Chunk struct {
	Data   []byte
	Resync bool
}

// viewer is one attached client. Its fields other than the channels are guarded by the tab's
// mutex; the reader appends, the viewer's goroutine takes.
type viewer struct {
	out    chan Chunk
	notify chan struct{} // capacity 1: "something to look at"
	// stop ends the viewer: when its caller's ctx ends, the tab closes or the manager shuts down.
	stop context.CancelFunc

	pending         []byte
	firstAt, lastAt time.Time // when the pending bytes started and last grew
	resync          bool
	lastBatch       int // the size of the last big batch handed over
	// typed is set when input is written to the tab: the output that follows is most likely
	// its echo, which goes out as soon as it arrives rather than after a quiet gap, since a
	// person waits for it (typing faster than a frame would otherwise wait for quiet each key).
	typed bool
}

// push queues output for the viewer; called with the tab's mutex held. It never blocks.
func (v *viewer) push(data []byte, now time.Time) {
	if v.resync {
		return
	}
	wake := false
	switch n := len(v.pending); {
	case n+len(data) > viewerLagLimit:
		v.resync, v.pending, wake = true, nil, true
	case n == 0: // a batch begins: the viewer's goroutine starts timing it
		v.firstAt, wake = now, true
	case n < flushBytes && n+len(data) >= flushBytes: // full: send it now
		wake = true
	}
	if !v.resync {
		if cap(v.pending) == 0 && len(data) >= streamRead {
			// A stream: room for a whole batch now (as big as the last one, should the viewer
			// be taking them late), instead of growing the buffer step by step, each step a
			// copy of all of it, for every chunk a busy terminal hands over.
			v.pending = make([]byte, 0, max(flushBytes, v.lastBatch)+readBufferSize)
		}
		v.pending = append(v.pending, data...)
		v.lastAt = now
	}
	// Waking the goroutine only when the batch begins, fills or is dropped keeps a fast
	// stream from costing a wakeup per read; its timer notices quiet and age by itself.
	if wake {
		select {
		case v.notify <- struct{}{}:
		default:
		}
	}
}

// Attach returns the tab's scrollback, to write into a fresh terminal view, and a channel of
// the output that follows it, without gap or overlap. The channel is closed when ctx ends, the
// tab closes or the manager shuts down. tabID "" is the pane's active tab.
func (m *Manager) Attach(ctx context.Context, paneID, tabID string) (replay []byte, out <-chan Chunk, err error) {
	t, err := m.tab(paneID, tabID)
	if err != nil {
		return nil, nil, err
	}
	if !m.ops.Enter() {
		return nil, nil, ErrClosed
	}
	ctx, stop := context.WithCancel(ctx)
	v := &viewer{out: make(chan Chunk, viewerQueue), notify: make(chan struct{}, 1), stop: stop}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		stop()
		m.ops.Done()
		return nil, nil, fmt.Errorf("pane %q, tab %q: %w", paneID, t.id, ErrNoTab)
	}
	replay = t.sb.snapshot()
	t.viewers[v] = struct{}{}
	t.mu.Unlock()
	go t.serve(ctx, v) // takes over the operation enter() counted
	return replay, v.out, nil
}

// serve batches the viewer's output into chunks and hands them over; only this goroutine
// blocks on a slow viewer, never the PTY reader.
func (t *tab) serve(ctx context.Context, v *viewer) {
	defer t.m.ops.Done()
	defer close(v.out)
	defer func() {
		t.mu.Lock()
		delete(t.viewers, v)
		t.mu.Unlock()
	}()
	defer func() {
		if r := recover(); r != nil {
			t.m.log.Error("terminal viewer panicked", "pane", t.paneID, "tab", t.id, "panic", r)
		}
	}()
	defer v.stop()
	defer context.AfterFunc(t.m.ctx, v.stop)() // the tab's close calls stop itself
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var lastFlush time.Time
	for {
		t.mu.Lock()
		n, resync, first, last, typed := len(v.pending), v.resync, v.firstAt, v.lastAt, v.typed
		t.mu.Unlock()
		now := time.Now()
		due := resync || n >= flushBytes || n > 0 && (typed || first.Sub(lastFlush) >= flushInterval ||
			now.Sub(first) >= flushInterval || now.Sub(last) >= flushQuiet)
		if due {
			select {
			case v.out <- t.take(v):
				lastFlush = time.Now()
			case <-ctx.Done():
				return
			}
			continue
		}
		if n > 0 {
			timer.Reset(min(first.Add(flushInterval).Sub(now), last.Add(flushQuiet).Sub(now)))
		}
		select {
		case <-v.notify:
		case <-timer.C:
		case <-ctx.Done():
			return
		}
		timer.Stop()
	}
}

// take hands the viewer's pending output over as a chunk, or a resync if it was dropped.
func (t *tab) take(v *viewer) Chunk {
	t.mu.Lock()
	defer t.mu.Unlock()
	if v.resync {
		v.resync, v.pending = false, nil
		data := append([]byte(ResyncMarker), t.sb.snapshot()...)
		return Chunk{Data: data, Resync: true}
	}
	v.typed = false
	if len(v.pending) >= handOver {
		// A big batch is handed over as it is, without a copy; the next one gets a new buffer
		// (push), so the receiver may keep this one.
		data := v.pending[:len(v.pending):len(v.pending)]
		v.pending, v.lastBatch = nil, min(len(data), viewerLagLimit)
		return Chunk{Data: data}
	}
	// A small one (an echo, a prompt) is copied and the buffer kept for the next.
	data := bytes.Clone(v.pending)
	v.pending = v.pending[:0]
	return Chunk{Data: data}
}
