package inbox

import (
	"fmt"
	"time"

	"github.com/clusterspace/clusterspace/backend/terminal"
)

// LongCommand is how long a command must run for its end to be worth telling: a quick `ls`
// finishing in a pane behind is not news, a build or test run that took a while is.
const LongCommand = 10 * time.Second

// SettleAfter is how long a program pane's output must have been quiet at its prompt before it
// counts as idle: an agent redraws its prompt between steps, and a moment's pause is not idle.
const SettleAfter = 1500 * time.Millisecond

// PaneState is what a probe sees of a terminal pane's shown tab.
type PaneState struct {
	Running bool
	// Waiting is AgentIdle or AgentAsking when the program in the pane waits for the person.
	Waiting Kind
	// Foreground names a command running in the foreground of the pane's shell ("" when the
	// shell itself waits).
	Foreground string
	// InputMark changes whenever someone types in the tab.
	InputMark  int64
	LastOutput time.Time
}

// Probe reads a pane's state. It is the seam for the terminal's own screen and agent
// recognisers: TerminalProbe reads what the terminal manager reports today.
type Probe func(paneID string) (PaneState, error)

// TerminalProbe reads panes from the terminal manager. A pane running an agent CLI it
// recognises (Claude Code, Codex, Aider) waits when its recogniser says idle, finished or
// asking; any other program waits when its output ends with a prompt line that has been quiet
// for SettleAfter.
func TerminalProbe(m *terminal.Manager) Probe {
	return func(paneID string) (PaneState, error) {
		st, err := m.Status(paneID, "")
		if err != nil {
			return PaneState{}, err
		}
		ps := PaneState{Running: st.Tab.Running, Foreground: st.Foreground, InputMark: st.InputMark, LastOutput: st.LastOutput}
		agent, err := m.AgentState(paneID)
		if err != nil {
			return PaneState{}, err
		}
		switch agent {
		case terminal.AgentAsking:
			ps.Waiting = KindAgentAsking
		case terminal.AgentIdle, terminal.AgentFinished:
			ps.Waiting = KindAgentIdle
		case terminal.AgentNone:
			if st.Tab.Running && st.AtPrompt && st.Foreground == "" && !st.LastOutput.IsZero() && time.Since(st.LastOutput) >= SettleAfter {
				ps.Waiting = KindAgentIdle
			}
		}
		return ps, nil
	}
}

// commandWatch follows one shell pane's foreground command, so the end of a long one can be
// told until the person looks at the pane or types in it.
type commandWatch struct {
	program   string
	started   time.Time
	ended     time.Time // zero while it runs or before any ran
	took      time.Duration
	inputMark int64 // the tab's input mark when it ended: typing again clears the item
}

// paneItems reads every terminal pane of the layout and returns the items of those that wait:
// program panes (a pane started as an agent or another program) idle at their prompt, and shell
// panes where a long command finished. The pane in front of the person is never listed: they
// are looking at it. watches is the state kept between reads; now is the time of this read;
// a command that ran long or longer is told when it ends.
func paneItems(probe Probe, l layout, goalIn func(string) bool, watches map[string]*commandWatch, now time.Time, long time.Duration) []Item {
	var items []Item
	seen := map[string]bool{}
	for _, id := range l.order {
		seen[id] = true
		st, err := probe(id)
		if err != nil {
			delete(watches, id) // no terminal (yet): nothing to follow
			continue
		}
		p := l.pane[id]
		program := p.Launch != nil && p.Launch.Command != ""
		if program {
			if st.Waiting == "" || id == l.front || (goalIn != nil && goalIn(id)) {
				continue
			}
			title := "Idle at its prompt: " + label(p.Label, id)
			if st.Waiting == KindAgentAsking {
				title = "Asks you: " + label(p.Label, id)
			}
			items = append(items, Item{ID: string(st.Waiting) + ":" + id, Kind: st.Waiting, Title: title,
				Detail: p.Launch.Command, WorkspaceID: l.workspaceOf[id], PaneID: id, Since: st.LastOutput})
			continue
		}
		it, ok := followCommand(watches, id, st, now, long)
		if ok && id == l.front {
			delete(watches, id) // seen: the person is looking at the pane
			continue
		}
		if ok {
			it.Title += label(p.Label, id)
			it.WorkspaceID = l.workspaceOf[id]
			items = append(items, it)
		}
	}
	for id := range watches {
		if !seen[id] {
			delete(watches, id) // the pane is gone
		}
	}
	return items
}

// followCommand updates a shell pane's watch and reports its finished long command, if any.
func followCommand(watches map[string]*commandWatch, id string, st PaneState, now time.Time, long time.Duration) (Item, bool) {
	w := watches[id]
	if w == nil {
		w = &commandWatch{}
		watches[id] = w
	}
	switch {
	case st.Foreground != "":
		if w.program != st.Foreground || !w.ended.IsZero() || w.started.IsZero() {
			*w = commandWatch{program: st.Foreground, started: now}
		}
		return Item{}, false
	case w.started.IsZero():
		return Item{}, false
	case w.ended.IsZero():
		w.ended, w.took, w.inputMark = now, now.Sub(w.started), st.InputMark
	}
	if w.took < long || st.InputMark != w.inputMark {
		return Item{}, false
	}
	return Item{ID: string(KindCommandDone) + ":" + id, Kind: KindCommandDone, PaneID: id, Since: w.ended,
		Title: "Command finished: ", Detail: fmt.Sprintf("%s ran %s", w.program, w.took.Round(time.Second))}, true
}

func label(l, id string) string {
	if l != "" {
		return l
	}
	return id
}
