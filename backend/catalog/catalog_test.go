package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/catalog"
	"github.com/clusterspace/clusterspace/backend/tools"
)

func open(t *testing.T, dir string) *catalog.Catalog {
	t.Helper()
	c, err := catalog.Open(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func write(t testing.TB, dir, rel, text string) string {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// problemFor returns the one problem reported for file, failing when there is none.
func problemFor(t *testing.T, c *catalog.Catalog, file string) catalog.Problem {
	t.Helper()
	for _, p := range c.Problems() {
		if p.File == file {
			return p
		}
	}
	t.Fatalf("no problem reported for %s; problems: %+v", file, c.Problems())
	return catalog.Problem{}
}

func TestDefaultsLoadCleanly(t *testing.T) {
	c := open(t, filepath.Join(t.TempDir(), "missing"))
	if ps := c.Problems(); len(ps) != 0 {
		t.Fatalf("the built-in files have problems: %+v", ps)
	}
	if n := len(c.Personas()); n < 6 {
		t.Errorf("%d personas built in, want at least 6", n)
	}
	if n := len(c.Skills()); n < 2 {
		t.Errorf("%d skills built in, want at least 2", n)
	}
	if n := len(c.Tasks()); n < 2 {
		t.Errorf("%d task templates built in, want at least 2", n)
	}
	var ids []string
	for _, tp := range c.Templates() {
		ids = append(ids, tp.ID)
	}
	if got := strings.Join(ids, ","); got != "shell,claude,codex,aider,python,custom" {
		t.Errorf("pane templates = %s, want the workspace's built-ins in menu order", got)
	}
	r, ok := c.Persona("reviewer")
	if !ok || r.Source != "builtin:reviewer" || r.Temperature == nil || !strings.Contains(r.Prompt, "you do not change the code") {
		t.Fatalf("reviewer persona = %+v", r)
	}
	if len(r.Skills) != 1 || r.Skills[0] != "code-review" {
		t.Errorf("reviewer skills = %v", r.Skills)
	}
}

func TestPersonaOverrideMalformedAndReload(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "personas/reviewer.md", "---\nname: Strict reviewer\ntemperature: 0\nmax_tokens: 500\n---\nOnly read.\n")
	bad := write(t, dir, "personas/broken.md", "---\nname: Broken\ntemperature: [hot\n---\nbody\n")
	badField := write(t, dir, "personas/loose.md", "---\nname: Loose\ndescription: fine\ntemperature: 7\n---\nbody\n")
	unknown := write(t, dir, "personas/typo.md", "---\nname: Typo\ntemprature: 0.5\n---\nbody\n")
	noFM := write(t, dir, "personas/plain.md", "Just text, no front matter.\n")
	c := open(t, dir)

	r, _ := c.Persona("reviewer")
	if r.Name != "Strict reviewer" || r.Temperature == nil || *r.Temperature != 0 || r.MaxTokens != 500 || r.Prompt != "Only read." {
		t.Fatalf("override not used: %+v", r)
	}
	if r.Source != filepath.Join(dir, "personas", "reviewer.md") {
		t.Errorf("source = %q, want the file's path", r.Source)
	}
	if _, ok := c.Persona("engineer"); !ok {
		t.Error("the other defaults must still load")
	}
	for _, f := range []string{bad, badField, unknown, noFM} {
		if _, ok := c.Persona(strings.TrimSuffix(filepath.Base(f), ".md")); ok {
			t.Errorf("%s has a problem but was loaded", f)
		}
	}
	if p := problemFor(t, c, bad); p.Line != 3 || p.Field != "front matter" {
		t.Errorf("malformed YAML: %+v, want line 3, field front matter", p)
	}
	if p := problemFor(t, c, badField); p.Line != 4 || p.Field != "temperature" || !strings.Contains(p.Message, "from 0") {
		t.Errorf("bad temperature: %+v, want line 4 naming temperature", p)
	}
	if p := problemFor(t, c, unknown); p.Line != 3 || p.Field != "temprature" || !strings.Contains(p.Message, "temperature") {
		t.Errorf("unknown field: %+v, want line 3 naming the field and the right ones", p)
	}
	if p := problemFor(t, c, noFM); p.Line != 1 || !strings.Contains(p.Message, "---") {
		t.Errorf("no front matter: %+v", p)
	}

	// A change on disk is picked up without a restart: fix a file, delete the override.
	write(t, dir, "personas/loose.md", "---\nname: Loose\ntemperature: 1.5\n---\nbody\n")
	os.Remove(filepath.Join(dir, "personas", "reviewer.md"))
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, _ := c.Persona("reviewer")
		_, loose := c.Persona("loose")
		if loose && r.Source == "builtin:reviewer" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the catalog did not reload within 5 s: loose loaded %v, reviewer from %s", loose, r.Source)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestSkillOverrideMalformedAndDuplicate(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "skills/code-review.md", "---\nname: Our review\ndomain: eng\nprerequisites: [git, gh]\n---\nUse gh pr diff.\n")
	write(t, dir, "skills/deploy.md", "---\nname: Deploy\ndescription: ship it\n---\nRun make deploy.\n")
	dup := write(t, dir, "skills/deploy.markdown", "---\nname: Deploy again\n---\nx\n")
	bad := write(t, dir, "skills/empty.md", "---\nname: Empty\nprerequisites: {a: 1}\n---\n")
	c := open(t, dir)
	s, _ := c.Skill("code-review")
	if s.Name != "Our review" || len(s.Prerequisites) != 2 || s.Body != "Use gh pr diff." {
		t.Fatalf("override: %+v", s)
	}
	if _, ok := c.Skill("deploy"); !ok {
		t.Error("a new skill must load")
	}
	if _, ok := c.Skill("bug-reproduction"); !ok {
		t.Error("the other default must still load")
	}
	if p := problemFor(t, c, dup); p.Field != "file name" {
		t.Errorf("unread extension: %+v", p)
	}
	if p := problemFor(t, c, bad); p.Field != "prerequisites" || p.Line != 3 {
		t.Errorf("bad prerequisites: %+v", p)
	}
}

func TestDuplicateTemplateID(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "templates/htop.md", "---\nname: htop\ncommand: htop\n---\nProcesses.\n")
	dup := write(t, dir, "templates/htop.yaml", "name: htop 2\ncommand: htop\n")
	c := open(t, dir)
	p := problemFor(t, c, dup)
	if p.Field != "id" || !strings.Contains(p.Message, "htop.md") {
		t.Errorf("duplicate id: %+v, want the id field naming the other file", p)
	}
	if tp := c.Templates()[len(c.Templates())-1]; tp.ID != "htop" || tp.Name != "htop" {
		t.Errorf("the first file must win: %+v", tp)
	}
}

func TestPaneTemplateOverrideAndMalformed(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "templates/python.md", "---\nname: IPython\ncommand: ipython3\nargs: [--no-banner]\ninstall: sudo apt install ipython3\n---\nAn IPython shell.\n")
	write(t, dir, "templates/top.yaml", "name: Top\ncommand: top\nargs: [-d, \"1\"]\n")
	bad := write(t, dir, "templates/nothing.md", "---\nname: Nothing\n---\n")
	shell := write(t, dir, "templates/shell.md", "---\nname: Mine\ncommand: zsh\n---\n")
	c := open(t, dir)
	byID := map[string]catalog.PaneTemplate{}
	var order []string
	for _, tp := range c.Templates() {
		byID[tp.ID] = tp
		order = append(order, tp.ID)
	}
	py := byID["python"]
	if py.Command != "ipython3" || len(py.Args) != 1 || py.Args[0] != "--no-banner" || py.Description != "An IPython shell." {
		t.Fatalf("override: %+v", py)
	}
	if top := byID["top"]; top.Command != "top" || strings.Join(top.Args, " ") != "-d 1" {
		t.Errorf("yaml template: %+v", top)
	}
	if got := strings.Join(order, ","); got != "shell,claude,codex,aider,python,custom,top" {
		t.Errorf("order = %s: built-ins in place, new ones after", got)
	}
	if p := problemFor(t, c, bad); p.Field != "command" {
		t.Errorf("missing command: %+v", p)
	}
	if p := problemFor(t, c, shell); p.Field != "id" {
		t.Errorf("replacing shell: %+v", p)
	}
	if byID["shell"].Command != "" {
		t.Error("the shell template must stay the person's shell")
	}
}

func TestTaskOverrideMalformedAndRender(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "tasks/fix-bug.md", "---\nname: Fix it\npersonas: [engineer, nobody]\ncriterion: \"{{test}} passes\"\nsteps:\n  - title: Run\n    action: run {{test}}\n    criterion: it fails\n---\nMake {{test}} pass.\n")
	badStep := write(t, dir, "tasks/bad-steps.md", "---\nname: Bad\ncriterion: done\nsteps:\n  - {title: A, act: b}\n---\nGoal.\n")
	noCrit := write(t, dir, "tasks/no-crit.md", "---\nname: No criterion\n---\nGoal.\n")
	c := open(t, dir)
	task, ok := c.Task("fix-bug")
	if !ok || task.Name != "Fix it" || task.Source != filepath.Join(dir, "tasks", "fix-bug.md") {
		t.Fatalf("override: %+v", task)
	}
	if len(task.Personas) != 1 || task.Personas[0] != "engineer" {
		t.Errorf("unknown persona must be left out: %v", task.Personas)
	}
	if p := problemFor(t, c, task.Source); p.Field != "personas" || p.Line != 3 || !strings.Contains(p.Message, `"nobody"`) {
		t.Errorf("unknown persona problem: %+v", p)
	}
	if _, ok := c.Task("review-change"); !ok {
		t.Error("the other default must still load")
	}
	if p := problemFor(t, c, badStep); p.Field != "steps" || p.Line != 4 {
		t.Errorf("bad step: %+v", p)
	}
	if p := problemFor(t, c, noCrit); p.Field != "criterion" {
		t.Errorf("missing criterion: %+v", p)
	}

	if len(task.Parameters) != 1 || task.Parameters[0].Name != "test" {
		t.Fatalf("parameters = %+v", task.Parameters)
	}
	_, err := task.Render(map[string]string{"test": "  "})
	var pe *catalog.ParamError
	if !errors.As(err, &pe) || pe.Param != "test" {
		t.Fatalf("an empty parameter must be refused naming it, got %v", err)
	}
	if _, err := task.Render(map[string]string{"test": "x", "tset": "y"}); err == nil || !strings.Contains(err.Error(), "tset") {
		t.Errorf("an unknown parameter must be refused naming it, got %v", err)
	}
	r, err := task.Render(map[string]string{"test": "go test ./x"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Criterion != "go test ./x passes" || r.Persona != "engineer" || !strings.HasPrefix(r.Goal, "Make go test ./x pass.") ||
		!strings.Contains(r.Goal, "1. Run: run go test ./x (done when: it fails)") {
		t.Errorf("rendered = %+v", r)
	}

	def, _ := open(t, t.TempDir()).Task("review-change")
	if _, err := def.Render(map[string]string{"repo": "/r", "branch": "b"}); err == nil || !strings.Contains(err.Error(), "{{base}}") {
		t.Errorf("a missing parameter must be named, got %v", err)
	}
}

func TestResolveApplyAndSkillTools(t *testing.T) {
	c := open(t, t.TempDir())
	if _, _, err := c.Resolve("nobody", nil); err == nil || !strings.Contains(err.Error(), `"nobody"`) || !strings.Contains(err.Error(), "reviewer") {
		t.Errorf("unknown persona: %v", err)
	}
	if _, _, err := c.Resolve("", []string{"nope"}); err == nil || !strings.Contains(err.Error(), "skill") {
		t.Errorf("unknown skill: %v", err)
	}
	p, skills, err := c.Resolve("reviewer", []string{"bug-reproduction", "code-review"})
	if err != nil || len(skills) != 2 || skills[0].ID != "code-review" {
		t.Fatalf("resolve: %v %+v", err, skills)
	}
	a := &agent.Agent{Model: agent.Model{MaxTokens: 100}}
	p.Apply(a, skills...)
	if !strings.Contains(a.Instructions, "## Persona: Reviewer") || !strings.Contains(a.Instructions, "## Skill: Reproducing a bug") {
		t.Errorf("instructions = %q", a.Instructions)
	}
	for name, want := range map[string]bool{"read_terminal_output": true, tools.ToolClaimComplete: true, catalog.ToolLoadSkill: true, "browser_click": false} {
		if got := a.Offer(name); got != want {
			t.Errorf("reviewer offered %s = %v, want %v", name, got, want)
		}
	}

	reg := tools.NewRegistry()
	reg.Register(c.Tools()...)
	list, _ := reg.Get(catalog.ToolListSkills)
	res, err := list.Run(context.Background(), tools.Call{Args: []byte(`{}`)})
	if err != nil || !strings.Contains(res.Text, "code-review: Code review [engineering]") {
		t.Errorf("list_skills = %+v %v", res, err)
	}
	load, _ := reg.Get(catalog.ToolLoadSkill)
	if load.Risk() != tools.ReadOnly || list.Risk() != tools.ReadOnly {
		t.Error("the skill tools only read")
	}
	res, _ = load.Run(context.Background(), tools.Call{Args: []byte(`{"id":"bug-reproduction"}`)})
	if !strings.Contains(res.Text, "smallest input") {
		t.Errorf("load_skill = %+v", res)
	}
	res, _ = load.Run(context.Background(), tools.Call{Args: []byte(`{"id":"nope"}`)})
	if !res.IsError || !strings.Contains(res.Text, "code-review") {
		t.Errorf("load_skill of an unknown id must name the ids: %+v", res)
	}
}

func TestCustomizeCopiesTheBuiltin(t *testing.T) {
	dir := t.TempDir()
	c := open(t, dir)
	path, err := c.Customize(catalog.KindPersonas, "writer")
	if err != nil || path != filepath.Join(dir, "personas", "writer.md") {
		t.Fatalf("customize: %s %v", path, err)
	}
	if p, _ := c.Persona("writer"); p.Source != path {
		t.Errorf("after customizing, the file is used: %+v", p)
	}
	path, err = c.Customize(catalog.KindTemplates, "aider")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Problems()) != 0 {
		t.Fatalf("a copied template must load cleanly: %+v", c.Problems())
	}
	if _, err := c.Customize(catalog.KindSkills, "nope"); err == nil {
		t.Error("no built-in to copy must be an error")
	}
}

// A persona's tools and skills that name nothing are reported at their line; the persona still
// loads without them.
func TestPersonaNamesCheckedAtTheirLine(t *testing.T) {
	dir := t.TempDir()
	f := write(t, dir, "personas/typos.md", "---\nname: Typos\ntools: [read_terminal_outptu]\nskills: [code-reveiw]\n---\nbody\n")
	c := open(t, dir)
	c.SetToolCheck(func(name string) bool { return name == "read_terminal_output" })
	var fields []string
	for _, p := range c.Problems() {
		if p.File == f {
			fields = append(fields, fmt.Sprintf("%s@%d", p.Field, p.Line))
		}
	}
	if got := strings.Join(fields, ","); got != "tools@3,skills@4" && got != "skills@4,tools@3" {
		t.Errorf("problems = %s, want tools at line 3 and skills at line 4", got)
	}
	if p, ok := c.Persona("typos"); !ok || len(p.Skills) != 0 {
		t.Errorf("the persona should load without the unknown skill: %+v %v", p, ok)
	}
}

// An agent CLI's template declares its config dir variable, its provider protocol and its
// provider's hosts; each is checked, naming the field.
func TestAgentTemplateFields(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "templates/gemini.yaml", "name: Gemini CLI\ncommand: gemini\nconfig_env: GEMINI_CONFIG_DIR\nwire: openai\nhosts: [generativelanguage.example:443]\n")
	badEnv := write(t, dir, "templates/bad-env.yaml", "command: x\nconfig_env: 'NOT A NAME'\n")
	badWire := write(t, dir, "templates/bad-wire.yaml", "command: x\nwire: grpc\n")
	badHost := write(t, dir, "templates/bad-host.yaml", "command: x\nhosts: [no-port.example]\n")
	c := open(t, dir)
	var gemini catalog.PaneTemplate
	for _, tp := range c.Templates() {
		if tp.ID == "gemini" {
			gemini = tp
		}
		if tp.ID == "claude" && (tp.ConfigEnv != "CLAUDE_CONFIG_DIR" || tp.Wire != "anthropic" || len(tp.Hosts) != 1) {
			t.Errorf("the built-in claude template: %+v", tp)
		}
	}
	if gemini.ConfigEnv != "GEMINI_CONFIG_DIR" || gemini.Wire != "openai" || strings.Join(gemini.Hosts, ",") != "generativelanguage.example:443" {
		t.Errorf("gemini: %+v", gemini)
	}
	for file, field := range map[string]string{badEnv: "config_env", badWire: "wire", badHost: "hosts"} {
		if p := problemFor(t, c, file); p.Field != field {
			t.Errorf("%s: problem %+v, want one on %s", file, p, field)
		}
	}
}

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
