package inbox

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/clusterspace/clusterspace/backend/pubsub"
)

// PollEvery is how often the panes are read: the terminals publish no event when a program
// goes quiet at its prompt or a command ends, so the inbox looks. Reading a pane's state is a
// lock and an ioctl; once a second keeps the list a second behind at most.
const PollEvery = time.Second

// settleWake gathers a burst of events (a goal's steps, a chat's streaming) into one read of
// the services.
const settleWake = 150 * time.Millisecond

// List is the inbox as the UI shows it, most urgent first.
type List struct {
	Items []Item `json:"items"`
}

// EventChanged carries the new List whenever an item comes, goes or changes.
const EventChanged = "changed"

// Options tune the service.
type Options struct {
	// Probe reads the terminal panes (nil: no pane items).
	Probe Probe
	// Wakers are event streams after which the stored items are read again: the goals', the
	// fleets', the chats' and the workspaces' events.
	Wakers    []pubsub.Source
	PollEvery time.Duration // 0: PollEvery
	// LongCommand is how long a command runs for its end to be told (0: LongCommand).
	LongCommand time.Duration
	Logger      *slog.Logger
}

// Service keeps the inbox and publishes its changes.
type Service struct {
	src    Sources
	opts   Options
	events *pubsub.Broker[List]
	wake   chan struct{}

	mu      sync.Mutex
	stored  []Item
	layout  layout
	watches map[string]*commandWatch
	items   []Item

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewService makes the inbox over its sources; Start makes it follow them.
func NewService(src Sources, events *pubsub.Broker[List], opts Options) (*Service, error) {
	if src.Approvals == nil || src.Workspaces == nil {
		return nil, errors.New("inbox: Sources.Approvals and Sources.Workspaces are required")
	}
	if opts.PollEvery <= 0 {
		opts.PollEvery = PollEvery
	}
	if opts.LongCommand <= 0 {
		opts.LongCommand = LongCommand
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Service{src: src, opts: opts, events: events, wake: make(chan struct{}, 1), watches: map[string]*commandWatch{}}, nil
}

// Events is where the inbox publishes EventChanged.
func (s *Service) Events() *pubsub.Broker[List] { return s.events }

// Start follows the wakers and polls the panes until Shutdown.
func (s *Service) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	for _, w := range s.opts.Wakers {
		s.wg.Go(func() { w(ctx, func(pubsub.Envelope) { s.poke() }) })
	}
	s.wg.Go(func() { s.loop(ctx) })
}

// Shutdown stops following and waits for the goroutines.
func (s *Service) Shutdown() {
	if s.cancel != nil {
		s.cancel()
	}
	s.wg.Wait()
}

func (s *Service) poke() {
	select {
	case s.wake <- struct{}{}:
	default: // a read is already due
	}
}

func (s *Service) loop(ctx context.Context) {
	tick := time.NewTicker(s.opts.PollEvery)
	defer tick.Stop()
	var settle <-chan time.Time
	s.refresh(ctx, true)
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
			if settle == nil {
				settle = time.After(settleWake)
			}
		case <-settle:
			settle = nil
			s.refresh(ctx, true)
		case <-tick.C:
			s.refresh(ctx, false)
		}
	}
}

// refresh reads the panes, and the services too when stored is set, and publishes the list
// when it changed.
func (s *Service) refresh(ctx context.Context, stored bool) {
	if _, err := s.read(ctx, stored); err != nil && ctx.Err() == nil {
		s.opts.Logger.Warn("inbox: read failed; the list shown is the last one read", "err", err)
	}
}

// List reads the inbox now.
func (s *Service) List(ctx context.Context) (List, error) {
	items, err := s.read(ctx, true)
	if err != nil {
		return List{}, err
	}
	return List{Items: items}, nil
}

func (s *Service) read(ctx context.Context, stored bool) ([]Item, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if stored {
		list, err := s.src.Workspaces(ctx)
		if err != nil {
			return nil, err
		}
		l := newLayout(list)
		items, err := storedItems(ctx, s.src, l)
		if err != nil {
			return nil, err
		}
		s.layout, s.stored = l, items
	}
	items := slices.Clone(s.stored)
	if s.opts.Probe != nil {
		items = append(items, paneItems(s.opts.Probe, s.layout, s.src.GoalIn, s.watches, time.Now(), s.opts.LongCommand)...)
	}
	for i := range items {
		items[i].Urgency = items[i].Kind.Urgency()
	}
	Sort(items)
	if !slices.Equal(items, s.items) {
		s.items = items
		if s.events != nil {
			s.events.Publish(EventChanged, List{Items: slices.Clone(items)})
		}
	}
	return slices.Clone(items), nil
}
