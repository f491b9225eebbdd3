package config_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/secrets/secretstest"
)

func newSSH(t *testing.T) *config.SSHServers {
	t.Helper()
	st, vault := secretstest.Open(t)
	return config.NewSSHServers(st, vault, newBroker[[]config.SSHServer](t))
}

func TestSSHServersKeepPasswordsSecret(t *testing.T) {
	svc := newSSH(t)
	ctx := context.Background()
	key := filepath.Join(t.TempDir(), "id_ed25519")
	os.WriteFile(key, []byte("key"), 0o600)
	v, err := svc.Save(ctx, "", config.SSHInput{SSHSettings: config.SSHSettings{Name: "build box", Host: "10.0.0.5", Port: 2222, User: "ci", KeyPath: key}, Password: ptr("PWCANARY-hunter2")})
	if err != nil {
		t.Fatal(err)
	}
	list, _ := svc.List(ctx)
	b, _ := json.Marshal(list)
	if !v.PasswordSet || len(list) != 1 || strings.Contains(string(b), "PWCANARY") {
		t.Fatalf("list %s", b)
	}
	r, err := svc.Resolve(ctx, v.ID)
	if err != nil || r.Password != "PWCANARY-hunter2" || r.Port != 2222 {
		t.Fatalf("resolve %+v %v", r, err)
	}
	// An edit without password keeps it; "" removes it.
	v, _ = svc.Save(ctx, v.ID, config.SSHInput{SSHSettings: config.SSHSettings{Name: "build box", Host: "10.0.0.6"}})
	if !v.PasswordSet {
		t.Fatal("an edit dropped the password")
	}
	v, _ = svc.Save(ctx, v.ID, config.SSHInput{SSHSettings: config.SSHSettings{Name: "build box", Host: "10.0.0.6"}, Password: ptr("")})
	if v.PasswordSet {
		t.Fatal("the password was not removed")
	}
	if err := svc.Delete(ctx, v.ID); err != nil {
		t.Fatal(err)
	}
	if err := svc.Delete(ctx, v.ID); !errors.Is(err, config.ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
}

func TestSSHServerInputCannotBecomeSSHOptions(t *testing.T) {
	svc := newSSH(t)
	for field, in := range map[string]config.SSHSettings{
		"name":    {Host: "h"},
		"host":    {Name: "a", Host: "-oProxyCommand=touch /tmp/pwned"},
		"host ":   {Name: "a", Host: "evil host; rm -rf /"},
		"port":    {Name: "a", Host: "h", Port: 70000},
		"user":    {Name: "a", Host: "h", User: "-oFoo"},
		"keyPath": {Name: "a", Host: "h", KeyPath: "/no/such/key"},
	} {
		_, err := svc.Save(context.Background(), "", config.SSHInput{SSHSettings: in})
		var fe *config.FieldError
		if !errors.As(err, &fe) || fe.Field != strings.TrimSpace(field) {
			t.Errorf("%s: %v", field, err)
		}
	}
	// A second server may not take a name already used, whatever its case.
	if _, err := svc.Save(context.Background(), "", config.SSHInput{SSHSettings: config.SSHSettings{Name: "Box", Host: "h"}}); err != nil {
		t.Fatal(err)
	}
	_, err := svc.Save(context.Background(), "", config.SSHInput{SSHSettings: config.SSHSettings{Name: "box", Host: "h2"}})
	var fe *config.FieldError
	if !errors.As(err, &fe) || fe.Field != "name" || !strings.Contains(fe.Msg, "already used by another server") {
		t.Errorf("a taken name: %v", err)
	}
}
