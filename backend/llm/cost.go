package llm

import "strings"

// Usage is the tokens one call consumed.
type Usage struct {
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
}

// Add returns the sum of two usages.
func (u Usage) Add(v Usage) Usage {
	return Usage{InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens}
}

// Total is input plus output tokens.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	InputPerMTok  float64 `json:"inputPerMTok"`
	OutputPerMTok float64 `json:"outputPerMTok"`
}

// Cost is what usage cost at price, in US dollars.
func Cost(u Usage, p Price) float64 {
	return (float64(u.InputTokens)*p.InputPerMTok + float64(u.OutputTokens)*p.OutputPerMTok) / 1e6
}

// Prices maps model names to prices; it lives in settings.
type Prices map[string]Price

// For finds the price of a model: an exact entry, else the longest entry the model name
// starts with, so "claude-sonnet-4-5" prices "claude-sonnet-4-5-20250929". Case is ignored.
func (ps Prices) For(model string) (Price, bool) {
	model = strings.ToLower(model)
	best, found := "", false
	var price Price
	for name, p := range ps {
		n := strings.ToLower(name)
		if n == model {
			return p, true
		}
		if strings.HasPrefix(model, n) && len(n) > len(best) {
			best, price, found = n, p, true
		}
	}
	return price, found
}

// Cost is what usage of model cost, and whether the model has a price.
func (ps Prices) Cost(model string, u Usage) (float64, bool) {
	p, ok := ps.For(model)
	if !ok {
		return 0, false
	}
	return Cost(u, p), true
}
