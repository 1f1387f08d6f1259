package mcp_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/hushcli/hush/toolset/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// headerServer is a remote MCP server (the Go SDK's, over Streamable HTTP
// or SSE) on 127.0.0.1 that serves only requests carrying want in
// Authorization, records every Authorization it was sent, and — to play a
// hostile or careless server — echoes a wrong one in its 401 body.
type headerServer struct {
	srv  *httptest.Server
	want string
	mu   sync.Mutex
	seen []string
}

func newHeaderServer(t *testing.T, want string, sse bool) *headerServer {
	t.Helper()
	h := &headerServer{want: want}
	server := sdk.NewServer(&sdk.Implementation{Name: "header-check", Version: "1"}, nil)
	sdk.AddTool(server, &sdk.Tool{Name: "whoami", Description: "says who is asking"},
		func(_ context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "hello from the remote server"}}}, nil, nil
		})
	var handler http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil)
	if sse {
		handler = sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return server }, nil)
	}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("Authorization")
		h.mu.Lock()
		h.seen = append(h.seen, got)
		h.mu.Unlock()
		if got != h.want {
			http.Error(w, "bad credentials: "+got, http.StatusUnauthorized)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *headerServer) requests() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.seen...)
}

func TestRemoteServerGetsItsGrantedHeader(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{mcp.TransportHTTP, mcp.TransportSSE} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			hs := newHeaderServer(t, "Bearer "+f.granted, transport == mcp.TransportSSE)
			f.allow["mcp:remote vault.read:GRANTED"] = true
			endpoint := hs.srv.URL + "/mcp"
			if transport == mcp.TransportSSE {
				endpoint = hs.srv.URL + "/sse"
			}
			m := f.manager(mcp.Server{Name: "remote", URL: endpoint, Transport: transport, Headers: map[string]string{"Authorization": "Bearer ${GRANTED}"}})
			m.Start(context.Background())
			st := m.Status()[0]
			if st.State != mcp.Running || st.Describe() != "connected" {
				t.Fatalf("status %+v", st)
			}
			var out bytes.Buffer
			res, err := m.Call(context.Background(), 1, "remote", "whoami", map[string]any{}, &out)
			if err != nil || res.IsError || !strings.Contains(out.String(), "hello from the remote server") {
				t.Fatalf("call: %v %+v %q", err, res, out.String())
			}
			// Positive control, on the raw header the server received.
			for i, got := range hs.requests() {
				if got != "Bearer "+f.granted {
					t.Errorf("request %d carried Authorization %q", i, got)
				}
			}
			if strings.Contains(st.Command, f.granted) || !strings.HasPrefix(st.Command, hs.srv.URL) {
				t.Errorf("status shows %q", st.Command)
			}
		})
	}
}

func TestRemoteServerDeniedIsNotContacted(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	hs := newHeaderServer(t, "Bearer "+f.granted, false)
	m := f.manager(mcp.Server{Name: "remote", URL: hs.srv.URL + "/mcp", Headers: map[string]string{"Authorization": "Bearer ${GRANTED}"}})
	m.Start(context.Background())
	st := m.Status()[0]
	if st.State != mcp.Denied || !strings.Contains(st.Reason, "vault.read:GRANTED") {
		t.Fatalf("status %+v, want denied naming the secret", st)
	}
	if n := len(hs.requests()); n != 0 {
		t.Fatalf("the denied server was sent %d request(s)", n)
	}
	if got := f.asked; len(got) != 1 || got[0] != "mcp:remote vault.read:GRANTED" {
		t.Errorf("the gate was asked %v", got)
	}
}

// A server that rejects the header and echoes it back: the value appears in
// no status or error hush shows.
func TestRemoteServerErrorsNeverShowTheHeader(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	hs := newHeaderServer(t, "Bearer something-else", false)
	f.allow["mcp:remote vault.read:GRANTED"] = true
	literal := canary("literal-header")
	m := f.manager(mcp.Server{Name: "remote", URL: hs.srv.URL + "/mcp", Headers: map[string]string{
		"Authorization": "Bearer ${GRANTED}", "X-Literal": literal}})
	m.Start(context.Background())
	st := m.Status()[0]
	if st.State != mcp.Failed {
		t.Fatalf("status %+v, want failed", st)
	}
	t.Logf("shown: %s", st.Describe())
	if seen := hs.requests(); len(seen) == 0 || seen[0] != "Bearer "+f.granted {
		t.Fatalf("positive control: the server saw %q", seen)
	}
	for _, text := range []string{st.Reason, st.Describe(), st.Command} {
		if strings.Contains(text, f.granted) || strings.Contains(text, literal) {
			t.Errorf("a header value is shown: %q", text)
		}
	}
	if !strings.Contains(st.Reason, "401") && !strings.Contains(st.Reason, "Unauthorized") {
		t.Errorf("the reason does not say the server refused: %q", st.Reason)
	}
}

// A redirect to another origin does not carry the headers.
func TestRemoteHeadersStayWithTheirOrigin(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	elsewhere := newHeaderServer(t, "nobody has this", false)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.srv.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	f.allow["mcp:remote vault.read:GRANTED"] = true
	m := f.manager(mcp.Server{Name: "remote", URL: redirector.URL + "/mcp", Headers: map[string]string{"X-Api-Key": "${GRANTED}"}})
	m.Start(context.Background())
	_ = m.Status()
	for _, got := range elsewhere.requests() {
		if strings.Contains(got, f.granted) {
			t.Fatal("the header followed a redirect to another origin")
		}
	}
}

func TestRemoteURLMustNotHoldASecret(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.allow["mcp:remote vault.read:GRANTED"] = true
	m := f.manager(mcp.Server{Name: "remote", URL: "http://127.0.0.1:1/mcp?token=${GRANTED}"})
	m.Start(context.Background())
	st := m.Status()[0]
	if st.State != mcp.Failed || !strings.Contains(st.Reason, "never puts a secret in a URL") || len(f.asked) != 0 {
		t.Fatalf("status %+v, asked %v", st, f.asked)
	}
}
