package mcpserve

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/clusterspace/clusterspace/backend/internal/atomicfile"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// TokensFile holds the MCP clients' tokens in the data dir, hashed. It is a file and not a
// table of the store so that `clusterspace mcp token create` works while a serve or the
// desktop owns the data dir (the store is theirs then), and the owner reads it on every
// request, so a token revoked from the terminal stops working at once.
const TokensFile = "mcp-tokens.json"

// tokenPrefix marks a ClusterSpace MCP token, so a leaked one is recognisable in a log or a
// secret scanner.
const tokenPrefix = "csmcp_"

// tokenBytes is the token's randomness: 256 bits, so a fast hash (SHA-256) is as safe to
// store as bcrypt is for a password a person chose, and checking one costs nothing.
const tokenBytes = 32

// namePattern is what a client's name may be: it shows in approvals and logs.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ErrNoToken means no client of that name has a token.
var ErrNoToken = errors.New("no such MCP client")

// Token is one client's entry: its name, what it may do, and its token's hash.
type Token struct {
	Name string `json:"name"`
	// Hash is the hex SHA-256 of the token; the token itself is shown once and never stored.
	Hash string `json:"hash"`
	// Risk is the client's ceiling: a call above it asks the person in the app.
	Risk tools.Risk `json:"risk"`
	// PaneID is the pane the client's agent runs in ("" none): its own pane for the pane
	// tools, and the fleet task it reports on.
	PaneID    string    `json:"paneId,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

// Tokens is the token file of one data dir.
type Tokens struct{ path string }

// NewTokens returns the token file of the data dir dir.
func NewTokens(dataDir string) *Tokens { return &Tokens{path: filepath.Join(dataDir, TokensFile)} }

// Create adds a client and returns its token, the only time it is seen.
func (ts *Tokens) Create(name string, risk tools.Risk, paneID string) (string, error) {
	if !namePattern.MatchString(name) {
		return "", fmt.Errorf("name %q: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	var raw [tokenBytes]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	token := tokenPrefix + hex.EncodeToString(raw[:])
	err := ts.update(func(list []Token) ([]Token, error) {
		if slices.ContainsFunc(list, func(t Token) bool { return t.Name == name }) {
			return nil, fmt.Errorf("a client named %q has a token already: revoke it first (clusterspace mcp token revoke %s) or pick another name", name, name)
		}
		return append(list, Token{Name: name, Hash: hashToken(token), Risk: risk, PaneID: paneID, CreatedAt: time.Now().UTC()}), nil
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// Revoke removes a client's token.
func (ts *Tokens) Revoke(name string) error {
	return ts.update(func(list []Token) ([]Token, error) {
		i := slices.IndexFunc(list, func(t Token) bool { return t.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("%w: no client named %q has a token (clusterspace mcp token list shows them)", ErrNoToken, name)
		}
		return slices.Delete(list, i, i+1), nil
	})
}

// RevokePane removes the tokens made for a pane (its agent is gone).
func (ts *Tokens) RevokePane(paneID string) error {
	list, err := ts.read()
	if err != nil || !slices.ContainsFunc(list, func(t Token) bool { return t.PaneID == paneID }) {
		return err // none: nothing to write
	}
	return ts.update(func(list []Token) ([]Token, error) {
		return slices.DeleteFunc(list, func(t Token) bool { return t.PaneID == paneID }), nil
	})
}

// List returns the clients, oldest first (hashes included: they are not secrets).
func (ts *Tokens) List() ([]Token, error) { return ts.read() }

// Check returns the client a presented token belongs to. Every stored hash is compared in
// constant time, so the answer's timing says nothing about which one came close.
func (ts *Tokens) Check(token string) (Token, bool) {
	if !strings.HasPrefix(token, tokenPrefix) {
		return Token{}, false
	}
	list, err := ts.read()
	if err != nil {
		return Token{}, false
	}
	h := []byte(hashToken(token))
	var found Token
	ok := false
	for _, t := range list {
		if subtle.ConstantTimeCompare(h, []byte(t.Hash)) == 1 {
			found, ok = t, true
		}
	}
	return found, ok
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func (ts *Tokens) read() ([]Token, error) {
	b, err := os.ReadFile(ts.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var list []Token
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("%s is not a token list (%v): remove it and create the tokens again", ts.path, err)
	}
	return list, nil
}

// update changes the list under an exclusive lock of the file beside it, and writes it whole
// with a rename, so a reader never sees half a list.
func (ts *Tokens) update(change func([]Token) ([]Token, error)) error {
	lock, err := os.OpenFile(ts.path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	list, err := ts.read()
	if err != nil {
		return err
	}
	if list, err = change(list); err != nil {
		return err
	}
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(ts.path, b, 0o600)
}
