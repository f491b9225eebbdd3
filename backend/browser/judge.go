package browser

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/clusterspace/clusterspace/backend/llm"
)

// VisualJudgePrompt is the vision judge's whole instruction on how to answer.
const VisualJudgePrompt = `You are a strict visual judge of a web page screenshot. You are given the screenshot and a description of the state the page is expected to be in.
Judge only from what is visible in the screenshot: not from what an agent says it did, not from what is likely.
Answer in exactly two lines:
Line 1: exactly YES (the screenshot clearly shows the expected state), NO (it clearly does not), or UNCLEAR (the screenshot cannot tell: hidden, cut off, still loading, too small to read).
Line 2: one sentence giving the reason, naming what you see.`

// DescribePrompt asks the vision model to describe a page for an agent that will act on it.
const DescribePrompt = `Describe this web page screenshot for an agent that will act on the page: what page it is, its main content, any message, error or dialog shown, and the interactive elements (buttons, links, fields, with their labels and rough positions). Be concise and factual; do not guess what is not visible.`

// The verdicts of the vision judge.
const (
	VerdictYes     = "YES"
	VerdictNo      = "NO"
	VerdictUnclear = "UNCLEAR"
)

// judgeMaxTokens bounds the judge's reply: two lines; describeMaxTokens a page's description.
const (
	judgeMaxTokens    = 300
	describeMaxTokens = 1200
)

// ErrNoVision is returned when no vision-capable model is configured.
var ErrNoVision = errors.New("no vision model is configured: choose one in Settings → Providers → Vision model (a model that accepts images)")

// Verdict is the vision judge's answer.
type Verdict struct {
	Verdict     string `json:"verdict"` // YES | NO | UNCLEAR
	Explanation string `json:"explanation"`
}

// ParseVerdict reads the judge's reply: the first line must be YES, NO or UNCLEAR (case and
// trailing punctuation aside); anything else is UNCLEAR, with the reply as the explanation.
func ParseVerdict(reply string) Verdict {
	reply = strings.TrimSpace(reply)
	first, rest, _ := strings.Cut(reply, "\n")
	word := strings.ToUpper(strings.Trim(strings.TrimSpace(first), ".!:*` \t"))
	rest = strings.TrimSpace(rest)
	switch word {
	case VerdictYes, VerdictNo, VerdictUnclear:
		if rest == "" {
			rest = "(the judge gave no reason)"
		}
		return Verdict{Verdict: word, Explanation: firstLine(rest)}
	}
	if reply == "" {
		reply = "(an empty reply)"
	}
	return Verdict{Verdict: VerdictUnclear, Explanation: "the judge did not answer YES, NO or UNCLEAR: " + clipText(reply, 300)}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}

// JudgeScreenshot asks a vision model whether the screenshot shows the expected state.
func JudgeScreenshot(ctx context.Context, p llm.Provider, model string, png []byte, expected string) (Verdict, error) {
	if p == nil {
		return Verdict{}, ErrNoVision
	}
	req := llm.Request{System: VisualJudgePrompt, Model: model, MaxTokens: judgeMaxTokens,
		Messages: []llm.Message{llm.UserText("EXPECTED STATE:\n"+strings.TrimSpace(expected)+"\n\nThe screenshot is attached. Answer in the two-line format.",
			llm.Image{MediaType: "image/png", Data: png})}}
	reply, err := p.Complete(ctx, req)
	if err != nil {
		return Verdict{}, fmt.Errorf("the vision model could not answer: %w", err)
	}
	return ParseVerdict(reply.Message.Text()), nil
}

// DescribeScreenshot asks a vision model to describe the screenshot (with an extra prompt).
func DescribeScreenshot(ctx context.Context, p llm.Provider, model string, png []byte, prompt string) (string, error) {
	if p == nil {
		return "", ErrNoVision
	}
	text := DescribePrompt
	if strings.TrimSpace(prompt) != "" {
		text += "\n\nAlso: " + strings.TrimSpace(prompt)
	}
	reply, err := p.Complete(ctx, llm.Request{Model: model, MaxTokens: describeMaxTokens,
		Messages: []llm.Message{llm.UserText(text, llm.Image{MediaType: "image/png", Data: png})}})
	if err != nil {
		return "", fmt.Errorf("the vision model could not answer: %w", err)
	}
	return strings.TrimSpace(reply.Message.Text()), nil
}
