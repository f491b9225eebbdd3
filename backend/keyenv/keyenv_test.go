package keyenv_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/keyenv"
)

const childEnv = "KEYENV_TEST_CHILD"

// In the child role this test binary behaves like the app's main: it seals, then reports what
// its own /proc/self/environ holds and what Lookup answers.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		if err := keyenv.Seal(os.Args[1:]); err != nil {
			fmt.Println("seal:", err)
			os.Exit(3)
		}
		environ, _ := os.ReadFile("/proc/self/environ")
		report := map[string]any{"environ": string(environ), "pid": os.Getpid(), "lookup": map[string]string{}}
		for _, n := range []string{"OPENAI_API_KEY", "MY_KEY", "MY_CRITIC_KEY", "PLAIN"} {
			v, _ := keyenv.Lookup(n)
			report["lookup"].(map[string]string)[n] = v
		}
		report["getenv"] = os.Getenv("MY_KEY") + os.Getenv("OPENAI_API_KEY")
		json.NewEncoder(os.Stdout).Encode(report)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestNamesTakesEveryApiKeyEnvFlag(t *testing.T) {
	got := keyenv.Names([]string{"goal", "run", "--api-key-env", "A_KEY", "--critic-api-key-env=B_KEY", "-api-key-env", "C",
		"--model", "x", "--", "--api-key-env", "AFTER_DASHES"})
	for _, want := range []string{"A_KEY", "B_KEY", "C"} {
		if !slices.Contains(got, want) {
			t.Errorf("Names lacks %s: %v", want, got)
		}
	}
	if slices.Contains(got, "AFTER_DASHES") || slices.Contains(got, "x") {
		t.Errorf("Names took an argument that is not a key flag: %v", got)
	}
}

// A process started with key variables ends up with none of them in its kernel-visible
// environment, keeps its PID (it re-executed itself) and still reads every value via Lookup.
func TestSealMovesTheKeysOutOfProcEnviron(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--api-key-env", "MY_KEY", "--critic-api-key-env=MY_CRITIC_KEY")
	cmd.Env = append(os.Environ(), childEnv+"=1", "OPENAI_API_KEY=sk-openai-1111", "MY_KEY=sk-mine-2222",
		"MY_CRITIC_KEY=sk-critic-3333", "PLAIN=plain-value")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var report struct {
		Environ string
		PID     int
		Lookup  map[string]string
		Getenv  string
	}
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("child said %q: %v", out, err)
	}
	if report.PID != cmd.Process.Pid {
		t.Errorf("the sealed process has PID %d, started as %d: it must re-execute in place", report.PID, cmd.Process.Pid)
	}
	if strings.Contains(report.Environ, "sk-") || report.Getenv != "" {
		t.Errorf("a key is still in the environment after sealing: environ %q getenv %q", report.Environ, report.Getenv)
	}
	if !strings.Contains(report.Environ, "PLAIN=plain-value") {
		t.Errorf("an ordinary variable was lost: %q", report.Environ)
	}
	want := map[string]string{"OPENAI_API_KEY": "sk-openai-1111", "MY_KEY": "sk-mine-2222", "MY_CRITIC_KEY": "sk-critic-3333", "PLAIN": "plain-value"}
	for k, v := range want {
		if report.Lookup[k] != v {
			t.Errorf("Lookup(%s) = %q, want %q", k, report.Lookup[k], v)
		}
	}
}

// Without key variables nothing is re-executed and nothing changes.
func TestSealWithoutKeysIsANoOp(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	env := keyenv.Strip(os.Environ(), nil)
	cmd.Env = append(env, childEnv+"=1", "PLAIN=plain-value")
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), `"PLAIN":"plain-value"`) || strings.Contains(string(out), "SEALED_KEYS_FD") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
