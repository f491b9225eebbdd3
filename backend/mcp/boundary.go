package mcp

// RunsOutside names where the tool runs: in its server's own process, which no goal's sandbox
// confines (tools.OutsideRunner). A confined goal's call of it is the person's to allow.
func (t *tool) RunsOutside() string {
	return "the MCP server " + t.srv.name + "'s own process"
}
