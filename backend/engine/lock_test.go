package engine

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// While one engine runs a goal, a second engine on its data dir is refused, naming the first,
// and a Reader lists the goal without touching it: no "interrupted" status, no event.
func TestSecondEngineRefusedReaderTouchesNothing(t *testing.T) {
	srv := llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{llmtest.Stalled("thinking", 2)}})
	cfg := srv.Config()
	dir := t.TempDir()
	quiet := slog.New(slog.DiscardHandler)
	eng, err := Open(context.Background(), dir, WithLogger(quiet), WithCommand("serve"),
		WithPaneExists(func(string) bool { return true }),
		WithModel(cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	g, err := eng.Goals.Start(context.Background(), testSpec("term-1", "stall", t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the goal to ask the model", func() bool { return len(srv.ChatRequests()) >= 1 })

	_, err = Open(context.Background(), dir, WithLogger(quiet), WithCommand("goal run"))
	if !errors.Is(err, config.ErrDataDirInUse) || !strings.Contains(err.Error(), "in use by PID "+strconv.Itoa(os.Getpid())+" (serve since") {
		t.Fatalf("second engine: %v", err)
	}

	r, err := OpenReader(context.Background(), dir, "goal list", quiet)
	if err != nil {
		t.Fatal(err)
	}
	if r.Owner == nil || r.Owner.Command != "serve" {
		t.Fatalf("reader's owner %+v", r.Owner)
	}
	got, err := r.Store.Goal(context.Background(), g.ID)
	if err != nil || got.Status != goal.StatusRunning {
		t.Fatalf("the reader sees %s (%v), want running", got.Status, err)
	}
	r.Close()

	if got, _ := eng.Goals.Get(context.Background(), g.ID); got.Status != goal.StatusRunning {
		t.Fatalf("after the reader the goal is %s", got.Status)
	}
	evs := goalHistory(t, eng, g.ID)
	for _, e := range evs {
		if strings.Contains(string(e.Data), string(goal.StatusInterrupted)) {
			t.Fatalf("the reader wrote an event: %s %s", e.Type, e.Data)
		}
	}
}

// With no owner, a Reader holds the data dir while it reads, and a writer waits for it.
func TestReaderHoldsAFreeDataDir(t *testing.T) {
	dir := t.TempDir()
	quiet := slog.New(slog.DiscardHandler)
	r, err := OpenReader(context.Background(), dir, "goal list", quiet)
	if err != nil {
		t.Fatal(err)
	}
	if r.Owner != nil {
		t.Fatalf("owner %+v of a free data dir", r.Owner)
	}
	time.AfterFunc(100*time.Millisecond, func() { r.Close() })
	eng, err := Open(context.Background(), dir, WithLogger(quiet))
	if err != nil {
		t.Fatalf("the writer did not wait for the reader: %v", err)
	}
	eng.Close()
}
