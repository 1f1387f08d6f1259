package session

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor/provider"
	"github.com/hushcli/hush/vault"
)

type mapVault map[string]string

func (m mapVault) Get(name string) (string, error) {
	if v, ok := m[name]; ok {
		return v, nil
	}
	return "", fmt.Errorf("%w: %s", vault.ErrNotFound, name)
}

// TestLocalServerGetsNoUnconfiguredKey: a base URL on this machine gets no
// API key config.toml did not name, whatever the case of "localhost".
// Before, the session's own loopback check was case-sensitive, so hush read
// OPENAI_API_KEY from the vault and sent it to http://LOCALHOST:… . The
// request's raw Authorization header is checked; the positive control is
// the same server with api_key configured, which does receive the key.
func TestLocalServerGetsNoUnconfiguredKey(t *testing.T) {
	t.Parallel()
	const canary = "sk-canary-loopback-7781"
	var mu sync.Mutex
	var auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization")+" "+r.Header.Get("X-Api-Key"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"message":"fake server: no model here","type":"invalid_request_error"}}`)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	v := mapVault{"OPENAI_API_KEY": canary, "ANTHROPIC_API_KEY": canary}
	send := func(m config.Model, baseURL string) string {
		t.Helper()
		p, err := NewProvider(m, Model{BaseURL: baseURL}, v, srv.Client())
		if err != nil {
			t.Fatalf("%s: %v", baseURL, err)
		}
		mu.Lock()
		auth = nil
		mu.Unlock()
		_, _ = p.Stream(context.Background(), provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Text: "hi"}}}, nil)
		mu.Lock()
		defer mu.Unlock()
		if len(auth) == 0 {
			t.Fatalf("%s: the fake server got no request", baseURL)
		}
		return strings.Join(auth, "\n")
	}
	for _, prov := range []string{provider.OpenAI, provider.Anthropic} {
		for _, host := range []string{"LOCALHOST", "LocalHost", "localhost", "127.0.0.1"} {
			base := "http://" + host + ":" + u.Port() + "/v1"
			if got := send(config.Model{Provider: prov, Name: "m"}, base); strings.Contains(got, canary) {
				t.Errorf("%s at %s: the unconfigured API key was sent: %q", prov, base, got)
			}
		}
		base := "http://LOCALHOST:" + u.Port() + "/v1"
		ref := "${" + provider.KeyName(prov) + "}"
		if got := send(config.Model{Provider: prov, Name: "m", APIKey: ref}, base); !strings.Contains(got, canary) {
			t.Errorf("control: %s with api_key = %q configured did not send the key: %q", prov, ref, got)
		}
	}
}

func TestIsLoopbackIsTheOneCheck(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]bool{
		"http://LOCALHOST:8080/v1": true, "http://localhost/v1": true, "http://127.0.0.2:1/": true, "http://[::1]:11434/v1": true,
		"https://api.openai.com/v1": false, "http://localhost.evil.example/": false, "": false, "not a url": false,
	} {
		if got := provider.IsLoopback(raw); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", raw, got, want)
		}
	}
}
