package mcp

import (
	"errors"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

type tokenSourceFunc func() (*oauth2.Token, error)

func (f tokenSourceFunc) Token() (*oauth2.Token, error) { return f() }

// TestTokenExpiredWithoutRefreshSignsInAgain: an expired token with no
// refresh token yields no token (the server's 401 starts a sign-in)
// without asking the source; with a refresh token, or while the token is
// valid, the source is asked and its error comes back.
func TestTokenExpiredWithoutRefreshSignsInAgain(t *testing.T) {
	t.Parallel()
	calls := 0
	broken := errors.New("the token endpoint broke")
	src := tokenSourceFunc(func() (*oauth2.Token, error) { calls++; return nil, broken })
	ts := &tokenStore{meta: storedTokens{AccessToken: "a", Expiry: time.Now().Add(-time.Hour)}, src: src}
	if tok, err := ts.Token(); tok != nil || err != nil || calls != 0 {
		t.Errorf("expired, no refresh token: %v, %v, %d calls; want none, nil, 0", tok, err, calls)
	}
	ts.meta.RefreshToken = "r"
	if _, err := ts.Token(); !errors.Is(err, broken) || calls != 1 {
		t.Errorf("expired with a refresh token: %v, %d calls; want the refresh's error", err, calls)
	}
	ts.meta = storedTokens{AccessToken: "a", Expiry: time.Now().Add(time.Hour)}
	if _, err := ts.Token(); !errors.Is(err, broken) || calls != 2 {
		t.Errorf("a valid token: %v, %d calls; want the source asked", err, calls)
	}
}
