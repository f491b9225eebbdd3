package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clusterspace/clusterspace/backend/config"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/bcrypt"
)

// Token lifetimes: a stolen access token is useful for minutes; the refresh token keeps a
// browser tab logged in across a working week without asking for the password again.
const (
	AccessTTL  = 15 * time.Minute
	RefreshTTL = 7 * 24 * time.Hour
)

// bcryptCost makes each password check take tens of milliseconds: cheap for a person logging
// in, expensive for someone guessing (the lockout bounds the guesses as well).
var bcryptCost = 11

// secretFile holds the per-install JWT signing secret, mode 0600, in the data dir.
const secretFile = "jwt.key"

// secretBytes is the HS256 key size: 256 bits, the size of the hash.
const secretBytes = 32

// generatedPasswordBytes gives a 24-character base64url password (144 bits).
const generatedPasswordBytes = 18

// Settings keys for the password hash.
const passwordHashKey = "auth.password_hash"

const (
	tokenAccess  = "access"
	tokenRefresh = "refresh"
	issuer       = "clusterspace"
)

// SettingsRepo is where the password hash is kept; the store implements it.
type SettingsRepo interface {
	Setting(ctx context.Context, key string) (string, bool, error)
	SetSetting(ctx context.Context, key, value string) error
}

// Auth checks the password and issues and verifies tokens.
type Auth struct {
	secret       []byte
	passwordHash []byte
	// passwordTag is in every token, so changing the password logs out every client.
	passwordTag string
	// sessions are the live logins; a token is only good while its session is here.
	sessions *sessionTable
	now      func() time.Time
}

// claims is the JWT body: who, which kind of token, which password it was issued under, and
// which login session it belongs to.
type claims struct {
	Kind        string `json:"typ"`
	PasswordTag string `json:"pwt"`
	Session     string `json:"sid"`
	jwt.RegisteredClaims
}

// SetupAuth loads (or creates) the signing secret and the password. With passwordFile set, the
// password is read from it and replaces any earlier one. With neither a file nor a stored
// password, a random password is generated and returned so the caller can print it once.
func SetupAuth(ctx context.Context, dataDir string, settings SettingsRepo, passwordFile string) (*Auth, string, error) {
	secret, err := loadOrCreateSecret(filepath.Join(dataDir, secretFile))
	if err != nil {
		return nil, "", err
	}
	var generated string
	hash, ok, err := settings.Setting(ctx, passwordHashKey)
	if err != nil {
		return nil, "", fmt.Errorf("read the stored password hash: %w", err)
	}
	var password string
	switch {
	case passwordFile != "":
		b, err := os.ReadFile(passwordFile)
		if err != nil {
			return nil, "", fmt.Errorf("--password-file: %w", err)
		}
		password = strings.TrimRight(string(b), "\r\n")
		if password == "" {
			return nil, "", fmt.Errorf("--password-file %q is empty: put the password on its first line", passwordFile)
		}
	case !ok:
		buf := make([]byte, generatedPasswordBytes)
		rand.Read(buf)
		password = base64.RawURLEncoding.EncodeToString(buf)
		generated = password
	}
	if password != "" && (!ok || bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) != nil) {
		h, err := bcrypt.GenerateFromPassword([]byte(password), bcryptCost)
		if errors.Is(err, bcrypt.ErrPasswordTooLong) {
			return nil, "", fmt.Errorf("--password-file: the password is longer than 72 bytes; use a shorter one")
		}
		if err != nil {
			return nil, "", err
		}
		hash = string(h)
		if err := settings.SetSetting(ctx, passwordHashKey, hash); err != nil {
			return nil, "", fmt.Errorf("save the password hash: %w", err)
		}
	}
	tag := sha256.Sum256([]byte(hash))
	return &Auth{secret: secret, passwordHash: []byte(hash), passwordTag: hex.EncodeToString(tag[:8]),
		sessions: newSessionTable(), now: time.Now}, generated, nil
}

func loadOrCreateSecret(path string) ([]byte, error) {
	key, err := config.LoadOrCreateKeyFile(path, secretBytes)
	if errors.Is(err, config.ErrDamagedKeyFile) {
		return nil, fmt.Errorf("JWT secret %q is damaged: delete it to make a new one (every client will have to log in again)", path)
	}
	return key, err
}

// CheckPassword reports whether password is the login password (bcrypt compares in constant time).
func (a *Auth) CheckPassword(password string) bool {
	return bcrypt.CompareHashAndPassword(a.passwordHash, []byte(password)) == nil
}

// Tokens is what login and refresh return.
type Tokens struct {
	AccessToken  string `json:"accessToken"`
	RefreshToken string `json:"refreshToken"`
	ExpiresIn    int    `json:"expiresIn"` // seconds until the access token expires
}

// Issue starts a new login session and returns its first access and refresh token pair.
func (a *Auth) Issue() (Tokens, error) {
	refreshID := randomID(12)
	sess := a.sessions.create(refreshID, a.now().Add(RefreshTTL), a.now())
	return a.pair(sess.id, refreshID)
}

// Refresh trades a refresh token for a new pair. Each refresh token works once: using one
// again ends its session, since only a thief or a confused client would hold a spent one.
func (a *Auth) Refresh(token string) (Tokens, error) {
	c, err := a.parse(token, tokenRefresh)
	if err != nil {
		return Tokens{}, err
	}
	next := randomID(12)
	if err := a.sessions.rotate(c.Session, c.ID, next, a.now().Add(RefreshTTL), a.now()); err != nil {
		return Tokens{}, err
	}
	return a.pair(c.Session, next)
}

// Logout ends a session: its tokens stop working and its WebSockets close.
func (a *Auth) Logout(sessionID string) { a.sessions.revoke(sessionID) }

func (a *Auth) pair(sessionID, refreshID string) (Tokens, error) {
	access, err := a.sign(tokenAccess, sessionID, randomID(12), AccessTTL)
	if err != nil {
		return Tokens{}, err
	}
	refresh, err := a.sign(tokenRefresh, sessionID, refreshID, RefreshTTL)
	if err != nil {
		return Tokens{}, err
	}
	return Tokens{AccessToken: access, RefreshToken: refresh, ExpiresIn: int(AccessTTL / time.Second)}, nil
}

func (a *Auth) sign(kind, sessionID, jti string, ttl time.Duration) (string, error) {
	now := a.now()
	c := claims{Kind: kind, PasswordTag: a.passwordTag, Session: sessionID, RegisteredClaims: jwt.RegisteredClaims{
		Issuer: issuer, Subject: "owner", ID: jti,
		IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
	}}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(a.secret)
}

// Verify checks a token's signature (HS256 only), expiry, issuer, kind and password tag, and
// that its login session is still live; it returns when the token expires and the session.
func (a *Auth) Verify(token, kind string) (time.Time, *session, error) {
	c, err := a.parse(token, kind)
	if err != nil {
		return time.Time{}, nil, err
	}
	sess, err := a.sessions.live(c.Session, a.now())
	if err != nil {
		return time.Time{}, nil, err
	}
	return c.ExpiresAt.Time, sess, nil
}

// parse checks everything about a token except whether its session is live.
func (a *Auth) parse(token, kind string) (*claims, error) {
	var c claims
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return a.secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuer(issuer),
		jwt.WithTimeFunc(a.now),
	)
	if err != nil {
		return nil, err
	}
	if c.Kind != kind {
		return nil, fmt.Errorf("a %s token cannot be used as a %s token", c.Kind, kind)
	}
	if c.PasswordTag != a.passwordTag {
		return nil, errors.New("the password changed since this token was issued: log in again")
	}
	return &c, nil
}
