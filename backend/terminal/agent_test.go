package terminal

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recording is testdata/agents/NAME.json (written by scripts/record-agents).
type recording struct {
	Agent       string `json:"agent"`
	Version     string `json:"version"`
	Cols, Rows  int
	Answer      string `json:"answer"`
	Checkpoints []struct {
		Offset int64      `json:"offset"`
		State  AgentState `json:"state"`
		Note   string     `json:"note"`
	} `json:"checkpoints"`
}

func loadRecording(t *testing.T, name string) (recording, []byte) {
	t.Helper()
	var rec recording
	b, err := os.ReadFile(filepath.Join("testdata", "agents", name+".json"))
	if err != nil {
		t.Fatalf("%v: run scripts/record-agents to record the agent CLIs", err)
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("testdata", "agents", name+".raw"))
	if err != nil {
		t.Fatal(err)
	}
	return rec, raw
}

// screenAt is the screen after the first n bytes of a recording, fed in pieces of the size a
// PTY read hands over, so sequences split between reads are covered.
func screenAt(rec recording, raw []byte, n int64) Screen {
	s := newScreen(rec.Cols, rec.Rows)
	defer s.close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for off := int64(0); off < n; off += 4096 {
		s.feed(raw[off:min(off+4096, n)])
	}
	return s.read(true)
}

// The recognisers read the real CLIs' states off their recorded screens: at each checkpoint
// the recorder knew the state from the model server's side (streaming a reply, the reply
// done and the output quiet, a tool call awaiting permission).
func TestRecognisersOnRecordings(t *testing.T) {
	for _, name := range []string{"claude", "codex"} {
		rec, raw := loadRecording(t, name)
		r := Recognisers[rec.Agent]
		if r == nil {
			t.Fatalf("%s: no recogniser for agent %q", name, rec.Agent)
		}
		sawAnswer := false
		for _, cp := range rec.Checkpoints {
			sc := screenAt(rec, raw, cp.Offset)
			if got := r.State(&sc); got != cp.State {
				t.Errorf("%s %s at %d (%s): state %q, want %q; screen:\n%s", name, rec.Version, cp.Offset, cp.Note, got, cp.State, strings.Join(sc.Lines(), "\n"))
			}
			if cp.State == AgentFinished {
				sawAnswer = true
				if text := strings.Join(sc.Lines(), "\n"); !strings.Contains(text, rec.Answer) {
					t.Errorf("%s: the answer %q is not on the screen when it finished:\n%s", name, rec.Answer, text)
				}
			}
		}
		if !sawAnswer {
			t.Errorf("%s: the recording has no finished checkpoint", name)
		}
	}
}

// The screen shows Claude Code's window title nowhere (an OSC string with a non-ASCII
// character would be printed as text by the emulator without the filter).
func TestScreenDropsOSCStrings(t *testing.T) {
	s := newScreen(40, 3)
	defer s.close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, piece := range []string{"\x1b]0;✳ Clau", "de Code\x07a", "\x1b]2;x\x1b\\b\x1b", "[1mc\x1b]8;;http://x\x1b\\d"} {
		s.feed([]byte(piece))
	}
	sc := s.read(true)
	if got := sc.Row(0); got != "abcd" {
		t.Errorf("row 0 = %q, want %q", got, "abcd")
	}
	if !sc.Cells[0][2].Bold || sc.Cells[0][1].Bold {
		t.Errorf("the SGR after a title string was lost: %+v", sc.Cells[0][:4])
	}
}

// The emulator's parser keeps a small data buffer (vt.NewEmulator's 4 MiB would be most of
// an idle terminal's memory): the unexported field shrinkParser reaches is still there.
func TestShrinkParser(t *testing.T) {
	s := newScreen(80, 24)
	defer s.close()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ensure()
	if !shrinkParser(s.emu) {
		t.Fatal("vt.Emulator has no parser field of type *ansi.Parser any more: find another way to bound its data buffer")
	}
}
