package tests

import (
	"encoding/json"
	"fmt"
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

// fakeAnthropic is an Anthropic Messages API server on 127.0.0.1 in the
// real wire format: GET /v1/models paged with after_id / has_more, and
// POST /v1/messages streamed as message_start … message_stop events. It
// records the key each request carried (bearer or x-api-key) and the model each message asked
// for.
type fakeAnthropic struct {
	srv    *httptest.Server
	models []string
	mu     sync.Mutex
	keys   []string
	asked  []string
	pages  int
}

func newFakeAnthropic(t *testing.T, models ...string) *fakeAnthropic {
	f := &fakeAnthropic{models: models}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAnthropic) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	// The SDK sends the key as a bearer token (x-api-key with older API
	// versions).
	k := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if k == "" {
		k = r.Header.Get("X-Api-Key")
	}
	f.keys = append(f.keys, k)
	f.mu.Unlock()
	if r.Header.Get("Anthropic-Version") == "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"type":"error","error":{"type":"invalid_request_error","message":"anthropic-version header is required"}}`)
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		// Two models a page, as the API pages with limit / after_id.
		start := 0
		if after := r.URL.Query().Get("after_id"); after != "" {
			for i, m := range f.models {
				if m == after {
					start = i + 1
				}
			}
		}
		end := min(start+2, len(f.models))
		type model struct {
			Type        string `json:"type"`
			ID          string `json:"id"`
			DisplayName string `json:"display_name"`
			CreatedAt   string `json:"created_at"`
		}
		page := struct {
			Data    []model `json:"data"`
			HasMore bool    `json:"has_more"`
			FirstID *string `json:"first_id"`
			LastID  *string `json:"last_id"`
		}{Data: []model{}, HasMore: end < len(f.models)}
		for _, m := range f.models[start:end] {
			page.Data = append(page.Data, model{"model", m, strings.ToUpper(m), "2025-05-14T00:00:00Z"})
		}
		if len(page.Data) > 0 {
			page.FirstID, page.LastID = &page.Data[0].ID, &page.Data[len(page.Data)-1].ID
		}
		f.mu.Lock()
		f.pages++
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(page)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Model string `json:"model"`
		}
		_ = json.Unmarshal(body, &req)
		f.mu.Lock()
		f.asked = append(f.asked, req.Model)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		ev := func(name, data string) { fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data) }
		ev("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":%q,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}`, req.Model))
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"answered by %s"}}`, req.Model))
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}`)
		ev("message_stop", `{"type":"message_stop"}`)
	default:
		http.NotFound(w, r)
	}
}

// TestChatModelPickerListsAnthropicModels: with provider anthropic, /model
// without a name lists every model of the server's paged list (three
// pages); the one picked is what the next message asks for, and each
// request carries the vault's key.
func TestChatModelPickerListsAnthropicModels(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	key := canary("anthropickey")
	srv := newFakeAnthropic(t, "claude-opus-fake", "claude-sonnet-fake", "claude-haiku-fake", "claude-tiny-fake", "claude-last-fake")
	vault, _ := os.ReadFile(filepath.Join(w.dataDir, "vault.env"))
	w.write(filepath.Join(w.dataDir, "vault.env"), string(vault)+fmt.Sprintf("ANTHROPIC_API_KEY=%q\n", key))
	w.config(fmt.Sprintf("[model]\nprovider = \"anthropic\"\nbase_url = %q\nmodel = \"claude-opus-fake\"\napi_key = \"${ANTHROPIC_API_KEY}\"\n", srv.srv.URL))
	tm := startPTYSize(t, w, 40, 60, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("/model\r")
	tm.expect("Use which model?", 20*time.Second)
	for _, m := range srv.models {
		tm.expect(m, 5*time.Second)
	}
	tm.send("tiny")
	tm.send("\r")
	tm.expect("model: claude-tiny-fake (from the next turn)", 20*time.Second)
	tm.send("hello\r")
	tm.expect("answered by claude-tiny-fake", 20*time.Second)
	tm.quit()
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.pages != 3 {
		t.Errorf("%d model pages asked for, want 3 (5 models, 2 a page)", srv.pages)
	}
	if len(srv.asked) != 1 || srv.asked[0] != "claude-tiny-fake" {
		t.Errorf("messages asked for %v, want [claude-tiny-fake]", srv.asked)
	}
	for i, k := range srv.keys {
		if k != key {
			t.Errorf("request %d carried the key %q, not the vault's", i, k)
		}
	}
	w.assertNoCanary("the screen", tm.Screen())
	if strings.Contains(tm.Raw(), key) {
		t.Error("the key reached the screen")
	}
}
