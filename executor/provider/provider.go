// Package provider connects hush's turn loop to a model: OpenAI-compatible
// Chat Completions, Anthropic Messages, or a scripted replay file.
//
// It owns the translation between hush's provider-neutral [Message] history
// and each wire format, and the streaming of one model response.
//
// It must never read the process environment. Both official SDKs fill in
// OPENAI_API_KEY, ANTHROPIC_API_KEY, *_BASE_URL, *_CUSTOM_HEADERS and more
// from os.Getenv when a client is built the default way; the constructors here
// build their clients so that only [Options] counts, and an empty field stays
// empty. hush reduces its own environment at start (tools/guard), so a
// library that consulted it would see the wrong values anyway; proxy settings
// reach the transport only through the caller-built Options.HTTPClient.
//
// An error from this package never contains the API key: it names the
// config key that holds it instead.
//
// Wire mapping notes: consecutive messages that share an Anthropic role are
// merged (tool results first) because the Messages API wants all results of
// one assistant turn in one user message; Chat Completions has no is_error,
// so a failed tool result's text is sent prefixed with "error: ".
//
// # Replay files
//
// [NewReplay] reads a JSON document that scripts the model's side of a
// conversation, one step per [Provider.Stream] call:
//
//	{"model":"replay","steps":[
//	  {"text":"Let me look at the environment.","tool_calls":[{"name":"bash","args":{"script":"env"}}]},
//	  {"text":"Done: nothing secret was visible."}
//	]}
//
// Fields: "model" (optional, informational) and "steps" (at least one). A
// step has "text" (streamed to onText word by word) and optional
// "tool_calls", each with "name" (required), "args" (a JSON object; absent
// means {}) and an optional "id". A call without an id gets "call_N", N
// counting every tool call in the file from 1, so ids are stable across runs.
// Ids must be unique. Unknown fields are an error naming the field and the
// file; malformed JSON is an error naming the file, line and column.
//
// A step's StopReason is "tool_use" when it has tool calls and "end_turn"
// otherwise. When the steps run out, Stream returns a final response with the
// text "(replay finished)" and no tool calls rather than an error: a script
// that is one step short then ends the conversation politely instead of
// aborting the run, and the marker text makes the shortfall visible.
package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// Role says who wrote a [Message].
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// ToolCall is one tool invocation requested by the model.
type ToolCall struct {
	ID   string
	Name string
	Args json.RawMessage // a JSON object
}

// Message is one entry of the conversation history, provider-neutral.
type Message struct {
	Role       Role
	Text       string     // user/assistant text, or the tool result text for RoleTool
	ToolCalls  []ToolCall // assistant only
	ToolCallID string     // RoleTool: which call this answers
	IsError    bool       // RoleTool: the tool failed (Anthropic is_error)
}

// ToolSpec describes a tool the model may call.
type ToolSpec struct {
	Name, Description string
	Schema            json.RawMessage // JSON Schema object
}

// Request is everything one model turn needs.
type Request struct {
	System    string
	Messages  []Message
	Tools     []ToolSpec
	MaxTokens int // 0: the provider's default (Anthropic: 4096; OpenAI: not sent)
	// RetryStall says no tool has run yet in this turn, so a stream that
	// stalls mid-answer (ErrStreamIdle) may be sent again like a 5xx,
	// though its first text was already shown. After a tool ran the turn
	// ends instead: the person decides whether to go on.
	RetryStall bool
}

// Response is one complete model turn.
//
// StopReason is the provider's own value ("stop", "tool_calls", "length" for
// OpenAI; "end_turn", "tool_use", "max_tokens" for Anthropic and replay).
// Callers decide whether to run tools by len(ToolCalls), not by StopReason.
type Response struct {
	Text       string
	ToolCalls  []ToolCall
	StopReason string
	Usage      Usage
}

// Usage counts the tokens of one model call, as reported by the server
// (zero when it reports nothing).
type Usage struct {
	InputTokens, OutputTokens int64
	// CachedTokens are input tokens served from the provider's prompt
	// cache, as it reported them: OpenAI's cached_tokens are part of
	// InputTokens, Anthropic's cache_read_input_tokens are not.
	CachedTokens int64
	// CostUSD is what the call cost, when the server says so (OpenRouter
	// and some proxies send usage.cost); 0 otherwise.
	CostUSD float64
}

// Provider streams one model response.
type Provider interface {
	// Name is the provider's config name: "openai", "anthropic" or "replay".
	Name() string
	// Stream sends req and streams the answer. onText receives text deltas
	// as they arrive and may be nil. Stream returns the complete response
	// once the stream ends; a cancelled ctx returns ctx.Err() promptly.
	// Stream may be called again after it returns, but not concurrently.
	Stream(ctx context.Context, req Request, onText func(delta string)) (Response, error)
}

// Options configures a network provider. No field falls back to the process
// environment.
type Options struct {
	// BaseURL is the API root ("" = the provider's public endpoint). For
	// OpenAI-compatible servers it includes the version path, for example
	// "http://127.0.0.1:8080/v1"; for Anthropic it is the host root.
	BaseURL string
	// APIKey may be "" only when BaseURL is a loopback server
	// (127.0.0.0/8, ::1 or localhost); then no credential header is sent.
	APIKey string
	// Model is required.
	Model string
	// HTTPClient is required: the caller builds it so that proxy settings
	// come from hush's in-memory environment snapshot.
	HTTPClient *http.Client
	// MaxRetries is how many times a failed request (connection error, 408,
	// 409, 429, 5xx) is retried, with backoff, before any text has
	// streamed; 0 means none. Negative is an error.
	MaxRetries int
	// ConnectTimeout bounds connecting (TCP and TLS); 0 means
	// DefaultConnectTimeout. It applies when HTTPClient's transport is an
	// *http.Transport.
	ConnectTimeout time.Duration
	// FirstByteTimeout bounds the wait from sending a request to the first
	// byte of the answer; 0 means DefaultFirstByteTimeout. Once the answer
	// streams, a slow model is not cut off.
	FirstByteTimeout time.Duration
	// IdleTimeout bounds a silence once the answer has started streaming;
	// 0 means DefaultIdleTimeout. A stalled stream ends with ErrStreamIdle.
	IdleTimeout time.Duration
	// Notice, if set, receives one line for the person when hush retries:
	// "openai: retrying (2/3) after HTTP 503".
	Notice func(string)
}

// Errors callers may branch on with errors.Is.
var (
	// ErrNoAPIKey: a non-local base URL and no key. The wrapping message
	// names the config key and the vault command.
	ErrNoAPIKey = errors.New("no API key")
	// ErrNoHTTPClient: Options.HTTPClient is nil.
	ErrNoHTTPClient = errors.New("no HTTP client")
	// ErrNoModel: Options.Model is empty.
	ErrNoModel = errors.New("no model")
	// ErrMalformedToolCall: the model produced a tool call whose arguments
	// are not a JSON object, or that has no name.
	ErrMalformedToolCall = errors.New("malformed tool call")
)

// HTTPError is a non-2xx answer from the model server. Message is the
// server's own explanation, on one line, with the API key removed.
type HTTPError struct {
	Provider   string
	StatusCode int
	Message    string
}

func (e *HTTPError) Error() string {
	status := fmt.Sprintf("HTTP %d", e.StatusCode)
	if text := http.StatusText(e.StatusCode); text != "" {
		status += " " + text
	}
	if e.Message == "" {
		return fmt.Sprintf("%s request failed with %s", e.Provider, status)
	}
	return fmt.Sprintf("%s request failed with %s: %s", e.Provider, status, e.Message)
}

// settings is Options after validation.
type settings struct {
	provider   string
	baseURL    string // "" = SDK's production default
	apiKey     string
	model      string
	httpClient *http.Client
	maxRetries int
	connect    time.Duration
	firstByte  time.Duration
	idle       time.Duration
	notice     func(string)
}

// resolve validates o for the provider named name whose key lives in the
// vault under keyName.
func resolve(name, keyName string, o Options) (settings, error) {
	s := settings{provider: name, apiKey: o.APIKey, model: o.Model, httpClient: o.HTTPClient, maxRetries: o.MaxRetries,
		connect: o.ConnectTimeout, firstByte: o.FirstByteTimeout, idle: o.IdleTimeout, notice: o.Notice}
	if s.connect <= 0 {
		s.connect = DefaultConnectTimeout
	}
	if s.firstByte <= 0 {
		s.firstByte = DefaultFirstByteTimeout
	}
	if s.idle <= 0 {
		s.idle = DefaultIdleTimeout
	}
	if o.HTTPClient == nil {
		return s, fmt.Errorf("provider %s: %w: Options.HTTPClient is required (hush builds it from its environment snapshot)", name, ErrNoHTTPClient)
	}
	if o.Model == "" {
		return s, fmt.Errorf("%w for provider %s: set model in config.toml or pass --model", ErrNoModel, name)
	}
	if o.MaxRetries < 0 {
		return s, fmt.Errorf("provider %s: max retries is %d, want 0 or more", name, o.MaxRetries)
	}
	s.httpClient = withConnectTimeout(o.HTTPClient, s.connect)
	local := false
	if o.BaseURL != "" {
		u, err := url.Parse(o.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			// The URL is not echoed: a mistyped config line could hold the key.
			return s, fmt.Errorf("provider %s: base URL is not an absolute http(s) URL", name)
		}
		s.baseURL = o.BaseURL
		local = isLoopback(u.Hostname())
	}
	if o.APIKey == "" && !local {
		return s, fmt.Errorf("%w for provider %s: set api_key = \"${%s}\" in config.toml and store the key with \"hush vault set %s\"",
			ErrNoAPIKey, name, keyName, keyName)
	}
	return s, nil
}

// maxErrorBody bounds how much of an error response is kept for the message.
const maxErrorBody = 64 << 10

// failureCapture records the last non-2xx response of one Stream call. Both
// SDKs turn error bodies into their own error types, and openai-go fails to
// do so for a body that is not JSON (a local proxy's plain-text 401); reading
// the body here gives one uniform message for any server.
type failureCapture struct {
	status int
	body   []byte
}

// middleware has the signature of option.Middleware in both SDKs.
func (c *failureCapture) middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	c.status, c.body = 0, nil // a retry that succeeds clears an earlier failure
	res, err := next(req)
	if err != nil || res == nil || res.StatusCode < 400 {
		return res, err
	}
	body, readErr := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	_ = res.Body.Close()
	c.status, c.body = res.StatusCode, body
	if readErr != nil {
		c.body = nil
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	return res, nil
}

// serverMessage extracts a one-line explanation from an error body: the
// error.message of the OpenAI and Anthropic formats, a top-level message or
// error string, or else the trimmed text itself.
func serverMessage(body []byte) string {
	var shaped struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &shaped) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var str string
		switch {
		case json.Unmarshal(shaped.Error, &inner) == nil && inner.Message != "":
			return oneLine(inner.Message)
		case json.Unmarshal(shaped.Error, &str) == nil && str != "":
			return oneLine(str)
		case shaped.Message != "":
			return oneLine(shaped.Message)
		}
	}
	return oneLine(string(body))
}

// oneLine collapses whitespace and bounds the length so that an HTML error
// page does not flood the terminal.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	const max = 300
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// redact removes the API key from s. Servers echo keys back (partially, as
// OpenAI does, or whole, as a naive proxy might).
func (s settings) redact(text string) string {
	if s.apiKey == "" {
		return text
	}
	return strings.ReplaceAll(text, s.apiKey, "[REDACTED]")
}

// streamError turns whatever ended a stream early into the error Stream
// returns. streamMessage extracts the server's message from an SDK error
// that arrived as an SSE error event, if err is one.
func (s settings) streamError(ctx context.Context, a *attempt, err error, streamMessage func(error) (string, bool)) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	capture := &a.failureCapture
	if capture.status != 0 {
		return &HTTPError{Provider: s.provider, StatusCode: capture.status, Message: s.redact(serverMessage(capture.body))}
	}
	if msg, ok := streamMessage(err); ok {
		// An error event after the 200: overload, or a server-side abort.
		return fmt.Errorf("%s stream failed: %s", s.provider, s.redact(msg))
	}
	if terr, ok := s.transportError(a, err); ok {
		return terr
	}
	if s.apiKey != "" && strings.Contains(err.Error(), s.apiKey) {
		// Cannot wrap without repeating the key; keep the words only.
		return fmt.Errorf("%s stream: %s", s.provider, s.redact(err.Error()))
	}
	return fmt.Errorf("%s stream: %w", s.provider, err)
}

// toolCallBuilder assembles one streamed tool call.
type toolCallBuilder struct {
	id, name string
	args     strings.Builder
}

// build returns the finished call; arguments must form a JSON object.
// buildToolCalls assembles the streamed calls in the order the model
// emitted them (by stream index).
func buildToolCalls(calls map[int64]*toolCallBuilder, provider string) ([]ToolCall, error) {
	indexes := make([]int64, 0, len(calls))
	for i := range calls {
		indexes = append(indexes, i)
	}
	sort.Slice(indexes, func(a, b int) bool { return indexes[a] < indexes[b] })
	var out []ToolCall
	for _, i := range indexes {
		tc, err := calls[i].build(provider)
		if err != nil {
			return nil, err
		}
		out = append(out, tc)
	}
	return out, nil
}

func (b *toolCallBuilder) build(provider string) (ToolCall, error) {
	if b.name == "" {
		return ToolCall{}, fmt.Errorf("%s: %w: call %q has no name", provider, ErrMalformedToolCall, b.id)
	}
	raw := strings.TrimSpace(b.args.String())
	if raw == "" {
		raw = "{}"
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &obj); err != nil || obj == nil {
		return ToolCall{}, fmt.Errorf("%s: %w: arguments of %s (%s) are not a JSON object", provider, ErrMalformedToolCall, b.name, b.id)
	}
	return ToolCall{ID: b.id, Name: b.name, Args: json.RawMessage(raw)}, nil
}

// schemaObject parses a tool's JSON Schema; an empty schema means "no
// parameters".
func schemaObject(spec ToolSpec) (map[string]any, error) {
	if len(spec.Schema) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	var schema map[string]any
	if err := json.Unmarshal(spec.Schema, &schema); err != nil || schema == nil {
		return nil, fmt.Errorf("tool %s: schema is not a JSON object", spec.Name)
	}
	return schema, nil
}

// argsOrEmpty returns a tool call's arguments, {} when absent.
func argsOrEmpty(args json.RawMessage) json.RawMessage {
	if len(strings.TrimSpace(string(args))) == 0 {
		return json.RawMessage("{}")
	}
	return args
}
