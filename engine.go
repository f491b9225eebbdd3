package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/store"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// engine is the backend every door shares: the store and the services over it.
type engine struct {
	dataDir    string
	store      *store.Store
	workspaces *workspace.Service
	wsEvents   *pubsub.Broker[workspace.List]
}

// openEngine resolves and creates the data dir, opens (and migrates) the store and starts the
// services.
func openEngine(ctx context.Context, dataDirFlag string) (*engine, error) {
	dir, err := config.ResolveDataDir(dataDirFlag)
	if err != nil {
		return nil, err
	}
	if err := config.EnsureDataDir(dir); err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, filepath.Join(dir, store.FileName))
	if err != nil {
		return nil, err
	}
	events := pubsub.NewBroker[workspace.List]()
	ws, err := workspace.NewService(ctx, st, events)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("start workspaces: %w", err)
	}
	return &engine{dataDir: dir, store: st, workspaces: ws, wsEvents: events}, nil
}

// Close stops the brokers (ending every subscription) and closes the store.
func (e *engine) Close() error {
	e.wsEvents.Shutdown()
	return e.store.Close()
}
