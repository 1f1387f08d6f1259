package provider

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

func newTestAnthropic(t *testing.T, srv *fakeServer, key string) Provider {
	t.Helper()
	p, err := NewAnthropic(Options{BaseURL: srv.URL, APIKey: key, Model: "claude-test", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAnthropicStreamsTextInOrder(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, sseFile(t, "anthropic_text.sse"))
	p := newTestAnthropic(t, srv, "")

	var c collector
	resp, err := p.Stream(context.Background(), Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}}, c.onText)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Hello", ", wor", "ld!\nBye."}; !reflect.DeepEqual(c.got(), want) {
		t.Errorf("onText deltas = %q, want %q", c.got(), want)
	}
	want := Response{Text: "Hello, world!\nBye.", StopReason: "end_turn", Usage: Usage{InputTokens: 42, OutputTokens: 7}}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response = %+v, want %+v", resp, want)
	}
	req := srv.only(t)
	if req.Method != http.MethodPost || req.Path != "/v1/messages" {
		t.Errorf("request = %s %s, want POST /v1/messages", req.Method, req.Path)
	}
	if req.Header.Get("Anthropic-Version") == "" {
		t.Error("anthropic-version header missing")
	}
}

func TestAnthropicAssemblesToolUseDeltas(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, sseFile(t, "anthropic_tool_use.sse"))
	p := newTestAnthropic(t, srv, "")

	var c collector
	resp, err := p.Stream(context.Background(), conversation(), c.onText)
	if err != nil {
		t.Fatal(err)
	}
	want := Response{
		Text: "Running it.",
		ToolCalls: []ToolCall{
			{ID: "toolu_01Ab", Name: "bash", Args: json.RawMessage(`{"script": "echo \"a b\" | wc -c"}`)},
			{ID: "toolu_02Cd", Name: "read_file", Args: json.RawMessage(`{"path": "a.txt"}`)},
		},
		StopReason: "tool_use",
		Usage:      Usage{InputTokens: 120, OutputTokens: 31},
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response:\n got %s\nwant %s", dump(resp), dump(want))
	}
	if want := []string{"Running it."}; !reflect.DeepEqual(c.got(), want) {
		t.Errorf("onText deltas = %q, want %q (tool input must not reach onText)", c.got(), want)
	}
}

func TestAnthropicRequestBody(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, sseFile(t, "anthropic_text.sse"))
	if _, err := newTestAnthropic(t, srv, "").Stream(context.Background(), conversation(), nil); err != nil {
		t.Fatal(err)
	}
	body := srv.only(t).Body
	golden(t, "anthropic_request.golden.json", body)

	checks := []struct {
		path []any
		want any
	}{
		{[]any{"model"}, "claude-test"},
		{[]any{"stream"}, true},
		{[]any{"max_tokens"}, 1000.0},
		{[]any{"system", 0, "type"}, "text"},
		{[]any{"system", 0, "text"}, "You are hush, a careful coding agent."},
		{[]any{"messages", 0, "role"}, "user"},
		{[]any{"messages", 0, "content", 0, "text"}, "What is in this directory?"},
		{[]any{"messages", 1, "role"}, "assistant"},
		{[]any{"messages", 1, "content", 0, "type"}, "text"},
		{[]any{"messages", 1, "content", 0, "text"}, "Let me look."},
		{[]any{"messages", 1, "content", 1, "type"}, "tool_use"},
		{[]any{"messages", 1, "content", 1, "id"}, "call_1"},
		{[]any{"messages", 1, "content", 1, "name"}, "bash"},
		{[]any{"messages", 1, "content", 1, "input"}, map[string]any{"script": "ls"}},
		{[]any{"messages", 1, "content", 2, "id"}, "call_2"},
		// Both results and the follow-up text share one user message,
		// tool results first.
		{[]any{"messages", 2, "role"}, "user"},
		{[]any{"messages", 2, "content", 0, "type"}, "tool_result"},
		{[]any{"messages", 2, "content", 0, "tool_use_id"}, "call_1"},
		{[]any{"messages", 2, "content", 0, "content", 0, "text"}, "a.txt\nsecret.txt\n"},
		{[]any{"messages", 2, "content", 0, "is_error"}, nil},
		{[]any{"messages", 2, "content", 1, "type"}, "tool_result"},
		{[]any{"messages", 2, "content", 1, "tool_use_id"}, "call_2"},
		{[]any{"messages", 2, "content", 1, "is_error"}, true},
		{[]any{"messages", 2, "content", 1, "content", 0, "text"}, "permission denied: vault.read:DB_PASSWORD"},
		{[]any{"messages", 2, "content", 2, "type"}, "text"},
		{[]any{"messages", 2, "content", 2, "text"}, "Summarise, please."},
		{[]any{"tools", 0, "name"}, "bash"},
		{[]any{"tools", 0, "description"}, "Run a bash script on the host."},
		{[]any{"tools", 0, "input_schema", "type"}, "object"},
		{[]any{"tools", 0, "input_schema", "properties", "script", "type"}, "string"},
		{[]any{"tools", 0, "input_schema", "required"}, []any{"script"}},
		{[]any{"tools", 0, "input_schema", "additionalProperties"}, false},
	}
	for _, c := range checks {
		if got := jsonPath(t, body, c.path...); !reflect.DeepEqual(got, c.want) {
			t.Errorf("body%v = %#v, want %#v", c.path, got, c.want)
		}
	}
	if n := len(jsonPath(t, body, "messages").([]any)); n != 3 {
		t.Errorf("len(messages) = %d, want 3", n)
	}
}

func TestAnthropicDefaultMaxTokens(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, sseFile(t, "anthropic_text.sse"))
	if _, err := newTestAnthropic(t, srv, "").Stream(context.Background(), Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}}, nil); err != nil {
		t.Fatal(err)
	}
	body := srv.only(t).Body
	if got := jsonPath(t, body, "max_tokens"); got != 4096.0 {
		t.Errorf("max_tokens = %v, want 4096", got)
	}
	if got := jsonPath(t, body, "system"); got != nil {
		t.Errorf("system = %v, want absent for an empty system prompt", got)
	}
}

func TestAnthropicCredentialHeaders(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, key, wantAuth string
	}{
		// anthropic-sdk-go v2 (anthropic-version 2026-10-21) sends every
		// credential as a bearer token; see NewAnthropic.
		{"key given", "sk-ant-test-123", "Bearer sk-ant-test-123"},
		{"local server without key", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newFakeServer(t, sseFile(t, "anthropic_text.sse"))
			if _, err := newTestAnthropic(t, srv, tc.key).Stream(context.Background(), Request{}, nil); err != nil {
				t.Fatal(err)
			}
			h := srv.only(t).Header
			if got := h.Get("Authorization"); got != tc.wantAuth {
				t.Errorf("Authorization = %q, want %q", got, tc.wantAuth)
			}
			if _, ok := h["X-Api-Key"]; ok {
				t.Errorf("X-Api-Key = %q, want no such header", h.Get("X-Api-Key"))
			}
			if tc.key == "" {
				if _, ok := h["Authorization"]; ok {
					t.Error("Authorization header sent without a key")
				}
			}
		})
	}
}

func TestAnthropicHTTPErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		respond    http.HandlerFunc
		wantErr    string
		wantStatus int
	}{
		{
			name: "401 echoing the key",
			respond: reply(401, "application/json",
				`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key `+testKey+`"},"request_id":"req_011"}`),
			wantErr:    "anthropic request failed with HTTP 401 Unauthorized: invalid x-api-key [REDACTED]",
			wantStatus: 401,
		},
		{
			name:       "401 plain text from a proxy",
			respond:    reply(401, "text/plain", "unauthorized\n"),
			wantErr:    "anthropic request failed with HTTP 401 Unauthorized: unauthorized",
			wantStatus: 401,
		},
		{
			name:       "529 overloaded, no retries configured",
			respond:    reply(529, "application/json", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
			wantErr:    "anthropic request failed with HTTP 529: Overloaded",
			wantStatus: 529,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newFakeServer(t, tc.respond)
			_, err := newTestAnthropic(t, srv, testKey).Stream(context.Background(), Request{}, nil)
			if err == nil {
				t.Fatal("Stream succeeded, want an error")
			}
			if err.Error() != tc.wantErr {
				t.Errorf("error =\n %q\nwant\n %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error contains the API key: %q", err)
			}
			var he *HTTPError
			if !errors.As(err, &he) || he.StatusCode != tc.wantStatus {
				t.Errorf("errors.As HTTPError = %+v, want status %d", he, tc.wantStatus)
			}
			if n := len(srv.requests()); n != 1 {
				t.Errorf("server saw %d requests, want 1 (MaxRetries 0)", n)
			}
		})
	}
}

func TestAnthropicStreamErrorEvent(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, reply(200, "text/event-stream",
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-test\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n"+
			"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"))
	_, err := newTestAnthropic(t, srv, testKey).Stream(context.Background(), Request{}, nil)
	const want = "anthropic stream failed: Overloaded"
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
}

func TestAnthropicToolUseWithoutInputDeltas(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, reply(200, "text/event-stream",
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_9\",\"name\":\"list\",\"input\":{}}}\n\n"+
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"+
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":3}}\n\n"))
	resp, err := newTestAnthropic(t, srv, "").Stream(context.Background(), Request{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolCall{{ID: "toolu_9", Name: "list", Args: json.RawMessage(`{}`)}}
	if !reflect.DeepEqual(resp.ToolCalls, want) {
		t.Errorf("tool calls = %s, want %s", dump(resp.ToolCalls), dump(want))
	}
}

func TestAnthropicCancelMidStream(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, stallAfter(
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n"))
	p := newTestAnthropic(t, srv, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	start := time.Now()
	_, err := p.Stream(ctx, Request{}, func(string) { cancel() })
	if err != context.Canceled {
		t.Fatalf("error = %v, want context.Canceled itself", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Stream took %v after cancel, want prompt return", d)
	}
}

func TestAnthropicCancelledBeforeStart(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, sseFile(t, "anthropic_text.sse"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := newTestAnthropic(t, srv, "").Stream(ctx, Request{}, nil)
	if err != context.Canceled {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
}
