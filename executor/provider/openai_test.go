package provider

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func newTestOpenAI(t *testing.T, srv *fakeServer, key string) Provider {
	t.Helper()
	p, err := NewOpenAI(Options{BaseURL: srv.URL + "/v1", APIKey: key, Model: "gpt-test", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOpenAIStreamsTextInOrder(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, sseFile(t, "openai_text.sse"))
	p := newTestOpenAI(t, srv, "")

	var c collector
	resp, err := p.Stream(context.Background(), Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}}, c.onText)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Hello", ", wor", "ld!\nBye."}; !reflect.DeepEqual(c.got(), want) {
		t.Errorf("onText deltas = %q, want %q", c.got(), want)
	}
	want := Response{Text: "Hello, world!\nBye.", StopReason: "stop", Usage: Usage{InputTokens: 42, OutputTokens: 7}}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response = %+v, want %+v", resp, want)
	}
	req := srv.only(t)
	if req.Method != http.MethodPost || req.Path != "/v1/chat/completions" {
		t.Errorf("request = %s %s, want POST /v1/chat/completions", req.Method, req.Path)
	}
}

func TestOpenAINilOnText(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, sseFile(t, "openai_text.sse"))
	resp, err := newTestOpenAI(t, srv, "").Stream(context.Background(), Request{}, nil)
	if err != nil || resp.Text != "Hello, world!\nBye." {
		t.Fatalf("Stream = %q, %v", resp.Text, err)
	}
}

func TestOpenAIAssemblesToolCallDeltas(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, sseFile(t, "openai_tool_calls.sse"))
	p := newTestOpenAI(t, srv, "")

	resp, err := p.Stream(context.Background(), conversation(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Response{
		Text: "Running it.",
		ToolCalls: []ToolCall{
			{ID: "call_Ab12", Name: "bash", Args: json.RawMessage(`{"script": "echo \"a b\" | wc -c"}`)},
			{ID: "call_Cd34", Name: "read_file", Args: json.RawMessage(`{"path": "a.txt"}`)},
		},
		StopReason: "tool_calls",
		Usage:      Usage{InputTokens: 120, OutputTokens: 31},
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response:\n got %s\nwant %s", dump(resp), dump(want))
	}
}

func TestOpenAIRequestBody(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, sseFile(t, "openai_text.sse"))
	if _, err := newTestOpenAI(t, srv, "").Stream(context.Background(), conversation(), nil); err != nil {
		t.Fatal(err)
	}
	body := srv.only(t).Body
	golden(t, "openai_request.golden.json", body)

	// The golden file can be regenerated; these cannot.
	checks := []struct {
		path []any
		want any
	}{
		{[]any{"model"}, "gpt-test"},
		{[]any{"stream"}, true},
		{[]any{"max_completion_tokens"}, 1000.0},
		{[]any{"messages", 0, "role"}, "system"},
		{[]any{"messages", 0, "content"}, "You are hush, a careful coding agent."},
		{[]any{"messages", 1, "role"}, "user"},
		{[]any{"messages", 2, "role"}, "assistant"},
		{[]any{"messages", 2, "content"}, "Let me look."},
		{[]any{"messages", 2, "tool_calls", 0, "id"}, "call_1"},
		{[]any{"messages", 2, "tool_calls", 0, "type"}, "function"},
		{[]any{"messages", 2, "tool_calls", 0, "function", "name"}, "bash"},
		{[]any{"messages", 2, "tool_calls", 0, "function", "arguments"}, `{"script":"ls"}`},
		{[]any{"messages", 2, "tool_calls", 1, "id"}, "call_2"},
		{[]any{"messages", 3, "role"}, "tool"},
		{[]any{"messages", 3, "tool_call_id"}, "call_1"},
		{[]any{"messages", 3, "content"}, "a.txt\nsecret.txt\n"},
		{[]any{"messages", 4, "role"}, "tool"},
		{[]any{"messages", 4, "tool_call_id"}, "call_2"},
		{[]any{"messages", 4, "content"}, "error: permission denied: vault.read:DB_PASSWORD"},
		{[]any{"messages", 5, "content"}, "Summarise, please."},
		{[]any{"tools", 0, "type"}, "function"},
		{[]any{"tools", 0, "function", "name"}, "bash"},
		{[]any{"tools", 0, "function", "description"}, "Run a bash script on the host."},
		{[]any{"tools", 0, "function", "parameters", "required", 0}, "script"},
		{[]any{"tools", 0, "function", "parameters", "additionalProperties"}, false},
	}
	for _, c := range checks {
		if got := jsonPath(t, body, c.path...); !reflect.DeepEqual(got, c.want) {
			t.Errorf("body%v = %#v, want %#v", c.path, got, c.want)
		}
	}
	if n := len(jsonPath(t, body, "messages").([]any)); n != 6 {
		t.Errorf("len(messages) = %d, want 6", n)
	}
}

func TestOpenAIAuthorizationHeader(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, key, want string
	}{
		{"key given", "sk-test-123", "Bearer sk-test-123"},
		{"local server without key", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newFakeServer(t, sseFile(t, "openai_text.sse"))
			if _, err := newTestOpenAI(t, srv, tc.key).Stream(context.Background(), Request{}, nil); err != nil {
				t.Fatal(err)
			}
			h := srv.only(t).Header
			if got := h.Get("Authorization"); got != tc.want {
				t.Errorf("Authorization = %q, want %q", got, tc.want)
			}
			if _, ok := h["Authorization"]; !ok && tc.want != "" {
				t.Error("Authorization header missing")
			}
			if _, ok := h["Authorization"]; ok && tc.want == "" {
				t.Error("Authorization header sent without a key")
			}
		})
	}
}

const testKey = "sk-test-Zq9SECRETvalue"

func TestOpenAIHTTPErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		respond     http.HandlerFunc
		wantErr     string
		wantStatus  int
		wantAttempt int
	}{
		{
			name: "401 echoing the key",
			respond: reply(401, "application/json",
				`{"error":{"message":"Incorrect API key provided: `+testKey+`. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`),
			wantErr:     "openai request failed with HTTP 401 Unauthorized: Incorrect API key provided: [REDACTED]. You can find your API key at https://platform.openai.com/account/api-keys.",
			wantStatus:  401,
			wantAttempt: 1,
		},
		{
			name:        "401 plain text from a proxy",
			respond:     reply(401, "text/plain", "unauthorized\n"),
			wantErr:     "openai request failed with HTTP 401 Unauthorized: unauthorized",
			wantStatus:  401,
			wantAttempt: 1,
		},
		{
			name:        "404 model",
			respond:     reply(404, "application/json", `{"error":{"message":"The model `+"`gpt-test`"+` does not exist","type":"invalid_request_error","code":"model_not_found"}}`),
			wantErr:     "openai request failed with HTTP 404 Not Found: The model `gpt-test` does not exist",
			wantStatus:  404,
			wantAttempt: 1,
		},
		{
			name:        "502 empty body, no retries configured",
			respond:     reply(502, "text/html", ""),
			wantErr:     "openai request failed with HTTP 502 Bad Gateway",
			wantStatus:  502,
			wantAttempt: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newFakeServer(t, tc.respond)
			_, err := newTestOpenAI(t, srv, testKey).Stream(context.Background(), Request{}, nil)
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
			if n := len(srv.requests()); n != tc.wantAttempt {
				t.Errorf("server saw %d requests, want %d", n, tc.wantAttempt)
			}
		})
	}
}

func TestOpenAIRetryThenSuccess(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	stream := sseFile(t, "openai_text.sse")
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After-Ms", "1")
			reply(503, "application/json", `{"error":{"message":"overloaded"}}`)(w, r)
			return
		}
		stream(w, r)
	})
	p, err := NewOpenAI(Options{BaseURL: srv.URL + "/v1", Model: "gpt-test", HTTPClient: srv.Client(), MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Stream(context.Background(), Request{}, nil)
	if err != nil {
		t.Fatalf("Stream after one retry: %v", err)
	}
	if resp.Text != "Hello, world!\nBye." || len(srv.requests()) != 2 {
		t.Errorf("text %q after %d requests, want the full text after 2", resp.Text, len(srv.requests()))
	}
}

func TestOpenAIStreamErrorEvent(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, reply(200, "text/event-stream",
		"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":null}]}\n\n"+
			"data: {\"error\":{\"message\":\"The server had an error while processing your request.\",\"type\":\"server_error\"}}\n\n"))
	_, err := newTestOpenAI(t, srv, testKey).Stream(context.Background(), Request{}, nil)
	const want = "openai stream failed: The server had an error while processing your request."
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
}

func TestOpenAIMalformedToolArguments(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, reply(200, "text/event-stream",
		"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_x\",\"type\":\"function\",\"function\":{\"name\":\"bash\",\"arguments\":\"{\\\"script\\\": \"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n"+
			"data: [DONE]\n\n"))
	_, err := newTestOpenAI(t, srv, "").Stream(context.Background(), Request{}, nil)
	if !errors.Is(err, ErrMalformedToolCall) {
		t.Fatalf("error = %v, want ErrMalformedToolCall", err)
	}
	if want := "openai: malformed tool call: arguments of bash (call_x) are not a JSON object"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

func TestOpenAICancelMidStream(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, stallAfter(
		"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n"))
	p := newTestOpenAI(t, srv, "")
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

func TestOpenAICancelledBeforeStart(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, sseFile(t, "openai_text.sse"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := newTestOpenAI(t, srv, "").Stream(ctx, Request{}, nil)
	if err != context.Canceled {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
}

func TestOpenAIRejectsUnknownRoleAndBadSchema(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, sseFile(t, "openai_text.sse"))
	p := newTestOpenAI(t, srv, "")
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{Request{Messages: []Message{{Role: "system", Text: "x"}}}, `openai: message 0 has unknown role "system"`},
		{Request{Tools: []ToolSpec{{Name: "bash", Schema: json.RawMessage(`[1]`)}}}, "openai: tool bash: schema is not a JSON object"},
	} {
		if _, err := p.Stream(context.Background(), tc.req, nil); err == nil || err.Error() != tc.want {
			t.Errorf("error = %v, want %q", err, tc.want)
		}
	}
	if n := len(srv.requests()); n != 0 {
		t.Errorf("server saw %d requests for invalid input, want 0", n)
	}
}

func dump(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
