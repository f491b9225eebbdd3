package logins

import (
	"context"
	"errors"
	"testing"

	"github.com/clusterspace/clusterspace/backend/secrets/secretstest"
)

func TestNormalizeOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"https://Staging.Example.com/login?next=/": "https://staging.example.com",
		"staging.example.com":                      "https://staging.example.com",
		"http://127.0.0.1:8080/x":                  "http://127.0.0.1:8080",
		"https://a.example:443":                    "https://a.example",
		"http://[::1]:3000/":                       "http://[::1]:3000",
	} {
		if got, err := NormalizeOrigin(in); err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "ftp://a.example", "file:///etc/passwd", "https://"} {
		var fe *FieldError
		if _, err := NormalizeOrigin(bad); !errors.As(err, &fe) || fe.Field != "origin" {
			t.Errorf("%q: %v, want an origin error", bad, err)
		}
	}
}

// The database keeps the origin, the user name and the vault entry's name; the password is
// the vault's, and it goes with the login.
func TestPasswordLivesInTheVault(t *testing.T) {
	ctx := context.Background()
	st, vault := secretstest.Open(t)
	s := NewService(st, vault)
	pw := "s3cret"
	l, err := s.Save(ctx, "", Input{Origin: "a.example", Username: "ada", Password: &pw})
	if err != nil || !l.PasswordSet {
		t.Fatalf("%+v %v", l, err)
	}
	rows, _ := st.SavedLogins(ctx)
	if len(rows) != 1 || rows[0].SecretName != secretName(l.ID) || rows[0].Username != "ada" {
		t.Fatalf("rows: %+v", rows)
	}
	if got, ok, err := vault.Get(ctx, secretName(l.ID)); err != nil || !ok || got != pw {
		t.Fatalf("vault: %q %v %v", got, ok, err)
	}
	if _, err := s.Save(ctx, "nope", Input{Origin: "b.example", Username: "x"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("edit of an unknown login: %v", err)
	}
	if err := s.Delete(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := vault.Get(ctx, secretName(l.ID)); ok {
		t.Error("the password outlived its login")
	}
}
