package chat_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/catalog"
	"github.com/clusterspace/clusterspace/backend/chat"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// shelf is a catalog of personas and skills held in memory, as the config dir's loader
// would hand them out.
type shelf struct {
	personas map[string]catalog.Persona
	skills   map[string]catalog.Skill
}

func (s shelf) Persona(id string) (catalog.Persona, bool) {
	p, ok := s.personas[id]
	return p, ok
}

func (s shelf) Skill(id string) (catalog.Skill, bool) {
	k, ok := s.skills[id]
	return k, ok
}

func testShelf() shelf {
	temp := 0.2
	return shelf{
		personas: map[string]catalog.Persona{
			"reviewer": {ID: "reviewer", Name: "Reviewer", Prompt: "Read every file before you judge it. PERSONA-MARK",
				Temperature: &temp, MaxTokens: 321, Tools: []string{"read_file"}, Skills: []string{"git"}},
		},
		skills: map[string]catalog.Skill{
			"git":    {ID: "git", Name: "Git", Body: "Rebase, never merge. GIT-SKILL-MARK"},
			"deploy": {ID: "deploy", Name: "Deploy", Body: "Run make deploy. DEPLOY-SKILL-MARK"},
		},
	}
}

// Two conversations of one workspace keep separate histories and prompt-cache keys; the
// list shows both, newest first, titled after their first messages.
func TestConversationsOfOneWorkspaceKeepSeparateHistories(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{llmtest.Text("About the build."), llmtest.Text("About the deploy.")}})
	ctx := context.Background()
	second, err := r.svc.Create(ctx, ws, chat.NewConversation{})
	if err != nil {
		t.Fatal(err)
	}
	r.send("Summarise the build log")
	r.stopped(1)
	if err := r.svc.Send(ctx, second.ConversationID, "How do I deploy?", nil); err != nil {
		t.Fatal(err)
	}
	r.stopped(2)

	first, _ := r.svc.History(ctx, r.conv)
	other, _ := r.svc.History(ctx, second.ConversationID)
	if got := sources(first); !slices.Equal(got, []string{"user:Summarise the build log", "actor:About the build."}) {
		t.Fatalf("first conversation: %q", got)
	}
	if got := sources(other); !slices.Equal(got, []string{"user:How do I deploy?", "actor:About the deploy."}) {
		t.Fatalf("second conversation: %q", got)
	}
	reqs := r.srv.ChatRequests()
	if len(reqs) != 2 || reqs[0].CacheKey != "chat:"+r.conv || reqs[1].CacheKey != "chat:"+second.ConversationID {
		t.Fatalf("cache keys: %q, %q", reqs[0].CacheKey, reqs[1].CacheKey)
	}
	if strings.Contains(string(reqs[1].Body), "build log") {
		t.Fatal("the second conversation's request carried the first one's history")
	}
	list, err := r.svc.Conversations(ctx, ws)
	if err != nil || len(list) != 2 || list[0].ConversationID != second.ConversationID || list[0].Title != "How do I deploy?" ||
		list[1].Title != "Summarise the build log" || list[0].Messages != 2 {
		t.Fatalf("list: %+v %v", list, err)
	}
}

// The conversation's model reaches every request as its model field, for the actor and a
// critic sharing its provider; the provider's configured model is used when none is picked.
func TestConversationModelReachesTheRequest(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Roles: []llmtest.Role{criticRole("/done"), actorRole(llmtest.Text("Done."))}})
	ctx := context.Background()
	r.send("First, on the provider's model")
	r.stopped(1)
	st := r.state()
	st.Settings.Model = "picked-model-7b"
	if _, err := r.svc.SetSettings(ctx, r.conv, st.Settings); err != nil {
		t.Fatal(err)
	}
	r.criticMode(true)
	r.send("Then on the picked one")
	r.stopped(2)
	reqs := r.srv.ChatRequests()
	var models []string
	for _, q := range reqs {
		models = append(models, q.Model)
	}
	if !slices.Equal(models, []string{"scripted", "picked-model-7b", "picked-model-7b"}) {
		t.Fatalf("models asked for: %q", models)
	}
	if reqs[2].System == "" || !strings.Contains(reqs[2].System, criticMark) {
		t.Fatalf("the third request is not the critic's: %q", reqs[2].System)
	}
	// A typed model id with spaces is refused, naming the field; nothing changes.
	st.Settings.Model = "not a model"
	var fe *chat.FieldError
	if _, err := r.svc.SetSettings(ctx, r.conv, st.Settings); !errors.As(err, &fe) || fe.Field != "model" {
		t.Fatalf("a bad model: %v", err)
	}
	if got := r.state().Settings.Model; got != "picked-model-7b" {
		t.Fatalf("the refused model was kept: %q", got)
	}
}

// A model picked while a reply is under way applies to the next message, though that message
// is queued into the same running loop (as happens when it is sent in the moment after a stop,
// while the loop winds down): the loop must not keep the agent it made for the first.
func TestModelPickedMidLoopReachesTheQueuedMessage(t *testing.T) {
	t.Parallel()
	asked, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{
		// The scripted server holds its lock while it computes a reply: the test learns of the
		// request from the reply itself.
		{Compute: func(llmtest.Request) llmtest.Reply { close(asked); <-release; return llmtest.Text("One.") }},
		llmtest.Text("Two."),
	}})
	ctx := context.Background()
	r.send("First, on the provider's model")
	select {
	case <-asked:
	case <-time.After(10 * time.Second):
		t.Fatal("the first message reached no model in 10 s")
	}
	st := r.state()
	st.Settings.Model = "picked-model-7b"
	if _, err := r.svc.SetSettings(ctx, r.conv, st.Settings); err != nil {
		t.Fatal(err)
	}
	r.send("Then on the picked one") // queued: the first reply is still streaming
	once.Do(func() { close(release) })
	r.stopped(2)
	reqs := r.srv.ChatRequests()
	if reqs[0].Model != "scripted" || reqs[1].Model != "picked-model-7b" {
		t.Fatalf("models asked for: %q then %q; want scripted then picked-model-7b", reqs[0].Model, reqs[1].Model)
	}
}

// The persona shapes the actor: its prompt and the attached skills' texts (its own and the
// conversation's) join the system prompt, its temperature and max_tokens reach the request,
// and its tool list narrows the tools offered. Another conversation of the workspace stays
// as it was.
func TestPersonaAndSkillsShapeTheActorOfTheirConversationOnly(t *testing.T) {
	t.Parallel()
	r := newRigWith(t, llmtest.Script{Replies: []llmtest.Reply{llmtest.Text("Reviewed."), llmtest.Text("Plain.")}},
		func(r *rig) { r.opts.Catalog = testShelf() })
	ctx := context.Background()
	settings := chat.DefaultSettings()
	settings.Persona, settings.Skills = "reviewer", []string{"deploy"}
	shaped, err := r.svc.Create(ctx, ws, chat.NewConversation{Title: "Review", Settings: &settings})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.svc.Send(ctx, shaped.ConversationID, "Review the change", nil); err != nil {
		t.Fatal(err)
	}
	r.stopped(1)
	r.send("Plain question")
	r.stopped(2)
	reqs := r.srv.ChatRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	shapedReq, plainReq := reqs[0], reqs[1]
	for _, mark := range []string{"PERSONA-MARK", "GIT-SKILL-MARK", "DEPLOY-SKILL-MARK", actorMark} {
		if !strings.Contains(shapedReq.System, mark) {
			t.Errorf("the persona's request lacks %q", mark)
		}
		if mark != actorMark && strings.Contains(plainReq.System, mark) {
			t.Errorf("the other conversation's request carries %q", mark)
		}
	}
	if shapedReq.JSON["temperature"] != 0.2 || shapedReq.JSON["max_tokens"] != float64(321) {
		t.Errorf("temperature %v, max_tokens %v; want 0.2 and 321", shapedReq.JSON["temperature"], shapedReq.JSON["max_tokens"])
	}
	if _, ok := plainReq.JSON["temperature"]; ok {
		t.Errorf("the other conversation's request has a temperature: %v", plainReq.JSON["temperature"])
	}
	if got := toolNames(shapedReq); !slices.Equal(got, []string{"read_file"}) {
		t.Errorf("the persona's tools: %q", got)
	}
	if got := toolNames(plainReq); len(got) < 3 {
		t.Errorf("the other conversation was narrowed too: %q", got)
	}
}

func toolNames(q llmtest.Request) []string {
	var names []string
	list, _ := q.JSON["tools"].([]any)
	for _, t := range list {
		fn, _ := t.(map[string]any)["function"].(map[string]any)
		names = append(names, fmt.Sprint(fn["name"]))
	}
	return names
}

// An unknown persona or skill, or any persona without a catalog, is refused with the field
// named; nothing is created or changed.
func TestUnknownPersonaOrSkillIsRefused(t *testing.T) {
	t.Parallel()
	r := newRigWith(t, llmtest.Script{}, func(r *rig) { r.opts.Catalog = testShelf() })
	ctx := context.Background()
	for field, edit := range map[string]func(*chat.Settings){
		"persona": func(s *chat.Settings) { s.Persona = "pirate" },
		"skills":  func(s *chat.Settings) { s.Skills = []string{"git", "juggling"} },
	} {
		s := chat.DefaultSettings()
		edit(&s)
		var fe *chat.FieldError
		if _, err := r.svc.Create(ctx, ws, chat.NewConversation{Settings: &s}); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("create with a bad %s: %v", field, err)
		}
		if _, err := r.svc.SetSettings(ctx, r.conv, s); !errors.As(err, &fe) || fe.Field != field || !strings.Contains(err.Error(), "pick another") && !strings.Contains(err.Error(), "detach it") {
			t.Errorf("settings with a bad %s: %v", field, err)
		}
	}
	if list, _ := r.svc.Conversations(ctx, ws); len(list) != 1 || list[0].Settings.Persona != "" {
		t.Fatalf("a refused change left a trace: %+v", list)
	}

	bare := newRig(t, llmtest.Script{})
	s := chat.DefaultSettings()
	s.Persona = "reviewer"
	var fe *chat.FieldError
	if _, err := bare.svc.SetSettings(ctx, bare.conv, s); !errors.As(err, &fe) || fe.Field != "persona" {
		t.Fatalf("a persona without a catalog: %v", err)
	}
}

// Deleting a running conversation stops it first; its messages go, the workspace's other
// conversation stays, and renaming checks its title.
func TestDeleteStopsARunningConversationAndKeepsTheOthers(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{llmtest.Text("Kept."), llmtest.Stalled("Thinking about", 2)}})
	ctx := context.Background()
	r.send("Keep me")
	r.stopped(1)
	doomed, err := r.svc.Create(ctx, ws, chat.NewConversation{Title: "Scratch"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.svc.Send(ctx, doomed.ConversationID, "Think forever", nil); err != nil {
		t.Fatal(err)
	}
	r.events.waitN(t, 1, func(e chat.Event) bool {
		return e.Type == chat.EventMessageDelta && e.ConversationID == doomed.ConversationID
	})
	if err := r.svc.Delete(ctx, doomed.ConversationID); err != nil {
		t.Fatal(err)
	}
	stop := r.events.waitN(t, 2, isType(chat.EventLoopStopped))
	if stop.ConversationID != doomed.ConversationID || stop.Reason != chat.ReasonStopped || stop.Text != "the conversation was deleted" {
		t.Fatalf("the stop: %+v", stop)
	}
	if _, err := r.svc.History(ctx, doomed.ConversationID); err != nil {
		t.Fatal(err) // an unknown conversation has no history, which is not an error for a read
	}
	if err := r.svc.Send(ctx, doomed.ConversationID, "hello?", nil); !errors.Is(err, chat.ErrNotFound) {
		t.Fatalf("send to a deleted conversation: %v", err)
	}
	list, _ := r.svc.Conversations(ctx, ws)
	if len(list) != 1 || list[0].ConversationID != r.conv || list[0].Messages != 2 {
		t.Fatalf("after delete: %+v", list)
	}
	var fe *chat.FieldError
	if _, err := r.svc.Rename(ctx, r.conv, "   "); !errors.As(err, &fe) || fe.Field != "title" {
		t.Fatalf("an empty title: %v", err)
	}
	if st, err := r.svc.Rename(ctx, r.conv, "  Kept  notes "); err != nil || st.Title != "Kept notes" {
		t.Fatalf("rename: %+v %v", st, err)
	}
}
