// Package api declares every call the UI makes of the engine, once: its name, its arguments,
// its result and, where it has one, its documented REST route. The desktop window
// (App.Call) and `clusterspace serve` (POST /api/rpc/{name} and the REST routes) serve the
// same table, and the TypeScript client's types are generated from it (package apigen).
//
// A call's arguments are a struct named <Call>Args in this package; its JSON names are the
// wire's, in camelCase.
package api

import (
	"github.com/clusterspace/clusterspace/backend/browser"
	"github.com/clusterspace/clusterspace/backend/catalog"
	"github.com/clusterspace/clusterspace/backend/chat"
	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/engine"
	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/inbox"
	"github.com/clusterspace/clusterspace/backend/land"
	"github.com/clusterspace/clusterspace/backend/logins"
	"github.com/clusterspace/clusterspace/backend/mcp"
	"github.com/clusterspace/clusterspace/backend/panes"
	"github.com/clusterspace/clusterspace/backend/plugins"
	"github.com/clusterspace/clusterspace/backend/recipes"
	"github.com/clusterspace/clusterspace/backend/review"
	"github.com/clusterspace/clusterspace/backend/rpc"
	"github.com/clusterspace/clusterspace/backend/terminal"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// Services are the engine's services the calls use. Recipes, Logins, Fleets, Catalog,
// Plugins and MCP may be nil: their calls then answer that the feature is off.
type Services struct {
	Version    string
	Workspaces *workspace.Service
	Providers  *config.Providers
	Terminals  *terminal.Manager
	Browsers   *browser.Manager
	Panes      *panes.Service
	Goals      *goal.Service
	Chat       *chat.Service
	Fleets     *fleet.Service
	Land       *land.Service
	SSH        *config.SSHServers
	Recipes    *recipes.Service
	Logins     *logins.Service
	Catalog    *catalog.Catalog
	Settings   config.SettingsRepo
	ConfigDir  string
	Plugins    *plugins.Set
	MCP        *mcp.Manager
	// Review reads changes and keeps their comments (nil: its calls answer that it is off).
	Review *review.Service
	// Inbox is what waits for the person (nil: its call answers that it is off).
	Inbox *inbox.Service
	// RevealGuard checks a request to read a saved login's password (nil: none needed).
	RevealGuard RevealGuard
}

// ForEngine is every service of an open engine, as both doors hand them to the table: the
// desktop window and `clusterspace serve` (which adds its RevealGuard) serve the same calls.
func ForEngine(eng *engine.Engine, version string) Services {
	return Services{Version: version, Workspaces: eng.Workspaces, Providers: eng.Providers,
		Terminals: eng.Terminals, Browsers: eng.Browsers, Panes: eng.Panes, Goals: eng.Goals, Chat: eng.Chat,
		Fleets: eng.Fleets, Land: eng.Land, SSH: eng.SSH, Recipes: eng.Recipes, Logins: eng.Logins, Catalog: eng.Catalog,
		Settings: eng.Store, ConfigDir: eng.ConfigDir, Plugins: eng.Plugins, MCP: eng.MCP, Review: eng.Review, Inbox: eng.Inbox}
}

// New declares every call over the services.
func New(s Services) *rpc.Table {
	t := rpc.NewTable()
	addWorkspaces(t, s)
	addProviders(t, s)
	addTerminals(t, s)
	addGoals(t, s)
	addChat(t, s)
	addFleets(t, s)
	addLand(t, s)
	addAgents(t, s)
	addAgentKeys(t, s)
	addCatalog(t, s)
	addExtensions(t, s)
	addBrowsers(t, s)
	addRecipes(t, s)
	addLogins(t, s)
	addReview(t, s)
	addInbox(t, s)
	return t
}
