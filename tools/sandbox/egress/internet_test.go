package egress

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hushcli/hush/config"
)

// A loopback "internet" for the proxy's tests: listeners on 127.0.0.1
// standing for github.com and evil.example (plain and TLS), and a file
// server standing for the user's own `python3 -m http.server`, mapped by
// a StaticResolver. Each listener keeps every raw byte it read.

// rawListener counts connections and keeps every byte read from them:
// what arrived at the socket, before any parsing or TLS.
type rawListener struct {
	net.Listener
	mu      sync.Mutex
	accepts int
	raw     bytes.Buffer
}

func (l *rawListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.accepts++
	l.mu.Unlock()
	return &rawConn{Conn: c, l: l}, nil
}

// seen is the listener's connection count and raw bytes so far.
func (l *rawListener) seen() (int, []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.accepts, bytes.Clone(l.raw.Bytes())
}

type rawConn struct {
	net.Conn
	l *rawListener
}

func (c *rawConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.l.mu.Lock()
	c.l.raw.Write(b[:n])
	c.l.mu.Unlock()
	return n, err
}

// site is one server of the internet; bodies are the request bodies its
// handler read (after TLS).
type site struct {
	name   string
	srv    *httptest.Server
	raw    *rawListener
	mu     sync.Mutex
	bodies []string
}

func (s *site) addr() netip.AddrPort { return netip.MustParseAddrPort(s.raw.Addr().String()) }

func (s *site) received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies...)
}

func newSite(t *testing.T, name string, cert *tls.Certificate, h http.Handler) *site {
	t.Helper()
	s := &site{name: name}
	if h == nil {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			s.mu.Lock()
			s.bodies = append(s.bodies, string(b))
			s.mu.Unlock()
			io.WriteString(w, "ok from "+name)
		})
	}
	s.srv = httptest.NewUnstartedServer(h)
	s.raw = &rawListener{Listener: s.srv.Listener}
	s.srv.Listener = s.raw
	if cert != nil {
		s.srv.TLS = &tls.Config{Certificates: []tls.Certificate{*cert}}
		s.srv.StartTLS()
	} else {
		s.srv.Start()
	}
	t.Cleanup(s.srv.Close)
	return s
}

type internet struct {
	github, githubTLS, evil, evilTLS, files *site
	resolver                                StaticResolver
	roots                                   *x509.CertPool
	caFile                                  string // PEM of the sites' certificate, for curl
	vault                                   string // the file server's canary (a vault file's content)
}

func newInternet(t *testing.T) *internet {
	t.Helper()
	cert, pemBytes := selfSigned(t, "github.com", "api.github.com", "evil.example")
	in := &internet{roots: x509.NewCertPool(), caFile: filepath.Join(t.TempDir(), "ca.pem"), vault: "OPENAI_API_KEY=sk-vault-" + canary(t)}
	in.roots.AppendCertsFromPEM(pemBytes)
	if err := os.WriteFile(in.caFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	in.github = newSite(t, "github", nil, nil)
	in.githubTLS = newSite(t, "github", cert, nil)
	in.evil = newSite(t, "evil", nil, nil)
	in.evilTLS = newSite(t, "evil", cert, nil)
	in.files = newSite(t, "files", nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, in.vault)
	}))
	in.resolver = StaticResolver{
		"github.com:80": in.github.addr(), "github.com:443": in.githubTLS.addr(),
		"evil.example:80": in.evil.addr(), "evil.example:443": in.evilTLS.addr(),
		"rebind.example:80": in.files.addr(), // a public name resolving to the user's loopback
	}
	return in
}

func selfSigned(t *testing.T, names ...string) (*tls.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func canary(t *testing.T) string {
	t.Helper()
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// audit collects a proxy's records.
type audit struct {
	mu   sync.Mutex
	recs []Record
}

func (a *audit) add(r Record) {
	a.mu.Lock()
	a.recs = append(a.recs, r)
	a.mu.Unlock()
}

// wait returns the records once there are n (a record is written when
// its connection is over, which can be just after the client has its
// answer).
func (a *audit) wait(t *testing.T, n int) []Record {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		a.mu.Lock()
		got := append([]Record(nil), a.recs...)
		a.mu.Unlock()
		if len(got) >= n || time.Now().After(deadline) {
			if len(got) != n {
				t.Fatalf("%d audit records, want %d: %+v", len(got), n, got)
			}
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// serve runs p for call on a fresh loopback listener until the test
// ends; it returns the proxy's URL, as a tool's HTTPS_PROXY would hold it.
func serve(t *testing.T, p *Proxy, call Call) *url.URL {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, ln, call) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return &url.URL{Scheme: "http", Host: ln.Addr().String()}
}

func newProxy(t *testing.T, toml string, in *internet, o Options) (*Proxy, *audit) {
	t.Helper()
	c, err := config.Parse("config.toml", []byte(toml))
	if err != nil {
		t.Fatal(err)
	}
	pol, err := NewPolicy(c)
	if err != nil {
		t.Fatal(err)
	}
	a := &audit{}
	o.Policy, o.Resolver, o.Audit = pol, in.resolver, a.add
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p, a
}

// client is a tool's HTTP client: everything through the proxy, the
// internet's certificate trusted.
func (in *internet) client(proxy *url.URL) *http.Client {
	return &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
		Proxy: http.ProxyURL(proxy), TLSClientConfig: &tls.Config{RootCAs: in.roots}, DisableKeepAlives: true,
	}}
}
