package llm

import (
	"strings"
	"testing"
)

func TestEstimateTokens(t *testing.T) {
	t.Parallel()
	if got := EstimateTokens(UserText(strings.Repeat("x", 400))); got != 104 {
		t.Errorf("400 chars = %d tokens, want 104", got)
	}
	withImage := UserText("look", Image{MediaType: "image/png", Data: []byte("png")})
	if got := EstimateTokens(withImage); got < imageTokens {
		t.Errorf("an image counts %d tokens, want at least %d", got, imageTokens)
	}
	shot := ToolMessage(ToolResult{CallID: "c", Text: "ok", Images: []Image{{MediaType: "image/png", Data: []byte("png")}}})
	if got := EstimateTokens(shot); got < imageTokens {
		t.Errorf("a screenshot result counts %d tokens, want at least %d", got, imageTokens)
	}
}
