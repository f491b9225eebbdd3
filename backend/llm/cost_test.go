package llm

import (
	"math"
	"testing"
)

func TestCost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		usage Usage
		price Price
		want  float64
	}{
		{"nothing", Usage{}, Price{InputPerMTok: 3, OutputPerMTok: 15}, 0},
		{"a million each way", Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}, Price{InputPerMTok: 3, OutputPerMTok: 15}, 18},
		{"small call", Usage{InputTokens: 1200, OutputTokens: 300}, Price{InputPerMTok: 2.5, OutputPerMTok: 10}, 0.006},
		{"free local model", Usage{InputTokens: 5000, OutputTokens: 5000}, Price{}, 0},
	}
	for _, tc := range tests {
		if got := Cost(tc.usage, tc.price); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: Cost = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestPricesFor(t *testing.T) {
	t.Parallel()
	ps := Prices{
		"claude-sonnet-4-5": {InputPerMTok: 3, OutputPerMTok: 15},
		"claude":            {InputPerMTok: 1, OutputPerMTok: 1},
		"gpt-4o":            {InputPerMTok: 2.5, OutputPerMTok: 10},
		"gpt-4o-mini":       {InputPerMTok: 0.15, OutputPerMTok: 0.6},
	}
	tests := []struct {
		model string
		want  Price
		ok    bool
	}{
		{"gpt-4o", Price{InputPerMTok: 2.5, OutputPerMTok: 10}, true},
		{"gpt-4o-mini", Price{InputPerMTok: 0.15, OutputPerMTok: 0.6}, true},
		{"gpt-4o-2024-08-06", Price{InputPerMTok: 2.5, OutputPerMTok: 10}, true},
		{"claude-sonnet-4-5-20250929", Price{InputPerMTok: 3, OutputPerMTok: 15}, true},
		{"CLAUDE-SONNET-4-5", Price{InputPerMTok: 3, OutputPerMTok: 15}, true},
		{"claude-haiku", Price{InputPerMTok: 1, OutputPerMTok: 1}, true},
		{"llama3", Price{}, false},
	}
	for _, tc := range tests {
		got, ok := ps.For(tc.model)
		if got != tc.want || ok != tc.ok {
			t.Errorf("For(%q) = %v, %v; want %v, %v", tc.model, got, ok, tc.want, tc.ok)
		}
	}
	if c, ok := ps.Cost("gpt-4o", Usage{InputTokens: 1_000_000, OutputTokens: 0}); !ok || c != 2.5 {
		t.Errorf("Cost(gpt-4o, 1M in) = %v, %v", c, ok)
	}
	if _, ok := ps.Cost("unknown", Usage{InputTokens: 1, OutputTokens: 1}); ok {
		t.Error("an unpriced model has a cost")
	}
	if got := (Usage{InputTokens: 1, OutputTokens: 2}).Add(Usage{InputTokens: 3, OutputTokens: 4}); got != (Usage{InputTokens: 4, OutputTokens: 6}) || got.Total() != 10 {
		t.Errorf("Add = %v", got)
	}
}
