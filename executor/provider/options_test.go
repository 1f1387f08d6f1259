package provider

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestOptionsValidation(t *testing.T) {
	t.Parallel()
	client := &http.Client{}
	type ctor func(Options) (Provider, error)
	for _, p := range []struct {
		name string
		new  ctor
		key  string
	}{
		{"openai", NewOpenAI, "OPENAI_API_KEY"},
		{"anthropic", NewAnthropic, "ANTHROPIC_API_KEY"},
	} {
		for _, tc := range []struct {
			name    string
			opts    Options
			wantErr string
			is      error
		}{
			{"remote default without key", Options{Model: "m", HTTPClient: client},
				`no API key for provider ` + p.name + `: set api_key = "${` + p.key + `}" in config.toml and store the key with "hush vault set ` + p.key + `"`, ErrNoAPIKey},
			{"remote URL without key", Options{BaseURL: "https://models.example.com/v1", Model: "m", HTTPClient: client},
				`no API key for provider ` + p.name + `: set api_key = "${` + p.key + `}" in config.toml and store the key with "hush vault set ` + p.key + `"`, ErrNoAPIKey},
			{"nil HTTP client", Options{APIKey: "k", Model: "m"},
				"provider " + p.name + ": no HTTP client: Options.HTTPClient is required (hush builds it from its environment snapshot)", ErrNoHTTPClient},
			{"no model", Options{APIKey: "k", HTTPClient: client},
				"no model for provider " + p.name + ": set model in config.toml or pass --model", ErrNoModel},
			{"negative retries", Options{APIKey: "k", Model: "m", HTTPClient: client, MaxRetries: -1},
				"provider " + p.name + ": max retries is -1, want 0 or more", nil},
			{"relative base URL", Options{BaseURL: "localhost:8080", Model: "m", HTTPClient: client},
				"provider " + p.name + ": base URL is not an absolute http(s) URL", nil},
			{"base URL with key-like text is not echoed", Options{BaseURL: "ftp://u:sk-secret@h", APIKey: "sk-secret", Model: "m", HTTPClient: client},
				"provider " + p.name + ": base URL is not an absolute http(s) URL", nil},
			{"remote with key", Options{APIKey: "k", Model: "m", HTTPClient: client}, "", nil},
			{"127.0.0.1 without key", Options{BaseURL: "http://127.0.0.1:9/v1", Model: "m", HTTPClient: client}, "", nil},
			{"127.0.0.2 without key", Options{BaseURL: "http://127.0.0.2:9", Model: "m", HTTPClient: client}, "", nil},
			{"localhost without key", Options{BaseURL: "http://LocalHost:11434/v1", Model: "m", HTTPClient: client}, "", nil},
			{"::1 without key", Options{BaseURL: "http://[::1]:8080/v1", Model: "m", HTTPClient: client}, "", nil},
			{"lookalike host needs a key", Options{BaseURL: "http://localhost.example.com/v1", Model: "m", HTTPClient: client},
				`no API key for provider ` + p.name + `: set api_key = "${` + p.key + `}" in config.toml and store the key with "hush vault set ` + p.key + `"`, ErrNoAPIKey},
		} {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				prov, err := p.new(tc.opts)
				if tc.wantErr == "" {
					if err != nil || prov == nil || prov.Name() != p.name {
						t.Fatalf("got %v, %v; want a %s provider", prov, err, p.name)
					}
					return
				}
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error =\n %v\nwant\n %s", err, tc.wantErr)
				}
				if tc.is != nil && !errors.Is(err, tc.is) {
					t.Errorf("errors.Is(%v, %v) = false", err, tc.is)
				}
				if tc.opts.APIKey != "" && strings.Contains(err.Error(), tc.opts.APIKey) {
					t.Errorf("error contains the key: %v", err)
				}
			})
		}
	}
}

// The tests below set process environment variables, so they cannot run in
// parallel; Go runs them before resuming any parallel test.

// envTrap is where the SDKs would send requests if they honoured
// *_BASE_URL from the environment.
func envTrap(t *testing.T) *fakeServer {
	t.Helper()
	return newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request reached the environment's base URL: %s %s", r.Method, r.URL)
		w.WriteHeader(http.StatusTeapot)
	})
}

const envKey = "sk-from-the-environment-LEAK"

// assertNoEnvLeak fails if the request carries anything the environment set.
func assertNoEnvLeak(t *testing.T, req recorded, wantAuth string) {
	t.Helper()
	if got := req.Header.Get("Authorization"); got != wantAuth {
		t.Errorf("Authorization = %q, want %q", got, wantAuth)
	}
	for name, values := range req.Header {
		for _, v := range values {
			if strings.Contains(v, envKey) || strings.Contains(v, "from-env") {
				t.Errorf("header %s = %q came from the environment", name, v)
			}
		}
	}
	for _, h := range []string{"X-Api-Key", "X-Env-Header", "Openai-Organization", "Openai-Project"} {
		if _, ok := req.Header[h]; ok {
			t.Errorf("header %s = %q was set from the environment", h, req.Header.Get(h))
		}
	}
	if strings.Contains(string(req.Body), envKey) {
		t.Error("request body contains the environment's key")
	}
}

func TestOpenAIIgnoresEnvironment(t *testing.T) {
	trap := envTrap(t)
	t.Setenv("OPENAI_API_KEY", envKey)
	t.Setenv("OPENAI_ADMIN_KEY", envKey)
	t.Setenv("OPENAI_BASE_URL", trap.URL+"/v1")
	t.Setenv("OPENAI_ORG_ID", "org-from-env")
	t.Setenv("OPENAI_PROJECT_ID", "proj-from-env")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Env-Header: from-env")

	t.Run("local server, no key", func(t *testing.T) {
		srv := newFakeServer(t, sseFile(t, "openai_text.sse"))
		if _, err := newTestOpenAI(t, srv, "").Stream(context.Background(), conversation(), nil); err != nil {
			t.Fatal(err)
		}
		assertNoEnvLeak(t, srv.only(t), "")
	})
	t.Run("explicit key wins", func(t *testing.T) {
		srv := newFakeServer(t, sseFile(t, "openai_text.sse"))
		if _, err := newTestOpenAI(t, srv, "sk-explicit").Stream(context.Background(), Request{}, nil); err != nil {
			t.Fatal(err)
		}
		assertNoEnvLeak(t, srv.only(t), "Bearer sk-explicit")
	})
	t.Run("unset key is not filled from the environment", func(t *testing.T) {
		_, err := NewOpenAI(Options{Model: "gpt-test", HTTPClient: &http.Client{}})
		if !errors.Is(err, ErrNoAPIKey) {
			t.Fatalf("error = %v, want ErrNoAPIKey although OPENAI_API_KEY is set", err)
		}
	})
	t.Run("unset base URL is not filled from the environment", func(t *testing.T) {
		rt := &stubTransport{body: sseBody(t, "openai_text.sse")}
		p, err := NewOpenAI(Options{APIKey: "sk-explicit", Model: "gpt-test", HTTPClient: &http.Client{Transport: rt}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Stream(context.Background(), Request{}, nil); err != nil {
			t.Fatal(err)
		}
		req := rt.only(t)
		if req.Path != "https://api.openai.com/v1/chat/completions" {
			t.Errorf("request went to %s, want https://api.openai.com/v1/chat/completions", req.Path)
		}
		assertNoEnvLeak(t, req, "Bearer sk-explicit")
	})
	if n := len(trap.requests()); n != 0 {
		t.Errorf("environment's base URL received %d requests", n)
	}
}

func TestAnthropicIgnoresEnvironment(t *testing.T) {
	trap := envTrap(t)
	t.Setenv("ANTHROPIC_API_KEY", envKey)
	t.Setenv("ANTHROPIC_AUTH_TOKEN", envKey)
	t.Setenv("ANTHROPIC_BASE_URL", trap.URL)
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Env-Header: from-env")
	// Were the credential chain consulted, this missing profile would fail
	// every key-less request.
	t.Setenv("ANTHROPIC_CONFIG_DIR", t.TempDir())
	t.Setenv("ANTHROPIC_PROFILE", "from-env-missing-profile")

	t.Run("local server, no key", func(t *testing.T) {
		srv := newFakeServer(t, sseFile(t, "anthropic_text.sse"))
		if _, err := newTestAnthropic(t, srv, "").Stream(context.Background(), conversation(), nil); err != nil {
			t.Fatal(err)
		}
		assertNoEnvLeak(t, srv.only(t), "")
	})
	t.Run("explicit key wins", func(t *testing.T) {
		srv := newFakeServer(t, sseFile(t, "anthropic_text.sse"))
		if _, err := newTestAnthropic(t, srv, "sk-ant-explicit").Stream(context.Background(), Request{}, nil); err != nil {
			t.Fatal(err)
		}
		assertNoEnvLeak(t, srv.only(t), "Bearer sk-ant-explicit")
	})
	t.Run("unset key is not filled from the environment", func(t *testing.T) {
		_, err := NewAnthropic(Options{Model: "claude-test", HTTPClient: &http.Client{}})
		if !errors.Is(err, ErrNoAPIKey) {
			t.Fatalf("error = %v, want ErrNoAPIKey although ANTHROPIC_API_KEY is set", err)
		}
	})
	t.Run("unset base URL is not filled from the environment", func(t *testing.T) {
		rt := &stubTransport{body: sseBody(t, "anthropic_text.sse")}
		p, err := NewAnthropic(Options{APIKey: "sk-ant-explicit", Model: "claude-test", HTTPClient: &http.Client{Transport: rt}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Stream(context.Background(), Request{}, nil); err != nil {
			t.Fatal(err)
		}
		req := rt.only(t)
		if req.Path != "https://api.anthropic.com/v1/messages" {
			t.Errorf("request went to %s, want https://api.anthropic.com/v1/messages", req.Path)
		}
		assertNoEnvLeak(t, req, "Bearer sk-ant-explicit")
	})
	if n := len(trap.requests()); n != 0 {
		t.Errorf("environment's base URL received %d requests", n)
	}
}

// stubTransport answers every request with an SSE body without touching the
// network, recording the full URL in recorded.Path.
type stubTransport struct {
	body string
	mu   sync.Mutex
	reqs []recorded
}

func (s *stubTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		_ = r.Body.Close()
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, recorded{Method: r.Method, Path: r.URL.String(), Header: r.Header.Clone(), Body: body})
	s.mu.Unlock()
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       io.NopCloser(strings.NewReader(s.body)),
		Request:    r,
	}, nil
}

func (s *stubTransport) only(t *testing.T) recorded {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) != 1 {
		t.Fatalf("transport saw %d requests, want 1", len(s.reqs))
	}
	return s.reqs[0]
}

func sseBody(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
