package api

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/clusterspace/clusterspace/backend/land"
	"github.com/clusterspace/clusterspace/backend/rpc"
)

// LandPrefsArgs names the work whose repository's landing choices are asked for.
type LandPrefsArgs struct {
	Ref string `json:"ref"` // FLEET or FLEET/TASK
}

// errLandOff answers the land calls of a door that runs without fleets.
var errLandOff = &StatusError{Status: http.StatusServiceUnavailable, Err: errors.New("landing is not running in this server; a server started by `clusterspace serve` runs it")}

func addLand(t *rpc.Table, s Services) {
	// Land lands a fleet's verified tasks (in dependency order) or one task: each only when
	// its criterion and the repository's check pass on the target with its work on it.
	rpc.Add(t, rpc.Method{Name: "Land", Route: "POST /api/land"}, ifOn(s.Land != nil, errLandOff, func(ctx context.Context, a land.Args) (land.Report, error) {
		rep, err := s.Land.Land(ctx, a)
		return rep, landError(err)
	}))
	rpc.Add(t, rpc.Method{Name: "GetLandPrefs", Route: "POST /api/land/prefs"}, ifOn(s.Land != nil, errLandOff, func(ctx context.Context, a LandPrefsArgs) (land.Prefs, error) {
		p, err := s.Land.Prefs(ctx, strings.TrimSpace(a.Ref))
		return p, landError(err)
	}))
}

// landError gives a landing asked for wrongly its field and a 400.
func landError(err error) error {
	var fe *land.FieldError
	if errors.As(err, &fe) {
		return &StatusError{Status: http.StatusBadRequest, Field: fe.Field, Err: errors.New(fe.Msg)}
	}
	return err
}
