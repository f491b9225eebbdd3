package catalog_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// docs/config-dir.md shows one example file of each kind; each must load as it is printed,
// without a problem, so people can copy them.
func TestConfigDirDocExamplesLoad(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "config-dir.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(data)
	blocks := regexp.MustCompile("(?s)```markdown\n(.*?)```").FindAllStringSubmatch(section, -1)
	kinds := []string{"personas/house-reviewer.md", "skills/deploy-api.md", "tasks/bump-dep.md", "templates/htop.md"}
	if len(blocks) != len(kinds) {
		t.Fatalf("%d examples in the section, want one per kind (%d)", len(blocks), len(kinds))
	}
	dir := t.TempDir()
	for i, k := range kinds {
		write(t, dir, k, blocks[i][1])
	}
	c := open(t, dir)
	if ps := c.Problems(); len(ps) != 0 {
		t.Fatalf("the examples of docs/config-dir.md have problems: %+v", ps)
	}
	p, _ := c.Persona("house-reviewer")
	s, _ := c.Skill("deploy-api")
	task, _ := c.Task("bump-dep")
	if p.Name != "House reviewer" || s.Name != "Deploying the API" || len(task.Parameters) != 1 || len(task.Steps) != 2 {
		t.Errorf("examples loaded as %+v / %+v / %+v", p, s, task)
	}
	if _, err := task.Render(map[string]string{"dep": "left-pad"}); err != nil {
		t.Error(err)
	}
	found := false
	for _, tp := range c.Templates() {
		found = found || (tp.ID == "htop" && tp.Command == "htop")
	}
	if !found {
		t.Error("the pane template example did not load")
	}
}
