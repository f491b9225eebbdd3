package agent

// noteProblems puts each problem the tool sources report (a plugin that did not load, an MCP
// server that did not start) before the person once per agent, as a notice on the goal's
// rail or in the chat: the tool is missing and they should know why.
func (a *Agent) noteProblems() {
	if a.Registry == nil || a.Hooks.Publish == nil {
		return
	}
	for _, p := range a.Registry.Problems() {
		if a.told[p] {
			continue
		}
		if a.told == nil {
			a.told = map[string]bool{}
		}
		a.told[p] = true
		a.publish(Event{Kind: EventNotice, Text: p})
	}
}
