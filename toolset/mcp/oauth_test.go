package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/toolset/mcp"
	"github.com/hushcli/hush/toolset/mcp/oauthtest"
	"github.com/hushcli/hush/vault"
)

// oauthWorld is a vault file and a gate over it, for OAuth servers.
type oauthWorld struct {
	t       *testing.T
	dir     string
	path    string
	vault   *vault.EnvFile
	mu      sync.Mutex
	allow   bool
	asked   []string
	notices []string
}

func newOAuthWorld(t *testing.T) *oauthWorld {
	dir := t.TempDir()
	p := filepath.Join(dir, "vault.env")
	return &oauthWorld{t: t, dir: dir, path: p, vault: vault.NewEnvFile(p), allow: true}
}

func (w *oauthWorld) grant(_ context.Context, server string, _ int) tools.Grant {
	return func(name string) (string, error) {
		w.mu.Lock()
		w.asked = append(w.asked, mcp.Subject(server)+" vault.read:"+name)
		allow := w.allow
		w.mu.Unlock()
		if !allow {
			return "", &executor.DeniedError{Message: fmt.Sprintf("vault.read:%s for %s is denied: no rule allows it", name, mcp.Subject(server))}
		}
		return w.vault.Get(name)
	}
}

func (w *oauthWorld) manager(s mcp.Server, signIn *mcp.SignIn) *mcp.Manager {
	w.t.Helper()
	m, err := mcp.NewManager(mcp.Options{Servers: []mcp.Server{s}, Dir: w.dir, Ambient: map[string]string{"PATH": "/usr/bin:/bin"},
		Grant: w.grant, Store: w.vault, SignIn: signIn,
		Notice: func(n string) { w.mu.Lock(); w.notices = append(w.notices, n); w.mu.Unlock() }})
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(m.Close)
	return m
}

// raw is the vault file's bytes, as on disk.
func (w *oauthWorld) raw() string {
	b, err := os.ReadFile(w.path)
	if err != nil && !os.IsNotExist(err) {
		w.t.Fatal(err)
	}
	return string(b)
}

func oauthServer(name, endpoint string) mcp.Server {
	return mcp.Server{Name: name, URL: endpoint, OAuth: true, StartTimeout: 20 * time.Second}
}

func callWhoami(t *testing.T, m *mcp.Manager, server string) {
	t.Helper()
	var out bytes.Buffer
	res, err := m.Call(context.Background(), 1, server, "whoami", map[string]any{}, &out)
	if err != nil || res.IsError || !strings.Contains(out.String(), oauthtest.ToolText) {
		t.Fatalf("call: %v %+v %q", err, res, out.String())
	}
}

// The first session signs in (authorization code with PKCE, the browser
// coming back to hush's loopback listener) and stores the tokens in the
// vault file; the second reads them back through the gate and connects
// without a new sign-in. No token is in what hush showed or said.
func TestOAuthSignInStoresTokensAndTheNextSessionUsesThem(t *testing.T) {
	t.Parallel()
	srv := oauthtest.New(t)
	w := newOAuthWorld(t)
	browser := oauthtest.NewBrowser()
	// A stray request to the redirect with another state is turned away
	// and does not end the wait.
	browser.Before = func(authURL string) {
		redirect := between(authURL, "redirect_uri=", "&")
		if u, err := unescape(redirect); err == nil {
			if resp, err := http.Get(u + "?code=forged&state=wrong"); err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusBadRequest {
					t.Errorf("a redirect with a wrong state got %d", resp.StatusCode)
				}
			}
		}
	}
	m := w.manager(oauthServer("linear", srv.URL), &mcp.SignIn{Out: browser, Timeout: time.Minute})
	m.Start(context.Background())
	st := m.Status()[0]
	if st.State != mcp.Running {
		t.Fatalf("status %+v\nscreen:\n%s", st, browser.Screen())
	}
	<-browser.Done
	if browser.Status != http.StatusOK || !strings.Contains(browser.Page, "Signed in to linear") {
		t.Errorf("the browser got %d %q (%v)", browser.Status, browser.Page, browser.Err)
	}
	callWhoami(t, m, "linear")
	issued := srv.Issued()
	if len(issued) != 2 {
		t.Fatalf("issued %d tokens, want an access and a refresh token", len(issued))
	}
	access, refresh := issued[0], issued[1]
	raw := w.raw()
	name := config.OAuthTokenName("linear")
	if name != "HUSH_MCP_OAUTH_LINEAR" || !strings.Contains(raw, name+"=") {
		t.Fatalf("the vault has no %s:\n%d bytes", name, len(raw))
	}
	// Positive control, on the raw bytes of the vault file.
	if !strings.Contains(raw, access) || !strings.Contains(raw, refresh) {
		t.Fatal("the vault file does not hold the tokens")
	}
	screen := browser.Screen()
	t.Logf("the sign-in as shown:\n%s", screen)
	for _, text := range []string{screen, st.Describe(), st.Command, strings.Join(w.notices, "\n")} {
		if strings.Contains(text, access) || strings.Contains(text, refresh) {
			t.Errorf("a token is shown: %q", text)
		}
	}
	if !strings.Contains(screen, "asks you to sign in") || !strings.Contains(screen, "signed in to mcp server \"linear\"; its tokens are in the vault as HUSH_MCP_OAUTH_LINEAR") {
		t.Errorf("the screen does not say what happens:\n%s", screen)
	}
	if st.Command != srv.URL+" (http, oauth)" {
		t.Errorf("command %q", st.Command)
	}
	if len(w.asked) != 0 {
		t.Errorf("nothing was stored yet, but the gate was asked %v", w.asked)
	}
	m.Close()

	// The second session: no one to sign in, the tokens from the vault.
	before := len(srv.Bearers())
	m2 := w.manager(oauthServer("linear", srv.URL), nil)
	m2.Start(context.Background())
	if st := m2.Status()[0]; st.State != mcp.Running {
		t.Fatalf("second session: %+v", st)
	}
	callWhoami(t, m2, "linear")
	if n := srv.Authorizes(); n != 1 {
		t.Errorf("%d sign-ins, want the first session's only", n)
	}
	if got := w.asked; len(got) != 1 || got[0] != "mcp:linear vault.read:HUSH_MCP_OAUTH_LINEAR" {
		t.Errorf("the gate was asked %v", got)
	}
	for _, b := range srv.Bearers()[before:] {
		if b != access {
			t.Fatalf("the second session sent %q, want the stored access token", b)
		}
	}
}

// A denied read of the stored tokens: the server is not contacted.
func TestOAuthDeniedReadDoesNotContactTheServer(t *testing.T) {
	t.Parallel()
	srv := oauthtest.New(t)
	w := newOAuthWorld(t)
	storeTokens(t, w, srv, "linear", srv.URL, time.Now().Add(time.Hour))
	w.allow = false
	m := w.manager(oauthServer("linear", srv.URL), &mcp.SignIn{Out: oauthtest.NewBrowser()})
	m.Start(context.Background())
	st := m.Status()[0]
	if st.State != mcp.Denied || !strings.Contains(st.Reason, "vault.read:HUSH_MCP_OAUTH_LINEAR") {
		t.Fatalf("status %+v, want denied naming the secret", st)
	}
	if n := len(srv.Bearers()); n != 0 || srv.Authorizes() != 0 {
		t.Fatalf("the denied server was sent %d request(s), %d sign-ins", n, srv.Authorizes())
	}
}

// Nothing stored and nobody to sign in (hush run, CI): the server is not
// contacted, and the reason says how to sign in.
func TestOAuthWithoutSignInIsNotStarted(t *testing.T) {
	t.Parallel()
	srv := oauthtest.New(t)
	w := newOAuthWorld(t)
	m := w.manager(oauthServer("linear", srv.URL), nil)
	m.Start(context.Background())
	st := m.Status()[0]
	if st.State != mcp.NeedsSignIn || !strings.Contains(st.Describe(), "run `hush mcp login linear` at a terminal") {
		t.Fatalf("status %q", st.Describe())
	}
	if n := len(srv.Bearers()); n != 0 || len(w.asked) != 0 {
		t.Fatalf("%d request(s), gate asked %v", n, w.asked)
	}
}

// An expired access token is refreshed, and the new tokens replace the old
// in the vault file.
func TestOAuthRefreshWritesBack(t *testing.T) {
	t.Parallel()
	srv := oauthtest.New(t)
	w := newOAuthWorld(t)
	oldAccess, oldRefresh := storeTokens(t, w, srv, "linear", srv.URL, time.Now().Add(-time.Minute))
	m := w.manager(oauthServer("linear", srv.URL), nil)
	m.Start(context.Background())
	if st := m.Status()[0]; st.State != mcp.Running {
		t.Fatalf("status %+v", st)
	}
	callWhoami(t, m, "linear")
	if srv.Refreshes() != 1 || srv.Authorizes() != 0 {
		t.Fatalf("%d refreshes, %d sign-ins; want one refresh", srv.Refreshes(), srv.Authorizes())
	}
	issued := srv.Issued()
	newAccess, newRefresh := issued[len(issued)-2], issued[len(issued)-1]
	raw := w.raw()
	if !strings.Contains(raw, newAccess) || !strings.Contains(raw, newRefresh) {
		t.Fatal("the refreshed tokens were not written to the vault")
	}
	if strings.Contains(raw, oldAccess) || strings.Contains(raw, oldRefresh) {
		t.Error("the old tokens are still in the vault")
	}
	for _, b := range srv.Bearers() {
		if b == oldAccess {
			t.Error("the expired access token was sent")
		}
	}
}

// Tokens stored for one URL are never sent to another configured under
// the same name (a project config pointing "linear" elsewhere).
func TestOAuthTokensStayWithTheirURL(t *testing.T) {
	t.Parallel()
	real, other := oauthtest.New(t), oauthtest.New(t)
	w := newOAuthWorld(t)
	access, _ := storeTokens(t, w, real, "linear", real.URL, time.Now().Add(time.Hour))
	m := w.manager(oauthServer("linear", other.URL), nil)
	m.Start(context.Background())
	st := m.Status()[0]
	if st.State != mcp.NeedsSignIn {
		t.Fatalf("status %+v", st)
	}
	for _, b := range other.Bearers() {
		if b == access {
			t.Fatal("the token went to another URL")
		}
	}
	if len(w.notices) != 1 || !strings.Contains(w.notices[0], "is for another URL") || strings.Contains(w.notices[0], access) {
		t.Errorf("notices %q", w.notices)
	}
}

// Ctrl-C while hush waits for the browser ends the start at once; a
// sign-in nobody completes ends at its timeout. Neither waits out the
// other, and the start timeout does not cut a sign-in short.
func TestOAuthSignInCanBeCancelled(t *testing.T) {
	t.Parallel()
	srv := oauthtest.New(t)
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		cancel  bool
		want    string
	}{
		{"ctrl-c", time.Minute, true, "start interrupted"},
		{"timeout", 2 * time.Second, false, "no sign-in came back within 2s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newOAuthWorld(t)
			var screen syncBuffer
			s := oauthServer("linear", srv.URL)
			s.StartTimeout = time.Second // shorter than the sign-in: it must not count
			m := w.manager(s, &mcp.SignIn{Out: &screen, Timeout: tc.timeout})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				go func() {
					for !strings.Contains(screen.String(), "waiting up to") {
						time.Sleep(10 * time.Millisecond)
					}
					cancel()
				}()
			}
			start := time.Now()
			m.Start(ctx)
			st := m.Status()[0]
			if st.State != mcp.Failed || !strings.Contains(st.Reason, tc.want) {
				t.Fatalf("status %q, want failed with %q\n%s", st.Describe(), tc.want, screen.String())
			}
			t.Logf("status: %s", st.Describe())
			if n := strings.Count(screen.String(), "asks you to sign in"); n != 1 {
				t.Errorf("the sign-in was shown %d times:\n%s", n, screen.String())
			}
			if d := time.Since(start); d > 30*time.Second || (!tc.cancel && d < tc.timeout) {
				t.Errorf("ended after %s", d)
			}
		})
	}
}

// storeTokens puts a sign-in into w's vault as hush stores one, with
// tokens srv accepts, and returns them.
func storeTokens(t *testing.T, w *oauthWorld, srv *oauthtest.Server, name, endpoint string, exp time.Time) (string, string) {
	t.Helper()
	access, refresh := canary("stored-access"), canary("stored-refresh")
	srv.AddToken("client-1", access, refresh, exp)
	b, _ := json.Marshal(map[string]any{"v": 1, "server_url": endpoint, "access_token": access, "token_type": "Bearer",
		"refresh_token": refresh, "expiry": exp.UTC().Format(time.RFC3339), "client_id": "client-1", "token_url": srv.Issuer + "/token"})
	if err := w.vault.Set(config.OAuthTokenName(name), string(b)); err != nil {
		t.Fatal(err)
	}
	return access, refresh
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func between(s, from, to string) string {
	_, rest, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, to)
	return v
}

func unescape(s string) (string, error) { return url.QueryUnescape(s) }

// A stored sign-in the server no longer accepts, with nobody to sign in:
// the server is not used, and the reason says how to sign in again.
func TestOAuthRevokedSignInSaysHowToSignInAgain(t *testing.T) {
	t.Parallel()
	srv := oauthtest.New(t)
	w := newOAuthWorld(t)
	access, refresh := storeTokens(t, w, srv, "linear", srv.URL, time.Now().Add(time.Hour))
	srv.Revoke()
	m := w.manager(oauthServer("linear", srv.URL), nil)
	m.Start(context.Background())
	st := m.Status()[0]
	if st.State != mcp.NeedsSignIn || !strings.Contains(st.Describe(), "expired or was revoked; run `hush mcp login linear`") {
		t.Fatalf("status %q", st.Describe())
	}
	if strings.Contains(st.Describe(), access) || strings.Contains(st.Describe(), refresh) || srv.Authorizes() != 0 {
		t.Errorf("status %q, %d sign-ins", st.Describe(), srv.Authorizes())
	}
	if b := srv.Bearers(); len(b) == 0 || b[0] != access {
		t.Errorf("positive control: the stored token was not tried (%d requests)", len(b))
	}
}

// With xdg-open installed, a desktop and a terminal, hush offers to open
// the URL: Enter runs xdg-open with it (here a script that plays the
// browser), and the sign-in completes. The offer needs none of this: the
// other tests open the URL by hand.
func TestOAuthEnterOpensTheURLWithXdgOpen(t *testing.T) {
	t.Parallel()
	srv := oauthtest.New(t)
	w := newOAuthWorld(t)
	bin := t.TempDir()
	opened := filepath.Join(bin, "opened")
	script := "#!/bin/sh\nprintf %s \"$1\" > " + opened + ".tmp && mv " + opened + ".tmp " + opened + "\n"
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	var screen syncBuffer
	m, err := mcp.NewManager(mcp.Options{Servers: []mcp.Server{oauthServer("linear", srv.URL)}, Dir: w.dir,
		Ambient: map[string]string{"PATH": bin + ":/usr/bin:/bin", "DISPLAY": ":0", "HOME": w.dir},
		Grant:   w.grant, Store: w.vault, SignIn: &mcp.SignIn{Out: &screen, In: pr, Timeout: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	go func() {
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(screen.String(), "press Enter to open it with xdg-open") {
			if time.Now().After(deadline) {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		_, _ = pw.Write([]byte("\n"))
		for time.Now().Before(deadline) {
			link, err := os.ReadFile(opened)
			if err == nil {
				if resp, err := http.Get(string(link)); err == nil {
					resp.Body.Close()
				}
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	m.Start(context.Background())
	if st := m.Status()[0]; st.State != mcp.Running {
		t.Fatalf("status %q\n%s", st.Describe(), screen.String())
	}
	if srv.Authorizes() != 1 {
		t.Errorf("%d sign-ins", srv.Authorizes())
	}
}

// A server that wants an OAuth sign-in, configured without oauth = true
// (as peers' configs leave it): the reason says what to add.
func TestOAuthChallengeWithoutOAuthSaysWhatToAdd(t *testing.T) {
	t.Parallel()
	srv := oauthtest.New(t)
	w := newOAuthWorld(t)
	s := oauthServer("notion", srv.URL)
	s.OAuth = false
	m := w.manager(s, nil)
	m.Start(context.Background())
	st := m.Status()[0]
	want := "the server asks for an OAuth sign-in (HTTP 401 with a Bearer challenge): add oauth = true to its settings (in mcp.json: \"oauth\": {}), then run `hush mcp login notion` at a terminal to sign in"
	if st.State != mcp.Failed || st.Reason != want {
		t.Fatalf("status %q\nwant reason %q", st.Describe(), want)
	}
	if len(srv.Bearers()) == 0 {
		t.Error("positive control: the server was not contacted")
	}
}

// Mid-session, a sign-in the server stops accepting is never shown as a
// sign-in in the middle of a turn: the call fails saying how to sign in,
// and once `hush mcp login` stored new tokens, the next call uses them.
func TestOAuthMidSessionRevokeThenLoginElsewhere(t *testing.T) {
	t.Parallel()
	srv := oauthtest.New(t)
	w := newOAuthWorld(t)
	storeTokens(t, w, srv, "linear", srv.URL, time.Now().Add(time.Hour))
	var screen syncBuffer
	m := w.manager(oauthServer("linear", srv.URL), &mcp.SignIn{Out: &screen, Timeout: time.Minute})
	m.Start(context.Background())
	if st := m.Status()[0]; st.State != mcp.Running {
		t.Fatalf("status %q", st.Describe())
	}
	callWhoami(t, m, "linear")
	srv.Revoke()
	var out bytes.Buffer
	res, err := m.Call(context.Background(), 2, "linear", "whoami", map[string]any{}, &out)
	msg := fmt.Sprint(err, res.Status, out.String())
	t.Logf("the call after the revoke: %s", msg)
	if (err == nil && !res.IsError) || !strings.Contains(msg, "expired or was revoked; run `hush mcp login linear` at a terminal") {
		t.Fatalf("call after revoke: %v %+v %q", err, res, out.String())
	}
	if strings.Contains(screen.String(), "asks you to sign in") || srv.Authorizes() != 0 {
		t.Fatalf("a sign-in was started mid-session:\n%s", screen.String())
	}
	access, _ := storeTokens(t, w, srv, "linear", srv.URL, time.Now().Add(time.Hour)) // hush mcp login, elsewhere
	callWhoami(t, m, "linear")
	if b := srv.Bearers(); b[len(b)-1] != access {
		t.Error("the new sign-in was not used")
	}
	for _, tok := range srv.Issued() {
		if strings.Contains(msg, tok) {
			t.Error("a token is in the call's error")
		}
	}
}
