package server

import (
	"net/http"
	"strconv"
)

// goalStepImage answers {mediaType, data (base64)}: the page fetches it with its token and shows
// it as a data: URL, since an <img src> cannot carry the Authorization header. The UI calls
// GoalStepImage of the table; this REST route keeps its documented refusal of a path whose
// step index or picture number is not a whole number.
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
