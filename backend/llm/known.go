package llm

import "strings"

// KnownPrices are the published list prices of well-known models, in USD per million tokens,
// with their prompt-cache prices: Anthropic reads cost a tenth of input and writes 1.25×;
// OpenAI cached input is a quarter to a tenth of input, and writing costs nothing extra.
// Settings → Prices starts from these and the user's entries override them. A model's name
// matches its longest entry prefix (see Prices.For), so dated snapshots are priced too.
func KnownPrices() Prices {
	return Prices{
		"claude-opus-4-5":   {InputPerMTok: 5, OutputPerMTok: 25, CachedInputPerMTok: 0.5, CacheWritePerMTok: 6.25},
		"claude-opus-4-1":   {InputPerMTok: 15, OutputPerMTok: 75, CachedInputPerMTok: 1.5, CacheWritePerMTok: 18.75},
		"claude-opus-4":     {InputPerMTok: 15, OutputPerMTok: 75, CachedInputPerMTok: 1.5, CacheWritePerMTok: 18.75},
		"claude-sonnet-4":   {InputPerMTok: 3, OutputPerMTok: 15, CachedInputPerMTok: 0.3, CacheWritePerMTok: 3.75},
		"claude-3-7-sonnet": {InputPerMTok: 3, OutputPerMTok: 15, CachedInputPerMTok: 0.3, CacheWritePerMTok: 3.75},
		"claude-haiku-4-5":  {InputPerMTok: 1, OutputPerMTok: 5, CachedInputPerMTok: 0.1, CacheWritePerMTok: 1.25},
		"claude-3-5-haiku":  {InputPerMTok: 0.8, OutputPerMTok: 4, CachedInputPerMTok: 0.08, CacheWritePerMTok: 1},
		"gpt-4o":            {InputPerMTok: 2.5, OutputPerMTok: 10, CachedInputPerMTok: 1.25, CacheWritePerMTok: 2.5},
		"gpt-4o-mini":       {InputPerMTok: 0.15, OutputPerMTok: 0.6, CachedInputPerMTok: 0.075, CacheWritePerMTok: 0.15},
		"gpt-4.1":           {InputPerMTok: 2, OutputPerMTok: 8, CachedInputPerMTok: 0.5, CacheWritePerMTok: 2},
		"gpt-4.1-mini":      {InputPerMTok: 0.4, OutputPerMTok: 1.6, CachedInputPerMTok: 0.1, CacheWritePerMTok: 0.4},
		"gpt-4.1-nano":      {InputPerMTok: 0.1, OutputPerMTok: 0.4, CachedInputPerMTok: 0.025, CacheWritePerMTok: 0.1},
		"gpt-5":             {InputPerMTok: 1.25, OutputPerMTok: 10, CachedInputPerMTok: 0.125, CacheWritePerMTok: 1.25},
		"gpt-5-mini":        {InputPerMTok: 0.25, OutputPerMTok: 2, CachedInputPerMTok: 0.025, CacheWritePerMTok: 0.25},
		"gpt-5-nano":        {InputPerMTok: 0.05, OutputPerMTok: 0.4, CachedInputPerMTok: 0.005, CacheWritePerMTok: 0.05},
		"o3":                {InputPerMTok: 2, OutputPerMTok: 8, CachedInputPerMTok: 0.5, CacheWritePerMTok: 2},
		"o4-mini":           {InputPerMTok: 1.1, OutputPerMTok: 4.4, CachedInputPerMTok: 0.275, CacheWritePerMTok: 1.1},
	}
}

// knownWindows are the context windows of well-known models, in tokens, by name prefix
// (longest wins). Open models list the size they were trained for; a local server may run
// them smaller, which the context-length recovery then learns.
var knownWindows = map[string]int{
	"claude-":       200_000,
	"gpt-4o":        128_000,
	"gpt-4-turbo":   128_000,
	"gpt-4.1":       1_047_576,
	"gpt-5":         400_000,
	"o1":            200_000,
	"o3":            200_000,
	"o4-mini":       200_000,
	"gpt-3.5":       16_385,
	"llama3.1":      128_000,
	"llama3.2":      128_000,
	"llama3.3":      128_000,
	"llama3":        8_192,
	"qwen2.5":       32_768,
	"qwen3":         40_960,
	"mistral":       32_768,
	"gemma3":        128_000,
	"deepseek-r1":   128_000,
	"deepseek-v3":   128_000,
	"deepseek-chat": 128_000,
}

// KnownWindow is the context window of a well-known model (0 if the model is not known).
// Names are matched without case and without a vendor prefix ("openai/gpt-4o",
// "anthropic/claude-…" as OpenRouter spells them).
func KnownWindow(model string) int {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	best, window := "", 0
	for prefix, w := range knownWindows {
		if strings.HasPrefix(m, prefix) && len(prefix) > len(best) {
			best, window = prefix, w
		}
	}
	return window
}
