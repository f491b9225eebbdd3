package tools

import (
	"context"
	"testing"

	"github.com/clusterspace/clusterspace/backend/panes"
)

// mcpSource is an MCP server's tools, as the registry sees them.
type mcpSource struct{ tools []Tool }

func (s mcpSource) Kind() string  { return "mcp" }
func (s mcpSource) Tools() []Tool { return s.tools }

// alwaysOn is a source tool the person's config marks to be offered with every request.
type alwaysOn struct{ Tool }

func (alwaysOn) Upfront() bool { return true }

// Built-in tools are grouped by name (unknown ones are core, new browser_* ones browser);
// a plugin is always offered, an MCP server's tool is found unless it is marked Upfront.
func TestGroupOfEachKindOfTool(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	r.Register(newTool("write_to_terminal", ReadOnly), newTool("browser_new_thing", ReadOnly), newTool("browser_save_pdf", WriteLocal),
		newTool("assign_task", WriteLocal), newTool("focus_pane", ReadOnly), newTool("my_own_tool", ReadOnly))
	r.AddSource(&fakeSource{tools: []Tool{newTool("word_count", ReadOnly)}})
	r.AddSource(mcpSource{tools: []Tool{newTool("mcp__gh__issues", NetworkGet), alwaysOn{newTool("mcp__gh__pr", NetworkGet)}}})
	want := map[string]Group{
		"write_to_terminal": GroupCore, "my_own_tool": GroupCore, "browser_new_thing": GroupBrowser, "browser_save_pdf": GroupFound,
		"assign_task": GroupFleet, "focus_pane": GroupFound, "word_count": GroupCore, "mcp__gh__issues": GroupFound, "mcp__gh__pr": GroupCore,
	}
	for _, d := range r.Definitions() {
		if got := GroupOf(d); got != want[d.Name] {
			t.Errorf("%s (source %q) is %s, want %s", d.Name, d.Source, got, want[d.Name])
		}
		delete(want, d.Name)
	}
	if len(want) != 0 {
		t.Errorf("not listed: %v", want)
	}
}

// paneKinds is a workspace of panes of the given kinds; fail makes it unreadable.
type paneKinds struct {
	kinds []string
	fail  bool
}

func (p paneKinds) List(ctx context.Context, c panes.Caller, cursor string, limit int) (panes.Page, error) {
	if p.fail {
		return panes.Page{}, panes.ErrNoWorkspace
	}
	var page panes.Page
	for _, k := range p.kinds {
		page.Items = append(page.Items, panes.Item{Kind: k})
	}
	return page, nil
}

// A workspace with a started browser pane calls for the browser tools; one whose only
// browser pane has not started (listed "empty"), or that cannot be read, or no panes at all,
// calls for nothing.
func TestSituationSeesABrowserPane(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	caller := Call{PaneID: "p"}
	if got := r.Situation(context.Background(), caller); got != nil {
		t.Errorf("without panes: %v", got)
	}
	for _, c := range []struct {
		ws   paneKinds
		want bool
	}{
		{paneKinds{kinds: []string{"terminal", "browser"}}, true},
		{paneKinds{kinds: []string{"terminal", "empty"}}, false},
		{paneKinds{fail: true}, false},
	} {
		r.SetPanes(c.ws)
		if got := r.Situation(context.Background(), caller); (len(got) == 1 && got[0] == GroupBrowser) != c.want {
			t.Errorf("%+v: %v", c.ws, got)
		}
	}
	if got := r.Situation(context.Background(), Call{}); got != nil {
		t.Errorf("a caller of no workspace: %v", got)
	}
}
