package terminal_test

import (
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/terminal"
)

// Not parallel: it sets variables in this process's environment, which every pane inherits.
func TestPanesDoNotInheritTheAppsKeys(t *testing.T) {
	t.Setenv("CS_TEST_KEY_FLAG", "sekrit-flag")       // named like --api-key-env would
	t.Setenv("CS_TEST_KEY_LATE", "sekrit-late")       // registered after the manager started
	t.Setenv("OPENAI_API_KEY", "sekrit-openai")       // well known, hidden without asking
	t.Setenv("ANTHROPIC_API_KEY", "sekrit-anthropic") // well known
	t.Setenv("OPENROUTER_API_KEY", "sekrit-router")   // well known
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "sekrit-token")  // by keyenv's rule, not a list of names
	t.Setenv("SOME_NEW_API_KEY", "sekrit-new")        // a provider no list knew
	t.Setenv("CS_TEST_VISIBLE", "visible-3")          // an ordinary variable still comes through
	m := newManager(t, terminal.Options{HiddenEnv: []string{"CS_TEST_KEY_FLAG"}})
	m.HideEnv("CS_TEST_KEY_LATE")

	show := `echo "[$CS_TEST_KEY_FLAG][$CS_TEST_KEY_LATE][$OPENAI_API_KEY][$ANTHROPIC_API_KEY][$OPENROUTER_API_KEY][$ANTHROPIC_AUTH_TOKEN][$SOME_NEW_API_KEY][$CS_TEST_VISIBLE]"; env | grep -c sekrit`
	free := openBash(t, m, bashSpec(t, "pane-e0e000000000"))
	confinedSpec := bashSpec(t, "pane-e0e000000001")
	confinedSpec.Sandbox = &terminal.Sandbox{WritableDirs: []string{confinedSpec.Dir}, NoNetwork: true}
	confined := openBash(t, m, confinedSpec)
	for _, tab := range []terminal.TabInfo{free, confined} {
		run(t, m, tab.PaneID, "", show)
		text, _ := m.Tail(tab.PaneID, "", 5)
		if !strings.Contains(text, "[][][][][][][][visible-3]\n0\n") || strings.Contains(text, "sekrit-") {
			t.Errorf("pane %s (confined %v) sees the app's keys:\n%s", tab.PaneID, tab.Confined, text)
		}
	}

	// A Spec's own Env is the caller's explicit choice and still applies.
	spec := bashSpec(t, "pane-e0e000000002")
	spec.Env = append(spec.Env, "OPENAI_API_KEY=given-on-purpose")
	own := openBash(t, m, spec)
	run(t, m, own.PaneID, "", `echo "[$OPENAI_API_KEY]"`)
	if text, _ := m.Tail(own.PaneID, "", 3); !strings.Contains(text, "[given-on-purpose]") {
		t.Errorf("Spec.Env was dropped:\n%s", text)
	}
}
