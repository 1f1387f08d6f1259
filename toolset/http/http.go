// Package http is hush's http tool: one HTTP request from the model, with
// the response made readable (HTML as Markdown, JSON indented) and capped.
//
// It never touches the vault. Its ToolContext holds no vault at all (the
// tool says so with executor.NoVault), so a ${NAME} in its URL, headers or
// body is sent literally, as text. Loopback, private and link-local
// addresses are refused unless [tools.http] allow_private is set, checked
// at the socket (so a DNS answer that changes between check and connect
// changes nothing), and proxies come from hush's in-memory environment
// snapshot, never from os.Getenv.
package http

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	nethttp "net/http"
	"net/netip"
	"net/url"
	"sort"
	"strings"
	"syscall"
	"time"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/tools/sandbox/egress"
	"golang.org/x/net/http/httpproxy"
)

// Name is the tool's name and gate subject.
const Name = "http"

// Limits.
const (
	DefaultTimeout = 30 * time.Second
	MaxTimeout     = 2 * time.Minute
	MaxRedirects   = 5
	// MaxBody is the most of a response body read; the rest is never read.
	MaxBody = 1 << 20
	// MaxRequestBody bounds what the model may send.
	MaxRequestBody = 1 << 20
)

// Tool is the http tool.
type Tool struct {
	// AllowPrivate lets requests reach loopback, private and link-local
	// addresses ([tools.http] allow_private).
	AllowPrivate bool
	// Timeout is the configured default ([tools.http] timeout).
	Timeout time.Duration
	// UserAgent is sent unless the call sets one.
	UserAgent string
}

// Params are the tool's arguments; the tags are its JSON schema.
type Params struct {
	Method         string            `json:"method,omitempty"`
	URL            string            `json:"url"`
	Headers        map[string]string `json:"headers,omitempty"`
	Body           string            `json:"body,omitempty"`
	TimeoutSeconds int               `json:"timeout_seconds,omitempty"`
}

func (Tool) Name() string { return Name }

// NoVault implements executor.NoVault: this tool's ToolContext has no
// vault, so nothing it sends can carry a secret from it.
func (Tool) NoVault() bool { return true }

func (Tool) Description() string {
	return "Make one HTTP request (GET, POST, PUT or DELETE) with optional headers and body, and return the status, " +
		"the main response headers and the body: HTML converted to Markdown, JSON indented, at most 1 MiB read. " +
		"Prefer it to curl or wget in bash for reading documentation and APIs. " +
		"It has no access to the vault: a ${NAME} in the URL, headers or body is sent literally, as those characters, " +
		"never replaced by a secret; for an authenticated request use bash with the secret in its env. " +
		"Requests to localhost and private networks are refused unless the user allows them in config.toml. " +
		"Redirects are followed up to 5 times."
}

func (Tool) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "method": {"type": "string", "enum": ["GET", "POST", "PUT", "DELETE"], "description": "default GET"},
    "url": {"type": "string", "description": "http:// or https:// URL"},
    "headers": {"type": "object", "additionalProperties": {"type": "string"}, "description": "request headers (sent literally; ${NAME} is not substituted)"},
    "body": {"type": "string", "description": "request body (sent literally)"},
    "timeout_seconds": {"type": "integer", "minimum": 1, "maximum": 120, "description": "time limit (default 30)"}
  },
  "required": ["url"],
  "additionalProperties": false
}`)
}

type call struct {
	p      Params
	method string
	u      *url.URL
}

func parse(raw json.RawMessage) (call, error) {
	var c call
	if err := executor.DecodeArgs(raw, &c.p); err != nil {
		return c, err
	}
	c.method = strings.ToUpper(c.p.Method)
	if c.method == "" {
		c.method = nethttp.MethodGet
	}
	switch c.method {
	case nethttp.MethodGet, nethttp.MethodPost, nethttp.MethodPut, nethttp.MethodDelete:
	default:
		return c, fmt.Errorf("bad arguments: method %q: want GET, POST, PUT or DELETE", c.p.Method)
	}
	u, err := url.Parse(c.p.URL)
	if err != nil || c.p.URL == "" {
		return c, fmt.Errorf("bad arguments: url %q is not a URL", c.p.URL)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return c, fmt.Errorf("bad arguments: url %q: only http and https are supported", c.p.URL)
	}
	if u.Host == "" {
		return c, fmt.Errorf("bad arguments: url %q has no host", c.p.URL)
	}
	if u.User != nil {
		return c, errors.New("bad arguments: credentials in the URL are refused; this tool sends no secrets")
	}
	if len(c.p.Body) > MaxRequestBody {
		return c, fmt.Errorf("bad arguments: body is %d bytes; at most %d", len(c.p.Body), MaxRequestBody)
	}
	for k, v := range c.p.Headers {
		if !validHeaderName(k) || strings.ContainsAny(v, "\r\n\x00") {
			return c, fmt.Errorf("bad arguments: header %q is not a valid header", k)
		}
	}
	c.u = u
	return c, nil
}

func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r) {
			return false
		}
	}
	return true
}

// Preview implements executor.Previewer: the gate's request carries the
// method and the URL.
func (t Tool) Preview(_ context.Context, _ *executor.ToolContext, raw json.RawMessage) (executor.Preview, error) {
	c, err := parse(raw)
	if err != nil {
		return executor.Preview{}, err
	}
	d := c.method + " " + c.u.String()
	if c.p.Body != "" {
		d += fmt.Sprintf(" (%d-byte body)", len(c.p.Body))
	}
	h := &executor.HTTPCall{Method: c.method, URL: c.u.String(), Body: c.p.Body, Host: c.u.Hostname()}
	names := make([]string, 0, len(c.p.Headers))
	for k := range c.p.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		h.Headers = append(h.Headers, [2]string{k, c.p.Headers[k]})
	}
	return executor.Preview{Detail: d, HTTP: h}, nil
}

// ErrPrivate refuses an address in a loopback or private range.
var ErrPrivate = errors.New("is a loopback, private or link-local address; hush's http tool does not reach the local machine or network unless [tools.http] allow_private = true is set in config.toml")

// Run implements executor.Tool.
func (t Tool) Run(ctx context.Context, tc *executor.ToolContext, raw json.RawMessage) (executor.Result, error) {
	c, err := parse(raw)
	if err != nil {
		return executor.Result{}, err
	}
	timeout := executor.CallTimeout(t.Timeout, DefaultTimeout, MaxTimeout, c.p.TimeoutSeconds)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := t.client(tc.Ambient)
	var body io.Reader
	if c.p.Body != "" {
		body = strings.NewReader(c.p.Body)
	}
	req, err := nethttp.NewRequestWithContext(ctx, c.method, c.u.String(), body)
	if err != nil {
		return executor.Result{}, fmt.Errorf("bad arguments: %w", err)
	}
	for k, v := range c.p.Headers {
		req.Header.Set(k, v)
	}
	if req.Header.Get("User-Agent") == "" && t.UserAgent != "" {
		req.Header.Set("User-Agent", t.UserAgent)
	}
	resp, err := client.Do(req)
	if err != nil {
		return executor.Result{}, explain(ctx, c, err, timeout)
	}
	defer resp.Body.Close()
	// Only MaxBody+1 bytes are ever read: a 1 GiB body costs 1 MiB.
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	cut := len(data) > MaxBody
	if cut {
		data = data[:MaxBody]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", resp.Proto, resp.Status)
	if resp.Request != nil && resp.Request.URL.String() != c.u.String() {
		fmt.Fprintf(&b, "(redirected to %s)\n", resp.Request.URL)
	}
	writeHeaders(&b, resp.Header)
	b.WriteByte('\n')
	b.WriteString(render(resp.Header.Get("Content-Type"), data, cut))
	if _, err := io.WriteString(tc.Output, b.String()); err != nil {
		return executor.Result{}, err
	}
	status := fmt.Sprintf("HTTP %d", resp.StatusCode)
	if cut {
		total := "more"
		if resp.ContentLength > 0 {
			total = fmt.Sprintf("%d bytes", resp.ContentLength)
		}
		status += fmt.Sprintf("; body cut at %d KiB of %s", MaxBody>>10, total)
	} else if rerr != nil {
		status += "; body incomplete: " + explain(ctx, c, rerr, timeout).Error()
	}
	return executor.Result{Status: status, IsError: resp.StatusCode >= 400}, nil
}

func explain(ctx context.Context, c call, err error, timeout time.Duration) error {
	var pe privateError
	switch {
	case errors.As(err, &pe):
		return fmt.Errorf("refused: %s %s", pe.addr, ErrPrivate)
	case errors.Is(err, errTooManyRedirects):
		return fmt.Errorf("%s %s: stopped after %d redirects (a redirect loop?)", c.method, c.u, MaxRedirects)
	case ctx.Err() == context.DeadlineExceeded:
		return fmt.Errorf("%s %s: timed out after %s", c.method, c.u, timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("%s %s: %w", c.method, c.u, err)
}

// shownHeaders are the response headers worth the model's attention.
var shownHeaders = []string{"Content-Type", "Content-Length", "Location", "Last-Modified", "Etag", "Retry-After",
	"Www-Authenticate", "Link", "X-Ratelimit-Remaining", "X-Ratelimit-Reset"}

func writeHeaders(b *strings.Builder, h nethttp.Header) {
	for _, k := range shownHeaders {
		if v := h.Values(k); len(v) > 0 {
			fmt.Fprintf(b, "%s: %s\n", k, strings.Join(v, ", "))
		}
	}
}

// render makes a body readable by its content type.
func render(contentType string, data []byte, cut bool) string {
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt == "" {
		mt = nethttp.DetectContentType(data)
		mt, _, _ = mime.ParseMediaType(mt)
	}
	switch {
	case len(data) == 0:
		return "(empty body)\n"
	case mt == "text/html" || mt == "application/xhtml+xml":
		if md, err := htmltomarkdown.ConvertString(string(data)); err == nil {
			return strings.TrimSpace(md) + "\n"
		}
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		if !cut {
			var out bytes.Buffer
			if json.Indent(&out, data, "", "  ") == nil {
				return out.String() + "\n"
			}
		}
	case strings.HasPrefix(mt, "text/") || mt == "application/xml" || strings.HasSuffix(mt, "+xml") || mt == "application/javascript":
	default:
		if bytes.IndexByte(data, 0) >= 0 || !isText(data) {
			return fmt.Sprintf("(binary body: %s, not shown)\n", mt)
		}
	}
	s := string(data)
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

func isText(b []byte) bool {
	kind := nethttp.DetectContentType(b)
	return strings.HasPrefix(kind, "text/")
}

var errTooManyRedirects = errors.New("too many redirects")

// client builds the request's client: proxies from the start-up
// environment snapshot, redirects bounded, the private-range check at the
// socket.
func (t Tool) client(ambient tools.Ambient) *nethttp.Client {
	// The one explicit read of the proxy settings: an authenticated proxy
	// URL is a credential, which Ambient's lookups never return.
	px := ambient.Proxy()
	pc := httpproxy.Config{HTTPProxy: px.HTTPProxy, HTTPSProxy: px.HTTPSProxy, NoProxy: px.NoProxy}
	proxy := pc.ProxyFunc()
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		d := net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
		// Checked at the socket, on the address actually connected to. A
		// proxy the user configured may itself sit on a private address.
		if !t.AllowPrivate && !isProxyAddr(proxy, addr) {
			d.Control = func(_, address string, _ syscall.RawConn) error { return checkAddr(address) }
		}
		return d.DialContext(ctx, network, addr)
	}
	tr := &nethttp.Transport{
		Proxy: func(r *nethttp.Request) (*url.URL, error) {
			pu, err := proxy(r.URL)
			if err != nil || pu == nil {
				return pu, err
			}
			// Through a proxy the socket is the proxy's: the target's name
			// is checked here instead.
			if !t.AllowPrivate {
				if err := checkHost(r.Context(), r.URL.Hostname()); err != nil {
					return nil, err
				}
			}
			return pu, nil
		},
		DialContext:            dial,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  30 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &nethttp.Client{
		Transport: tr,
		CheckRedirect: func(req *nethttp.Request, via []*nethttp.Request) error {
			if len(via) > MaxRedirects {
				return errTooManyRedirects
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("redirect to %s: only http and https are followed", req.URL)
			}
			return nil
		},
	}
}

// isProxyAddr reports whether addr (host:port being dialled) is one of the
// configured proxies.
func isProxyAddr(proxy func(*url.URL) (*url.URL, error), addr string) bool {
	for _, probe := range []string{"http://example.invalid/", "https://example.invalid/"} {
		u, _ := url.Parse(probe)
		if pu, err := proxy(u); err == nil && pu != nil {
			host := pu.Host
			if pu.Port() == "" {
				port := "80"
				if pu.Scheme == "https" {
					port = "443"
				}
				host = net.JoinHostPort(pu.Hostname(), port)
			}
			if host == addr {
				return true
			}
		}
	}
	return false
}

type privateError struct{ addr string }

func (e privateError) Error() string { return e.addr + " " + ErrPrivate.Error() }

// checkAddr refuses a dialled ip:port in a range the tool may not reach.
func checkAddr(address string) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		host = address
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return privateError{address}
	}
	if private(ip) {
		return privateError{host}
	}
	return nil
}

// checkHost resolves host and refuses it if any address is private.
func checkHost(ctx context.Context, host string) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		if private(ip) {
			return privateError{host}
		}
		return nil
	}
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return privateError{host}
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil // the proxy resolves it; nothing to check here
	}
	for _, a := range addrs {
		if private(a) {
			return privateError{host + " (" + a.String() + ")"}
		}
	}
	return nil
}

// private reports an address the http tool does not reach: the egress
// proxy's list (egress.AddressKind), the one list of such ranges.
func private(ip netip.Addr) bool { return !egress.Public(ip) }
