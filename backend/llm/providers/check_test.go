package providers_test

import (
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/llm/providers"
)

func TestTestConnection(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, kind string) {
		r := newRig(t, kind, llmtest.Script{Models: []string{"scripted-model", "other"}})
		c := providers.Test(ctx(t), r.p, "scripted-model")
		if !c.OK || len(c.Models) != 2 || !strings.Contains(c.Message, "lists 2 models") {
			t.Fatalf("check %+v", c)
		}
		if c := providers.Test(ctx(t), r.p, "missing"); !c.OK || !strings.Contains(c.Message, `not "missing"`) {
			t.Fatalf("check %+v", c)
		}
		one := newRig(t, kind, llmtest.Script{Models: []string{"only"}})
		if c := providers.Test(ctx(t), one.p, ""); !c.OK || !strings.HasSuffix(c.Message, "lists 1 model") {
			t.Fatalf("one model: %+v", c)
		}

		noList := newRig(t, kind, llmtest.Script{NoModels: true, Replies: []llmtest.Reply{llmtest.Text("p")}})
		c = providers.Test(ctx(t), noList.p, "scripted-model")
		if !c.OK || !strings.Contains(c.Message, "answered") {
			t.Fatalf("fallback check %+v", c)
		}
		if got := noList.srv.ChatRequests()[0].JSON["max_tokens"]; got != 1.0 {
			t.Errorf("the fallback chat asked for %v tokens, want 1", got)
		}

		badKey := newRig(t, kind, llmtest.Script{APIKey: "sk-another-key-0000000"})
		c = providers.Test(ctx(t), badKey.p, "scripted-model")
		if c.OK || !strings.Contains(c.Message, "API key was refused") || len(badKey.srv.ChatRequests()) != 0 {
			t.Fatalf("bad key check %+v", c)
		}
		if strings.Contains(c.Message, testKey) {
			t.Fatal("the key is in the message")
		}
	})
}
