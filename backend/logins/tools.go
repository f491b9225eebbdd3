package logins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/clusterspace/clusterspace/backend/browser"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// ToolFill is the one tool of saved logins.
const ToolFill = "browser_fill_login"

// askTimeout bounds reading the page's address and the saved login while the call is decided.
const askTimeout = 5 * time.Second

// Browser is what the fill tool needs of the browser panes; *browser.Manager implements it.
type Browser interface {
	Page(paneID string) (browser.PageInfo, error)
	FillLogin(ctx context.Context, paneID, origin, username, password string) (browser.Filled, error)
}

type fillParams struct {
	PaneID string `json:"pane_id" desc:"Id of the browser pane whose login form to fill."`
}

// fillTool is browser_fill_login. Every call that would fill something asks the person first,
// whatever the risk ceiling or an earlier "allow" (tools.AlwaysAsks for goals,
// tools.Confirmer for the chat); its arguments and result hold no password.
type fillTool struct {
	tools.Tool
	s *Service
	b Browser
}

// Tool is browser_fill_login over the saved logins and the browser panes.
func Tool(s *Service, b Browser) tools.Tool {
	t := fillTool{s: s, b: b}
	t.Tool = tools.New(ToolFill, "Fill the user name and password the user saved for the page's site (Settings → Logins) into the page's login form, "+
		"without submitting it; the user is asked first. You never see the password. Then submit the form yourself (browser_click on its button).",
		tools.NetworkWrite, t.run)
	return t
}

// saved is the login saved for the pane's page, with the page's origin.
func (t fillTool) saved(ctx context.Context, paneID string) (Login, string, bool, error) {
	page, err := t.b.Page(paneID)
	if err != nil {
		return Login{}, "", false, err
	}
	origin := browser.Origin(page.URL)
	if origin == "" {
		return Login{}, page.URL, false, nil
	}
	l, ok, err := t.s.ForOrigin(ctx, origin)
	return l, origin, ok, err
}

func (t fillTool) AlwaysAsk(ctx context.Context, args json.RawMessage) string {
	var p fillParams
	if json.Unmarshal(args, &p) != nil {
		return "" // Bad arguments fail in Run, before anything is filled.
	}
	ctx, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	l, origin, ok, err := t.saved(ctx, p.PaneID)
	switch {
	case err != nil:
		return "" // The run reports the unknown pane or the failing store; it fills nothing then.
	case !ok:
		return "" // Nothing saved for this page: the run says so and fills nothing.
	}
	return fmt.Sprintf("filling your saved login for %s (user %s) into the page in pane %s, without submitting it", origin, l.Username, p.PaneID)
}

// Confirm is AlwaysAsk for the chat, which asks for what Confirmer names.
func (t fillTool) Confirm(ctx context.Context, args json.RawMessage) string {
	return t.AlwaysAsk(ctx, args)
}

func (t fillTool) run(ctx context.Context, _ tools.Call, p fillParams) (tools.Result, error) {
	l, origin, ok, err := t.saved(ctx, p.PaneID)
	if err != nil {
		if browser.Actionable(err) {
			return tools.Errorf("%v.", err), nil
		}
		return tools.Result{}, err
	}
	if origin == "" || !ok {
		where := origin
		if where == "" {
			where = "this page"
		}
		return tools.Errorf("There is no saved login for %s: nothing was filled. The user can add one in Settings → Logins.", where), nil
	}
	pw, err := t.s.password(ctx, l)
	if err != nil {
		return tools.Errorf("The saved login for %s could not be read (%v): nothing was filled.", origin, err), nil
	}
	filled, err := t.b.FillLogin(ctx, p.PaneID, origin, l.Username, pw)
	if err != nil {
		var pe *browser.PageError
		if errors.As(err, &pe) || browser.Actionable(err) {
			return tools.Errorf("Nothing was filled: %v.", err), nil
		}
		return tools.Result{}, err
	}
	text := fmt.Sprintf("Filled the saved login for %s as %s (not submitted).", origin, l.Username)
	if filled.Username == "" {
		text = fmt.Sprintf("Filled the saved password for %s (user %s) into %s; the form has no user name field before it (not submitted).", origin, l.Username, filled.Password)
	}
	return tools.Result{Text: text}, nil
}
