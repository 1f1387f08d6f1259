package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/tools"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Remote transports.
const (
	TransportHTTP = "http" // Streamable HTTP, the spec's remote transport
	TransportSSE  = "sse"  // HTTP+SSE, the spec's older one
)

// remote reports whether s is reached over HTTP.
func (s Server) remote() bool { return s.URL != "" }

// displayURL is the endpoint without user info, query or fragment, which
// may carry a literal token: what messages and `hush mcp list` show.
func displayURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(a URL that does not parse)"
	}
	return u.Scheme + "://" + u.Host + u.EscapedPath()
}

// checkURL refuses an endpoint that is not http(s), or that refers to a
// secret: a URL ends up in proxies' and servers' logs, so a token belongs
// in a header.
func checkURL(s Server) error {
	u, err := url.Parse(s.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("its url is not an http(s) URL like https://example.com/mcp")
	}
	if refs, err := config.References(s.URL); err == nil && len(refs) > 0 {
		return fmt.Errorf("its url refers to the secret %s; hush never puts a secret in a URL (servers and proxies log them): send it in a header instead, e.g. headers = { Authorization = \"Bearer ${%s}\" }",
			refs[0], refs[0])
	}
	if u.User != nil {
		return errors.New("its url holds a user name or password; send credentials in a header instead")
	}
	switch s.Transport {
	case "", TransportHTTP, TransportSSE:
	default:
		return fmt.Errorf("transport %q: want %s (Streamable HTTP) or %s", s.Transport, TransportHTTP, TransportSSE)
	}
	return nil
}

// resolveHeaders substitutes every ${NAME} in the headers through grant —
// the gated vault, subject mcp:<server> — and returns the header values
// that are secret (to scrub from anything the connection says). A denied
// read is returned as the grant's error: the server is then not contacted.
func resolveHeaders(headers map[string]string, grant tools.Grant) (http.Header, []string, error) {
	h := http.Header{}
	var secret []string
	names := make([]string, 0, len(headers))
	for k := range headers {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		tmpl := headers[k]
		v, err := config.Substitute(tmpl, config.Lookup(grant))
		if err != nil {
			return nil, nil, fmt.Errorf("header %s: %w", k, err)
		}
		if strings.ContainsAny(v, "\r\n") {
			return nil, nil, fmt.Errorf("header %s: its value holds a line break", k)
		}
		h.Set(k, v)
		if refs, _ := config.References(tmpl); len(refs) > 0 {
			secret = append(secret, v)
		}
	}
	return h, secret, nil
}

// headerTransport adds a remote server's headers to the requests for its
// own origin only: a redirect elsewhere does not carry them.
type headerTransport struct {
	base    http.RoundTripper
	scheme  string
	host    string
	headers http.Header
	// challenged is set when the server answered 401 with a Bearer
	// challenge: it wants an OAuth sign-in.
	challenged atomic.Bool
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme == t.scheme && req.URL.Host == t.host && len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, vs := range t.headers {
			req.Header[k] = append([]string(nil), vs...)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		for _, c := range resp.Header.Values("WWW-Authenticate") {
			if strings.HasPrefix(strings.ToLower(strings.TrimSpace(c)), "bearer") {
				t.challenged.Store(true)
			}
		}
	}
	return resp, err
}

// dialRemote connects to a remote server with headers and lists its tools
// within the start timeout. scrub removes secret values from its errors.
//
// oauth, when set, signs the requests in (Streamable HTTP only); a sign-in
// it runs pauses the start timeout.
func dialRemote(ctx context.Context, client *sdk.Client, s Server, base *http.Client, headers http.Header, oauth *oauthHandler, startTimeout time.Duration, scrub func(string) string, onDead func(*conn)) (*conn, []*sdk.Tool, error) {
	u, _ := url.Parse(s.URL) // checked by checkURL
	hc := &http.Client{Timeout: 0}
	rt := http.DefaultTransport
	if base != nil {
		if base.Transport != nil {
			rt = base.Transport
		}
		hc.Jar = base.Jar
	}
	ht := &headerTransport{base: rt, scheme: u.Scheme, host: u.Host, headers: headers}
	hc.Transport = ht
	var transport sdk.Transport
	switch s.Transport {
	case TransportSSE:
		transport = &sdk.SSEClientTransport{Endpoint: s.URL, HTTPClient: hc}
	default:
		st := &sdk.StreamableClientTransport{Endpoint: s.URL, HTTPClient: hc, MaxRetries: 2}
		if oauth != nil {
			st.OAuthHandler = oauth
		}
		transport = st
	}
	// The session's streams (SSE's GET, Streamable HTTP's standalone one)
	// live on the context given to Connect, so it must outlive start-up:
	// the start timeout and an interrupt cancel it only until the tools
	// are listed, and closing the connection cancels it after.
	connCtx, cancel := context.WithCancel(context.Background())
	c := &conn{remote: true, stderr: &tailBuffer{max: 1}, cancel: cancel, onDead: onDead,
		exited: make(chan struct{}), dead: make(chan struct{})}
	close(c.exited) // no process of hush's own
	var timedOut, interrupted bool
	var mu sync.Mutex
	clock := newStartClock(startTimeout, func() { mu.Lock(); timedOut = true; mu.Unlock(); cancel() })
	if oauth != nil {
		oauth.clock = clock
	}
	stopInterrupt := context.AfterFunc(ctx, func() { mu.Lock(); interrupted = true; mu.Unlock(); cancel() })
	defer func() { clock.stop(); stopInterrupt() }()
	startCtx := connCtx
	fail := func(step string, err error) error {
		mu.Lock()
		to, intr := timedOut, interrupted
		mu.Unlock()
		var why string
		switch {
		case to:
			why = fmt.Sprintf("did not finish %s within %s", step, startTimeout)
		case intr:
			why = "start interrupted during " + step
		case oauth == nil && headers.Get("Authorization") == "" && ht.challenged.Load():
			// What a peer does on its own (Claude Code, VS Code), hush
			// does when asked: the sign-in reads and writes the vault.
			why = fmt.Sprintf("the server asks for an OAuth sign-in (HTTP 401 with a Bearer challenge): add oauth = true to its settings (in mcp.json: \"oauth\": {}), then %s",
				LoginHint(s.Name))
		default:
			why = step + " failed: " + shorten(err.Error(), 300)
		}
		if c.cs != nil {
			_ = c.cs.Close()
		}
		cancel()
		return errors.New(scrub(why))
	}
	cs, err := client.Connect(startCtx, transport, nil)
	if err != nil {
		return nil, nil, fail("connecting to "+displayURL(s.URL), err)
	}
	c.cs = cs
	var list []*sdk.Tool
	for t, err := range cs.Tools(startCtx, nil) {
		if err != nil {
			return nil, nil, fail("listing its tools", err)
		}
		list = append(list, t)
	}
	go c.watch()
	return c, list, nil
}
