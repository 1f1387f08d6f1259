package provider

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// both builds an OpenAI and an Anthropic provider on srv with o's extras.
func both(t *testing.T, srv *fakeServer, o Options) map[string]Provider {
	t.Helper()
	o.HTTPClient = srv.Client()
	oa, an := o, o
	oa.BaseURL, oa.Model = srv.URL+"/v1", "gpt-test"
	an.BaseURL, an.Model = srv.URL, "claude-test"
	p1, err := NewOpenAI(oa)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := NewAnthropic(an)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]Provider{"openai": p1, "anthropic": p2}
}

func TestFirstByteTimeout(t *testing.T) {
	t.Parallel()
	for name, respond := range map[string]http.HandlerFunc{
		"no headers": func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
		"headers, no body": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := newFakeServer(t, respond)
			for pname, p := range both(t, srv, Options{APIKey: testKey, FirstByteTimeout: 200 * time.Millisecond, MaxRetries: 2}) {
				start := time.Now()
				_, err := p.Stream(context.Background(), Request{}, nil)
				if !errors.Is(err, ErrFirstByteTimeout) {
					t.Fatalf("%s: error %v, want ErrFirstByteTimeout", pname, err)
				}
				if !strings.Contains(err.Error(), "accepted the request but sent nothing for 200ms") {
					t.Errorf("%s: error %q", pname, err)
				}
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("%s: took %s", pname, d)
				}
			}
			// A timeout is not retried: the wait would only repeat.
			if n := len(srv.requests()); n != 2 {
				t.Errorf("server saw %d requests for two providers, want 2", n)
			}
		})
	}
}

func TestSlowStreamIsNotCutOff(t *testing.T) {
	t.Parallel()
	stream := sseFile(t, "openai_text.sse")
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.Write([]byte(": keep-alive\n\n"))
		w.(http.Flusher).Flush()
		time.Sleep(400 * time.Millisecond) // longer than the first-byte timeout
		stream(w, r)
	})
	p, err := NewOpenAI(Options{BaseURL: srv.URL + "/v1", Model: "gpt-test", HTTPClient: srv.Client(), FirstByteTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Stream(context.Background(), Request{}, nil)
	if err != nil || resp.Text != "Hello, world!\nBye." {
		t.Fatalf("Stream: %q, %v", resp.Text, err)
	}
}

func TestRetriesSaySo(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	stream := sseFile(t, "openai_text.sse")
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			w.Header().Set("Retry-After-Ms", "1")
			reply(503, "application/json", `{"error":{"message":"overloaded"}}`)(w, r)
			return
		}
		stream(w, r)
	})
	var mu sync.Mutex
	var notes []string
	p, err := NewOpenAI(Options{BaseURL: srv.URL + "/v1", Model: "gpt-test", HTTPClient: srv.Client(), MaxRetries: 2,
		Notice: func(s string) { mu.Lock(); notes = append(notes, s); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Stream(context.Background(), Request{}, nil)
	if err != nil || resp.Text != "Hello, world!\nBye." {
		t.Fatalf("Stream: %q, %v", resp.Text, err)
	}
	want := []string{"openai: retrying (2/3) after HTTP 503", "openai: retrying (3/3) after HTTP 503"}
	if strings.Join(notes, "|") != strings.Join(want, "|") {
		t.Errorf("notices %q, want %q", notes, want)
	}
}

func TestNoRetryOnClientErrorOrAfterText(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, reply(400, "application/json", `{"error":{"message":"bad request"}}`))
	for name, p := range both(t, srv, Options{APIKey: testKey, MaxRetries: 2}) {
		if _, err := p.Stream(context.Background(), Request{}, nil); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if n := len(srv.requests()); n != 2 {
		t.Errorf("400 was retried: %d requests for two providers", n)
	}
	// Text streamed, then the connection breaks: retrying would repeat it.
	cut := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.Write([]byte("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":null}]}\n\n"))
		w.(http.Flusher).Flush()
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.(*net.TCPConn).SetLinger(0)
		conn.Close()
	})
	p, err := NewOpenAI(Options{BaseURL: cut.URL + "/v1", Model: "gpt-test", HTTPClient: cut.Client(), MaxRetries: 2})
	if err != nil {
		t.Fatal(err)
	}
	var c collector
	_, _ = p.Stream(context.Background(), Request{}, c.onText)
	if n := len(cut.requests()); n != 1 || strings.Join(c.got(), "") != "Hi" {
		t.Errorf("%d requests, text %q: want one request and the text once", n, c.got())
	}
}

func TestMalformedEventIsOneSentence(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 300)
	bad := "data: {not json " + testKey + " " + long + "\n\n"
	for name, body := range map[string]string{
		"openai": "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":null}]}\n\n" + bad,
		// Anthropic's decoder looks only at events it knows by name.
		"anthropic": "event: content_block_delta\n" + bad,
	} {
		srv := newFakeServer(t, reply(200, "text/event-stream", body))
		p := both(t, srv, Options{APIKey: testKey})[name]
		_, err := p.Stream(context.Background(), Request{}, nil)
		if !errors.Is(err, ErrMalformedEvent) {
			t.Fatalf("%s: error %v, want ErrMalformedEvent", name, err)
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, name+": the server sent a malformed event: data: {not json [REDACTED]") {
			t.Errorf("%s: %q", name, msg)
		}
		if strings.Contains(msg, testKey) || strings.Contains(msg, long) || len(msg) > 200 {
			t.Errorf("%s: the line was not cut and redacted: %q", name, msg)
		}
	}
}

func TestConnectionRefusedSentence(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	p, err := NewOpenAI(Options{BaseURL: "http://" + addr + "/v1", Model: "m", HTTPClient: &http.Client{}, MaxRetries: 0})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Stream(context.Background(), Request{}, nil)
	want := "the model server at " + addr + " refused the connection; check that it is running and that base_url is right"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want it to start %q", err, want)
	}
}

// stallThenServe streams the first events of testdata/name and then goes
// quiet, for the first stalls requests; later requests get the whole file.
func stallThenServe(t *testing.T, name string, stalls int32) http.HandlerFunc {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	whole := sseFile(t, name)
	var n atomic.Int32
	return func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) > stalls {
			whole(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, event := range strings.SplitAfter(string(data), "\n\n")[:4] {
			_, _ = io.WriteString(w, event)
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done()
	}
}

// TestStalledStreamEnds: a stream that goes quiet after its first text
// ends with one sentence naming the server and the seconds; it is not
// retried when a tool already ran in the turn (RetryStall false), and is
// sent again, saying so, when none did.
func TestStalledStreamEnds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ provider, file, path string }{
		{"openai", "openai_text.sse", "/v1"},
		{"anthropic", "anthropic_text.sse", ""},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			t.Parallel()
			build := func(srv *fakeServer, notice func(string)) Provider {
				o := Options{BaseURL: srv.URL + tc.path, Model: "m", HTTPClient: srv.Client(), MaxRetries: 2,
					IdleTimeout: 300 * time.Millisecond, Notice: notice}
				p, err := NewOpenAI(o)
				if tc.provider == "anthropic" {
					p, err = NewAnthropic(o)
				}
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
			// After a tool ran: the turn ends, one request.
			srv := newFakeServer(t, stallThenServe(t, tc.file, 1))
			var c collector
			_, err := build(srv, nil).Stream(context.Background(), Request{}, c.onText)
			if !errors.Is(err, ErrStreamIdle) {
				t.Fatalf("error %v, want ErrStreamIdle", err)
			}
			host := strings.TrimPrefix(srv.URL, "http://")
			want := "the model server at " + host + " stopped sending for 0.3s in the middle of its answer (model.idle_timeout in config.toml sets how long to wait)"
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q, want it to say %q", err, want)
			}
			if n := len(srv.requests()); n != 1 || len(c.got()) == 0 {
				t.Errorf("%d requests, text %q: want one request after some text", n, c.got())
			}

			// No tool ran yet: retried once, and the notice says the
			// answer starts over.
			srv2 := newFakeServer(t, stallThenServe(t, tc.file, 1))
			var mu sync.Mutex
			var notes []string
			resp, err := build(srv2, func(s string) { mu.Lock(); notes = append(notes, s); mu.Unlock() }).
				Stream(context.Background(), Request{RetryStall: true}, nil)
			if err != nil || resp.Text == "" {
				t.Fatalf("Stream after a stall: %q, %v", resp.Text, err)
			}
			wantNote := tc.provider + ": retrying (2/3) after the stream stalled for 0.3s; the answer starts over"
			if n := len(srv2.requests()); n != 2 || strings.Join(notes, "|") != wantNote {
				t.Errorf("%d requests, notices %q: want 2 and %q", n, notes, wantNote)
			}
		})
	}
}
