package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// Defaults for Options' timeouts.
const (
	DefaultConnectTimeout   = 10 * time.Second
	DefaultFirstByteTimeout = 2 * time.Minute
	// DefaultIdleTimeout is how long a stream may go quiet once it has
	// started, as Codex's stream idle timeout.
	DefaultIdleTimeout = 5 * time.Minute
)

// Errors of the connection to the model server, for errors.Is. Each
// arrives wrapped in one sentence that says what to check or configure.
var (
	// ErrConnectTimeout: no connection within Options.ConnectTimeout.
	ErrConnectTimeout = errors.New("connect timeout")
	// ErrFirstByteTimeout: connected, but no byte of an answer within
	// Options.FirstByteTimeout.
	ErrFirstByteTimeout = errors.New("first byte timeout")
	// ErrStreamIdle: the answer had started, then nothing came for
	// Options.IdleTimeout.
	ErrStreamIdle = errors.New("stream idle timeout")
	// ErrMalformedEvent: the stream held an event that is not JSON of the
	// expected shape.
	ErrMalformedEvent = errors.New("the server sent a malformed event")
)

// withConnectTimeout returns c with a transport whose dial and TLS
// handshake are bounded by d, reporting a dial timeout as ErrConnectTimeout.
// A client whose transport is not an *http.Transport is used as it is.
func withConnectTimeout(c *http.Client, d time.Duration) *http.Client {
	var tr *http.Transport
	switch t := c.Transport.(type) {
	case nil:
		tr = http.DefaultTransport.(*http.Transport).Clone()
	case *http.Transport:
		tr = t.Clone()
	default:
		return c
	}
	dialer := &net.Dialer{Timeout: d, KeepAlive: 30 * time.Second}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dialer.DialContext(ctx, network, addr)
		var ne net.Error
		if err != nil && ctx.Err() == nil && errors.As(err, &ne) && ne.Timeout() {
			return nil, fmt.Errorf("%w after %s to %s", ErrConnectTimeout, d, addr)
		}
		return conn, err
	}
	tr.TLSHandshakeTimeout = d
	out := *c
	out.Transport = tr
	return &out
}

// attempt is what the middleware learns about one request: an error
// answer (status, body, Retry-After), whether the first-byte timer fired,
// and the stream's first malformed event.
type attempt struct {
	failureCapture
	retryAfter time.Duration
	timedOut   atomic.Bool
	stalled    atomic.Bool
	lines      *sseLines
}

// middleware wraps one request: the first-byte timer, the error capture,
// and the event check on a streamed body.
func (a *attempt) middleware(firstByte, idle time.Duration) func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		ctx, cancel := context.WithCancel(req.Context())
		timer := time.AfterFunc(firstByte, func() { a.timedOut.Store(true); cancel() })
		res, err := a.failureCapture.middleware(req.WithContext(ctx), next)
		if err != nil || res == nil {
			timer.Stop()
			cancel()
			return res, err
		}
		if a.status != 0 {
			timer.Stop()
			a.retryAfter = retryAfter(res.Header)
			return res, nil // the body was read whole
		}
		a.lines = &sseLines{}
		body := &watchedBody{rc: res.Body, timer: timer, cancel: cancel, lines: a.lines, idle: idle}
		// Armed at the first byte, pushed back by every later one: a
		// server that goes quiet mid-answer ends the request rather than
		// holding the turn for ever (the first-byte timer covers the wait
		// before it).
		body.idleTimer = time.AfterFunc(time.Hour, func() { a.stalled.Store(true); cancel() })
		body.idleTimer.Stop()
		res.Body = body
		return res, nil
	}
}

// watchedBody stops the first-byte timer at the first byte, then keeps the
// idle timer running while bytes arrive, feeds every line to the event
// check, and ends the request's context on Close.
type watchedBody struct {
	rc        io.ReadCloser
	timer     *time.Timer
	idleTimer *time.Timer
	idle      time.Duration
	cancel    context.CancelFunc
	lines     *sseLines
	got       bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		if !b.got {
			b.got = true
			b.timer.Stop()
		}
		if err == nil {
			b.idleTimer.Reset(b.idle)
		}
		b.lines.write(p[:n])
	}
	return n, err
}

func (b *watchedBody) Close() error {
	b.timer.Stop()
	b.idleTimer.Stop()
	err := b.rc.Close()
	b.cancel()
	return err
}

// sseLines checks each "data:" line of a stream as it is read, keeping the
// first that is not JSON (and the last one, for a decoder that rejected
// valid JSON of the wrong shape).
type sseLines struct {
	partial []byte
	bad     string
	last    string
}

func (s *sseLines) write(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(s.partial) < 64<<10 {
				s.partial = append(s.partial, p...)
			}
			return
		}
		line := append(s.partial, p[:i]...)
		s.partial = s.partial[:0]
		p = p[i+1:]
		s.check(bytes.TrimRight(line, "\r"))
	}
}

func (s *sseLines) check(line []byte) {
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return
	}
	data = bytes.TrimSpace(data)
	if string(data) == "[DONE]" {
		return
	}
	s.last = string(line)
	if s.bad == "" && !json.Valid(data) {
		s.bad = string(line)
	}
}

// offending is the line to quote for a decoder error.
func (s *sseLines) offending() string {
	if s.bad != "" {
		return s.bad
	}
	return s.last
}

// MalformedEventError is a stream event hush could not decode. Line is the
// whole offending line with the API key removed; Error shows it cut.
type MalformedEventError struct {
	Provider string
	Line     string
}

func (e *MalformedEventError) Error() string { return e.Redacted(nil) }

func (e *MalformedEventError) Unwrap() error { return ErrMalformedEvent }

// Redacted is Error with redact applied to the whole line before it is
// cut, so that a secret straddling the cut is still caught.
func (e *MalformedEventError) Redacted(redact func(string) string) string {
	l := e.Line
	if redact != nil {
		l = redact(l)
	}
	const max = 120
	if len(l) > max {
		cut := max
		for cut > 0 && l[cut]&0xc0 == 0x80 {
			cut--
		}
		l = l[:cut] + "…"
	}
	return fmt.Sprintf("%s: %s: %s", e.Provider, ErrMalformedEvent, l)
}

// isDecodeError reports whether err is a JSON decoder's.
func isDecodeError(err error) bool {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	return errors.As(err, &se) || errors.As(err, &te)
}

// retryAfter reads Retry-After-Ms (OpenAI) or Retry-After (seconds or an
// HTTP date); 0 when absent.
func retryAfter(h http.Header) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms >= 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// maxRetryDelay caps a server's Retry-After and hush's own backoff.
const maxRetryDelay = 30 * time.Second

// retryReason says why a failed attempt may be retried ("HTTP 503", "a
// connection error"), or "" when it may not: a client error, a timeout
// (waiting as long again rarely helps and the user was told), a cancel.
func retryReason(err error) string {
	var he *HTTPError
	if errors.As(err, &he) {
		if he.StatusCode == 408 || he.StatusCode == 409 || he.StatusCode == 429 || he.StatusCode >= 500 {
			return fmt.Sprintf("HTTP %d", he.StatusCode)
		}
		return ""
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, ErrConnectTimeout) || errors.Is(err, ErrFirstByteTimeout) || errors.Is(err, ErrMalformedEvent) ||
		errors.Is(err, ErrStreamIdle) {
		return ""
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "a connection error"
	}
	return ""
}

// backoff is the wait before retry n (1-based): the server's Retry-After
// when it sent one, else 0.5 s doubling, with a quarter of jitter.
func backoff(n int, serverSaid time.Duration) time.Duration {
	if serverSaid > 0 {
		return min(serverSaid, maxRetryDelay)
	}
	d := time.Duration(float64(500*time.Millisecond) * float64(uint(1)<<min(n-1, 6)))
	d = min(d, maxRetryDelay)
	return d - time.Duration(rand.Int64N(int64(d/4)+1))
}

// retry runs once until it succeeds, fails for good, or has been tried
// maxRetries+1 times. Text already streamed is not streamed twice: once
// onText has been called, a failure is final — except a stream that
// stalled when stalls may be retried (Request.RetryStall), which starts
// the answer over and says so.
func (s settings) retry(ctx context.Context, retryStall bool, onText func(string), once func(onText func(string), a *attempt) (Response, error)) (Response, error) {
	for n := 1; ; n++ {
		streamed := false
		wrapped := func(d string) {
			streamed = true
			if onText != nil {
				onText(d)
			}
		}
		var a attempt
		resp, err := once(wrapped, &a)
		if err == nil {
			return resp, nil
		}
		reason := retryReason(err)
		stall := retryStall && errors.Is(err, ErrStreamIdle)
		if stall {
			reason = "the stream stalled for " + seconds(s.idle)
		}
		if (streamed && !stall) || n > s.maxRetries || reason == "" || ctx.Err() != nil {
			return resp, err
		}
		if s.notice != nil {
			note := fmt.Sprintf("%s: retrying (%d/%d) after %s", s.provider, n+1, s.maxRetries+1, reason)
			if streamed {
				note += "; the answer starts over"
			}
			s.notice(note)
		}
		t := time.NewTimer(backoff(n, a.retryAfter))
		select {
		case <-ctx.Done():
			t.Stop()
			return Response{}, ctx.Err()
		case <-t.C:
		}
	}
}

// host is the server's host:port for a sentence ("" = the public endpoint).
func (s settings) host() string {
	if s.baseURL == "" {
		return s.provider + "'s API"
	}
	u, err := url.Parse(s.baseURL)
	if err != nil {
		return "the configured server"
	}
	return u.Host
}

// seconds prints d as whole seconds ("2s", "300s"), as a person sets it.
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// transportError turns a timeout or a malformed stream into its sentence;
// ok is false for any other error.
func (s settings) transportError(a *attempt, err error) (error, bool) {
	switch {
	case a.timedOut.Load():
		return fmt.Errorf("%w: the model server at %s accepted the request but sent nothing for %s; it may be stuck or overloaded (model.first_byte_timeout in config.toml sets how long to wait)",
			ErrFirstByteTimeout, s.host(), s.firstByte), true
	case a.stalled.Load():
		return fmt.Errorf("%w: the model server at %s stopped sending for %s in the middle of its answer (model.idle_timeout in config.toml sets how long to wait)",
			ErrStreamIdle, s.host(), seconds(s.idle)), true
	case errors.Is(err, ErrConnectTimeout):
		return fmt.Errorf("%w: the model server at %s did not accept a connection within %s; check that it is running and reachable (model.connect_timeout in config.toml sets how long to wait)",
			ErrConnectTimeout, s.host(), s.connect), true
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("the model server at %s refused the connection; check that it is running and that base_url is right: %w", s.host(), syscall.ECONNREFUSED), true
	case a.lines != nil && (a.lines.bad != "" || isDecodeError(err)) && a.lines.offending() != "":
		return &MalformedEventError{Provider: s.provider, Line: s.redact(a.lines.offending())}, true
	}
	return nil, false
}
