package config

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clusterspace/clusterspace/backend/internal/randid"
	"github.com/clusterspace/clusterspace/backend/pubsub"
)

// SSHSettings are what the person sets of a server: a saved one carries them, and so does an
// add or an edit.
type SSHSettings struct {
	Name    string `json:"name"`
	Host    string `json:"host"`
	Port    int    `json:"port"` // 0: ssh's default
	User    string `json:"user"`
	KeyPath string `json:"keyPath"`
}

// SSHServer is a saved server as the UI sees it; a password never leaves the backend.
type SSHServer struct {
	ID          string `json:"id"`
	SSHSettings `tstype:",extends"`
	PasswordSet bool      `json:"passwordSet"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// SSHInput adds or edits a server. Password nil keeps the stored one, "" removes it.
type SSHInput struct {
	SSHSettings `tstype:",extends"`
	Password    *string `json:"password,omitempty"`
}

// SSHResolved is a server with its password, for opening a connection; never serialise it.
type SSHResolved struct {
	SSHServer
	Password string `json:"-"`
}

// SSHRepo is the persistence the service needs; the store implements it.
type SSHRepo interface {
	ListSSHServers(ctx context.Context) ([]SSHServer, error)
	SaveSSHServer(ctx context.Context, v SSHServer) error
	DeleteSSHServer(ctx context.Context, id string) error
}

// SSHServers manages saved SSH servers and their passwords.
type SSHServers struct {
	repo   SSHRepo
	vault  Vault
	events *pubsub.Broker[[]SSHServer]
	mu     sync.Mutex
}

// NewSSHServers returns the service.
func NewSSHServers(repo SSHRepo, vault Vault, events *pubsub.Broker[[]SSHServer]) *SSHServers {
	return &SSHServers{repo: repo, vault: vault, events: events}
}

func sshSecret(id string) string { return "ssh/" + id + "/password" }

// List returns the saved servers.
func (s *SSHServers) List(ctx context.Context) ([]SSHServer, error) {
	vs, err := s.repo.ListSSHServers(ctx)
	if err != nil {
		return nil, err
	}
	for i := range vs {
		_, ok, err := s.vault.Get(ctx, sshSecret(vs[i].ID))
		vs[i].PasswordSet = ok || err != nil
	}
	if vs == nil {
		vs = []SSHServer{}
	}
	return vs, nil
}

// hostChars are what a host name or address may contain: nothing that ssh would read as an
// option or a shell would interpret.
func validHost(h string) bool {
	if h == "" || strings.HasPrefix(h, "-") {
		return false
	}
	for _, r := range h {
		if !(r == '.' || r == '-' || r == ':' || r == '_' || r == '[' || r == ']' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// Save adds (id "") or edits a server.
func (s *SSHServers) Save(ctx context.Context, id string, in SSHInput) (SSHServer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in.Name, in.Host, in.User, in.KeyPath = strings.TrimSpace(in.Name), strings.TrimSpace(in.Host), strings.TrimSpace(in.User), strings.TrimSpace(in.KeyPath)
	all, err := s.repo.ListSSHServers(ctx)
	if err != nil {
		return SSHServer{}, err
	}
	if err := checkName(in.Name, all, id, func(v SSHServer) (string, string) { return v.ID, v.Name }, "server"); err != nil {
		return SSHServer{}, err
	}
	switch {
	case !validHost(in.Host):
		return SSHServer{}, &FieldError{"host", fmt.Sprintf("%q is not a host name or address (no scheme, no spaces, not starting with -)", in.Host)}
	case in.Port < 0 || in.Port > 65535:
		return SSHServer{}, &FieldError{"port", "must be between 1 and 65535, or 0 for ssh's default"}
	case strings.HasPrefix(in.User, "-") || strings.ContainsAny(in.User, " @"):
		return SSHServer{}, &FieldError{"user", fmt.Sprintf("%q is not a user name", in.User)}
	}
	if in.KeyPath != "" {
		if info, err := os.Stat(in.KeyPath); err != nil || info.IsDir() {
			return SSHServer{}, &FieldError{"keyPath", fmt.Sprintf("%q is not a readable key file", in.KeyPath)}
		}
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	v := SSHServer{ID: id, CreatedAt: now}
	if id == "" {
		v.ID = randid.New("ssh-")
	} else {
		i := slices.IndexFunc(all, func(x SSHServer) bool { return x.ID == id })
		if i < 0 {
			return SSHServer{}, fmt.Errorf("SSH server %q: %w", id, ErrNotFound)
		}
		v = all[i]
	}
	v.SSHSettings, v.UpdatedAt = in.SSHSettings, now
	if err := putSecret(ctx, s.vault, sshSecret(v.ID), in.Password, "password"); err != nil {
		return SSHServer{}, err
	}
	if err := s.repo.SaveSSHServer(ctx, v); err != nil {
		return SSHServer{}, err
	}
	_, v.PasswordSet, _ = s.vault.Get(ctx, sshSecret(v.ID))
	s.publish(ctx)
	return v, nil
}

// Delete removes a server and its password.
func (s *SSHServers) Delete(ctx context.Context, id string) error {
	if err := s.repo.DeleteSSHServer(ctx, id); err != nil {
		return err
	}
	if err := s.vault.Delete(ctx, sshSecret(id)); err != nil {
		return err
	}
	s.publish(ctx)
	return nil
}

// Resolve returns a server with its password, to connect.
func (s *SSHServers) Resolve(ctx context.Context, id string) (SSHResolved, error) {
	vs, err := s.repo.ListSSHServers(ctx)
	if err != nil {
		return SSHResolved{}, err
	}
	i := slices.IndexFunc(vs, func(v SSHServer) bool { return v.ID == id })
	if i < 0 {
		return SSHResolved{}, fmt.Errorf("SSH server %q: %w", id, ErrNotFound)
	}
	pw, ok, err := s.vault.Get(ctx, sshSecret(id))
	if err != nil {
		return SSHResolved{}, err
	}
	vs[i].PasswordSet = ok
	return SSHResolved{SSHServer: vs[i], Password: pw}, nil
}

func (s *SSHServers) publish(ctx context.Context) {
	if vs, err := s.List(ctx); err == nil {
		s.events.Publish("updated", vs)
	}
}
