package llm

import "strings"

// Usage is the tokens one call consumed. InputTokens counts every input token, cached or
// not; CachedInputTokens and CacheWriteTokens say how many of them the provider read from
// or wrote to its prompt cache (OpenAI's prompt_tokens_details.cached_tokens; Anthropic's
// cache_read_input_tokens and cache_creation_input_tokens), which are priced apart.
type Usage struct {
	InputTokens       int `json:"inputTokens"`
	OutputTokens      int `json:"outputTokens"`
	CachedInputTokens int `json:"cachedInputTokens,omitempty"`
	CacheWriteTokens  int `json:"cacheWriteTokens,omitempty"`
}

// Add returns the sum of two usages.
func (u Usage) Add(v Usage) Usage {
	return Usage{InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens,
		CachedInputTokens: u.CachedInputTokens + v.CachedInputTokens, CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens}
}

// Total is input plus output tokens.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }

// UncachedInput is the input billed at the full input price: neither read from nor written
// to the cache.
func (u Usage) UncachedInput() int {
	return max(0, u.InputTokens-u.CachedInputTokens-u.CacheWriteTokens)
}

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	InputPerMTok  float64 `json:"inputPerMTok"`
	OutputPerMTok float64 `json:"outputPerMTok"`
	// CachedInputPerMTok prices input read from the prompt cache (about a tenth of input on
	// both APIs); 0 means not set, and such tokens cost the full input price.
	CachedInputPerMTok float64 `json:"cachedInputPerMTok,omitempty"`
	// CacheWritePerMTok prices input written to the cache (Anthropic: 1.25× input; OpenAI
	// charges nothing extra); 0 means not set: the full input price.
	CacheWritePerMTok float64 `json:"cacheWritePerMTok,omitempty"`
}

// cached and write are the effective cache prices: an unset one is the input price, so a
// table without cache prices never undercounts.
func (p Price) cached() float64 {
	if p.CachedInputPerMTok > 0 {
		return p.CachedInputPerMTok
	}
	return p.InputPerMTok
}

func (p Price) write() float64 {
	if p.CacheWritePerMTok > 0 {
		return p.CacheWritePerMTok
	}
	return p.InputPerMTok
}

// Cost is what usage cost at price, in US dollars: uncached input, cache reads, cache
// writes and output each at their own price.
func Cost(u Usage, p Price) float64 {
	return (float64(u.UncachedInput())*p.InputPerMTok + float64(u.CachedInputTokens)*p.cached() +
		float64(u.CacheWriteTokens)*p.write() + float64(u.OutputTokens)*p.OutputPerMTok) / 1e6
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
