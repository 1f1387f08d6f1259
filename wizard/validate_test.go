package wizard_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/hushcli/hush/wizard"
)

// modelServer answers the model list like the real APIs: 200 with the
// right key, 401 without.
type modelServer struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string // path and credential header of each request
}

func newModelServer(t *testing.T, status int) *modelServer {
	m := &modelServer{}
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cred := r.Header.Get("Authorization") + r.Header.Get("x-api-key")
		m.mu.Lock()
		m.seen = append(m.seen, r.URL.Path+" "+cred+" "+r.Header.Get("anthropic-version"))
		m.mu.Unlock()
		switch {
		case status != 0:
			w.WriteHeader(status)
		case cred == "Bearer "+key || cred == key:
			_, _ = w.Write([]byte(`{"data":[]}`))
		default:
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"bad key ` + cred + `"}`))
		}
	}))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *modelServer) Seen() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.seen...)
}

func TestCheckKey(t *testing.T) {
	t.Parallel()
	ok := newModelServer(t, 0)
	notFound := newModelServer(t, http.StatusNotFound)
	broken := newModelServer(t, http.StatusInternalServerError)
	tests := []struct {
		name, provider, base, key string
		wantOK                    bool
		want                      string
	}{
		{"openai, good key", "openai", ok.srv.URL + "/v1", key, true, "the key works: " + ok.srv.URL + "/v1/models answered"},
		{"openai, bad key", "openai", ok.srv.URL + "/v1/", "sk-wrong-CANARY", false, ok.srv.URL + "/v1/models rejected the key (HTTP 401)"},
		{"openai, no key", "openai", ok.srv.URL + "/v1", "", false, ok.srv.URL + "/v1/models wants a key (HTTP 401)"},
		{"anthropic, good key", "anthropic", ok.srv.URL, key, true, "the key works: " + ok.srv.URL + "/v1/models answered"},
		{"no model list", "openai", notFound.srv.URL + "/v1", key, true, notFound.srv.URL + "/v1/models answered, but has no model list (HTTP 404); the key was not checked"},
		{"server error", "openai", broken.srv.URL + "/v1", key, false, "unexpected answer from " + broken.srv.URL + "/v1/models: HTTP 500"},
	}
	for _, tt := range tests {
		got := wizard.CheckKey(context.Background(), http.DefaultClient, tt.provider, tt.base, tt.key)
		if got.OK != tt.wantOK || got.Message != tt.want {
			t.Errorf("%s: CheckKey = %+v\nwant OK=%v %q", tt.name, got, tt.wantOK, tt.want)
		}
		if strings.Contains(got.Message, "CANARY") || (tt.key != "" && strings.Contains(got.Message, tt.key)) {
			t.Errorf("%s: the message shows the key: %q", tt.name, got.Message)
		}
	}
	want := []string{
		"/v1/models Bearer " + key + " ",
		"/v1/models Bearer sk-wrong-CANARY ",
		"/v1/models  ",
		"/v1/models " + key + " 2023-06-01",
	}
	if got := ok.Seen(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("requests = %q\nwant       %q", got, want)
	}
}

func TestCheckKeyUnreachable(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	got := wizard.CheckKey(context.Background(), http.DefaultClient, "openai", "http://"+addr+"/v1", key)
	if want := "cannot reach http://" + addr + "/v1/models: connection refused"; got.OK || got.Message != want {
		t.Errorf("CheckKey = %+v, want %q", got, want)
	}
	// .invalid never resolves; a machine without a resolver fails the lookup instead.
	got = wizard.CheckKey(context.Background(), http.DefaultClient, "openai", "http://no-such-host.invalid/v1", key)
	prefix := "cannot reach http://no-such-host.invalid/v1/models: "
	if got.OK || (got.Message != prefix+"no such host" && got.Message != prefix+"name lookup failed") {
		t.Errorf("CheckKey = %+v, want %q or %q", got, prefix+"no such host", prefix+"name lookup failed")
	}
}

// TestCheckKeyDoesNotFollowRedirects: a redirect could carry the key to
// another host; it is reported, not followed.
func TestCheckKeyDoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	elsewhere := newModelServer(t, 0)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.srv.URL+r.URL.Path, http.StatusFound)
	}))
	t.Cleanup(redirect.Close)
	got := wizard.CheckKey(context.Background(), http.DefaultClient, "anthropic", redirect.URL, key)
	want := redirect.URL + "/v1/models redirects elsewhere (HTTP 302); hush does not follow it with your key — check the base URL"
	if got.OK || got.Message != want {
		t.Errorf("CheckKey = %+v, want %q", got, want)
	}
	if n := len(elsewhere.Seen()); n != 0 {
		t.Errorf("the redirect was followed: %d request(s) reached the other host", n)
	}
}
