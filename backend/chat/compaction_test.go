package chat_test

import (
	"context"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// summaryMark is the summariser's system prompt (agent/compact.go): how a summary request is
// told from the chat's own.
const summaryMark = "You compact the history"

// A conversation compacted in one process is sent compacted by the next (a new service on the
// same store): its next message pays for no new summary, and its request repeats the last one
// the old process sent, byte for byte, so the provider's prompt cache still holds. Clearing the
// conversation drops the stored compaction with the messages it summarised.
func TestCompactionSurvivesRestartAndGoesWithClear(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	summary := llmtest.Role{Name: "summary", Match: llmtest.Match{System: summaryMark}, Reply: llmtest.Text("SUMMARY: the user sent SECOND, it was noted.")}
	r := newRig(t, llmtest.Script{Roles: []llmtest.Role{summary, actorRole(llmtest.Text("Noted."))}})
	small := r.model("small")
	small.Window, small.MaxTokens = 2000, 100
	r.mods.set("", small)
	// The first message stays verbatim at the head of every compacted request, so it is short:
	// then what is left after the compaction leaves room for one more short message.
	long := func(tag string) string { return tag + " " + strings.Repeat("lorem ipsum ", 250) }
	for i, text := range []string{"FIRST: keep notes of what I send.", long("SECOND"), long("THIRD")} {
		r.send(text)
		r.stopped(i + 1)
	}
	summaries := func() (n int) {
		for _, q := range r.srv.ChatRequests() {
			if strings.Contains(q.System, summaryMark) {
				n++
			}
		}
		return n
	}
	lastActor := func() llmtest.Request {
		reqs := r.srv.ChatRequests()
		for i := len(reqs) - 1; i >= 0; i-- {
			if strings.Contains(reqs[i].System, actorMark) {
				return reqs[i]
			}
		}
		t.Fatal("no actor request")
		return llmtest.Request{}
	}
	made := summaries()
	if made == 0 {
		t.Fatal("the conversation was never compacted: the test no longer outgrows the window")
	}
	before := lastActor()
	if !strings.Contains(string(before.Body), "[Earlier in this") {
		t.Fatalf("the last request before the restart was not compacted: %.300s", before.Body)
	}
	stored, err := r.st.ChatCompactions(ctx, r.conv)
	if err != nil || !strings.Contains(stored["actor"].Summary, "SUMMARY: the user sent SECOND") {
		t.Fatalf("stored compactions: %+v (%v)", stored, err)
	}

	r.svc.Shutdown()
	r.start() // a new process on the same store
	r.send("FOURTH: anything else?")
	r.wantStop(4, "done")
	if n := summaries(); n != made {
		t.Fatalf("the restarted chat asked for %d new summaries: it paid for the compaction again", n-made)
	}
	after := lastActor()
	if !strings.Contains(after.LastUser, "FOURTH") {
		t.Fatalf("the last actor request is not the new message's: %q", after.LastUser)
	}
	if segs, _ := llmtest.CommonPrefix(before, after); segs != before.Segments() {
		b, a := parseRequest(t, before), parseRequest(t, after)
		t.Fatalf("the request after the restart repeats %d of the %d segments the last one sent:\nbefore %.80q\nafter  %.80q",
			segs, before.Segments(), b.Msgs, a.Msgs)
	}

	if err := r.svc.Clear(ctx, r.conv); err != nil {
		t.Fatal(err)
	}
	if stored, err := r.st.ChatCompactions(ctx, r.conv); err != nil || len(stored) != 0 {
		t.Fatalf("compactions after clear: %+v (%v)", stored, err)
	}
	r.svc.Shutdown()
	r.start()
	r.send("FIFTH")
	r.stopped(5)
	if body := string(lastActor().Body); strings.Contains(body, "[Earlier in this") || strings.Contains(body, "SUMMARY:") {
		t.Fatalf("the cleared conversation is still sent with its old summary: %.300s", body)
	}
}
