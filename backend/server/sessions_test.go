package server

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/golang-jwt/jwt/v5"
)

// TestForgedTokenWithTheRealKeyIsRefused is the probe from issue 14: whoever can read
// <data dir>/jwt.key can sign a token with every claim right, but no login issued it.
func TestForgedTokenWithTheRealKeyIsRefused(t *testing.T) {
	h := newHarness(t)
	good := h.login(t) // a live session exists; the forgery must not ride on it
	key, err := os.ReadFile(filepath.Join(h.dataDir, secretFile))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	forge := func(sid string) string {
		c := claims{Kind: tokenAccess, PasswordTag: h.auth.passwordTag, Session: sid, RegisteredClaims: jwt.RegisteredClaims{
			Issuer: issuer, Subject: "owner", ID: "forged", IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))}}
		tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	for name, tok := range map[string]string{"no session": forge(""), "made-up session": forge(randomID(sessionIDBytes))} {
		for _, p := range []string{"/api/providers", "/api/settings/goals", "/api/approvals"} {
			if resp, body := h.do(t, "GET", p, tok, ""); resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("forged token (%s) on %s: %d %s", name, p, resp.StatusCode, body)
			}
		}
		if resp, _ := h.do(t, "PUT", "/api/settings/goals", tok, "{}"); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("forged token (%s) on PUT /api/settings/goals: %d", name, resp.StatusCode)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if conn, resp, err := dialWS(ctx, h, tok, ""); err == nil {
			conn.CloseNow()
			t.Errorf("forged token (%s) opened the WebSocket", name)
		} else if resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("forged token (%s) on the WebSocket: %v", name, err)
		}
		cancel()
	}
	if resp, _ := h.do(t, "GET", "/api/providers", good.AccessToken, ""); resp.StatusCode != 200 {
		t.Fatalf("the real token: %d", resp.StatusCode)
	}
}

func TestLogoutEndsTheSession(t *testing.T) {
	h := newHarness(t)
	tok := h.login(t)
	other := h.login(t) // another browser's session survives this one's logout
	ctx, conn := h.openWS(t, tok.AccessToken, 10*time.Second)
	if resp, body := h.do(t, "POST", "/api/logout", tok.AccessToken, ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("logout: %d %s", resp.StatusCode, body)
	}
	if resp, _ := h.do(t, "GET", "/api/workspaces", tok.AccessToken, ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("access token after logout: %d, want 401", resp.StatusCode)
	}
	if resp, _ := h.do(t, "POST", "/api/refresh", "", `{"refreshToken":"`+tok.RefreshToken+`"}`); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("refresh token after logout: %d, want 401", resp.StatusCode)
	}
	// The open WebSocket closes at once rather than streaming until the token expires.
	for {
		if _, _, err := conn.Read(ctx); err != nil {
			if websocket.CloseStatus(err) != wsCloseTokenExpired {
				t.Fatalf("WebSocket after logout ended with %v, want close %d", err, wsCloseTokenExpired)
			}
			break
		}
	}
	if resp, _ := h.do(t, "GET", "/api/workspaces", other.AccessToken, ""); resp.StatusCode != 200 {
		t.Errorf("the other session after this one's logout: %d", resp.StatusCode)
	}
}

func TestRefreshTokensRotateAndReuseEndsTheSession(t *testing.T) {
	h := newHarness(t)
	first := h.login(t)
	refresh := func(rt string) (*http.Response, Tokens) {
		resp, body := h.do(t, "POST", "/api/refresh", "", `{"refreshToken":"`+rt+`"}`)
		var tok Tokens
		json.Unmarshal([]byte(body), &tok)
		return resp, tok
	}
	resp, second := refresh(first.RefreshToken)
	if resp.StatusCode != 200 || second.RefreshToken == first.RefreshToken {
		t.Fatalf("first refresh: %d, rotated=%v", resp.StatusCode, second.RefreshToken != first.RefreshToken)
	}
	if resp, _ := h.do(t, "GET", "/api/workspaces", second.AccessToken, ""); resp.StatusCode != 200 {
		t.Fatalf("the refreshed access token: %d", resp.StatusCode)
	}
	// The spent token again: refused, and the session (with the tokens it rotated to) is ended.
	if resp, _ := refresh(first.RefreshToken); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("reused refresh token: %d, want 401", resp.StatusCode)
	}
	if resp, _ := h.do(t, "GET", "/api/workspaces", second.AccessToken, ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("access token of a session whose refresh token was reused: %d, want 401", resp.StatusCode)
	}
	if resp, _ := refresh(second.RefreshToken); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the newest refresh token of that session: %d, want 401", resp.StatusCode)
	}
	if !strings.Contains(h.logs.String(), "refresh token reused") {
		t.Error("the reuse was not logged")
	}
}

func TestSessionTableIsBounded(t *testing.T) {
	tab := newSessionTable()
	now := time.Now()
	first := tab.create("r", now.Add(time.Minute), now)
	for i := range maxSessions {
		tab.create("r", now.Add(time.Hour+time.Duration(i)), now)
	}
	if len(tab.m) != maxSessions {
		t.Fatalf("%d sessions, want %d", len(tab.m), maxSessions)
	}
	if _, err := tab.live(first.id, now); err == nil {
		t.Fatal("the oldest session was kept past the cap")
	}
}
