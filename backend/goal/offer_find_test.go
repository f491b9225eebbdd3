package goal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/tools"
)

// find_tools over the app's own tools (engineTools): it finds them by what they do, best
// first, and never one every request carries anyway.
func TestFindToolsFindsByWhatTheyDo(t *testing.T) {
	t.Parallel()
	r, _ := engineTools(t)
	find, ok := r.Get(tools.ToolFindTools)
	if !ok {
		t.Fatal("the app has no find_tools")
	}
	groups := map[string]tools.Group{}
	for _, d := range r.Definitions() {
		groups[d.Name] = tools.GroupOf(d)
	}
	for query, want := range map[string]string{
		"save the page as PDF":           "browser_save_pdf",
		"hand a task to another pane":    "assign_task",
		"maximize a pane":                "maximize_pane",
		"upload a file":                  "browser_set_files",
		"log in with the saved password": "browser_fill_login",
		"run a saved recipe":             "browser_run_recipe",
		"read the cookies":               "browser_get_cookies",
		"navigate to a URL":              "browser_navigate",
		"share context with the others":  "share_context",
		"drag and drop":                  "browser_drag",
	} {
		res, err := find.Run(context.Background(), tools.Call{Name: tools.ToolFindTools, PaneID: "terminal-1",
			Args: json.RawMessage(fmt.Sprintf(`{"query":%q}`, query))})
		found := tools.FoundTools(res.Text)
		if err != nil || res.IsError || len(found) == 0 || found[0] != want {
			t.Errorf("%q found %v, want %s first (%v):\n%s", query, found, want, err, res.Text)
		}
		for _, n := range found {
			if groups[n] == tools.GroupCore {
				t.Errorf("%q found %s, which every request carries", query, n)
			}
		}
	}
}

// The grouping table names only tools the app registers, and every browser tool is offered
// with a browser pane or found: a tool renamed in its family but not in the table would
// silently join the core set.
func TestTheGroupsFitTheAppsTools(t *testing.T) {
	t.Parallel()
	r, _ := engineTools(t)
	groups := map[string]tools.Group{}
	for _, d := range r.Definitions() {
		groups[d.Name] = tools.GroupOf(d)
	}
	for name := range tools.GroupTable() {
		if _, ok := groups[name]; !ok {
			t.Errorf("the grouping table names %s, which the app does not register", name)
		}
	}
	var core []string
	for name, g := range groups {
		if strings.HasPrefix(name, "browser_") && g != tools.GroupBrowser && g != tools.GroupFound {
			t.Errorf("%s is %s", name, g)
		}
		if g == tools.GroupCore {
			core = append(core, name)
		}
	}
	slices.Sort(core)
	if len(core) > maxShellTools || !slices.Contains(core, tools.ToolFindTools) {
		t.Errorf("%d core tools: %v", len(core), core)
	}
}
