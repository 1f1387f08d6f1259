// Package oauthtest is an OAuth-protected remote MCP server for tests, on
// 127.0.0.1: the MCP Go SDK's Streamable HTTP server behind its
// RequireBearerToken, with protected resource metadata, and a small
// authorization server of its own on another origin (metadata, dynamic
// client registration, authorize with PKCE S256, token with the
// authorization_code and refresh_token grants). Tokens are fresh random
// canaries, so a test can look for them in raw bytes. Browser plays the
// person: it follows the authorization URL to the loopback redirect.
package oauthtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// ToolText is what the server's one tool, whoami, answers.
const ToolText = "hello from the OAuth-protected server"

// Server is the protected MCP server and its authorization server.
type Server struct {
	// URL is the MCP endpoint (Streamable HTTP).
	URL string
	// Issuer is the authorization server's URL.
	Issuer string
	// ExpiresIn is the lifetime of the access tokens it issues (default 1h).
	ExpiresIn time.Duration

	mcp, as *httptest.Server

	mu         sync.Mutex
	clients    map[string][]string // client id → redirect URIs
	codes      map[string]grant
	access     map[string]time.Time // access token → expiry
	refresh    map[string]string    // refresh token → client id
	bearers    []string             // the token of every MCP request, "" when none
	authorizes int
	refreshes  int
	issued     []string // every token issued
}

type grant struct{ client, redirect, challenge string }

// New starts both servers; t.Cleanup stops them.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{ExpiresIn: time.Hour, clients: map[string][]string{}, codes: map[string]grant{},
		access: map[string]time.Time{}, refresh: map[string]string{}}
	s.as = httptest.NewServer(http.HandlerFunc(s.serveAS))
	s.Issuer = s.as.URL
	server := sdk.NewServer(&sdk.Implementation{Name: "oauth-protected", Version: "1"}, nil)
	sdk.AddTool(server, &sdk.Tool{Name: "whoami", Description: "says who is asking"},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: ToolText}}}, nil, nil
		})
	mux := http.NewServeMux()
	s.mcp = httptest.NewServer(mux)
	s.URL = s.mcp.URL + "/mcp"
	prm := s.mcp.URL + "/.well-known/oauth-protected-resource/mcp"
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: s.URL, AuthorizationServers: []string{s.Issuer}, BearerMethodsSupported: []string{"header"}}))
	protected := auth.RequireBearerToken(s.verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: prm})(
		sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bearer, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		s.bearers = append(s.bearers, bearer)
		s.mu.Unlock()
		protected.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { s.mcp.Close(); s.as.Close() })
	return s
}

func token(kind string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "canary-oauth-" + kind + "-" + hex.EncodeToString(b)
}

func (s *Server) verify(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.access[tok]
	if !ok || time.Now().After(exp) {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{Expiration: exp}, nil
}

func (s *Server) serveAS(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		writeJSON(w, http.StatusOK, map[string]any{
			"issuer": s.Issuer, "authorization_endpoint": s.Issuer + "/authorize", "token_endpoint": s.Issuer + "/token",
			"registration_endpoint": s.Issuer + "/register", "response_types_supported": []string{"code"},
			"grant_types_supported":            []string{"authorization_code", "refresh_token"},
			"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"none"},
			"scopes_supported": []string{"mcp", "offline_access"},
		})
	case "/register":
		var md struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&md) != nil || len(md.RedirectURIs) == 0 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
			return
		}
		id := token("client")
		s.mu.Lock()
		s.clients[id] = md.RedirectURIs
		s.mu.Unlock()
		writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": md.RedirectURIs, "token_endpoint_auth_method": "none"})
	case "/authorize":
		q := r.URL.Query()
		s.mu.Lock()
		s.authorizes++
		uris := s.clients[q.Get("client_id")]
		s.mu.Unlock()
		redirect := q.Get("redirect_uri")
		known := false
		for _, u := range uris {
			known = known || u == redirect
		}
		if !known || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
			http.Error(w, "bad authorization request", http.StatusBadRequest)
			return
		}
		code := token("code")
		s.mu.Lock()
		s.codes[code] = grant{client: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge")}
		s.mu.Unlock()
		u, _ := url.Parse(redirect)
		back := u.Query()
		back.Set("code", code)
		back.Set("state", q.Get("state"))
		u.RawQuery = back.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	case "/token":
		s.serveToken(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) serveToken(w http.ResponseWriter, r *http.Request) {
	if r.ParseForm() != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	client := r.PostForm.Get("client_id")
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		g, ok := s.codes[r.PostForm.Get("code")]
		delete(s.codes, r.PostForm.Get("code"))
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || g.client != client || g.redirect != r.PostForm.Get("redirect_uri") || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
	case "refresh_token":
		if c, ok := s.refresh[r.PostForm.Get("refresh_token")]; !ok || c != client {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		delete(s.refresh, r.PostForm.Get("refresh_token"))
		s.refreshes++
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	access, refresh := token("access"), token("refresh")
	s.access[access] = time.Now().Add(s.ExpiresIn)
	s.refresh[refresh] = client
	s.issued = append(s.issued, access, refresh)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{"access_token": access, "token_type": "Bearer", "refresh_token": refresh,
		"expires_in": int(s.ExpiresIn.Seconds())})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// Issued is every access and refresh token issued so far, oldest first.
func (s *Server) Issued() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.issued...)
}

// Bearers is the bearer token of every request the MCP endpoint got ("":
// none).
func (s *Server) Bearers() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bearers...)
}

// Authorizes counts requests to the authorize endpoint; Refreshes counts
// refresh grants served.
func (s *Server) Authorizes() int { s.mu.Lock(); defer s.mu.Unlock(); return s.authorizes }
func (s *Server) Refreshes() int  { s.mu.Lock(); defer s.mu.Unlock(); return s.refreshes }

// Revoke forgets every token issued: the next request with one is refused.
func (s *Server) Revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.access, s.refresh = map[string]time.Time{}, map[string]string{}
}

// AddToken makes access (and refresh, if not empty) valid tokens of client,
// as if issued earlier; access expires at exp.
func (s *Server) AddToken(client, access, refresh string, exp time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.access[access] = exp
	if refresh != "" {
		s.refresh[refresh] = client
	}
}

var authURL = regexp.MustCompile(`https?://127\.0\.0\.1:[0-9]+/authorize\?[^\s]+`)

// Browser is an io.Writer to give hush as the sign-in's terminal: it
// records what hush shows and, the first time it shows an authorization
// URL, follows it (and the redirect back to hush's loopback listener) as a
// browser would. Done is closed once the browser got its page.
type Browser struct {
	mu     sync.Mutex
	screen strings.Builder
	once   sync.Once
	Done   chan struct{}
	// Page is the loopback page's status and body; Err a failed request.
	Status int
	Page   string
	Err    error
	// Before, if set, is called with the authorization URL before it is
	// followed (to visit the redirect with a wrong state first, say).
	Before func(authURL string)
}

// NewBrowser returns a Browser.
func NewBrowser() *Browser { return &Browser{Done: make(chan struct{})} }

func (b *Browser) Write(p []byte) (int, error) {
	b.mu.Lock()
	b.screen.Write(p)
	screen := b.screen.String()
	b.mu.Unlock()
	if u := authURL.FindString(screen); u != "" {
		b.once.Do(func() { go b.follow(u) })
	}
	return len(p), nil
}

func (b *Browser) follow(u string) {
	defer close(b.Done)
	if b.Before != nil {
		b.Before(u)
	}
	resp, err := http.Get(u) // follows the 302 to 127.0.0.1
	if err != nil {
		b.mu.Lock()
		b.Err = err
		b.mu.Unlock()
		return
	}
	defer resp.Body.Close()
	var page strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		page.Write(buf[:n])
		if err != nil {
			break
		}
	}
	b.mu.Lock()
	b.Status, b.Page = resp.StatusCode, page.String()
	b.mu.Unlock()
}

// Screen is everything hush showed.
func (b *Browser) Screen() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.screen.String()
}
