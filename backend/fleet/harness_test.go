package fleet_test

import (
	"context"
	"testing"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/engine"
	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/store/storetest"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// The setup that tests and benchmarks of the scheduler share: a fleet service over a real
// store and Goal Runner, without an engine (no panes or terminals), whose every goal asks
// the scripted server at url. Its goals have the goal tools and extra; the fleet's events
// go to fleetEvents.
func runnerStack(tb testing.TB, url string, opts goal.Options, fleetEvents *pubsub.Broker[fleet.Event], extra tools.Tool) (*goal.Service, *fleet.Service) {
	tb.Helper()
	ctx := context.Background()
	st, _ := storetest.Open(tb)
	reg := tools.NewRegistry()
	reg.Register(tools.GoalTools()...)
	reg.Register(extra)
	model, err := engine.ModelFor(llm.Config{Name: "scripted", Kind: "openai", BaseURL: url, Model: "scripted", MaxRetries: -1}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	goalEvents := pubsub.NewBroker[goal.Event]()
	tb.Cleanup(goalEvents.Shutdown)
	tb.Cleanup(fleetEvents.Shutdown)
	goals, err := goal.NewService(ctx, st, fixedModel{model}, reg, goalEvents, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(goals.Shutdown)
	fleets, err := fleet.NewService(ctx, st, goals, fleetEvents, fleet.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(fleets.Shutdown)
	return goals, fleets
}

// fixedModel answers every goal with the one model.
type fixedModel struct{ m agent.Model }

func (f fixedModel) Model(context.Context, string) (agent.Model, error) { return f.m, nil }
