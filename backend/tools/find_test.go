package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/tools"
)

// Search ranks by the query's words in names and descriptions, a rare word above a common
// one, and leaves weak neighbours of a clear match out. (TestFindToolsFindsByWhatTheyDo in
// backend/goal runs it over the app's own tools.)
func TestSearchRanksByWhatToolsDo(t *testing.T) {
	t.Parallel()
	defs := []tools.Definition{
		{Name: "browser_save_pdf", Description: "Print the page to a PDF file."},
		{Name: "browser_save_html", Description: "Save the page's current HTML to a file."},
		{Name: "browser_get_content", Description: "Read the page's visible text."},
		{Name: "browser_fill_login", Description: "Fill the user name and password the user saved for the page's site."},
		{Name: "assign_task", Description: "Hand a task to the agent in another pane."},
		{Name: "maximize_pane", Description: "Show a pane alone, filling the workspace."},
	}
	for query, want := range map[string][]string{
		"save the page as PDF":           {"browser_save_pdf"},
		"save the page":                  {"browser_save_html", "browser_save_pdf"},
		"log in with the saved password": {"browser_fill_login"},
		"hand a task to another pane":    {"assign_task"},
		"maximize_pane":                  {"maximize_pane"},
		"teleport":                       nil,
	} {
		var got []string
		for _, d := range tools.Search(defs, query, 5) {
			got = append(got, d.Name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q found %v, want %v", query, got, want)
		}
	}
	if got := tools.Search(defs, "the page", 2); len(got) != 2 {
		t.Errorf("limit 2: %v", got)
	}
}

// What find_tools writes is what the agent reads back; it answers over the tools not offered
// up front, and an empty query is the model's mistake.
func TestFindToolsAnswersWhatTheAgentReadsBack(t *testing.T) {
	t.Parallel()
	defs := []tools.Definition{{Name: "browser_save_pdf", Description: "Print the page to a PDF file. More."}, {Name: "mcp__files__read", Description: "Read: a file"}}
	text := tools.FoundText("pdf", defs)
	if got := tools.FoundTools(text); !slices.Equal(got, []string{"browser_save_pdf", "mcp__files__read"}) {
		t.Errorf("read back %v from:\n%s", got, text)
	}
	if !strings.Contains(text, "- browser_save_pdf: Print the page to a PDF file.\n") || strings.Contains(text, "More") {
		t.Errorf("one line each:\n%s", text)
	}
	if got := tools.FoundTools(tools.FoundText("x", nil)); len(got) != 0 {
		t.Errorf("nothing found, yet read %v", got)
	}

	r := tools.NewRegistry()
	noop := func(context.Context, tools.Call, struct{}) (tools.Result, error) { return tools.Result{}, nil }
	r.Register(tools.New("write_to_terminal", "Type into a terminal pane, then save the output.", tools.WriteLocal, noop),
		tools.New("browser_save_pdf", "Print the page to a PDF file.", tools.WriteLocal, noop))
	find := tools.FindTools(r)
	r.Register(find)
	run := func(query string) tools.Result {
		res, err := find.Run(context.Background(), tools.Call{Name: tools.ToolFindTools, Args: json.RawMessage(fmt.Sprintf(`{"query":%q}`, query))})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if got := tools.FoundTools(run("save to a file").Text); !slices.Equal(got, []string{"browser_save_pdf"}) {
		t.Errorf("found %v: a core tool, or nothing", got)
	}
	if res := run("  "); !res.IsError {
		t.Errorf("an empty query: %+v", res)
	}
	if res := run("teleport"); res.IsError || !strings.Contains(res.Text, "Nothing matches") {
		t.Errorf("no match: %+v", res)
	}
}
