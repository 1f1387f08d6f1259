package mcp

// OAuth for remote servers (oauth = true): the MCP Go SDK's
// authorization-code flow with PKCE, a loopback redirect on 127.0.0.1, and
// the tokens kept in the vault as config.OAuthTokenName(server). A later
// session reads them back through the gate (vault.read:<NAME>, subject
// mcp:<server>) like any header secret; a refreshed token is written back.
// No token value is ever part of a message: every error and status of an
// OAuth server is scrubbed of the tokens it held.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hushcli/hush/executor/outbuf"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/vault"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/muesli/cancelreader"
	"golang.org/x/oauth2"
)

// DefaultSignInTimeout bounds the wait for the browser to come back.
const DefaultSignInTimeout = 5 * time.Minute

// SignIn is a person at a terminal who can sign in to an OAuth server.
type SignIn struct {
	// Out shows the authorization URL and what hush waits for.
	Out io.Writer
	// In, if set and a terminal, is read for Enter, which opens the URL
	// with xdg-open when that is installed. Nothing needs it: the URL can
	// always be opened by hand.
	In io.Reader
	// Timeout bounds the wait for the redirect; zero: DefaultSignInTimeout.
	Timeout time.Duration
}

// SecretStore is the vault as the OAuth client writes it: hush stores a
// server's tokens itself, and Names says whether there are any to read
// before the gate is asked to read them.
type SecretStore interface {
	Set(name, value string) error
	Names() ([]string, error)
}

// storedTokens is the JSON value stored in the vault: the tokens and what
// refreshing them needs. URL binds them to the server they were issued
// for, so a server configured under the same name at another URL never
// receives them.
type storedTokens struct {
	V            int       `json:"v"`
	URL          string    `json:"server_url"`
	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	ClientID     string    `json:"client_id"`
	ClientSecret string    `json:"client_secret,omitempty"`
	TokenURL     string    `json:"token_url"`
	AuthStyle    int       `json:"auth_style,omitempty"`
	Scopes       []string  `json:"scopes,omitempty"`
}

// tokenStore is one OAuth server's token source: the SDK's transport asks
// it for the access token of every request; it refreshes through
// golang.org/x/oauth2 and writes each new token to the vault.
type tokenStore struct {
	name, server, url string
	save              func(name, value string) error
	notice            func(string)
	hc                *http.Client

	mu       sync.Mutex
	meta     storedTokens // as last stored
	src      oauth2.TokenSource
	seen     []string // every token and client secret held, to scrub
	signedIn bool     // a sign-in completed on this store
	warned   bool
}

func (m *Manager) newTokenStore(s Server) *tokenStore {
	t := &tokenStore{name: config.OAuthTokenName(s.Name), server: s.Name, url: s.URL, hc: m.opts.HTTPClient, notice: m.opts.Notice}
	if t.hc == nil {
		t.hc = http.DefaultClient
	}
	if m.opts.Store != nil {
		t.save = m.opts.Store.Set
	}
	return t
}

// load starts the store from tokens read from the vault.
func (t *tokenStore) load(st storedTokens) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.meta = st
	t.remember(st.AccessToken, st.RefreshToken, st.ClientSecret)
	cfg := &oauth2.Config{ClientID: st.ClientID, ClientSecret: st.ClientSecret, Scopes: st.Scopes,
		Endpoint: oauth2.Endpoint{TokenURL: st.TokenURL, AuthStyle: oauth2.AuthStyle(st.AuthStyle)}}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, t.hc)
	t.src = cfg.TokenSource(ctx, &oauth2.Token{AccessToken: st.AccessToken, TokenType: st.TokenType,
		RefreshToken: st.RefreshToken, Expiry: st.Expiry})
}

// signedInWith is the SDK's NewTokenSource: a sign-in just exchanged its
// code for tok, under cfg. The tokens are stored at once.
func (t *tokenStore) signedInWith(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.meta = storedTokens{V: 1, URL: t.url, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret,
		TokenURL: cfg.Endpoint.TokenURL, AuthStyle: int(cfg.Endpoint.AuthStyle), Scopes: cfg.Scopes}
	t.src = cfg.TokenSource(ctx, tok)
	t.signedIn = true
	t.store(tok)
	return t, nil
}

// Token implements oauth2.TokenSource. With no token it returns none, so
// the request goes without one and the server's 401 starts a sign-in.
func (t *tokenStore) Token() (*oauth2.Token, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.src == nil {
		return nil, nil
	}
	if t.meta.RefreshToken == "" && !(&oauth2.Token{AccessToken: t.meta.AccessToken, Expiry: t.meta.Expiry}).Valid() {
		return nil, nil // expired and not refreshable: sign in again
	}
	tok, err := t.src.Token()
	if err != nil {
		return nil, err // the SDK treats invalid_grant as "sign in again"
	}
	if tok.AccessToken != t.meta.AccessToken || (tok.RefreshToken != "" && tok.RefreshToken != t.meta.RefreshToken) {
		t.store(tok)
	}
	return tok, nil
}

// store writes tok to the vault; t.mu is held. A token that cannot be
// stored still serves this session, and the user is told once.
func (t *tokenStore) store(tok *oauth2.Token) {
	t.remember(tok.AccessToken, tok.RefreshToken, t.meta.ClientSecret)
	t.meta.V, t.meta.URL = 1, t.url
	t.meta.AccessToken, t.meta.TokenType, t.meta.RefreshToken, t.meta.Expiry = tok.AccessToken, tok.TokenType, tok.RefreshToken, tok.Expiry
	b, err := json.Marshal(t.meta)
	if err == nil {
		if t.save == nil {
			err = errors.New("no vault to write to")
		} else {
			err = t.save(t.name, string(b))
		}
	}
	if err != nil && !t.warned && t.notice != nil {
		t.warned = true
		// A vault's errors name the secret, never its value.
		t.notice(fmt.Sprintf("mcp server %q: could not store its OAuth tokens in the vault as %s (%v); the next session asks you to sign in again",
			t.server, t.name, err))
	}
}

func (t *tokenStore) remember(values ...string) {
	for _, v := range values {
		if len(v) >= 4 {
			t.seen = append(t.seen, v)
		}
	}
}

// values are every secret the store held, for scrubbing messages.
func (t *tokenStore) values() []string {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.seen...)
}

func (t *tokenStore) didSignIn() bool {
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.signedIn
}

// LoginHint is the sentence that says how to sign in to server.
func LoginHint(server string) string {
	return fmt.Sprintf("run `hush mcp login %s` at a terminal to sign in", server)
}

// oauthTokens returns the token store of an OAuth server: its tokens read
// from the vault through the gate when there are any, else an empty store
// to sign in with. It returns nil when there is nothing stored and no one
// to sign in (the server is then not started). A denied read is the
// gate's error: the server is not contacted.
func (m *Manager) oauthTokens(ctx context.Context, s *server, turn int) (*tokenStore, error) {
	t := m.newTokenStore(s.cfg)
	if m.stored(t.name) {
		m.startMu.Lock()
		v, err := m.opts.Grant(ctx, s.cfg.Name, turn)(t.name)
		m.startMu.Unlock()
		switch {
		case errors.Is(err, vault.ErrNotFound):
		case err != nil:
			return nil, err
		default:
			var st storedTokens
			switch {
			case json.Unmarshal([]byte(v), &st) != nil || st.AccessToken == "" || st.TokenURL == "":
				m.notice(fmt.Sprintf("mcp server %q: %s in the vault is not a sign-in hush stored; ignoring it", s.cfg.Name, t.name))
			case st.URL != s.cfg.URL:
				m.notice(fmt.Sprintf("mcp server %q: the sign-in stored as %s is for another URL than %s; it is not sent there",
					s.cfg.Name, t.name, displayURL(s.cfg.URL)))
			default:
				t.load(st)
				return t, nil
			}
		}
	}
	if m.signIn() == nil {
		return nil, nil
	}
	return t, nil
}

// signIn is the person to sign in with now: none once Start has returned.
func (m *Manager) signIn() *SignIn {
	if m.started.Load() {
		return nil
	}
	return m.opts.SignIn
}

// stored reports whether the vault holds name, without reading its value.
func (m *Manager) stored(name string) bool {
	if m.opts.Store == nil {
		return false
	}
	names, err := m.opts.Store.Names()
	if err != nil {
		return true // let the gated read say what is wrong
	}
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

func (m *Manager) notice(s string) {
	if m.opts.Notice != nil {
		m.opts.Notice(s)
	}
}

// errNeedsSignIn is an OAuth server's answer when nobody is there to sign
// in and its stored sign-in no longer works.
var errNeedsSignIn = errors.New("its OAuth sign-in has expired or was revoked")

// oauthHandler is the SDK transport's auth.OAuthHandler for one server.
// Each sign-in builds the SDK's AuthorizationCodeHandler afresh, because
// its redirect URL names the loopback port, which is open only while the
// sign-in waits.
type oauthHandler struct {
	m      *Manager
	s      Server
	tokens *tokenStore
	clock  *startClock
	needed bool  // a sign-in was needed and nobody was there
	failed error // a sign-in failed: the SDK's fallbacks do not ask again
	mu     sync.Mutex
}

func (h *oauthHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	return h.tokens, nil
}

func (h *oauthHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	h.mu.Lock()
	failed := h.failed
	h.mu.Unlock()
	if failed != nil {
		resp.Body.Close()
		return failed
	}
	si := h.m.signIn()
	if si == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		// Mid-session, a sign-in made meanwhile (hush mcp login in another
		// terminal) is picked up from the vault.
		if h.m.started.Load() && h.reload(ctx) {
			return nil
		}
		h.mu.Lock()
		h.needed = true
		h.mu.Unlock()
		return fmt.Errorf("%w; %s", errNeedsSignIn, LoginHint(h.s.Name))
	}
	err := h.authorize(ctx, si, req, resp)
	if err != nil {
		h.mu.Lock()
		h.failed = err
		h.mu.Unlock()
	}
	return err
}

// reload reads the server's tokens from the vault again, through the gate,
// and reports whether they are new ones for this server's URL.
func (h *oauthHandler) reload(ctx context.Context) bool {
	t := h.tokens
	if !h.m.stored(t.name) {
		return false
	}
	v, err := h.m.opts.Grant(ctx, h.s.Name, 0)(t.name)
	if err != nil {
		return false
	}
	var st storedTokens
	if json.Unmarshal([]byte(v), &st) != nil || st.AccessToken == "" || st.TokenURL == "" || st.URL != h.s.URL {
		return false
	}
	t.mu.Lock()
	same := st.AccessToken == t.meta.AccessToken
	t.mu.Unlock()
	if same {
		return false
	}
	t.load(st)
	return true
}

func (h *oauthHandler) authorize(ctx context.Context, si *SignIn, req *http.Request, resp *http.Response) error {
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", h.s.CallbackPort))
	if err != nil {
		resp.Body.Close()
		return fmt.Errorf("cannot listen on 127.0.0.1 for the sign-in's redirect: %w", err)
	}
	defer ln.Close()
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: h.fetcher(si, ln, redirect),
		RequestRefreshToken:      true,
		Client:                   h.tokens.hc,
		NewTokenSource:           h.tokens.signedInWith,
	}
	if h.s.ClientID != "" {
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: h.s.ClientID}
	} else {
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "hush", RedirectURIs: []string{redirect}, TokenEndpointAuthMethod: "none",
			GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"}}}
	}
	inner, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		resp.Body.Close()
		return err
	}
	return inner.Authorize(ctx, req, resp)
}

func (h *oauthHandler) signInFailed() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.failed
}

func (h *oauthHandler) signInNeeded() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.needed
}

type callbackResult struct {
	res *auth.AuthorizationResult
	err error
}

// fetcher shows the authorization URL and waits for the browser to come
// back to the loopback redirect, for the timeout, or until ctx ends
// (Ctrl-C). The start timeout does not run meanwhile.
func (h *oauthHandler) fetcher(si *SignIn, ln net.Listener, redirect string) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		h.clock.hold()
		defer h.clock.resume()
		u, err := url.Parse(args.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
			return nil, errors.New("the authorization server's authorize endpoint is not an http(s) URL")
		}
		state := u.Query().Get("state")
		results := make(chan callbackResult, 1)
		srv := &http.Server{Handler: callbackHandler(h.s.Name, state, results), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer func() {
			// Let the browser's page finish before the listener goes.
			sctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
		}()
		timeout := si.Timeout
		if timeout <= 0 {
			timeout = DefaultSignInTimeout
		}
		fmt.Fprintf(si.Out, "hush: mcp server %q asks you to sign in (OAuth). Open this URL in your browser:\n\n  %s\n\n",
			h.s.Name, outbuf.VisibleLine(args.URL))
		stopOffer := h.m.offerOpen(si, args.URL)
		defer stopOffer()
		fmt.Fprintf(si.Out, "hush: waiting up to %s for the browser to come back to %s (Ctrl-C cancels)…\n", timeout, redirect)
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		select {
		case r := <-results:
			return r.res, r.err
		case <-ctx.Done():
			return nil, fmt.Errorf("the sign-in to %s was cancelled", h.s.Name)
		case <-timer.C:
			return nil, fmt.Errorf("no sign-in came back within %s", timeout)
		}
	}
}

// callbackHandler serves the loopback redirect: the first request with the
// sign-in's state ends the wait; any other is turned away.
func callbackHandler(server, state string, results chan<- callbackResult) http.Handler {
	var once sync.Once
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path != "/callback" || q.Get("state") != state || state == "" {
			http.Error(w, "This is not the sign-in hush is waiting for.", http.StatusBadRequest)
			return
		}
		page := func(title, text string) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			fmt.Fprintf(w, "<!doctype html><title>hush: %s</title><p>%s</p>\n", html.EscapeString(title), html.EscapeString(text))
		}
		if e := q.Get("error"); e != "" {
			desc := shorten(outbuf.VisibleLine(q.Get("error_description")), 200)
			page("sign-in failed", "The sign-in to "+server+" failed ("+e+"). You can close this tab; hush says what to do next.")
			once.Do(func() {
				msg := "the authorization server refused the sign-in: " + shorten(outbuf.VisibleLine(e), 60)
				if desc != "" {
					msg += " (" + desc + ")"
				}
				results <- callbackResult{err: errors.New(msg)}
			})
			return
		}
		if q.Get("code") == "" {
			http.Error(w, "The redirect carries no authorization code.", http.StatusBadRequest)
			return
		}
		page("signed in", "Signed in to "+server+". You can close this tab and go back to hush.")
		once.Do(func() {
			results <- callbackResult{res: &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}}
		})
	})
}

// browserEnv is what xdg-open gets: enough to find the desktop's browser.
var browserEnv = []string{"PATH", "HOME", "USER", "LANG", "DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR",
	"DBUS_SESSION_BUS_ADDRESS", "XAUTHORITY", "BROWSER", "XDG_CURRENT_DESKTOP", "XDG_DATA_DIRS", "XDG_CONFIG_DIRS"}

// offerOpen offers to open link with xdg-open when it is installed, there
// is a desktop, and si.In is a terminal: Enter opens it. The returned func
// withdraws the offer (and stops reading the terminal).
func (m *Manager) offerOpen(si *SignIn, link string) func() {
	f, ok := si.In.(*os.File)
	if !ok || f == nil || (m.opts.Ambient["DISPLAY"] == "" && m.opts.Ambient["WAYLAND_DISPLAY"] == "") || !onPath(m.opts.Ambient["PATH"], "xdg-open") {
		return func() {}
	}
	r, err := cancelreader.NewReader(f)
	if err != nil {
		return func() {}
	}
	fmt.Fprintln(si.Out, "hush: press Enter to open it with xdg-open, or open it yourself.")
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 256)
		for {
			n, err := r.Read(buf)
			if n > 0 && strings.ContainsAny(string(buf[:n]), "\r\n") {
				if err := m.openBrowser(link); err != nil {
					fmt.Fprintf(si.Out, "hush: xdg-open did not start (%v); open the URL yourself.\n", err)
				}
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return func() {
		r.Cancel()
		<-done
		r.Close()
	}
}

func (m *Manager) openBrowser(link string) error {
	env, _, err := tools.BuildEnv(tools.EnvRequest{Ambient: m.opts.Ambient,
		Policy: tools.Policy{Inherit: tools.InheritCore, Base: browserEnv}})
	if err != nil {
		return err
	}
	cmd, err := tools.Command(context.Background(), tools.Spec{Path: "xdg-open", Args: []string{link}, Dir: m.opts.Dir, Env: env})
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}

func onPath(path, name string) bool {
	for _, d := range filepath.SplitList(path) {
		if fi, err := os.Stat(filepath.Join(d, name)); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return true
		}
	}
	return false
}

// startClock is a server's start timeout, which a sign-in pauses: the
// person in the browser is not a server that hangs.
type startClock struct {
	mu       sync.Mutex
	timer    *time.Timer
	left     time.Duration
	deadline time.Time
	held     int
	stopped  bool
}

func newStartClock(d time.Duration, fire func()) *startClock {
	return &startClock{timer: time.AfterFunc(d, fire), left: d, deadline: time.Now().Add(d)}
}

func (c *startClock) hold() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held++
	if c.held == 1 && !c.stopped && c.timer.Stop() {
		c.left = time.Until(c.deadline)
	}
}

func (c *startClock) resume() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held--
	if c.held == 0 && !c.stopped {
		c.left = max(c.left, time.Second)
		c.deadline = time.Now().Add(c.left)
		c.timer.Reset(c.left)
	}
}

func (c *startClock) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	c.timer.Stop()
}

// Login signs in to the OAuth server name afresh, whatever the vault
// holds, and leaves it connected; the new tokens are stored. It needs
// SignIn. signedIn is false when the server let hush in without asking.
func (m *Manager) Login(ctx context.Context, name string) (signedIn bool, err error) {
	s := m.server(name)
	switch {
	case s == nil:
		return false, fmt.Errorf("no MCP server %q is configured", name)
	case !s.cfg.OAuth:
		return false, fmt.Errorf("mcp server %q does not sign in with OAuth: add oauth = true to its [mcp.%s] (in mcp.json: \"oauth\": {})", name, name)
	case m.opts.SignIn == nil:
		return false, errors.New("signing in needs a terminal")
	}
	if err := checkURL(s.cfg); err != nil {
		return false, fmt.Errorf("mcp server %q: %v", name, err)
	}
	headers, hide, err := m.headers(ctx, s, 0)
	if err != nil {
		s.refuse(err)
		return false, fmt.Errorf("mcp server %q %s", name, s.status().Describe())
	}
	tokens := m.newTokenStore(s.cfg)
	m.dial(ctx, s, headers, hide, tokens)
	if st := s.status(); st.State != Running {
		return false, fmt.Errorf("mcp server %q %s", name, st.Describe())
	}
	return tokens.didSignIn(), nil
}
