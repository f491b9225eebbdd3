package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/secrets"
	"github.com/clusterspace/clusterspace/backend/store"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// engine is the backend every door shares: the store and the services over it.
type engine struct {
	dataDir    string
	store      *store.Store
	workspaces *workspace.Service
	providers  *config.Providers
	wsEvents   *pubsub.Broker[workspace.List]
	provEvents *pubsub.Broker[config.ProviderList]
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
	vault, err := secrets.Open(ctx, dir, st, secrets.Options{})
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("open the secrets vault: %w", err)
	}
	provEvents := pubsub.NewBroker[config.ProviderList]()
	providers := config.NewProviders(st, vault, provEvents, config.LLMTester{})
	return &engine{dataDir: dir, store: st, workspaces: ws, providers: providers, wsEvents: events, provEvents: provEvents}, nil
}

// sources are the event streams both doors forward to their UI, by topic.
func (e *engine) sources() []pubsub.Source {
	return []pubsub.Source{
		pubsub.From(e.wsEvents, "workspaces"),
		pubsub.From(e.provEvents, "providers"),
	}
}

// Close stops the brokers (ending every subscription) and closes the store.
func (e *engine) Close() error {
	e.wsEvents.Shutdown()
	e.provEvents.Shutdown()
	return e.store.Close()
}
