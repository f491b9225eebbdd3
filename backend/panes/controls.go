package panes

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/clusterspace/clusterspace/backend/terminal"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// paneOfKind is a pane of the caller's workspace (as pane finds it) that must be of kind want
// for tool; its workspace is returned.
func (s *Service) paneOfKind(ctx context.Context, c Caller, paneID string, want workspace.Kind, tool string) (workspace.Workspace, error) {
	ws, p, err := s.pane(ctx, c, paneID)
	if err != nil {
		return ws, err
	}
	if p.Kind != want {
		return ws, wrongKind(p, want, tool)
	}
	return ws, nil
}

// wrongKind is the refusal for a tool meant for the other kind of pane.
func wrongKind(p workspace.Pane, want workspace.Kind, tool string) error {
	return fmt.Errorf("pane %s is a %s pane; %s works on %s panes (list_panes shows each pane's kind)", p.ID, p.Kind, tool, want)
}

// Focus gives a pane of the caller's workspace the keyboard focus.
func (s *Service) Focus(ctx context.Context, c Caller, paneID string) (workspace.Workspace, error) {
	ws, _, err := s.pane(ctx, c, paneID)
	if err != nil {
		return ws, err
	}
	return s.ws.Focus(ctx, ws.ID, paneID)
}

// Maximize toggles a pane between shown alone and the whole grid; it reports whether the pane
// is maximized now.
func (s *Service) Maximize(ctx context.Context, c Caller, paneID string) (bool, error) {
	ws, _, err := s.pane(ctx, c, paneID)
	if err != nil {
		return false, err
	}
	ws, err = s.ws.ToggleMaximize(ctx, ws.ID, paneID)
	return ws.MaximizedPaneID == paneID, err
}

// CreateWorkspace adds a workspace of rows x cols terminal panes and opens it in the window.
// A confined goal's new panes are inside its boundary: their shells start in its sandbox.
func (s *Service) CreateWorkspace(ctx context.Context, c Caller, name string, rows, cols int) (workspace.Workspace, error) {
	ws, err := s.ws.CreateGrid(ctx, name, rows, cols)
	if err != nil {
		return ws, err
	}
	for _, p := range ws.Panes {
		s.takeIn(c, p.ID)
	}
	return ws, nil
}

// SwitchTerminalTab shows another tab of a terminal pane.
func (s *Service) SwitchTerminalTab(ctx context.Context, c Caller, paneID, tabID string) error {
	_, err := s.paneOfKind(ctx, c, paneID, workspace.KindTerminal, "switch_terminal_tab")
	if err != nil {
		return err
	}
	if err := s.terms.SetActive(paneID, tabID); err != nil {
		return fmt.Errorf("%v — list_panes shows the pane's tab ids", err)
	}
	return nil
}

// OpenBrowserTab opens a tab (at url, or a blank page) in a browser pane and shows it.
func (s *Service) OpenBrowserTab(ctx context.Context, c Caller, paneID, url string) (string, error) {
	ws, err := s.paneOfKind(ctx, c, paneID, workspace.KindBrowser, "open_browser_tab")
	if err != nil {
		return "", err
	}
	if t, opened, err := s.browsers.Ensure(ctx, paneID, ws.ID, url); opened || err != nil {
		return t.TabID, err
	}
	t, err := s.browsers.NewTab(ctx, paneID, url)
	return t.TabID, err
}

// SwitchBrowserTab shows another tab of a browser pane.
func (s *Service) SwitchBrowserTab(ctx context.Context, c Caller, paneID, tabID string) error {
	_, err := s.paneOfKind(ctx, c, paneID, workspace.KindBrowser, "switch_browser_tab")
	if err != nil {
		return err
	}
	if _, err := s.browsers.Activate(ctx, paneID, tabID); err != nil {
		return fmt.Errorf("%v — list_panes shows the pane's tab ids", err)
	}
	return nil
}

// CloseBrowserTab closes a tab of a browser pane; the last tab stays (a pane shows something).
func (s *Service) CloseBrowserTab(ctx context.Context, c Caller, paneID, tabID string) error {
	_, err := s.paneOfKind(ctx, c, paneID, workspace.KindBrowser, "close_browser_tab")
	if err != nil {
		return err
	}
	tabs := s.browsers.Tabs(paneID)
	known := false
	for _, t := range tabs {
		known = known || t.TabID == tabID
	}
	if !known {
		return fmt.Errorf("tab_id %q is not a tab of pane %s — list_panes shows the pane's tab ids", tabID, paneID)
	}
	if len(tabs) == 1 {
		return fmt.Errorf("tab_id %q is the last tab of pane %s: open another tab first, or navigate this one", tabID, paneID)
	}
	return s.browsers.CloseTab(paneID, tabID)
}

// Reconnect brings a pane back: a terminal tab gets a fresh process (an SSH tab re-attaches
// its tmux session), a browser pane's tab a new page at its last URL.
func (s *Service) Reconnect(ctx context.Context, c Caller, paneID, tabID string) (string, error) {
	ws, p, err := s.pane(ctx, c, paneID)
	if err != nil {
		return "", err
	}
	switch p.Kind {
	case workspace.KindTerminal:
		if len(s.terms.Tabs(paneID)) == 0 {
			_, err := s.StartTerminal(ctx, ws, p, 0, 0)
			return "started the pane's terminal", err
		}
		if err := s.terms.Restart(ctx, paneID, tabID); err != nil {
			return "", err
		}
		return "restarted the terminal's process", nil
	default:
		if _, opened, err := s.browsers.Ensure(ctx, paneID, ws.ID, ""); opened || err != nil {
			return "opened a browser page", err
		}
		if tabID != "" {
			if _, err := s.browsers.Activate(ctx, paneID, tabID); err != nil {
				return "", err
			}
		}
		t, err := s.browsers.Reconnect(ctx, paneID)
		return "reloaded the page in a new browser target at " + t.URL, err
	}
}

// BusyError says what runs in a pane that a conversion would end.
type BusyError struct {
	PaneID string
	What   []string
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("pane %s is running %s; converting it ends that: ask first, then convert with force", e.PaneID, strings.Join(e.What, ", "))
}

// GoalInPaneError refuses to convert or relaunch a pane a goal works in.
type GoalInPaneError struct{ PaneID, GoalID string }

func (e *GoalInPaneError) Error() string {
	return fmt.Sprintf("goal %s works in pane %s: it cannot be converted or relaunched until the goal ends (abort or pause it first)", e.GoalID, e.PaneID)
}

// Busy lists what runs in a pane's terminal tabs (their foreground programs).
func (s *Service) Busy(paneID string) []string { return s.terms.Busy(paneID) }

// Convert turns a pane into a browser (at url) or a terminal (from a launch template). The
// caller's own pane and a pane a goal works in are refused; a pane whose terminal runs a
// command is refused with a BusyError unless force. What the pane held is ended first.
func (s *Service) Convert(ctx context.Context, c Caller, paneID string, kind workspace.Kind, url, template string, force bool) (workspace.Workspace, error) {
	ws, p, err := s.pane(ctx, c, paneID)
	if err != nil {
		return ws, err
	}
	if !kind.Valid() {
		return ws, &workspace.FieldError{Field: "kind", Msg: fmt.Sprintf("is %q; must be terminal or browser", kind)}
	}
	if paneID == c.PaneID {
		return ws, &workspace.FieldError{Field: "pane_id", Msg: "that is your own pane: you work in it, so it cannot be converted"}
	}
	if goalID, ok := s.goalIn(paneID); ok {
		return ws, &GoalInPaneError{PaneID: paneID, GoalID: goalID}
	}
	var launch *workspace.Launch
	if kind == workspace.KindTerminal && template != "" {
		l, err := s.ws.LaunchFor(workspace.Launch{Template: template})
		if err != nil {
			return ws, err
		}
		launch = &l
	}
	if p.Kind == kind {
		return ws, &workspace.FieldError{Field: "pane_id", Msg: fmt.Sprintf("pane %s is already a %s pane", paneID, kind)}
	}
	if busy := s.Busy(paneID); len(busy) > 0 && !force {
		return ws, &BusyError{PaneID: paneID, What: busy}
	}
	s.End(paneID)
	s.takeIn(c, paneID) // a confined goal's converted pane is inside its boundary
	ws, err = s.ws.UpdatePane(ctx, ws.ID, paneID, workspace.PanePatch{Kind: &kind})
	if err != nil {
		return ws, err
	}
	if kind == workspace.KindBrowser {
		// The window's view of the pane may open its page first (it mounts on the change
		// above): then the asked-for address is loaded in that page.
		_, opened, err := s.browsers.Ensure(ctx, paneID, ws.ID, url)
		if err == nil && !opened && url != "" {
			_, err = s.browsers.Navigate(ctx, paneID, url)
		}
		return ws, err
	}
	if launch != nil {
		if ws, err = s.ws.SetLaunch(ctx, ws.ID, paneID, launch); err != nil {
			return ws, err
		}
	}
	for _, np := range ws.Panes {
		if np.ID == paneID {
			_, err = s.StartTerminal(ctx, ws, np, 0, 0)
		}
	}
	return ws, err
}

// End stops everything a pane holds: its terminal tabs' processes and its browser tabs.
func (s *Service) End(paneID string) {
	s.terms.ClosePane(paneID) // Best effort: nothing to close is fine.
	s.browsers.ClosePane(paneID)
}

// SetLaunch changes what a terminal pane runs and starts it afresh with the new settings. A
// pane whose terminal runs a command is refused with a BusyError unless force.
func (s *Service) SetLaunch(ctx context.Context, wsID, paneID string, l *workspace.Launch, force bool) (workspace.Workspace, error) {
	if goalID, ok := s.goalIn(paneID); ok {
		return workspace.Workspace{}, &GoalInPaneError{PaneID: paneID, GoalID: goalID}
	}
	if l != nil {
		if _, err := s.ws.LaunchFor(*l); err != nil {
			return workspace.Workspace{}, err // bad settings first: they change nothing either way
		}
	}
	if busy := s.Busy(paneID); len(busy) > 0 && !force {
		return workspace.Workspace{}, &BusyError{PaneID: paneID, What: busy}
	}
	ws, err := s.ws.SetLaunch(ctx, wsID, paneID, l)
	if err != nil {
		return ws, err
	}
	cols, rows := 0, 0
	if tabs := s.terms.Tabs(paneID); len(tabs) > 0 {
		cols, rows = tabs[0].Cols, tabs[0].Rows
	}
	s.terms.ClosePane(paneID)
	for _, p := range ws.Panes {
		if p.ID == paneID {
			_, err = s.StartTerminal(ctx, ws, p, cols, rows)
		}
	}
	return ws, err
}

// StartTerminal makes sure a terminal pane has its terminal, started from its launch settings
// (the person's shell when it has none). A launch command that is not installed starts a
// shell that says so and how to install it, instead of a tab that dies at once.
func (s *Service) StartTerminal(ctx context.Context, ws workspace.Workspace, p workspace.Pane, cols, rows int) (terminal.TabInfo, error) {
	return s.terms.Ensure(ctx, launchSpec(p, cols, rows, s.ws.Templates()))
}

// LaunchSpec is the terminal spec a pane's launch settings give (with the built-in templates'
// install hints).
func LaunchSpec(p workspace.Pane, cols, rows int) terminal.Spec {
	return launchSpec(p, cols, rows, workspace.Templates)
}

func launchSpec(p workspace.Pane, cols, rows int, templates []workspace.Template) terminal.Spec {
	spec := terminal.Spec{PaneID: p.ID, Cols: cols, Rows: rows}
	l := p.Launch
	if l == nil {
		return spec
	}
	spec.Dir, spec.Env = l.Dir, l.Env
	if l.Command == "" {
		return spec
	}
	hint := ""
	if t, ok := workspace.TemplateIn(templates, l.Template); ok && t.Install != "" {
		hint = " Install it with: " + t.Install
	}
	missing := fmt.Sprintf("%s is not installed (not found on PATH).%s This pane runs a shell instead; restart the pane once it is installed.", l.Command, hint)
	// /bin/sh checks for the command in the pane's own PATH, so the check and the run agree.
	script := `if command -v -- "$0" >/dev/null 2>&1; then exec "$0" "$@"; fi
printf '\033[33m%s\033[0m\n' ` + shellQuote(missing) + `
exec "${SHELL:-/bin/bash}" -i`
	spec.Command = append([]string{"/bin/sh", "-c", script, l.Command}, l.Args...)
	// The program runs through that shell, so its recogniser (its screen's working, idle and
	// asking states) is named here: the command's first word would be /bin/sh.
	for _, name := range []string{filepath.Base(l.Command), l.Template} {
		if _, ok := terminal.Recognisers[name]; ok && spec.Agent == "" {
			spec.Agent = name
		}
	}
	return spec
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Installed reports whether a template's command is on this process's PATH.
func Installed(t workspace.Template) bool {
	if t.Command == "" {
		return true
	}
	_, err := exec.LookPath(t.Command)
	return err == nil
}

// EnsureTerminal gives a pane its terminal if it has none, from the pane's launch settings
// (a pane in no workspace gets the plain shell): the path the window's terminal view takes.
func (s *Service) EnsureTerminal(ctx context.Context, paneID string, cols, rows int) (terminal.TabInfo, error) {
	spec := terminal.Spec{PaneID: paneID, Cols: cols, Rows: rows}
	if ws, p, err := s.ws.Find(ctx, paneID); err == nil {
		if p.Kind != workspace.KindTerminal {
			return terminal.TabInfo{}, wrongKind(p, workspace.KindTerminal, "a terminal")
		}
		return s.StartTerminal(ctx, ws, p, cols, rows)
	}
	return s.terms.Ensure(ctx, spec)
}

// TemplateInfo is a launch template with whether its command is installed here.
type TemplateInfo struct {
	workspace.Template `tstype:",extends"` // the generated TypeScript extends Template, as the JSON flattens it
	Installed          bool                `json:"installed"`
}

// Templates lists the launch templates (the config dir's over the built-ins), each with
// whether it can run here.
func (s *Service) Templates() []TemplateInfo {
	ts := s.ws.Templates()
	out := make([]TemplateInfo, len(ts))
	for i, t := range ts {
		out[i] = TemplateInfo{Template: t, Installed: Installed(t)}
	}
	return out
}

// ConvertRequest is a person's conversion of a pane (the window's pane menu).
type ConvertRequest struct {
	Kind     workspace.Kind `json:"kind"`
	URL      string         `json:"url,omitempty"`
	Template string         `json:"template,omitempty"`
	Force    bool           `json:"force,omitempty"`
}

// ConvertPane is Convert for the person at the window: any pane of workspace wsID.
func (s *Service) ConvertPane(ctx context.Context, wsID, paneID string, req ConvertRequest) (workspace.Workspace, error) {
	return s.Convert(ctx, Caller{WorkspaceID: wsID}, paneID, req.Kind, req.URL, req.Template, req.Force)
}

// Wake starts the terminal of a workspace's terminal pane that has none yet (nobody opened it
// in a window), from its launch settings; it does nothing for any other id. The agent's
// terminal tools call it, so typing into a pane list_panes showed as "empty" just works.
func (s *Service) Wake(ctx context.Context, paneID string) {
	if len(s.terms.Tabs(paneID)) > 0 {
		return
	}
	ws, p, err := s.ws.Find(ctx, paneID)
	if err != nil || p.Kind != workspace.KindTerminal {
		return
	}
	s.StartTerminal(ctx, ws, p, 0, 0) // Best effort: the tool then reports what is wrong.
}
