package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/clusterspace/clusterspace/backend/browser"
	"github.com/clusterspace/clusterspace/backend/llm"
)

// Vision supplies the model that judges screenshots: a provider and the name of a model on
// it that accepts images. A nil provider means none is configured; the settings may change
// while the app runs, so the tools ask at every call.
type Vision interface {
	VisionModel() (llm.Provider, string)
}

// VisionFunc adapts a function to Vision.
type VisionFunc func() (llm.Provider, string)

func (f VisionFunc) VisionModel() (llm.Provider, string) { return f() }

// shotResult is a saved screenshot as the model gets it: path and size, and a downscaled JPEG.
func shotResult(what string, s browser.Shot) Result {
	return Result{Text: fmt.Sprintf("Saved %s to %s (%d bytes, %dx%d).", what, s.Path, s.Bytes, s.Width, s.Height),
		Images: []Image{{MediaType: "image/jpeg", Data: s.Thumbnail, Path: s.Path}}}
}

// screenshotTool saves a screenshot of the pane's viewport, or of the whole page when
// fullPage, and shows it to the model as what.
func screenshotTool(b BrowserDriver, name, desc string, fullPage bool, what string) Tool {
	return New(name, desc, ReadOnly, func(ctx context.Context, _ Call, p paneParams) (Result, error) {
		s, err := b.SaveScreenshot(ctx, p.PaneID, fullPage)
		if err != nil {
			return browserError(err)
		}
		return shotResult(what, s), nil
	})
}

func registerBrowserCapture(r *Registry, b BrowserDriver, vision Vision, gated func(Tool) Tool) {
	r.Register(
		screenshotTool(b, "browser_screenshot", "Capture the pane's viewport: saved as PNG (path and size returned), and shown to you as a picture.",
			false, "a screenshot"),
		screenshotTool(b, "browser_screenshot_full_page", "Capture the whole page, beyond the viewport: saved as PNG, and shown to you as a picture.",
			true, "a full-page screenshot"),
		New("browser_screenshot_annotated", "Capture the viewport with numbered boxes over the visible interactive elements, and list them; "+
			"then browser_click_by_index clicks one by its number.", ReadOnly,
			func(ctx context.Context, _ Call, p paneParams) (Result, error) {
				s, els, err := b.Annotate(ctx, p.PaneID)
				if err != nil {
					return browserError(err)
				}
				res := shotResult("an annotated screenshot", s)
				var sb strings.Builder
				fmt.Fprintf(&sb, "%s\n%d interactive element(s):\n", res.Text, len(els))
				for _, e := range els {
					fmt.Fprintf(&sb, "[%d] %s\n", e.Index, e)
				}
				res.Text = sb.String()
				return res, nil
			}),
		gated(New("browser_click_by_index", "Click element number index of the last browser_screenshot_annotated, with a real mouse click.", NetworkWrite,
			func(ctx context.Context, _ Call, p indexParams) (Result, error) {
				h, err := b.ClickIndex(ctx, p.PaneID, p.Index)
				if err != nil {
					return browserError(err)
				}
				return Result{Text: hitText("Clicked", h) + "\n" + pageLine(b, p.PaneID)}, nil
			})),
		New("browser_verify_visual_state", "Have a vision model judge a fresh screenshot of the pane against the state you expect, strictly: "+
			"verdict YES, NO or UNCLEAR with a reason. Use it to check outcomes instead of assuming them.", ReadOnly,
			func(ctx context.Context, _ Call, p verifyParams) (Result, error) {
				v, path, err := verifyVisual(ctx, b, vision, p.PaneID, p.ExpectedState)
				if err != nil {
					return visualError(err)
				}
				out, _ := json.Marshal(map[string]string{"verdict": v.Verdict, "explanation": v.Explanation, "screenshot_path": path})
				return Result{Text: string(out)}, nil
			}),
		New("browser_describe_screen", "Have a vision model describe the pane's page and its interactive elements from a fresh screenshot.", ReadOnly,
			func(ctx context.Context, _ Call, p describeParams) (Result, error) {
				provider, model := visionModel(vision)
				shot, err := b.SaveScreenshot(ctx, p.PaneID, false)
				if err != nil {
					return browserError(err)
				}
				text, err := browser.DescribeScreenshot(ctx, provider, model, shot.PNG, p.Prompt)
				if err != nil {
					return visualError(err)
				}
				return Result{Text: fmt.Sprintf("%s\n(screenshot: %s)", text, shot.Path)}, nil
			}),
	)
}

func visionModel(v Vision) (llm.Provider, string) {
	if v == nil {
		return nil, ""
	}
	return v.VisionModel()
}

// visualError: no vision model is the user's setting to change, told to the model so it
// can say so; other failures are the browser's or the provider's.
func visualError(err error) (Result, error) {
	if errors.Is(err, browser.ErrNoVision) {
		return Errorf("%v. Until then, check the page with browser_screenshot or browser_get_content.", err), nil
	}
	return browserError(err)
}

// verifyVisual captures the pane, saves the PNG and asks the vision judge.
func verifyVisual(ctx context.Context, b BrowserDriver, vision Vision, paneID, expected string) (browser.Verdict, string, error) {
	if strings.TrimSpace(expected) == "" {
		return browser.Verdict{}, "", &browser.PageError{Msg: "expected_state is empty: describe what the page should show"}
	}
	provider, model := visionModel(vision)
	if provider == nil {
		return browser.Verdict{}, "", browser.ErrNoVision
	}
	shot, err := b.SaveScreenshot(ctx, paneID, false)
	if err != nil {
		return browser.Verdict{}, "", err
	}
	v, err := browser.JudgeScreenshot(ctx, provider, model, shot.PNG, expected)
	return v, shot.Path, err
}

// VisualCheck is the goal runner's visual criterion: it captures the pane itself and asks
// the vision judge whether question holds, so the agent's own account is not what is
// judged. It passes only on YES; a missing vision model or pane is an error (the check
// could not run).
func VisualCheck(ctx context.Context, b BrowserDriver, judge Vision, paneID, question string) (bool, string, error) {
	v, path, err := verifyVisual(ctx, b, judge, paneID, question)
	if err != nil {
		return false, "", err
	}
	detail := fmt.Sprintf("The vision judge answered %s to %q: %s (screenshot: %s)", v.Verdict, question, v.Explanation, path)
	return v.Verdict == browser.VerdictYes, detail, nil
}
