package workspace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clusterspace/clusterspace/backend/pubsub"
)

// Event types published on every change; the payload is always the full List, so a UI can
// replace its state instead of patching it.
const (
	EventCreated   = "created"
	EventUpdated   = "updated"
	EventDeleted   = "deleted"
	EventActivated = "activated"
	EventImported  = "imported"
)

// The first run's workspace: a 2 x 2 grid of terminals, the layout most people start with.
const (
	defaultRows = 2
	defaultCols = 2
)

// ErrNotFound means no workspace (or pane) has the given id.
var ErrNotFound = errors.New("not found")

// ErrLastWorkspace refuses deleting the only workspace: the app always shows one.
var ErrLastWorkspace = errors.New("cannot delete the last workspace: create another one first")

// Repo is the persistence the service needs; the store implements it.
type Repo interface {
	ListWorkspaces(ctx context.Context) ([]Workspace, error)
	SaveWorkspace(ctx context.Context, ws Workspace) error
	DeleteWorkspace(ctx context.Context, id string) error
	ActiveWorkspace(ctx context.Context) (string, error)
	SetActiveWorkspace(ctx context.Context, id string) error
}

// Service applies the workspace rules, persists through Repo and publishes every change.
type Service struct {
	repo   Repo
	events *pubsub.Broker[List]
	now    func() time.Time
	// mu serialises read-modify-write changes so two clients editing at once cannot lose
	// each other's updates.
	mu sync.Mutex
	// holder ends what removed panes held (see SetPaneHolder); nil ends nothing.
	holder PaneHolder
	// templates lists the launch templates (see SetTemplates); nil: the built-ins.
	templates atomic.Pointer[func() []Template]
}

// SetTemplates makes the launch templates come from list (the config dir's templates/ over
// the built-ins), asked each time so a changed file counts at once.
func (s *Service) SetTemplates(list func() []Template) { s.templates.Store(&list) }

// Templates lists the launch templates in menu order.
func (s *Service) Templates() []Template {
	if f := s.templates.Load(); f != nil {
		return (*f)()
	}
	return Templates
}

// LaunchFor fills a launch from one of the service's templates (see LaunchFrom).
func (s *Service) LaunchFor(l Launch) (Launch, error) { return LaunchFrom(s.Templates(), l) }

// NewService returns the service, creating "Workspace 1" on first run.
func NewService(ctx context.Context, repo Repo, events *pubsub.Broker[List]) (*Service, error) {
	// Milliseconds, as the store keeps them: a method's result and the event snapshot of the
	// same change then carry the same updatedAt, which clients use to order updates.
	s := &Service{repo: repo, events: events, now: func() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }}
	all, err := repo.ListWorkspaces(ctx)
	if err != nil {
		return nil, fmt.Errorf("load workspaces: %w", err)
	}
	if len(all) == 0 {
		ws := s.blank("Workspace 1", 0)
		if err := repo.SaveWorkspace(ctx, ws); err != nil {
			return nil, fmt.Errorf("create the first workspace: %w", err)
		}
		if err := repo.SetActiveWorkspace(ctx, ws.ID); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Events is the broker the service publishes to.
func (s *Service) Events() *pubsub.Broker[List] { return s.events }

func (s *Service) blank(name string, position int) Workspace {
	now := s.now()
	return Workspace{ID: NewWorkspaceID(), Name: name, Position: position, Rows: defaultRows, Cols: defaultCols,
		RowWeights: evenWeights(defaultRows), ColWeights: evenWeights(defaultCols),
		Panes: fillGrid(defaultRows, defaultCols), CreatedAt: now, UpdatedAt: now}
}

// List returns every workspace in tab order and the active one's id.
func (s *Service) List(ctx context.Context) (List, error) {
	all, err := s.repo.ListWorkspaces(ctx)
	if err != nil {
		return List{}, err
	}
	active, err := s.repo.ActiveWorkspace(ctx)
	if err != nil {
		return List{}, err
	}
	if !slices.ContainsFunc(all, func(w Workspace) bool { return w.ID == active }) && len(all) > 0 {
		active = all[0].ID
	}
	if all == nil {
		all = []Workspace{}
	}
	return List{Workspaces: all, ActiveID: active}, nil
}

func (s *Service) publish(ctx context.Context, typ string) {
	list, err := s.List(ctx)
	if err != nil {
		return // Best effort: the change is saved; clients re-read the list when they reconnect.
	}
	s.events.Publish(typ, list)
}

// lookup lists the workspaces and finds id among them; all is the list even when id is not
// in it (ErrNotFound).
func (s *Service) lookup(ctx context.Context, id string) (ws Workspace, all []Workspace, err error) {
	all, err = s.repo.ListWorkspaces(ctx)
	if err != nil {
		return Workspace{}, nil, err
	}
	for _, w := range all {
		if w.ID == id {
			return w, all, nil
		}
	}
	return Workspace{}, all, fmt.Errorf("workspace %q: %w", id, ErrNotFound)
}

// update loads workspace id, applies change, validates and saves the result, and publishes it.
func (s *Service) update(ctx context.Context, id string, change func(Workspace) (Workspace, error)) (Workspace, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ws, _, err := s.lookup(ctx, id)
	if err != nil {
		return ws, err
	}
	ws, err = change(ws)
	if err != nil {
		return ws, err
	}
	ws.forgetGonePanes()
	ws.UpdatedAt = s.now()
	if err := Validate(ws); err != nil {
		return ws, err
	}
	if err := s.repo.SaveWorkspace(ctx, ws); err != nil {
		return ws, err
	}
	s.publish(ctx, EventUpdated)
	return ws, nil
}

// Create adds a workspace at the end of the tab bar and makes it active. An empty name picks
// the first free "Workspace N".
func (s *Service) Create(ctx context.Context, name string) (Workspace, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all, err := s.repo.ListWorkspaces(ctx)
	if err != nil {
		return Workspace{}, err
	}
	if name == "" {
		name = freeName(all)
	}
	if name, err = checkName("name", name); err != nil {
		return Workspace{}, err
	}
	return s.addActive(ctx, s.blank(name, nextPosition(all)), EventCreated)
}

// addActive stores a new workspace, makes it the one the user has open, and publishes typ.
// Called with s.mu held.
func (s *Service) addActive(ctx context.Context, ws Workspace, typ string) (Workspace, error) {
	if err := s.repo.SaveWorkspace(ctx, ws); err != nil {
		return Workspace{}, err
	}
	if err := s.repo.SetActiveWorkspace(ctx, ws.ID); err != nil {
		return Workspace{}, err
	}
	s.publish(ctx, typ)
	return ws, nil
}

func freeName(all []Workspace) string {
	for n := len(all) + 1; ; n++ {
		name := fmt.Sprintf("Workspace %d", n)
		if !slices.ContainsFunc(all, func(w Workspace) bool { return w.Name == name }) {
			return name
		}
	}
}

func nextPosition(all []Workspace) int {
	next := 0
	for _, w := range all {
		next = max(next, w.Position+1)
	}
	return next
}

// Rename changes a workspace's name.
func (s *Service) Rename(ctx context.Context, id, name string) (Workspace, error) {
	name, err := checkName("name", name)
	if err != nil {
		return Workspace{}, err
	}
	return s.update(ctx, id, func(ws Workspace) (Workspace, error) {
		ws.Name = name
		return ws, nil
	})
}

// Delete removes a workspace; the last one cannot be deleted. If it was active, its left
// neighbour (else its right one) becomes active. What its panes hold ends with it (shells,
// browser pages, its browser); when something in them is busy, Delete refuses with a
// *BusyError unless force is set.
func (s *Service) Delete(ctx context.Context, id string, force bool) error {
	s.mu.Lock()
	all, err := s.repo.ListWorkspaces(ctx)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	i := slices.IndexFunc(all, func(w Workspace) bool { return w.ID == id })
	if i < 0 {
		s.mu.Unlock()
		return fmt.Errorf("workspace %q: %w", id, ErrNotFound)
	}
	if len(all) == 1 {
		s.mu.Unlock()
		return ErrLastWorkspace
	}
	if busy := s.busyPanes(ctx, all[i].Panes); len(busy) > 0 && !force {
		s.mu.Unlock()
		return &BusyError{Action: fmt.Sprintf("deleting workspace %q", all[i].Name), Panes: busy}
	}
	active, err := s.repo.ActiveWorkspace(ctx)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	if err := s.repo.DeleteWorkspace(ctx, id); err != nil {
		s.mu.Unlock()
		return err
	}
	if active == id {
		next := all[max(i-1, 0)]
		if i == 0 {
			next = all[1]
		}
		if err := s.repo.SetActiveWorkspace(ctx, next.ID); err != nil {
			s.mu.Unlock()
			return err
		}
	}
	s.publish(ctx, EventDeleted)
	h := s.holder
	s.mu.Unlock()
	// Outside the lock: ending a shell may take its grace period, and the panes are gone
	// from the store already, so nothing can start in them again.
	return s.release(ctx, h, id, all[i].Panes, true)
}

// Activate makes a workspace the one the user has open.
func (s *Service) Activate(ctx context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, _, err := s.lookup(ctx, id); err != nil {
		return err
	}
	if err := s.repo.SetActiveWorkspace(ctx, id); err != nil {
		return err
	}
	s.publish(ctx, EventActivated)
	return nil
}

// SetGrid changes the grid to rows x cols, keeping the panes whose cells still exist. What
// the removed panes hold ends with them; when something in them is busy, SetGrid refuses
// with a *BusyError unless force is set.
func (s *Service) SetGrid(ctx context.Context, id string, rows, cols int, force bool) (Workspace, error) {
	var removed []Pane
	ws, err := s.update(ctx, id, func(ws Workspace) (Workspace, error) {
		ws, gone, err := Resize(ws, rows, cols)
		if err != nil {
			return ws, err
		}
		if busy := s.busyPanes(ctx, gone); len(busy) > 0 && !force {
			return ws, &BusyError{Action: fmt.Sprintf("shrinking the grid to %d × %d", rows, cols), Panes: busy}
		}
		removed = gone
		return ws, nil
	})
	if err != nil {
		return ws, err
	}
	s.mu.Lock()
	h := s.holder
	s.mu.Unlock()
	return ws, s.release(ctx, h, id, removed, false)
}

// SetWeights sets the relative sizes of the rows and the columns.
func (s *Service) SetWeights(ctx context.Context, id string, rowWeights, colWeights []float64) (Workspace, error) {
	return s.update(ctx, id, func(ws Workspace) (Workspace, error) {
		if err := checkWeights("rowWeights", rowWeights, ws.Rows); err != nil {
			return ws, err
		}
		if err := checkWeights("colWeights", colWeights, ws.Cols); err != nil {
			return ws, err
		}
		ws.RowWeights, ws.ColWeights = slices.Clone(rowWeights), slices.Clone(colWeights)
		return ws, nil
	})
}

// SwapPanes exchanges the cells of two panes of a workspace.
func (s *Service) SwapPanes(ctx context.Context, id, paneA, paneB string) (Workspace, error) {
	return s.update(ctx, id, func(ws Workspace) (Workspace, error) { return Swap(ws, paneA, paneB) })
}

// PanePatch changes a pane's kind and/or label; nil fields stay as they are.
type PanePatch struct {
	Kind  *Kind   `json:"kind,omitempty"`
	Label *string `json:"label,omitempty"`
}

// UpdatePane applies a patch to one pane.
func (s *Service) UpdatePane(ctx context.Context, id, paneID string, patch PanePatch) (Workspace, error) {
	return s.update(ctx, id, func(ws Workspace) (Workspace, error) {
		i := slices.IndexFunc(ws.Panes, func(p Pane) bool { return p.ID == paneID })
		if i < 0 {
			return ws, fmt.Errorf("pane %q in workspace %q: %w", paneID, ws.Name, ErrNotFound)
		}
		ws.Panes = slices.Clone(ws.Panes)
		if patch.Kind != nil {
			if !patch.Kind.Valid() {
				return ws, fieldErr("kind", "is %q; must be %q or %q", *patch.Kind, KindTerminal, KindBrowser)
			}
			if ws.Panes[i].Kind != *patch.Kind {
				ws.Panes[i].Launch = nil // launch settings belong to the terminal it was
			}
			ws.Panes[i].Kind = *patch.Kind
			ws.Panes[i].Label = relabel(ws.Panes[i].Label, *patch.Kind)
		}
		if patch.Label != nil {
			label, err := checkName("label", *patch.Label)
			if err != nil {
				return ws, err
			}
			ws.Panes[i].Label = label
		}
		return ws, nil
	})
}

// HasPane reports whether any workspace holds the pane: terminals, browsers and goals are
// started only for panes that exist.
func (s *Service) HasPane(ctx context.Context, paneID string) bool {
	_, ok := s.WorkspaceOf(ctx, paneID)
	return ok
}

// WorkspaceOf returns the id of the workspace holding the pane.
func (s *Service) WorkspaceOf(ctx context.Context, paneID string) (string, bool) {
	ws, _, err := s.Find(ctx, paneID)
	return ws.ID, err == nil
}

// ActivePaneIDs lists the panes of the workspace the user has open: where broadcast typing
// reaches.
func (s *Service) ActivePaneIDs(ctx context.Context) []string {
	list, err := s.List(ctx)
	if err != nil {
		return nil
	}
	for _, w := range list.Workspaces {
		if w.ID == list.ActiveID {
			ids := make([]string, len(w.Panes))
			for i, p := range w.Panes {
				ids[i] = p.ID
			}
			return ids
		}
	}
	return nil
}
