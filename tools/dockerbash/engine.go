package dockerbash

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/docker/docker/client"
	"github.com/docker/go-connections/tlsconfig"
	"golang.org/x/net/http/httpproxy"
)

// The engine settings hush honours, read from its start-up snapshot (hush's
// own process environment no longer holds them after tools.Guard).
const (
	envHost       = "DOCKER_HOST"
	envTLSVerify  = "DOCKER_TLS_VERIFY"
	envCertPath   = "DOCKER_CERT_PATH"
	envAPIVersion = "DOCKER_API_VERSION"
)

// ErrNoEngine means no Docker engine answered.
var ErrNoEngine = errors.New("no Docker engine answers")

// ErrNoImage means the configured image is not on the engine.
var ErrNoImage = errors.New("image not on the Docker engine")

// EngineHost is the engine address hush uses for ambient: DOCKER_HOST, or
// the platform default socket. A password in it is never shown.
func EngineHost(ambient map[string]string) string {
	if h := ambient[envHost]; h != "" {
		return h
	}
	return client.DefaultDockerHost
}

// NewClient returns a Docker Engine API client configured only from
// ambient — DOCKER_HOST, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH,
// DOCKER_API_VERSION and the proxy variables — never from the process
// environment (client.FromEnv would read hush's reduced environ and
// silently talk to the wrong engine). The API version is negotiated, so an
// older engine (Debian's 20.10 speaks 1.41) works.
func NewClient(ambient map[string]string) (*client.Client, error) {
	host := EngineHost(ambient)
	u, err := client.ParseHostURL(host)
	if err != nil {
		return nil, fmt.Errorf("DOCKER_HOST=%s is not an engine address like unix:///var/run/docker.sock or tcp://host:2376", shownHost(host))
	}
	switch u.Scheme {
	case "unix", "tcp", "http", "https":
	default:
		// ssh:// needs the docker CLI's connection helper, which would put
		// a process (and its argv) between hush and the engine.
		return nil, fmt.Errorf("DOCKER_HOST=%s uses %s://, which hush does not support; use unix:// or tcp:// (for a remote engine over ssh, forward its socket with `ssh -L /tmp/docker.sock:/var/run/docker.sock HOST` and set DOCKER_HOST=unix:///tmp/docker.sock)", shownHost(host), u.Scheme)
	}

	// Our own transport, so proxy and TLS settings come from the snapshot.
	tr := &http.Transport{}
	opts := []client.Opt{
		client.WithHTTPClient(&http.Client{Transport: tr, CheckRedirect: client.CheckRedirect}),
		client.WithHost(host),
		client.WithAPIVersionNegotiation(),
	}
	if v := ambient[envAPIVersion]; v != "" {
		opts = append(opts, client.WithVersion(v))
	}
	certPath := ambient[envCertPath]
	verify := ambient[envTLSVerify] != ""
	if verify && certPath == "" {
		// The docker CLI's default when only DOCKER_TLS_VERIFY is set.
		if ambient["HOME"] == "" {
			// Never fall back to plain HTTP when verification was asked for.
			return nil, errors.New("DOCKER_TLS_VERIFY is set but neither DOCKER_CERT_PATH nor HOME says where the client certificates are; set DOCKER_CERT_PATH")
		}
		certPath = filepath.Join(ambient["HOME"], ".docker")
	}
	if certPath != "" {
		tc, err := tlsconfig.Client(tlsconfig.Options{
			CAFile:             filepath.Join(certPath, "ca.pem"),
			CertFile:           filepath.Join(certPath, "cert.pem"),
			KeyFile:            filepath.Join(certPath, "key.pem"),
			InsecureSkipVerify: !verify, // as client.FromEnv: DOCKER_CERT_PATH alone means TLS without verification
		})
		if err != nil {
			return nil, fmt.Errorf("cannot load the Docker TLS client certificates (ca.pem, cert.pem, key.pem) from %s: %w", certPath, err)
		}
		tr.TLSClientConfig = tc
	}
	// WithHost set ProxyFromEnvironment for tcp; replace it with the
	// snapshot's proxy settings (applied after WithHost, in order).
	opts = append(opts, func(*client.Client) error {
		if tr.Proxy == nil {
			return nil // unix socket: no proxy
		}
		get := func(names ...string) string {
			for _, n := range names {
				if v := ambient[n]; v != "" {
					return v
				}
			}
			return ""
		}
		pf := (&httpproxy.Config{
			HTTPProxy:  get("HTTP_PROXY", "http_proxy"),
			HTTPSProxy: get("HTTPS_PROXY", "https_proxy"),
			NoProxy:    get("NO_PROXY", "no_proxy"),
		}).ProxyFunc()
		tr.Proxy = func(r *http.Request) (*url.URL, error) { return pf(r.URL) }
		return nil
	})
	cli, err := client.NewClientWithOpts(opts...)
	if err != nil {
		return nil, fmt.Errorf("docker client for %s: %w", shownHost(host), err)
	}
	return cli, nil
}

// pingTimeout bounds the first contact, so a black-holed tcp:// host fails
// with a sentence instead of hanging the turn.
const pingTimeout = 15 * time.Second

// ping reports an unreachable engine as one sentence saying what to do.
func ping(ctx context.Context, cli *client.Client, ambient map[string]string) error {
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if _, err := cli.Ping(pctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return noEngine(ambient, err)
	}
	return nil
}

func noEngine(ambient map[string]string, err error) error {
	host := shownHost(EngineHost(ambient))
	msg := err.Error()
	switch {
	case strings.Contains(msg, "permission denied"):
		return fmt.Errorf("%w: permission denied on %s; add your user to the docker group (or use rootless Docker and set DOCKER_HOST to its socket)", ErrNoEngine, host)
	case strings.Contains(msg, "without TLS"):
		return fmt.Errorf("%w at %s over plain HTTP (it may require TLS); set DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH to your client certificates", ErrNoEngine, host)
	}
	if ambient[envHost] == "" {
		return fmt.Errorf("%w at %s; start one (`sudo systemctl start docker`, or `sudo dockerd &`) or set DOCKER_HOST to a running engine", ErrNoEngine, host)
	}
	return fmt.Errorf("%w at DOCKER_HOST=%s; start that engine or point DOCKER_HOST at a running one", ErrNoEngine, host)
}

// engineError turns an engine reply into one sentence: the daemon's own
// message without the client's "Error response from daemon:" prefix or a
// multi-line tail.
func engineError(op string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("docker engine: %s: %s", op, oneLine(err.Error()))
}

func oneLine(msg string) string {
	msg = strings.TrimPrefix(msg, "Error response from daemon: ")
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return strings.TrimSpace(msg)
}

// shownHost is host without a password, for messages.
func shownHost(host string) string {
	u, err := url.Parse(host)
	if err != nil || u.User == nil {
		return host
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
		return u.String()
	}
	return host
}
