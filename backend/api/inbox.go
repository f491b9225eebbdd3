package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/clusterspace/clusterspace/backend/inbox"
	"github.com/clusterspace/clusterspace/backend/rpc"
)

// errInboxOff answers the inbox's call on a door that runs without it.
var errInboxOff = &StatusError{Status: http.StatusServiceUnavailable, Err: errors.New("the inbox is not running in this server; a server started by `clusterspace serve` has it")}

func addInbox(t *rpc.Table, s Services) {
	rpc.Add(t, rpc.Method{Name: "ListInbox", Route: "GET /api/inbox"}, ifOn(s.Inbox != nil, errInboxOff, func(ctx context.Context, _ rpc.None) (inbox.List, error) {
		return s.Inbox.List(ctx)
	}))
}
