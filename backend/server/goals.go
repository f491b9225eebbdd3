package server

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/goal"
)

// maxStepPage bounds one page of a goal's step log.
const maxStepPage = 500

func (s *Server) listGoals(w http.ResponseWriter, r *http.Request) {
	gs, err := s.deps.Goals.List(r.Context())
	respond(w, http.StatusOK, map[string]any{"goals": gs}, err)
}

func (s *Server) startGoal(w http.ResponseWriter, r *http.Request) {
	var spec goal.Spec
	if !decodeBody(w, r, &spec) {
		return
	}
	g, err := s.deps.Goals.Start(r.Context(), spec)
	respond(w, http.StatusCreated, g, err)
}

func (s *Server) getGoal(w http.ResponseWriter, r *http.Request) {
	g, err := s.deps.Goals.Get(r.Context(), r.PathValue("id"))
	respond(w, http.StatusOK, g, err)
}

func (s *Server) goalSteps(w http.ResponseWriter, r *http.Request) {
	after, _ := strconv.Atoi(r.URL.Query().Get("after"))
	limit, err := strconv.Atoi(r.URL.Query().Get("limit"))
	if err != nil || limit <= 0 || limit > maxStepPage {
		limit = maxStepPage
	}
	steps, err := s.deps.Goals.Steps(r.Context(), r.PathValue("id"), after, limit)
	if steps == nil {
		steps = []goal.Step{}
	}
	respond(w, http.StatusOK, map[string]any{"steps": steps}, err)
}

// goalStepImage answers {mediaType, data (base64)}: the page fetches it with its token and shows
// it as a data: URL, since an <img src> cannot carry the Authorization header.
func (s *Server) goalStepImage(w http.ResponseWriter, r *http.Request) {
	index, err1 := strconv.Atoi(r.PathValue("index"))
	n, err2 := strconv.Atoi(r.PathValue("n"))
	if err1 != nil || err2 != nil {
		writeError(w, http.StatusBadRequest, "the step index and picture number must be whole numbers, e.g. /steps/3/images/0", "")
		return
	}
	img, err := s.deps.Goals.StepImage(r.Context(), r.PathValue("id"), index, n)
	respond(w, http.StatusOK, img, err)
}

func (s *Server) goalEvents(w http.ResponseWriter, r *http.Request) {
	after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	evs, err := s.deps.Goals.History(r.Context(), r.PathValue("id"), after)
	if evs == nil {
		evs = []goal.Event{}
	}
	respond(w, http.StatusOK, map[string]any{"events": evs}, err)
}

// goalAction answers 204 after a control (pause, resume, abort, delete).
func (s *Server) goalAction(act func(*http.Request, string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := act(r, r.PathValue("id")); err != nil {
			writeGoalError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *Server) steerGoal(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Text string `json:"text"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	if err := s.deps.Goals.Steer(r.Context(), r.PathValue("id"), body.Text); err != nil {
		writeGoalError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) reopenGoal(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Feedback string `json:"feedback"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	if err := s.deps.Goals.Reopen(r.Context(), r.PathValue("id"), body.Feedback); err != nil {
		writeGoalError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) raiseGoalBudget(w http.ResponseWriter, r *http.Request) {
	var body struct {
		BudgetUSD    float64 `json:"budgetUsd"`
		BudgetTokens int     `json:"budgetTokens"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	if err := s.deps.Goals.RaiseBudget(r.Context(), r.PathValue("id"), body.BudgetUSD, body.BudgetTokens); err != nil {
		writeGoalError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) pruneGoals(w http.ResponseWriter, r *http.Request) {
	n, err := s.deps.Goals.Prune(r.Context())
	respond(w, http.StatusOK, map[string]int{"deleted": n}, err)
}

func (s *Server) pendingApprovals(w http.ResponseWriter, r *http.Request) {
	as, err := s.deps.Goals.PendingApprovals(r.Context())
	if as == nil {
		as = []agent.Approval{}
	}
	respond(w, http.StatusOK, map[string]any{"approvals": as}, err)
}

func (s *Server) answerApproval(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Status agent.ApprovalStatus `json:"status"`
		Reason string               `json:"reason"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	a, err := s.deps.Goals.AnswerApproval(r.Context(), r.PathValue("id"), body.Status, body.Reason)
	if err != nil {
		writeGoalError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

func (s *Server) toolList(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"tools": s.deps.Goals.Registry().Definitions()})
}

// writeGoalError maps the goal service's errors: bad input and unknown goals as every service
// error is mapped, and a control that does not fit the goal's state (pausing a finished goal)
// as 409.
func writeGoalError(w http.ResponseWriter, err error) {
	var fe *goal.FieldError
	var ae *agent.AnswerError
	if errors.As(err, &fe) || errors.As(err, &ae) || errors.Is(err, goal.ErrNotFound) || errors.Is(err, agent.ErrNotWaiting) {
		writeServiceError(w, err)
		return
	}
	writeError(w, http.StatusConflict, err.Error(), "")
}
