package tools

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
)

// ToolFindTools finds the tools not offered up front (offer.go) by what they do.
const ToolFindTools = "find_tools"

// findLimit is how many tools one search returns and adds: enough for the action asked
// about and its near neighbours, few enough that each search adds little to every later
// request (a tool, once offered, stays in the list so the prompt cache holds).
const findLimit = 5

// summaryChars bounds the one line a found tool is described by.
const summaryChars = 160

type findToolsParams struct {
	Query string `json:"query" desc:"What you want to do, in a few words (\"save the page as PDF\", \"hand a task to another pane\"), or a tool's name."`
}

// FindTools is find_tools over r: the one tool that stands for all those not offered up
// front. What it found is written in its result, from which the agent offers those tools
// from the next request on (agent/offer.go reads them back with FoundTools): the
// conversation is the record, so a resumed goal offers the same ones.
func FindTools(r *Registry) Tool {
	return New(ToolFindTools, "Find more tools by what they do. You are offered the tools your work needs now; others wait here: "+
		"the browser tools while no browser pane is open, rarer page actions (save a page as PDF or HTML, upload files, cookies, "+
		"the person's saved logins, recipes, drag), fleets (hand tasks to the agents of other panes, share context, wait for them), "+
		"the window's layout (focus, maximize, new workspaces), and the tools of the person's MCP servers. "+
		"Returns the best matches, one line each; they are yours to call from your next turn.",
		ReadOnly, func(ctx context.Context, c Call, p findToolsParams) (Result, error) {
			q := strings.TrimSpace(p.Query)
			if q == "" {
				return Errorf("find_tools: query: say in a few words what you want to do, e.g. \"save the page as PDF\""), nil
			}
			found := Search(r.deferred(ctx, c), q, findLimit)
			return Result{Text: FoundText(q, found)}, nil
		}).Parallel()
}

// deferred lists what a caller is not offered up front: every tool but the core ones, the
// groups its workspace calls for already, and find_tools itself.
func (r *Registry) deferred(ctx context.Context, c Call) []Definition {
	have := r.Situation(ctx, c)
	var out []Definition
	for _, d := range r.Definitions() {
		g := GroupOf(d)
		if g == GroupCore || slices.Contains(have, g) || d.Name == ToolFindTools {
			continue
		}
		out = append(out, d)
	}
	return out
}

// FoundText is find_tools' answer: a line per tool found, "- name: what it does", the form
// FoundTools reads back.
func FoundText(query string, found []Definition) string {
	if len(found) == 0 {
		return fmt.Sprintf("Nothing matches %q among the tools you are not offered yet. Say what you want done in other words "+
			"(\"save the page as PDF\", \"hand a task to another pane\", \"maximize a pane\"), or use the tools you have.", query)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Found for %q; offered to you from your next turn:\n", query)
	for _, d := range found {
		fmt.Fprintf(&b, "- %s: %s\n", d.Name, summary(d.Description))
	}
	return strings.TrimRight(b.String(), "\n")
}

// FoundTools reads the names of the tools a find_tools result found (see FoundText).
func FoundTools(text string) []string {
	var names []string
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(line, "- ")
		if !ok {
			continue
		}
		if name, _, ok := strings.Cut(rest, ": "); ok && name != "" && !strings.ContainsAny(name, " \t") {
			names = append(names, name)
		}
	}
	return names
}

// summary is a description's first sentence, bounded.
func summary(desc string) string {
	s := strings.TrimSpace(desc)
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if r := []rune(s); len(r) > summaryChars {
		s = string(r[:summaryChars-1]) + "…"
	}
	return s
}

// Weights of a query word found in a tool: in its name it says more than in its description.
const (
	nameWeight = 3
	descWeight = 1
	exactScore = 100 // the query is the tool's name
)

// Search ranks defs against a query in words. A query word found in a tool's name or
// description scores by how rare it is among defs (a word most tools share, such as "page",
// says little); the query naming the tool wins. It returns at most limit tools that score at
// least half the best, so a clear match does not bring its weak neighbours along.
func Search(defs []Definition, query string, limit int) []Definition {
	type doc struct {
		d          Definition
		name, desc []string
	}
	docs := make([]doc, len(defs))
	for i, d := range defs {
		docs[i] = doc{d, words(d.Name), words(d.Description)}
	}
	has := func(ws []string, t string) bool {
		return slices.ContainsFunc(ws, func(w string) bool { return sameWord(t, w) })
	}
	q := strings.ToLower(strings.TrimSpace(query))
	score := make([]float64, len(docs))
	for _, t := range slices.Compact(slices.Sorted(slices.Values(words(query)))) {
		df := 0
		for _, d := range docs {
			if has(d.name, t) || has(d.desc, t) {
				df++
			}
		}
		if df == 0 {
			continue
		}
		idf := math.Log(1 + float64(len(docs))/float64(df))
		for i, d := range docs {
			switch {
			case has(d.name, t):
				score[i] += nameWeight * idf
			case has(d.desc, t):
				score[i] += descWeight * idf
			}
		}
	}
	var hits []int
	for i, d := range docs {
		if q == strings.ToLower(d.d.Name) {
			score[i] += exactScore
		}
		if score[i] > 0 {
			hits = append(hits, i)
		}
	}
	slices.SortStableFunc(hits, func(a, b int) int {
		if c := cmp.Compare(score[b], score[a]); c != 0 {
			return c
		}
		return strings.Compare(docs[a].d.Name, docs[b].d.Name)
	})
	var out []Definition
	for _, i := range hits {
		if len(out) == limit || 2*score[i] < score[hits[0]] {
			break
		}
		out = append(out, docs[i].d)
	}
	return out
}

// stopWords carry no meaning for the search.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "to": true, "of": true, "in": true, "on": true, "for": true, "with": true,
	"as": true, "and": true, "or": true, "is": true, "it": true, "its": true, "my": true, "your": true, "this": true,
	"that": true, "from": true, "by": true, "at": true, "into": true, "be": true, "me": true, "want": true,
	"need": true, "tool": true, "tools": true, "can": true, "how": true, "do": true, "some": true, "any": true,
	"use": true, "using": true, "what": true, "which": true, "are": true, "there": true, "please": true, "we": true,
}

// words are the lower-case words of s (split at anything not a letter or digit, so tool
// names split at their underscores), without stop words and one-letter pieces ("page's").
func words(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) > 1 && !stopWords[w] {
			out = append(out, w)
		}
	}
	return out
}

// sameWord: equal, or one is a prefix of the other of at least three letters, so "save"
// finds "saved", "log" finds "login" and "screenshots" finds "screenshot" without a stemmer.
func sameWord(a, b string) bool {
	if a == b {
		return true
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	return len(a) >= 3 && strings.HasPrefix(b, a)
}
