package config_test

import (
	"context"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/config"
)

// A provider is assigned to an agent template only when it speaks the template's protocol and
// has a key; each refusal names the template's field; "" clears an assignment.
func TestAgentKeysAreCheckedAndStored(t *testing.T) {
	ctx := context.Background()
	p, st := newProviders(t)
	key := "sk-x"
	ant, err := p.Save(ctx, "", config.ProviderInput{ProviderSettings: config.ProviderSettings{Name: "Ant", Kind: config.KindAnthropic, Model: "m"}, APIKey: &key})
	if err != nil {
		t.Fatal(err)
	}
	bare, err := p.Save(ctx, "", config.ProviderInput{ProviderSettings: config.ProviderSettings{Name: "Bare", Kind: config.KindAnthropic, Model: "m"}})
	if err != nil {
		t.Fatal(err)
	}
	wire := func(id string) (string, bool) {
		return map[string]string{"claude": "anthropic", "codex": "openai", "python": ""}[id], id != "nope"
	}
	for _, c := range []struct {
		keys  map[string]string
		field string
		want  string
	}{
		{map[string]string{"codex": ant.ID}, "providers.codex", "speaks anthropic"},
		{map[string]string{"claude": bare.ID}, "providers.claude", "has no API key"},
		{map[string]string{"claude": "prov-none"}, "providers.claude", "no provider has id"},
		{map[string]string{"python": ant.ID}, "providers.python", "not an agent template"},
		{map[string]string{"nope": ant.ID}, "providers.nope", "not an agent template"},
	} {
		err := config.SaveAgentKeys(ctx, st, p, wire, config.AgentKeys{Providers: c.keys})
		fe, ok := err.(*config.FieldError)
		if !ok || fe.Field != c.field || !strings.Contains(fe.Msg, c.want) {
			t.Errorf("%v: %v, want a field error on %s saying %q", c.keys, err, c.field, c.want)
		}
	}
	if err := config.SaveAgentKeys(ctx, st, p, wire, config.AgentKeys{Providers: map[string]string{"claude": ant.ID, "codex": ""}}); err != nil {
		t.Fatal(err)
	}
	got, err := config.LoadAgentKeys(ctx, st)
	if err != nil || len(got.Providers) != 1 || got.Providers["claude"] != ant.ID {
		t.Fatalf("stored: %+v %v", got, err)
	}
}
