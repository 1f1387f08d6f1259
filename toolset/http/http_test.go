package http_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	nethttp "net/http"
	"net/http/httptest"
	"net/http/httputil"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/auditlog"
	"github.com/hushcli/hush/executor/provider"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/toolset/bash"
	httptool "github.com/hushcli/hush/toolset/http"
)

// server is a 127.0.0.1 server that records every request, raw.
type server struct {
	*httptest.Server
	mu  sync.Mutex
	raw []string
}

func newServer(t *testing.T) *server {
	s := &server{}
	mux := nethttp.NewServeMux()
	mux.HandleFunc("/json", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Internal", "not shown")
		fmt.Fprint(w, `{"a":1,"b":[true,null]}`)
	})
	mux.HandleFunc("/html", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><title>x</title><script>evil()</script></head><body><h1>Docs</h1><p>Use <a href="/x">this</a> and <code>go test</code>.</p></body></html>`)
	})
	mux.HandleFunc("/echo", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "%s %s body=%s auth=%s", r.Method, r.URL.Path, body, r.Header.Get("Authorization"))
	})
	mux.HandleFunc("/loop", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		nethttp.Redirect(w, r, "/loop", nethttp.StatusFound)
	})
	mux.HandleFunc("/once", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		nethttp.Redirect(w, r, "/json", nethttp.StatusMovedPermanently)
	})
	mux.HandleFunc("/missing", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		nethttp.Error(w, "no such thing", nethttp.StatusNotFound)
	})
	mux.HandleFunc("/huge", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", fmt.Sprint(1<<30))
		chunk := bytes.Repeat([]byte("0123456789abcdef"), 4096)
		for sent := 0; sent < 1<<30; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return // the client stopped reading: what the cap is for
			}
		}
	})
	s.Server = httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		dump, _ := httputil.DumpRequest(r, r.URL.Path != "/huge")
		s.mu.Lock()
		s.raw = append(s.raw, string(dump))
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) Raw() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.raw, "\n")
}

func run(t *testing.T, tool httptool.Tool, args any) (string, executor.Result, error) {
	t.Helper()
	raw, _ := json.Marshal(args)
	var out bytes.Buffer
	tc := &executor.ToolContext{Dir: t.TempDir(), Ambient: tools.NewAmbient(map[string]string{}), Output: &out}
	res, err := tool.Run(context.Background(), tc, raw)
	return out.String(), res, err
}

func TestRequests(t *testing.T) {
	s := newServer(t)
	allow := httptool.Tool{AllowPrivate: true}
	tests := []struct {
		name   string
		args   any
		out    string
		status string
	}{
		{"GET JSON, indented, selected headers", httptool.Params{URL: s.URL + "/json"},
			"HTTP/1.1 200 OK\nContent-Type: application/json\nContent-Length: 23\n\n{\n  \"a\": 1,\n  \"b\": [\n    true,\n    null\n  ]\n}\n", "HTTP 200"},
		{"HTML as Markdown", httptool.Params{URL: s.URL + "/html"},
			"HTTP/1.1 200 OK\nContent-Type: text/html; charset=utf-8\nContent-Length: 149\n\n# Docs\n\nUse [this](/x) and `go test`.\n", "HTTP 200"},
		{"POST with a body", httptool.Params{Method: "post", URL: s.URL + "/echo", Body: `{"q":1}`, Headers: map[string]string{"Content-Type": "application/json"}},
			"HTTP/1.1 200 OK\nContent-Type: text/plain\nContent-Length: 29\n\nPOST /echo body={\"q\":1} auth=\n", "HTTP 200"},
		{"PUT and DELETE", httptool.Params{Method: "DELETE", URL: s.URL + "/echo"},
			"HTTP/1.1 200 OK\nContent-Type: text/plain\nContent-Length: 24\n\nDELETE /echo body= auth=\n", "HTTP 200"},
		{"one redirect followed", httptool.Params{URL: s.URL + "/once"},
			"HTTP/1.1 200 OK\n(redirected to " + s.URL + "/json)\nContent-Type: application/json\nContent-Length: 23\n\n{\n  \"a\": 1,\n  \"b\": [\n    true,\n    null\n  ]\n}\n", "HTTP 200"},
		{"an error status is an error result", httptool.Params{URL: s.URL + "/missing"},
			"HTTP/1.1 404 Not Found\nContent-Type: text/plain; charset=utf-8\nContent-Length: 14\n\nno such thing\n", "HTTP 404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, res, err := run(t, allow, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if out != tt.out || res.Status != tt.status {
				t.Errorf("out = %q\nstatus %q\nwant  %q\n       %q", out, res.Status, tt.out, tt.status)
			}
			if res.IsError != strings.HasPrefix(tt.status, "HTTP 4") {
				t.Errorf("IsError = %v for %s", res.IsError, tt.status)
			}
		})
	}
}

func TestRefusals(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		name string
		tool httptool.Tool
		args any
		want string
	}{
		{"loopback by default", httptool.Tool{}, httptool.Params{URL: s.URL + "/json"},
			"refused: 127.0.0.1 is a loopback, private or link-local address; hush's http tool does not reach the local machine or network unless [tools.http] allow_private = true is set in config.toml"},
		{"localhost by name", httptool.Tool{}, httptool.Params{URL: strings.Replace(s.URL, "127.0.0.1", "localhost", 1) + "/json"}, ""},
		{"private range", httptool.Tool{}, httptool.Params{URL: "http://10.0.0.1:9/", TimeoutSeconds: 2},
			"refused: 10.0.0.1 is a loopback, private or link-local address; hush's http tool does not reach the local machine or network unless [tools.http] allow_private = true is set in config.toml"},
		{"metadata address", httptool.Tool{}, httptool.Params{URL: "http://169.254.169.254/latest/meta-data/"},
			"refused: 169.254.169.254 is a loopback, private or link-local address; hush's http tool does not reach the local machine or network unless [tools.http] allow_private = true is set in config.toml"},
		{"redirect loop", httptool.Tool{AllowPrivate: true}, httptool.Params{URL: s.URL + "/loop"},
			"GET " + s.URL + "/loop: stopped after 5 redirects (a redirect loop?)"},
		{"bad method", httptool.Tool{}, httptool.Params{Method: "PATCH", URL: s.URL}, `bad arguments: method "PATCH": want GET, POST, PUT or DELETE`},
		{"bad scheme", httptool.Tool{}, httptool.Params{URL: "file:///etc/passwd"}, `bad arguments: url "file:///etc/passwd": only http and https are supported`},
		{"no host", httptool.Tool{}, httptool.Params{URL: "http:///x"}, `bad arguments: url "http:///x" has no host`},
		{"not a URL", httptool.Tool{}, httptool.Params{URL: "::"}, `bad arguments: url "::" is not a URL`},
		{"credentials in URL", httptool.Tool{}, httptool.Params{URL: "https://u:p@example.com/"}, "bad arguments: credentials in the URL are refused; this tool sends no secrets"},
		{"bad header", httptool.Tool{}, httptool.Params{URL: s.URL, Headers: map[string]string{"X": "a\r\nInjected: 1"}}, `bad arguments: header "X" is not a valid header`},
		{"unknown field", httptool.Tool{}, map[string]any{"url": s.URL, "secrets": []string{"A"}}, `bad arguments: json: unknown field "secrets"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := run(t, tt.tool, tt.args)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tt.name == "localhost by name" {
				if !strings.HasPrefix(got, "refused: 127.0.0.1 ") && !strings.HasPrefix(got, "refused: [::1]") && !strings.HasPrefix(got, "refused: ::1 ") {
					t.Errorf("localhost was not refused: %q", got)
				}
				return
			}
			if got != tt.want {
				t.Errorf("error = %q\nwant    %q", got, tt.want)
			}
		})
	}
	if strings.Contains(s.Raw(), "GET /json") && strings.Count(s.Raw(), "GET /loop") != 6 {
		t.Errorf("the server saw requests it should not have:\n%s", s.Raw())
	}
}

// A 1 GiB body costs at most the cap: the rest is never read.
func TestHugeBodyIsCapped(t *testing.T) {
	s := newServer(t)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out, res, err := run(t, httptool.Tool{AllowPrivate: true}, httptool.Params{URL: s.URL + "/huge"})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "HTTP 200; body cut at 1024 KiB of 1073741824 bytes" {
		t.Errorf("status = %q", res.Status)
	}
	if len(out) > httptool.MaxBody+1024 {
		t.Errorf("output is %d bytes", len(out))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("the call allocated %d MiB for a capped body", alloc>>20)
	}
}

// The http tool's ToolContext holds no vault: a ${NAME} it is given goes
// out as those characters. The positive control: the same agent, the same
// vault, and bash with env {"POS": "${GRANTED}"} does receive the value.
func TestVaultNeverReachesARequest(t *testing.T) {
	s := newServer(t)
	granted := "canary-granted-7f3a9c"
	vault := map[string]string{"GRANTED": granted}
	dir := t.TempDir()
	sum := sha256.Sum256([]byte(granted))
	want := hex.EncodeToString(sum[:])
	args := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	model := &script{steps: []provider.Response{
		{ToolCalls: []provider.ToolCall{{ID: "h1", Name: "http", Args: args(httptool.Params{Method: "POST", URL: s.URL + "/echo?k=${GRANTED}",
			Headers: map[string]string{"Authorization": "Bearer ${GRANTED}"}, Body: "token=${GRANTED}"})}}},
		{ToolCalls: []provider.ToolCall{{ID: "b1", Name: "bash", Args: args(map[string]any{"script": `printf %s "$POS" | sha256sum`, "env": map[string]string{"POS": "${GRANTED}"}})}}},
		{Text: "done"},
	}}
	events := &collect{}
	agent := &executor.Agent{
		Provider: model,
		Tools:    executor.NewRegistry(httptool.Tool{AllowPrivate: true}, bash.Tool{}),
		Gate: &executor.RuleGate{Rules: []executor.Rule{{Gate: "tool.run:*", Subject: "*", Decision: executor.Allow},
			{Gate: "vault.read:*", Subject: "*", Decision: executor.Allow}}},
		Audit:   auditlog.Open(dir + "/audit.jsonl"),
		Vault:   mapVault(vault),
		Secrets: func() (map[string]string, error) { return vault, nil },
		Ambient: map[string]string{"PATH": os.Getenv("PATH"), "HOME": dir},
		Dir:     dir,
		Policy:  func(string) tools.Policy { return tools.Policy{} },
		Events:  events,
	}
	if _, err := agent.RunTurn(context.Background(), nil, "go"); err != nil {
		t.Fatal(err)
	}
	raw := s.Raw()
	if strings.Contains(raw, granted) {
		t.Fatalf("the vault value reached the server:\n%s", raw)
	}
	for _, lit := range []string{"POST /echo?k=${GRANTED}", "Authorization: Bearer ${GRANTED}", "token=${GRANTED}"} {
		if !strings.Contains(raw, lit) {
			t.Errorf("the server did not see %q literally:\n%s", lit, raw)
		}
	}
	if !strings.Contains(events.String(), want) {
		t.Errorf("positive control: bash did not receive the granted value (sha256 %s):\n%s", want, events.String())
	}
	// The http call's gate request carried the method and URL.
	if !strings.Contains(events.String(), "POST /echo body=token=${GRANTED} auth=Bearer ${GRANTED}") {
		t.Errorf("echo missing:\n%s", events.String())
	}
}

type mapVault map[string]string

func (m mapVault) Get(name string) (string, error) {
	if v, ok := m[name]; ok {
		return v, nil
	}
	return "", os.ErrNotExist
}

type script struct {
	mu    sync.Mutex
	steps []provider.Response
}

func (s *script) Name() string { return "script" }
func (s *script) Stream(_ context.Context, _ provider.Request, _ func(string)) (provider.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.steps) == 0 {
		return provider.Response{Text: "done"}, nil
	}
	r := s.steps[0]
	s.steps = s.steps[1:]
	return r, nil
}

type collect struct {
	mu sync.Mutex
	b  strings.Builder
}

func (c *collect) Text(string)                          {}
func (c *collect) ToolStart(provider.ToolCall)          {}
func (c *collect) ToolOutput(provider.ToolCall, []byte) {}
func (c *collect) ToolEnd(_ provider.ToolCall, res string, _ bool) {
	c.mu.Lock()
	c.b.WriteString(res + "\n")
	c.mu.Unlock()
}
func (c *collect) String() string { c.mu.Lock(); defer c.mu.Unlock(); return c.b.String() }

// The gate is asked with the method and URL as the request's detail.
func TestPreviewDetail(t *testing.T) {
	pv, err := httptool.Tool{}.Preview(context.Background(), nil, json.RawMessage(`{"method":"put","url":"https://example.com/a?b=1","body":"xyz"}`))
	if err != nil || pv.Detail != "PUT https://example.com/a?b=1 (3-byte body)" {
		t.Errorf("preview = %+v, %v", pv, err)
	}
}

// Proxies come from hush's start-up snapshot (ToolContext.Ambient), not
// from the process environment; the proxy itself may be on loopback.
func TestProxyFromAmbient(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	proxy := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.String())
		mu.Unlock()
		fmt.Fprint(w, "via proxy")
	}))
	defer proxy.Close()
	raw, _ := json.Marshal(httptool.Params{URL: "http://docs.example.invalid/page"})
	var out bytes.Buffer
	tc := &executor.ToolContext{Ambient: tools.NewAmbient(map[string]string{"HTTP_PROXY": proxy.URL}), Output: &out}
	res, err := httptool.Tool{}.Run(context.Background(), tc, raw)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != "GET http://docs.example.invalid/page" || !strings.Contains(out.String(), "via proxy") || res.Status != "HTTP 200" {
		t.Errorf("proxy saw %q; output %q %q", seen, out.String(), res.Status)
	}
	// Through the proxy, a private target is still refused by name.
	raw, _ = json.Marshal(httptool.Params{URL: "http://10.1.2.3/"})
	if _, err := (httptool.Tool{}).Run(context.Background(), tc, raw); err == nil || !strings.HasPrefix(err.Error(), "refused: 10.1.2.3 is a loopback, private") {
		t.Errorf("a private target through the proxy: %v", err)
	}
	if len(seen) != 1 {
		t.Errorf("the proxy was asked for a private target: %q", seen)
	}
}

func TestTimeout(t *testing.T) {
	slow := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer slow.Close()
	_, _, err := run(t, httptool.Tool{AllowPrivate: true}, httptool.Params{URL: slow.URL + "/slow", TimeoutSeconds: 1})
	if want := "GET " + slow.URL + "/slow: timed out after 1s"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}

// A proxy in hush's own process environment is not used: only the
// snapshot counts.
func TestProcessEnvironmentProxyIgnored(t *testing.T) {
	hit := false
	proxy := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) { hit = true }))
	defer proxy.Close()
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	raw, _ := json.Marshal(httptool.Params{URL: "http://docs.example.invalid/page", TimeoutSeconds: 5})
	_, err := httptool.Tool{}.Run(context.Background(), &executor.ToolContext{Ambient: tools.NewAmbient(map[string]string{}), Output: io.Discard}, raw)
	if hit {
		t.Error("the process environment's proxy was used")
	}
	if err == nil || !strings.Contains(err.Error(), "docs.example.invalid") {
		t.Errorf("want a lookup failure for the unproxied host, got %v", err)
	}
}
