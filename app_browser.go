package main

import (
	"context"
	"errors"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/clusterspace/clusterspace/backend/browser"
	"github.com/clusterspace/clusterspace/backend/pubsub"
)

// browserFrame is one screencast frame as the UI receives it ([]byte is base64 in JSON).
type browserFrame struct {
	PaneID string `json:"paneId"`
	browser.Frame
}

// BrowserOpen gives the pane a browser tab (at url, or blank) if it has none; returns its tabs.
func (a *App) BrowserOpen(paneID, url string, width, height int) ([]browser.TabInfo, error) {
	ws, ok := a.eng.Workspaces.WorkspaceOf(a.ctx, paneID)
	if !ok {
		return nil, errors.New("no pane " + paneID + " in any workspace")
	}
	if _, _, err := a.eng.Browsers.Ensure(a.ctx, paneID, ws, url); err != nil {
		return nil, err
	}
	if width > 0 && height > 0 {
		a.eng.Browsers.SetViewport(paneID, width, height) // Best effort: the view sends its size again.
	}
	return a.eng.Browsers.Tabs(paneID), nil
}

// BrowserTabs lists the pane's browser tabs.
func (a *App) BrowserTabs(paneID string) []browser.TabInfo { return a.eng.Browsers.Tabs(paneID) }

// BrowserNewTab opens another tab in the pane.
func (a *App) BrowserNewTab(paneID, url string) (browser.TabInfo, error) {
	return a.eng.Browsers.NewTab(a.ctx, paneID, url)
}

// BrowserCloseTab closes a tab.
func (a *App) BrowserCloseTab(paneID, tabID string) error {
	return a.eng.Browsers.CloseTab(paneID, tabID)
}

// BrowserActivate shows a tab in the pane.
func (a *App) BrowserActivate(paneID, tabID string) (browser.TabInfo, error) {
	return a.eng.Browsers.Activate(a.ctx, paneID, tabID)
}

// BrowserNavigate goes to url (a bare host gets https://).
func (a *App) BrowserNavigate(paneID, url string) (browser.PageInfo, error) {
	return a.eng.Browsers.Navigate(a.ctx, paneID, url)
}

// BrowserBack, BrowserForward and BrowserReload move through the tab's history.
func (a *App) BrowserBack(paneID string) (browser.PageInfo, error) {
	return a.eng.Browsers.Back(a.ctx, paneID)
}
func (a *App) BrowserForward(paneID string) (browser.PageInfo, error) {
	return a.eng.Browsers.Forward(a.ctx, paneID)
}
func (a *App) BrowserReload(paneID string) (browser.PageInfo, error) {
	return a.eng.Browsers.Reload(a.ctx, paneID)
}

// BrowserViewport follows the pane's size.
func (a *App) BrowserViewport(paneID string, width, height int) error {
	return a.eng.Browsers.SetViewport(paneID, width, height)
}

// BrowserReconnect recreates a crashed tab at its last URL.
func (a *App) BrowserReconnect(paneID string) (browser.TabInfo, error) {
	return a.eng.Browsers.Reconnect(a.ctx, paneID)
}

// BrowserWatch streams the pane's screencast as "browser"/"frame" events until BrowserUnwatch.
func (a *App) BrowserWatch(paneID string) error {
	started := make(chan error, 1)
	a.views.Start(a.relayCtx, "browser/"+paneID, func(ctx context.Context) {
		frames, err := a.eng.Browsers.StartScreencast(ctx, paneID)
		started <- err
		if err != nil {
			return
		}
		for f := range frames {
			runtime.EventsEmit(a.ctx, backendEvent, pubsub.Envelope{Topic: "browser", Type: "frame", Data: browserFrame{PaneID: paneID, Frame: f}})
		}
	})
	return <-started
}

// BrowserUnwatch stops the pane's screencast (the page keeps running).
func (a *App) BrowserUnwatch(paneID string) { a.views.Stop("browser/" + paneID) }

// BrowserInput forwards a mouse or keyboard event to the page as a trusted input event.
func (a *App) BrowserInput(paneID string, ev browser.InputEvent) error {
	return a.eng.Browsers.Input(paneID, ev)
}

// BrowserAnswerPrompt answers the question the pane's page asks: HTTP auth or a bad certificate.
func (a *App) BrowserAnswerPrompt(paneID string, answer browser.PromptAnswer) error {
	return a.eng.Browsers.AnswerPrompt(a.ctx, paneID, answer)
}
