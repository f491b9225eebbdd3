package api

import (
	"context"
	"net/http"

	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/rpc"
)

// IDArgs names a thing by its id (a provider, an SSH server).
type IDArgs struct {
	ID string `json:"id"`
}

// SaveProviderArgs adds (id "") or edits a provider: input.apiKey absent keeps the stored key,
// "" removes it.
type SaveProviderArgs struct {
	ID    string               `json:"id"`
	Input config.ProviderInput `json:"input"`
}

// TestUnsavedProviderArgs tests a form's values before they are saved; id names the provider
// being edited, whose stored key is used unless the input gives one.
type TestUnsavedProviderArgs struct {
	ID    string               `json:"id"`
	Input config.ProviderInput `json:"input"`
}

// SetDefaultProvidersArgs picks the default providers for agents and critics ("" = none).
type SetDefaultProvidersArgs struct {
	DefaultID       string `json:"defaultId"`
	CriticDefaultID string `json:"criticDefaultId"`
}

// DiscoverProvidersArgs: the host to look for model servers on ("" = this machine).
type DiscoverProvidersArgs struct {
	Host string `json:"host"`
}

// DiscoverResult is the model servers found.
type DiscoverResult struct {
	Servers []config.Discovered `json:"servers"`
}

// PricesResult is the price table by model.
type PricesResult struct {
	Prices map[string]config.Price `json:"prices"`
}

// SSHServersResult is the saved SSH servers.
type SSHServersResult struct {
	Servers []config.SSHServer `json:"servers"`
}

// SaveSSHServerArgs adds (id "") or edits a server: input.password absent keeps the stored
// one, "" removes it.
type SaveSSHServerArgs struct {
	ID    string          `json:"id"`
	Input config.SSHInput `json:"input"`
}

func addProviders(t *rpc.Table, s Services) {
	p := s.Providers
	rpc.Add(t, rpc.Method{Name: "ListProviders", Route: "GET /api/providers"}, func(ctx context.Context, _ rpc.None) (config.ProviderList, error) {
		return p.List(ctx)
	})
	rpc.Add(t, rpc.Method{Name: "SaveProvider", Route: "PUT /api/providers/{id}", Body: "input",
		Also: []rpc.REST{{Route: "POST /api/providers", Status: http.StatusCreated}}}, func(ctx context.Context, a SaveProviderArgs) (config.Provider, error) {
		return p.Save(ctx, a.ID, a.Input)
	})
	rpc.Do(t, rpc.Method{Name: "DeleteProvider", Route: "DELETE /api/providers/{id}"}, func(ctx context.Context, a IDArgs) error {
		return p.Delete(ctx, a.ID)
	})
	rpc.Add(t, rpc.Method{Name: "SetDefaultProviders", Route: "PUT /api/providers/defaults"}, func(ctx context.Context, a SetDefaultProvidersArgs) (config.ProviderList, error) {
		return p.SetDefaults(ctx, a.DefaultID, a.CriticDefaultID)
	})
	rpc.Add(t, rpc.Method{Name: "TestProvider", Route: "POST /api/providers/{id}/test"}, func(ctx context.Context, a IDArgs) (config.TestResult, error) {
		return p.Test(ctx, a.ID)
	})
	rpc.Add(t, rpc.Method{Name: "TestUnsavedProvider", Route: "POST /api/providers/test", Body: "input"}, func(ctx context.Context, a TestUnsavedProviderArgs) (config.TestResult, error) {
		return p.TestUnsaved(ctx, a.ID, a.Input)
	})
	rpc.Add(t, rpc.Method{Name: "DiscoverProviders", Route: "POST /api/providers/discover"}, func(ctx context.Context, a DiscoverProvidersArgs) (DiscoverResult, error) {
		found, err := config.Discover(ctx, a.Host, nil)
		return DiscoverResult{Servers: found}, err
	})
	rpc.Add(t, rpc.Method{Name: "Prices", Route: "GET /api/prices"}, func(ctx context.Context, _ rpc.None) (PricesResult, error) {
		prices, err := p.Prices(ctx)
		return PricesResult{Prices: prices}, err
	})
	rpc.Do(t, rpc.Method{Name: "SetPrices", Route: "PUT /api/prices"}, func(ctx context.Context, a PricesResult) error {
		return p.SetPrices(ctx, a.Prices)
	})
	rpc.Add(t, rpc.Method{Name: "GoalSettings", Route: "GET /api/settings/goals"}, func(ctx context.Context, _ rpc.None) (config.GoalDefaults, error) {
		return config.LoadGoalDefaults(ctx, s.Settings)
	})
	rpc.Add(t, rpc.Method{Name: "SetGoalSettings", Route: "PUT /api/settings/goals", Body: "settings"}, func(ctx context.Context, a SetGoalSettingsArgs) (config.GoalDefaults, error) {
		return a.Settings, config.SaveGoalDefaults(ctx, s.Settings, a.Settings)
	})
	rpc.Add(t, rpc.Method{Name: "ListSSHServers", Route: "GET /api/ssh-servers"}, func(ctx context.Context, _ rpc.None) (SSHServersResult, error) {
		vs, err := s.SSH.List(ctx)
		return SSHServersResult{Servers: vs}, err
	})
	rpc.Add(t, rpc.Method{Name: "SaveSSHServer", Route: "PUT /api/ssh-servers/{id}", Body: "input",
		Also: []rpc.REST{{Route: "POST /api/ssh-servers", Status: http.StatusCreated}}}, func(ctx context.Context, a SaveSSHServerArgs) (config.SSHServer, error) {
		return s.SSH.Save(ctx, a.ID, a.Input)
	})
	rpc.Do(t, rpc.Method{Name: "DeleteSSHServer", Route: "DELETE /api/ssh-servers/{id}"}, func(ctx context.Context, a IDArgs) error {
		return s.SSH.Delete(ctx, a.ID)
	})
}

// SetGoalSettingsArgs replaces the Goal Runner's defaults.
type SetGoalSettingsArgs struct {
	Settings config.GoalDefaults `json:"settings"`
}
