package recipes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clusterspace/clusterspace/backend/store"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// ErrNotFound means there is no recipe of that name.
var ErrNotFound = errors.New("no such recipe")

// Repo is the persistence the service needs; the store implements it.
type Repo interface {
	BrowserRecipes(ctx context.Context) ([]store.RecipeRow, error)
	BrowserRecipe(ctx context.Context, name string) (store.RecipeRow, error)
	SaveBrowserRecipe(ctx context.Context, r store.RecipeRow) error
	DeleteBrowserRecipe(ctx context.Context, name string) error
}

// Panes lists the browser panes, so a run without a pane can use the only one there is.
type Panes interface {
	Panes() []string
}

// Service keeps the recipes and runs them.
type Service struct {
	repo  Repo
	reg   Registry
	panes Panes
	mu    sync.Mutex // one save at a time, so "created" stays the first save's time
}

// NewService returns the recipe service; reg validates and (for the person's runs) runs the
// steps' tools.
func NewService(repo Repo, reg Registry, panes Panes) *Service {
	return &Service{repo: repo, reg: reg, panes: panes}
}

func fromRow(row store.RecipeRow) (Recipe, error) {
	r := Recipe{Name: row.Name, Description: row.Description, CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt}
	if err := json.Unmarshal(row.Steps, &r.Steps); err != nil {
		return r, fmt.Errorf("recipe %q is damaged (%v): delete it and save it again", row.Name, err)
	}
	r.Params = []string{}
	for _, st := range r.Steps {
		for _, m := range placeholder.FindAllSubmatch(st.Args, -1) {
			if p := string(m[1]); !slices.Contains(r.Params, p) {
				r.Params = append(r.Params, p)
			}
		}
	}
	return r, nil
}

// List returns the saved recipes by name.
func (s *Service) List(ctx context.Context) ([]Recipe, error) {
	rows, err := s.repo.BrowserRecipes(ctx)
	if err != nil {
		return nil, err
	}
	out := []Recipe{}
	for _, row := range rows {
		r, err := fromRow(row)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Get returns one recipe.
func (s *Service) Get(ctx context.Context, name string) (Recipe, error) {
	row, err := s.repo.BrowserRecipe(ctx, strings.TrimSpace(name))
	if errors.Is(err, store.ErrNoRow) {
		return Recipe{}, fmt.Errorf("recipe %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return Recipe{}, err
	}
	return fromRow(row)
}

// Save validates a recipe and stores it, replacing one of the same name.
func (s *Service) Save(ctx context.Context, r Recipe) (Recipe, error) {
	r, err := Normalize(s.reg, r)
	if err != nil {
		return r, err
	}
	steps, err := json.Marshal(r.Steps)
	if err != nil {
		return r, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now().UTC().Truncate(time.Millisecond)
	r.CreatedAt, r.UpdatedAt = now, now
	if old, err := s.repo.BrowserRecipe(ctx, r.Name); err == nil {
		r.CreatedAt = old.CreatedAt
	}
	if err := s.repo.SaveBrowserRecipe(ctx, store.RecipeRow{Name: r.Name, Description: r.Description, Steps: steps, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}); err != nil {
		return r, err
	}
	return r, nil
}

// Delete removes a recipe.
func (s *Service) Delete(ctx context.Context, name string) error {
	err := s.repo.DeleteBrowserRecipe(ctx, name)
	if errors.Is(err, store.ErrNoRow) {
		return fmt.Errorf("recipe %q: %w", name, ErrNotFound)
	}
	return err
}

// StepResult is what one step of a run did.
type StepResult struct {
	Index   int    `json:"index"`
	Tool    string `json:"tool"`
	Text    string `json:"text"`
	IsError bool   `json:"isError"`
}

// RunResult is a whole run: the steps that ran, in order; a run stops at the first failed
// (or refused) step.
type RunResult struct {
	Recipe string       `json:"recipe"`
	PaneID string       `json:"paneId"`
	Steps  []StepResult `json:"steps"`
	// Completed is true when every step ran without an error.
	Completed bool `json:"completed"`
}

// Report is the run as the model reads it.
func (r RunResult) Report(total int) string {
	var b strings.Builder
	if r.Completed {
		fmt.Fprintf(&b, "Ran recipe %q in pane %s: all %d steps done.\n", r.Recipe, r.PaneID, total)
	} else {
		fmt.Fprintf(&b, "Recipe %q in pane %s stopped at step %d of %d; the later steps did not run.\n", r.Recipe, r.PaneID, len(r.Steps), total)
	}
	for _, st := range r.Steps {
		mark := "ok"
		if st.IsError {
			mark = "FAILED"
		}
		fmt.Fprintf(&b, "%d. %s (%s): %s\n", st.Index+1, st.Tool, mark, clip(oneLine(st.Text), 300))
	}
	return strings.TrimRight(b.String(), "\n")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// pane picks the pane a run acts on: the one given, else the only browser pane there is.
func (s *Service) pane(paneID string) (string, error) {
	if paneID = strings.TrimSpace(paneID); paneID != "" {
		return paneID, nil
	}
	open := s.panes.Panes()
	switch len(open) {
	case 0:
		return "", &FieldError{"pane_id", "no browser pane is open: open one (or convert a pane to a browser), then run the recipe in it"}
	case 1:
		return open[0], nil
	}
	return "", &FieldError{"pane_id", fmt.Sprintf("say which browser pane to run it in: %s", strings.Join(open, ", "))}
}

// prepare loads the recipe, picks the pane and fills every step, so a missing param or a bad
// pane is refused before any step runs.
func (s *Service) prepare(ctx context.Context, name, paneID string, params map[string]string) (Recipe, string, []json.RawMessage, error) {
	r, err := s.Get(ctx, name)
	if err != nil {
		return r, "", nil, err
	}
	if err := CheckParams(r, params); err != nil {
		return r, "", nil, err
	}
	pane, err := s.pane(paneID)
	if err != nil {
		return r, "", nil, err
	}
	filled := make([]json.RawMessage, len(r.Steps))
	for i, st := range r.Steps {
		if filled[i], err = Fill(st, pane, params); err != nil {
			return r, "", nil, &FieldError{fmt.Sprintf("steps[%d].args", i), err.Error()}
		}
	}
	return r, pane, filled, nil
}

// dispatch runs one step by its tool's name: as a nested call of the agent's (a model's run)
// or directly (the person's run from the pane's menu).
type dispatch func(ctx context.Context, tool string, args json.RawMessage) (tools.Result, error)

// run runs the filled steps in order through dispatch, stopping at the first that fails.
func run(ctx context.Context, r Recipe, pane string, filled []json.RawMessage, dispatch dispatch) (RunResult, error) {
	out := RunResult{Recipe: r.Name, PaneID: pane, Steps: []StepResult{}}
	for i, args := range filled {
		res, err := dispatch(ctx, r.Steps[i].Tool, args)
		if err != nil {
			return out, fmt.Errorf("step %d (%s): %w", i+1, r.Steps[i].Tool, err)
		}
		out.Steps = append(out.Steps, StepResult{Index: i, Tool: r.Steps[i].Tool, Text: res.Text, IsError: res.IsError})
		if res.IsError {
			return out, nil
		}
	}
	out.Completed = true
	return out, nil
}

// RunByPerson runs a recipe the person started from a browser pane's menu: they asked for
// exactly these steps on their own page, so the steps run directly, as if they had done them
// by hand, without an agent's policy.
func (s *Service) RunByPerson(ctx context.Context, name, paneID string, params map[string]string) (RunResult, error) {
	r, pane, filled, err := s.prepare(ctx, name, paneID, params)
	if err != nil {
		return RunResult{}, err
	}
	return run(ctx, r, pane, filled, func(ctx context.Context, tool string, args json.RawMessage) (tools.Result, error) {
		t, ok := s.reg.Get(tool)
		if !ok {
			return tools.Errorf("there is no tool %q any more: edit the recipe", tool), nil
		}
		return t.Run(ctx, tools.Call{ID: "recipe", Name: tool, Args: args})
	})
}
