package engine

import (
	"os"
	"regexp"
	"testing"
)

// TestToolsDocListsEveryTool: the tool table of docs/tools.md names every built-in tool with
// the risk it declares, and no tool that does not exist. Tools from plugins and MCP servers
// appear at run time and are described in their own sections there.
func TestToolsDocListsEveryTool(t *testing.T) {
	readme, err := os.ReadFile("../../docs/tools.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| ([a-z_]+) \\|").FindAllStringSubmatch(string(readme), -1) {
		listed[m[1]] = m[2]
	}
	eng := openEngine(t, t.TempDir())
	defer eng.Close()
	for _, d := range eng.Registry.Definitions() {
		if d.Source != "" {
			continue // a plugin or an MCP server's tool: the person's config dir offers it, not the code
		}
		if risk, ok := listed[d.Name]; !ok {
			t.Errorf("docs/tools.md's tool table lacks %s (%s)", d.Name, d.Risk)
		} else if risk != d.Risk.String() {
			t.Errorf("docs/tools.md says %s is %s; it declares %s", d.Name, risk, d.Risk)
		}
		delete(listed, d.Name)
	}
	for name := range listed {
		t.Errorf("docs/tools.md's tool table lists %s, which is not a registered tool", name)
	}
}
