package tests

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Token counts the fake model reports for every response.
const (
	fakePromptTokens     = 120
	fakeCompletionTokens = 7
	fakeCachedTokens     = 64
)

// step is one scripted model response.
type step struct {
	text  string
	calls []fakeCall
	// usage, when set, is sent as the stream's usage chunk:
	// prompt and completion tokens.
	usage *[2]int
	// hang: accept the request and never answer.
	hang bool
	// stall: send the role chunk and the first word, then nothing more
	// (the request stays open until the client gives up).
	stall bool
	// raw, when set, replaces the whole answer body.
	raw string
	// delay is a pause before each word of text: a stream that takes
	// its time.
	delay time.Duration
	// think is a pause before the first word (after the role chunk): a
	// model that thinks before it writes.
	think time.Duration
}

type fakeCall struct {
	name string
	args any
}

// fakeModel is an OpenAI-compatible Chat Completions server on 127.0.0.1
// that streams scripted responses in the real SSE wire format. Which step it
// plays is derived from the request (the number of assistant messages so
// far), so it is stateless across turns; it records every request body.
type fakeModel struct {
	t      *testing.T
	srv    *httptest.Server
	steps  []step
	mu     sync.Mutex
	bodies []string
	auth   []string
	// stepFor, if set, picks the response by the latest user prompt and
	// the number of model answers after it, so a resumed session gets the
	// step its new turn needs.
	stepFor func(prompt string, answers int) (step, bool)
	// models, if set, is served as GET /v1/models (else 404), after
	// modelsDelay.
	models      []string
	modelsDelay time.Duration
}

func newFakeModel(t *testing.T, steps ...step) *fakeModel {
	f := &fakeModel{t: t, steps: steps}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// newRoutedModel is a fake model whose responses stepFor picks.
func newRoutedModel(t *testing.T, stepFor func(prompt string, answers int) (step, bool)) *fakeModel {
	f := &fakeModel{t: t, stepFor: stepFor}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeModel) URL() string { return f.srv.URL + "/v1" }

// Received is every request body the model was sent, concatenated.
func (f *fakeModel) Received() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.bodies, "\n")
}

func (f *fakeModel) Requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

func (f *fakeModel) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/models" && f.models != nil {
		time.Sleep(f.modelsDelay)
		var data []map[string]string
		for _, m := range f.models {
			data = append(data, map[string]string{"id": m, "object": "model"})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
		return
	}
	if r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies = append(f.bodies, string(body))
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Stream bool `json:"stream"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	n := 0
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	s := step{text: "(the fake model has nothing more to say)"}
	if n < len(f.steps) {
		s = f.steps[n]
	}
	if f.stepFor != nil {
		// Keyed by the latest user message and the model's answers since.
		prompt, k := "", 0
		for _, m := range req.Messages {
			switch m.Role {
			case "user":
				prompt, k = "", 0
				_ = json.Unmarshal(m.Content, &prompt)
			case "assistant":
				k++
			}
		}
		if st, ok := f.stepFor(prompt, k); ok {
			s = st
		}
	}
	if s.hang {
		<-r.Context().Done()
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	if s.raw != "" {
		fmt.Fprint(w, s.raw)
		return
	}
	chunk := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		})
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	time.Sleep(s.think)
	for _, word := range strings.SplitAfter(s.text, " ") {
		if word != "" {
			time.Sleep(s.delay)
			chunk(map[string]any{"content": word}, nil)
			if s.stall {
				<-r.Context().Done()
				return
			}
		}
	}
	for i, c := range s.calls {
		args, _ := json.Marshal(c.args)
		half := len(args) / 2
		id := fmt.Sprintf("call_%d_%d", n, i)
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": id, "type": "function",
			"function": map[string]any{"name": c.name, "arguments": string(args[:half])}}}}, nil)
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": string(args[half:])}}}}, nil)
	}
	finish := "stop"
	if len(s.calls) > 0 {
		finish = "tool_calls"
	}
	chunk(map[string]any{}, finish)
	// The usage chunk hush asks for (stream_options.include_usage): fixed
	// counts per step unless the step sets its own, so a test can check
	// the sum a turn reports.
	in, out, cached := fakePromptTokens, fakeCompletionTokens, fakeCachedTokens
	if s.usage != nil {
		in, out, cached = s.usage[0], s.usage[1], 0
	}
	usage, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": "fake", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": in, "completion_tokens": out,
			"total_tokens": in + out, "prompt_tokens_details": map[string]any{"cached_tokens": cached}},
	})
	fmt.Fprintf(w, "data: %s\n\n", usage)
	fmt.Fprint(w, "data: [DONE]\n\n")
}
