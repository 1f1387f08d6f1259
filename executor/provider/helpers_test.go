package provider

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json from the requests the fake servers receive")

// recorded is one request as the fake server saw it on the wire.
type recorded struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// fakeServer is a model server on 127.0.0.1 that records every request and
// answers with respond.
type fakeServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recorded
}

func newFakeServer(t *testing.T, respond http.HandlerFunc) *fakeServer {
	t.Helper()
	f := &fakeServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, recorded{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		f.mu.Unlock()
		respond(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

// only returns the single request the server received, failing otherwise.
func (f *fakeServer) only(t *testing.T) recorded {
	t.Helper()
	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("server received %d requests, want 1", len(reqs))
	}
	return reqs[0]
}

// sseFile streams testdata/name event by event, flushing after each, the
// way a real server trickles a response.
func sseFile(t *testing.T, name string) http.HandlerFunc {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		for _, event := range strings.SplitAfter(string(data), "\n\n") {
			_, _ = io.WriteString(w, event)
			w.(http.Flusher).Flush()
		}
	}
}

// reply answers with a fixed status and body.
func reply(status int, contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// stallAfter writes first, then holds the stream open until the client
// goes away (or a safety timeout), to test cancellation mid-stream.
func stallAfter(first string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, first)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}
}

// golden compares the JSON body with testdata/name after normalising both
// (sorted keys, indented), or rewrites the file with -update.
func golden(t *testing.T, name string, body []byte) {
	t.Helper()
	got := indentJSON(t, body)
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, indentJSON(t, want)) {
		t.Errorf("request body differs from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

func indentJSON(t *testing.T, data []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

// jsonPath decodes body and walks keys / indexes, for pointed assertions
// beside the golden files.
func jsonPath(t *testing.T, body []byte, path ...any) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %v: %T is not an object", p, v)
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("at %v: not an array long enough: %v", p, v)
			}
			v = a[k]
		}
	}
	return v
}

// conversation is a history with every message shape: system prompt, user
// text, an assistant turn with text and two tool calls, a successful and a
// failed tool result, and a follow-up user message.
func conversation() Request {
	return Request{
		System: "You are hush, a careful coding agent.",
		Messages: []Message{
			{Role: RoleUser, Text: "What is in this directory?"},
			{Role: RoleAssistant, Text: "Let me look.", ToolCalls: []ToolCall{
				{ID: "call_1", Name: "bash", Args: json.RawMessage(`{"script":"ls"}`)},
				{ID: "call_2", Name: "bash", Args: json.RawMessage(`{"script":"cat secret.txt"}`)},
			}},
			{Role: RoleTool, ToolCallID: "call_1", Text: "a.txt\nsecret.txt\n"},
			{Role: RoleTool, ToolCallID: "call_2", Text: "permission denied: vault.read:DB_PASSWORD", IsError: true},
			{Role: RoleUser, Text: "Summarise, please."},
		},
		Tools: []ToolSpec{{
			Name:        "bash",
			Description: "Run a bash script on the host.",
			Schema:      json.RawMessage(`{"type":"object","properties":{"script":{"type":"string","description":"The script."}},"required":["script"],"additionalProperties":false}`),
		}},
		MaxTokens: 1000,
	}
}

// collector gathers onText deltas.
type collector struct {
	mu     sync.Mutex
	deltas []string
}

func (c *collector) onText(d string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deltas = append(c.deltas, d)
}

func (c *collector) got() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.deltas...)
}
