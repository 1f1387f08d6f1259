package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hushcli/hush/config"
	xproxy "golang.org/x/net/proxy"
)

// Answer is the person's answer to an ask.
type Answer int

const (
	// Refuse refuses the connection.
	Refuse Answer = iota
	// AllowCall allows this host:port for the rest of this call.
	AllowCall
	// AllowSession binds this host:port to the call's secrets for the
	// rest of the session (Policy.Bind).
	AllowSession
)

// Question is what an ask shows: gate net.connect:HOST, subject the tool,
// the secret names the call holds, and why the policy asks.
type Question struct {
	Gate    string // "net.connect:" + Host
	Tool    string
	Host    string
	Port    int
	Secrets []string
	Reason  string
}

// Record is the audit record of one connection: a CONNECT tunnel, or one
// plain request. Secrets are names; no record holds a value, a path or a
// body.
type Record struct {
	Tool    string
	Turn    int    // the call's turn (Call.Turn)
	Method  string // "CONNECT", or the method of a plain request
	Host    string
	Port    int
	Secrets []string
	// Action is Allow or Deny (an ask ends as one of them; Asked says it
	// was asked); Rule decided it, Reason says why in a sentence.
	Action Action
	Rule   string
	Reason string
	Asked  bool
	// Addr is the address connected to; Upstream that it is the user's
	// upstream proxy's (which then connected to Host).
	Addr     netip.AddrPort
	Upstream bool
	// Sent is bytes from the tool toward the host, Received the other way:
	// the tunnel's bytes for CONNECT, the request and response as on the
	// wire for a plain request.
	Sent, Received int64
	// Err is why an allowed connection failed ("" when it did not).
	Err      string
	Start    time.Time
	Duration time.Duration

	audited bool
}

// Options configure a Proxy.
type Options struct {
	// Policy decides every connection (required). Answers "for this
	// session" replace it with Policy.Bind's.
	Policy *Policy
	// Resolver resolves allowed hosts (nil: the system's).
	Resolver Resolver
	// Upstream is the user's own proxy for a URL (nil, or a nil URL:
	// connect directly), as golang.org/x/net/http/httpproxy's ProxyFunc
	// gives it: http, https or socks5. Only the proxy uses it; a tool
	// never sees it.
	Upstream func(*url.URL) (*url.URL, error)
	// Ask puts an Ask verdict to the person; nil refuses every one (hush
	// run), with the verdict's reason, which names the config line.
	Ask func(context.Context, Question) Answer
	// Audit receives every connection's record once it is over (a
	// refused one at once). It must not block for long.
	Audit func(Record)
	// DialTimeout bounds connecting to one address (0: 10s).
	DialTimeout time.Duration
}

// Proxy is hush's egress proxy. One Proxy serves a session; each call
// gets a listener of its own (Serve), which says who is connecting.
type Proxy struct {
	opts      Options
	policy    atomic.Pointer[Policy]
	transport *http.Transport
}

// New builds a proxy.
func New(o Options) (*Proxy, error) {
	if o.Policy == nil {
		return nil, errors.New("egress: a proxy needs a policy")
	}
	if o.Resolver == nil {
		o.Resolver = SystemResolver{}
	}
	if o.DialTimeout == 0 {
		o.DialTimeout = 10 * time.Second
	}
	p := &Proxy{opts: o}
	p.policy.Store(o.Policy)
	// One connection per plain request: each is decided, dialled and
	// counted on its own, and no pooled connection outlives its decision.
	p.transport = &http.Transport{
		Proxy: func(r *http.Request) (*url.URL, error) {
			return targetOf(r.Context()).upstream, nil
		},
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			t := targetOf(ctx)
			var c net.Conn
			var err error
			if t.upstream != nil {
				c, err = (&net.Dialer{Timeout: p.opts.DialTimeout}).DialContext(ctx, network, addr)
				if err == nil {
					t.rec.Upstream = true
					if ap, e := netip.ParseAddrPort(c.RemoteAddr().String()); e == nil {
						t.rec.Addr = ap
					}
				}
			} else {
				c, t.rec.Addr, err = p.dialAny(ctx, t.addrs)
			}
			if err != nil {
				return nil, err
			}
			return &countConn{Conn: c, sent: &t.sent, received: &t.received}, nil
		},
		DisableKeepAlives:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		MaxResponseHeaderBytes: 1 << 20,
	}
	return p, nil
}

// Policy is the policy in force, with the session's bindings.
func (p *Proxy) Policy() *Policy { return p.policy.Load() }

// Serve answers proxy requests on ln for call until ctx is done or ln
// fails; then it closes ln and every connection it opened, waits for
// them, and returns (nil when ctx ended it).
func (p *Proxy) Serve(ctx context.Context, ln net.Listener, call Call) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	call.Secrets = slices.Compact(slices.Sorted(slices.Values(call.Secrets)))
	st := &callState{ctx: ctx, call: call, once: map[string]bool{}, conns: map[io.Closer]struct{}{}}
	srv := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { p.handle(st, w, r) }),
		ReadHeaderTimeout: 30 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(io.Discard, "", 0),
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	cancel()
	srv.Close()
	st.closeAll()
	if err == http.ErrServerClosed {
		err = nil
	}
	return err
}

// callState is one call's: who it is, what the person allowed for it,
// and what it has open.
type callState struct {
	ctx   context.Context // ends with the call
	call  Call
	askMu sync.Mutex // one question at a time; the rest wait for its answer
	once  map[string]bool

	mu      sync.Mutex
	closing bool
	active  sync.WaitGroup
	conns   map[io.Closer]struct{}
}

// begin counts a handler in; false once the call is over.
func (s *callState) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.active.Add(1)
	return true
}

func (s *callState) track(c io.Closer) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *callState) untrack(c io.Closer) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

func (s *callState) closeAll() {
	s.mu.Lock()
	s.closing = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.active.Wait()
}

func (p *Proxy) handle(st *callState, w http.ResponseWriter, r *http.Request) {
	if !st.begin() {
		http.Error(w, "hush: the call is over", http.StatusServiceUnavailable)
		return
	}
	defer st.active.Done()
	rec := Record{Tool: st.call.Tool, Turn: st.call.Turn, Method: r.Method, Secrets: st.call.Secrets, Start: time.Now()}
	host, port, err := target(r)
	if err != nil {
		w.Header().Set("Connection", "close")
		http.Error(w, "hush: "+err.Error(), http.StatusBadRequest)
		return
	}
	rec.Host, rec.Port = host, port
	defer p.audit(&rec)
	// A CONNECT lives as long as the call, not as the request: a client
	// that sends CONNECT and its first bytes and then shuts its side
	// (`printf … | nc`) ends the request's context as soon as the server
	// reads that end, which cancelled the dial.
	ctx := r.Context()
	if r.Method == http.MethodConnect {
		ctx = st.ctx
	}
	v := p.decide(ctx, st, host, port, &rec)
	if v.Action != Allow {
		p.refuse(w, &rec, v)
		return
	}
	addrs, v, err := p.resolve(ctx, v, host, port)
	if v.Action != Allow {
		p.refuse(w, &rec, v)
		return
	}
	up, uerr := p.upstreamFor(r.Method, host, port)
	if uerr != nil || err != nil && up == nil {
		if uerr != nil {
			err = uerr
		}
		rec.Err = err.Error()
		http.Error(w, fmt.Sprintf("hush: %s %s: %v", r.Method, hostPort(host, port), err), http.StatusBadGateway)
		return
	}
	if r.Method == http.MethodConnect {
		p.tunnel(ctx, st, w, &rec, host, port, addrs, up)
		return
	}
	p.forward(w, r, &rec, addrs, up)
}

// target is the host and port a proxy request is for.
func target(r *http.Request) (string, int, error) {
	var hostport, defPort string
	switch {
	case r.Method == http.MethodConnect:
		hostport, defPort = r.Host, "443"
	case r.URL.IsAbs() && r.URL.Scheme == "http":
		hostport, defPort = r.URL.Host, "80"
	case r.URL.IsAbs():
		return "", 0, fmt.Errorf("%s URLs go through CONNECT; the proxy forwards plain http:// requests only", r.URL.Scheme)
	default:
		return "", 0, errors.New("this is hush's egress proxy: it takes CONNECT and requests for absolute http:// URLs")
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, defPort
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || host == "" {
		return "", 0, fmt.Errorf("%q is not a host and port", hostport)
	}
	host = config.NormalizeHost(host)
	if err := checkName(host); err != nil {
		return "", 0, err
	}
	return host, n, nil
}

// checkName accepts an IP address or a DNS name. A name whose last label
// is a number is an address in another spelling ("2130706433",
// "0177.0.0.1", "127.1"), which some resolvers and upstream proxies read
// as 127.0.0.1: it is refused rather than matched as a name.
func checkName(host string) error {
	if _, err := netip.ParseAddr(host); err == nil {
		return nil
	}
	pat, err := config.ParseHostPattern(host)
	if err != nil || pat.Wildcard() || pat.Port != 0 || pat.Host != host {
		return fmt.Errorf("%q is not a host name", host)
	}
	last := host[strings.LastIndexByte(host, '.')+1:]
	if strings.Trim(last, "0123456789") == "" || strings.HasPrefix(last, "0x") {
		return fmt.Errorf("%q is an address written as a name; write the address itself", host)
	}
	return nil
}

// decide is the policy's verdict, asking the person where it asks.
func (p *Proxy) decide(ctx context.Context, st *callState, host string, port int, rec *Record) Verdict {
	v := p.Policy().Decide(st.call, host, port)
	if v.Action == Ask {
		v = p.ask(ctx, st, host, port, rec)
	}
	rec.Action, rec.Rule, rec.Reason = v.Action, v.Rule, v.Reason
	return v
}

func (p *Proxy) ask(ctx context.Context, st *callState, host string, port int, rec *Record) Verdict {
	st.askMu.Lock()
	defer st.askMu.Unlock()
	key := hostPort(host, port)
	_, literal := parseAddr(host)
	approved := Verdict{Action: Allow, Rule: "asked: allowed for this call", Reason: key + " was allowed for this call", private: literal || isLocalhost(host) || p.Policy().Named(st.call.Tool, host, port)}
	if st.once[key] {
		return approved
	}
	// Asked and answered "for this session" while this one waited.
	v := p.Policy().Decide(st.call, host, port)
	if v.Action != Ask {
		return v
	}
	if p.opts.Ask == nil {
		return Verdict{Action: Deny, Rule: v.Rule, Reason: v.Reason}
	}
	rec.Asked = true
	switch p.opts.Ask(ctx, Question{Gate: "net.connect:" + host, Tool: st.call.Tool, Host: host, Port: port, Secrets: st.call.Secrets, Reason: v.Reason}) {
	case AllowCall:
		st.once[key] = true
		return approved
	case AllowSession:
		for {
			old := p.policy.Load()
			if p.policy.CompareAndSwap(old, old.Bind(st.call.Secrets, host, port)) {
				break
			}
		}
		return p.Policy().Decide(st.call, host, port)
	}
	return Verdict{Action: Deny, Rule: "asked: refused", Reason: key + " was refused when asked: " + v.Reason}
}

// resolve finds host's addresses and keeps those the verdict reaches.
// Behind an upstream proxy a name that does not resolve here is left to
// the upstream (corporate networks often resolve only there).
func (p *Proxy) resolve(ctx context.Context, v Verdict, host string, port int) ([]netip.AddrPort, Verdict, error) {
	aps, err := p.opts.Resolver.Resolve(ctx, host, port)
	if err != nil {
		return nil, v, fmt.Errorf("cannot resolve %s: %w", host, err)
	}
	ips := make([]netip.Addr, len(aps))
	for i, a := range aps {
		ips[i] = a.Addr()
	}
	kept, v := v.Addrs(host, ips)
	out := aps[:0:0]
	for _, a := range aps {
		if slices.Contains(kept, a.Addr()) {
			out = append(out, a)
		}
	}
	if v.Action == Allow && len(out) == 0 {
		return nil, v, fmt.Errorf("cannot resolve %s: no address", host)
	}
	return out, v, nil
}

func (p *Proxy) upstreamFor(method, host string, port int) (*url.URL, error) {
	if p.opts.Upstream == nil {
		return nil, nil
	}
	scheme := "http"
	if method == http.MethodConnect {
		scheme = "https"
	}
	u, err := p.opts.Upstream(&url.URL{Scheme: scheme, Host: hostPort(host, port)})
	if err != nil {
		return nil, fmt.Errorf("upstream proxy: %w", err)
	}
	return u, nil
}

// audit reports rec once.
func (p *Proxy) audit(rec *Record) {
	if rec.audited {
		return
	}
	rec.audited = true
	rec.Duration = time.Since(rec.Start)
	if p.opts.Audit != nil {
		p.opts.Audit(*rec)
	}
}

// refuse records the refusal, then answers it.
func (p *Proxy) refuse(w http.ResponseWriter, rec *Record, v Verdict) {
	rec.Action, rec.Rule, rec.Reason = Deny, v.Rule, v.Reason
	p.audit(rec)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Connection", "close")
	w.WriteHeader(http.StatusForbidden)
	fmt.Fprintf(w, "hush refused %s %s: %s\n", rec.Method, hostPort(rec.Host, rec.Port), v.Reason)
}

// dialAny connects to the first of addrs that answers.
func (p *Proxy) dialAny(ctx context.Context, addrs []netip.AddrPort) (net.Conn, netip.AddrPort, error) {
	var errs []error
	for _, a := range addrs {
		c, err := (&net.Dialer{Timeout: p.opts.DialTimeout}).DialContext(ctx, "tcp", a.String())
		if err == nil {
			return c, a, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, netip.AddrPort{}, errors.New("no address to connect to")
	}
	return nil, netip.AddrPort{}, errs[0]
}

// tunnel connects and then copies bytes both ways (relay).
func (p *Proxy) tunnel(ctx context.Context, st *callState, w http.ResponseWriter, rec *Record, host string, port int, addrs []netip.AddrPort, up *url.URL) {
	var remote net.Conn
	var err error
	if up != nil {
		remote, err = p.dialThrough(ctx, up, hostPort(host, port), rec)
	} else {
		remote, rec.Addr, err = p.dialAny(ctx, addrs)
	}
	if err != nil {
		rec.Err = err.Error()
		http.Error(w, fmt.Sprintf("hush: CONNECT %s: %v", hostPort(host, port), err), http.StatusBadGateway)
		return
	}
	defer remote.Close()
	hj, ok := w.(http.Hijacker)
	if !ok {
		rec.Err = "connection cannot be taken over"
		http.Error(w, "hush: "+rec.Err, http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		rec.Err = err.Error()
		return
	}
	defer client.Close()
	if !st.track(client) || !st.track(remote) {
		return
	}
	defer st.untrack(client)
	defer st.untrack(remote)
	if _, err := client.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		rec.Err = err.Error()
		return
	}
	// Bytes the client sent after its CONNECT, already read into the
	// server's buffer.
	if n := buf.Reader.Buffered(); n > 0 {
		b, _ := buf.Reader.Peek(n)
		m, err := remote.Write(b)
		rec.Sent += int64(m)
		if err != nil {
			rec.Err = err.Error()
			return
		}
	}
	done := make(chan int64, 1)
	go func() {
		n, _ := relay(remote, client)
		closeWrite(remote)
		done <- n
	}()
	n, _ := relay(client, remote)
	rec.Received = n
	closeWrite(client)
	select {
	case n := <-done:
		rec.Sent += n
	case <-ctx.Done():
		client.Close()
		remote.Close()
		rec.Sent += <-done
	}
}

// smallBufs and bigBufs are the tunnels' copy buffers (relay).
var (
	smallBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}
	bigBufs   = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}
)

// relay copies src to dst until src ends (nil) or either fails, and
// returns the bytes written. It reads into a 32 KiB buffer, and while reads
// fill it, into a pooled 1 MiB one. On a loopback download
// (BenchmarkDownload) 1 MiB reads and writes cost less CPU than io.Copy's
// splice(2) through a pipe between the two TCP sockets: the proxied
// download took 2.0× the CPU of the direct one against 2.2× with splice.
// A tunnel that goes quiet gives the large buffer back, so an idle
// keep-alive connection holds 32 KiB a direction.
func relay(dst io.Writer, src io.Reader) (int64, error) {
	sp := smallBufs.Get().(*[]byte)
	small := *sp
	buf := small
	var big *[]byte
	defer func() {
		smallBufs.Put(sp)
		if big != nil {
			bigBufs.Put(big)
		}
	}()
	var written int64
	for {
		n, rerr := src.Read(buf)
		if n > 0 {
			m, werr := dst.Write(buf[:n])
			written += int64(m)
			if werr != nil {
				return written, werr
			}
		}
		if rerr == io.EOF {
			return written, nil
		}
		if rerr != nil {
			return written, rerr
		}
		switch {
		case big == nil && n == len(small):
			big = bigBufs.Get().(*[]byte)
			buf = *big
		case big != nil && n < len(small):
			bigBufs.Put(big)
			big, buf = nil, small
		}
	}
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	c.Close()
}

// dialThrough opens a tunnel to hostport through the user's upstream
// proxy.
func (p *Proxy) dialThrough(ctx context.Context, up *url.URL, hostport string, rec *Record) (net.Conn, error) {
	rec.Upstream = true
	d := &net.Dialer{Timeout: p.opts.DialTimeout}
	switch up.Scheme {
	case "socks5", "socks5h":
		sd, err := xproxy.FromURL(up, d)
		if err != nil {
			return nil, fmt.Errorf("upstream proxy: %w", err)
		}
		cd, ok := sd.(xproxy.ContextDialer)
		if !ok {
			return nil, errors.New("upstream proxy: socks dialer without a context")
		}
		return cd.DialContext(ctx, "tcp", hostport)
	case "http", "https":
	default:
		return nil, fmt.Errorf("upstream proxy: scheme %q: want http, https or socks5", up.Scheme)
	}
	addr := up.Host
	if up.Port() == "" {
		addr = net.JoinHostPort(up.Hostname(), map[string]string{"http": "80", "https": "443"}[up.Scheme])
	}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("upstream proxy: %w", err)
	}
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		rec.Addr = ap
	}
	if up.Scheme == "https" {
		tc := tls.Client(c, &tls.Config{ServerName: up.Hostname(), MinVersion: tls.VersionTLS12})
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, fmt.Errorf("upstream proxy: %w", err)
		}
		c = tc
	}
	var auth string
	if u := up.User; u != nil {
		pw, _ := u.Password()
		auth = "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pw)) + "\r\n"
	}
	c, status, _, err := handshake(ctx, c, hostport, auth)
	if err != nil {
		return nil, fmt.Errorf("upstream proxy: %w", err)
	}
	if status != "" {
		return nil, fmt.Errorf("upstream proxy answered %s", status)
	}
	return c, nil
}

// handshake sends CONNECT target (with header lines, each ending in
// CRLF) over c and reads the answer. On 200 it returns the tunnel; on any
// other answer it closes c and returns the status and up to 4 KiB of the
// body. ctx's end closes c.
func handshake(ctx context.Context, c net.Conn, target, header string) (net.Conn, string, []byte, error) {
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	if _, err := io.WriteString(c, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n"+header+"\r\n"); err != nil {
		c.Close()
		return nil, "", nil, err
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		c.Close()
		return nil, "", nil, err
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		c.Close()
		return nil, resp.Status, body, nil
	}
	if br.Buffered() > 0 {
		return &bufConn{Conn: c, r: br}, "", nil, nil
	}
	return c, "", nil, nil
}

// bufConn is a connection whose first bytes were read into r.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// forward sends one plain request on its own connection, to the host the
// URL names: the Host header is set from the URL, so a request cannot be
// routed by a shared front end to a host that was not decided.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, rec *Record, addrs []netip.AddrPort, up *url.URL) {
	t := &dialTarget{addrs: addrs, upstream: up, rec: rec}
	if up != nil {
		rec.Upstream = true
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = r.URL
			pr.Out.Host = ""
		},
		Transport:     p.transport,
		FlushInterval: -1,
		ErrorLog:      log.New(io.Discard, "", 0),
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			rec.Err = err.Error()
			http.Error(w, fmt.Sprintf("hush: %s %s: %v", r.Method, hostPort(rec.Host, rec.Port), err), http.StatusBadGateway)
		},
	}
	rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), targetKey{}, t)))
	rec.Sent, rec.Received = t.sent.Load(), t.received.Load()
}

type targetKey struct{}

// dialTarget is where the transport connects for one plain request.
type dialTarget struct {
	addrs          []netip.AddrPort
	upstream       *url.URL
	rec            *Record
	sent, received atomic.Int64
}

func targetOf(ctx context.Context) *dialTarget {
	t, _ := ctx.Value(targetKey{}).(*dialTarget)
	if t == nil {
		return &dialTarget{rec: &Record{}}
	}
	return t
}

// countConn counts a plain request's bytes each way.
type countConn struct {
	net.Conn
	sent, received *atomic.Int64
}

func (c *countConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.received.Add(int64(n))
	return n, err
}

func (c *countConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.sent.Add(int64(n))
	return n, err
}
