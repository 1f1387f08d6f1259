package dockerbash

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/docker/go-connections/tlsconfig"
	"golang.org/x/net/http/httpproxy"
)

// The engine settings hush honours, read from its start-up snapshot (hush's
// own process environment no longer holds them after guard.Guard).
const (
	envHost       = "DOCKER_HOST"
	envTLSVerify  = "DOCKER_TLS_VERIFY"
	envCertPath   = "DOCKER_CERT_PATH"
	envAPIVersion = "DOCKER_API_VERSION"
)

// defaultHost is the engine's usual socket on Linux.
const defaultHost = "unix:///var/run/docker.sock"

// The Engine API versions this client speaks. 1.30 added the "removed"
// wait condition the tool relies on; the newest is the highest it asks
// for, and an older engine (Debian's 20.10 speaks 1.41) is talked to in
// its own version.
const (
	minAPIVersion = "1.30"
	maxAPIVersion = "1.47"
)

// ErrNoEngine means no Docker engine answered.
var ErrNoEngine = errors.New("no Docker engine answers")

// ErrNoImage means the configured image is not on the engine; the error of
// ContainerCreate wraps it when the engine answers 404.
var ErrNoImage = errors.New("image not on the Docker engine")

// EngineHost is the engine address hush uses for ambient: DOCKER_HOST, or
// the platform default socket. A password in it is never shown.
func EngineHost(ambient map[string]string) string {
	if h := ambient[envHost]; h != "" {
		return h
	}
	return defaultHost
}

// Engine is a client of the Docker Engine HTTP API, for the calls the tool
// makes: ping, image inspect, and container create, attach, wait, start and
// remove. Ping comes first: it settles the API version the others use.
//
// It is hush's own rather than the official client (github.com/docker/
// docker/client), measured: that client's dependencies — the image
// reference grammar it compiles at start-up, OpenTelemetry, the OCI types —
// cost every hush process 1.5 ms of package initialisation, a fifth of
// `hush --version`, whether or not dockerbash is configured. The API these
// calls use is small and stable; the tests run it against a real engine
// and check its effects with the official client.
type Engine struct {
	hc      *http.Client
	base    string // scheme://host the request paths go after
	pinned  string // DOCKER_API_VERSION, used as it is; "" to negotiate
	version string // the API version requests use, once Ping has run
}

// NewClient returns an Engine configured only from ambient — DOCKER_HOST,
// DOCKER_TLS_VERIFY, DOCKER_CERT_PATH, DOCKER_API_VERSION and the proxy
// variables — never from the process environment (hush's own environ is
// reduced, and reading it would silently talk to the wrong engine). The API
// version is negotiated by Ping.
func NewClient(ambient map[string]string) (*Engine, error) {
	host := EngineHost(ambient)
	scheme, addr, ok := strings.Cut(host, "://")
	if !ok || addr == "" {
		return nil, fmt.Errorf("DOCKER_HOST=%s is not an engine address like unix:///var/run/docker.sock or tcp://host:2376", shownHost(host))
	}
	tr := &http.Transport{MaxIdleConns: 4, IdleConnTimeout: 30 * time.Second}
	e := &Engine{hc: &http.Client{Transport: tr}, pinned: ambient[envAPIVersion]}
	switch scheme {
	case "unix":
		path := addr
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}
		e.base = "http://docker" // the host part is not used on a socket
		return e, nil
	case "tcp", "http", "https":
	default:
		// ssh:// needs the docker CLI's connection helper, which would put
		// a process (and its argv) between hush and the engine.
		return nil, fmt.Errorf("DOCKER_HOST=%s uses %s://, which hush does not support; use unix:// or tcp:// (for a remote engine over ssh, forward its socket with `ssh -L /tmp/docker.sock:/var/run/docker.sock HOST` and set DOCKER_HOST=unix:///tmp/docker.sock)", shownHost(host), scheme)
	}
	u, err := url.Parse("tcp://" + addr)
	if err != nil || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("DOCKER_HOST=%s is not an engine address like unix:///var/run/docker.sock or tcp://host:2376", shownHost(host))
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
	useTLS := scheme == "https"
	if certPath != "" {
		tc, err := tlsconfig.Client(tlsconfig.Options{
			CAFile:             filepath.Join(certPath, "ca.pem"),
			CertFile:           filepath.Join(certPath, "cert.pem"),
			KeyFile:            filepath.Join(certPath, "key.pem"),
			InsecureSkipVerify: !verify, // as the docker CLI: DOCKER_CERT_PATH alone means TLS without verification
		})
		if err != nil {
			return nil, fmt.Errorf("cannot load the Docker TLS client certificates (ca.pem, cert.pem, key.pem) from %s: %w", certPath, err)
		}
		tr.TLSClientConfig = tc
		useTLS = true
	}
	e.base = "http://" + u.Host
	if useTLS {
		e.base = "https://" + u.Host
	}
	// Proxy settings from the snapshot, never from hush's environ.
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
	return e, nil
}

// Close releases the client's idle connections.
func (e *Engine) Close() error {
	e.hc.CloseIdleConnections()
	return nil
}

// APIVersion is the version requests use ("" before Ping).
func (e *Engine) APIVersion() string { return e.version }

// Ping checks that an engine answers and settles the API version: the
// pinned one, or the lower of the engine's and maxAPIVersion.
func (e *Engine) Ping(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.base+"/_ping", nil)
	if err != nil {
		return err
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode == http.StatusBadRequest && bytes.Contains(body, []byte("HTTPS server")) {
		return errTLSRequired
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("ping: the engine answered %s", resp.Status)
	}
	if e.pinned != "" {
		e.version = strings.TrimPrefix(e.pinned, "v")
		return nil
	}
	v := resp.Header.Get("Api-Version")
	if v == "" {
		v = "1.24" // engines before 1.25 did not say
	}
	if olderAPI(v, minAPIVersion) {
		return fmt.Errorf("the engine speaks API %s, %w %s, which hush needs; upgrade Docker", v, ErrEngineTooOld, minAPIVersion)
	}
	e.version = v
	if olderAPI(maxAPIVersion, v) {
		e.version = maxAPIVersion
	}
	return nil
}

// errTLSRequired is Ping's error for an engine that answered plain HTTP
// with its "client sent an HTTP request to an HTTPS server".
var errTLSRequired = errors.New("the engine speaks TLS and was asked without TLS")

// ErrEngineTooOld is wrapped by Ping when the engine's API is older than
// the one hush needs: upgrading Docker, not starting it, is the remedy.
var ErrEngineTooOld = errors.New("older than")

// olderAPI reports whether API version a ("1.41") is older than b.
func olderAPI(a, b string) bool {
	am, an, _ := strings.Cut(a, ".")
	bm, bn, _ := strings.Cut(b, ".")
	ai, _ := strconv.Atoi(am)
	bi, _ := strconv.Atoi(bm)
	if ai != bi {
		return ai < bi
	}
	aj, _ := strconv.Atoi(an)
	bj, _ := strconv.Atoi(bn)
	return aj < bj
}

// apiError is the engine's answer to a request it refused.
type apiError struct {
	status  int
	message string
}

func (e *apiError) Error() string { return e.message }

// isNotFound reports whether err is the engine saying 404.
func isNotFound(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.status == http.StatusNotFound
}

// do sends one API request and returns the response of a 2xx or 101; any
// other status becomes an *apiError carrying the engine's message.
func (e *Engine) do(ctx context.Context, method, path string, query url.Values, body any, header http.Header) (*http.Response, error) {
	if e.version == "" {
		return nil, errors.New("docker engine: no API version yet (Ping first)")
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	u := e.base + "/v" + e.version + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 == 2 || resp.StatusCode == http.StatusSwitchingProtocols {
		return resp, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var msg struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &msg) != nil || msg.Message == "" {
		msg.Message = strings.TrimSpace(string(raw))
	}
	if msg.Message == "" {
		msg.Message = resp.Status
	}
	return nil, &apiError{status: resp.StatusCode, message: msg.Message}
}

// call is do for a request whose answer body is JSON into out (or
// discarded when out is nil).
func (e *Engine) call(ctx context.Context, method, path string, query url.Values, body, out any) error {
	resp, err := e.do(ctx, method, path, query, body, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// ImageInspect reports whether the engine has image; a missing one is an
// error for which isNotFound is true.
func (e *Engine) ImageInspect(ctx context.Context, image string) error {
	if image == "" || strings.ContainsAny(image, "?# \t\n") {
		return fmt.Errorf("%q is not an image name", image)
	}
	return e.call(ctx, http.MethodGet, "/images/"+image+"/json", nil, nil, nil)
}

// containerSpec is the body of POST /containers/create: the container's
// configuration and, under HostConfig, the host's side of it.
type containerSpec struct {
	Image        string
	Cmd          []string
	Env          []string
	WorkingDir   string
	AttachStdin  bool
	AttachStdout bool
	AttachStderr bool
	// OpenStdin and StdinOnce: the container's stdin is open until the one
	// client attached to it (the tool, which writes the environment there)
	// disconnects.
	OpenStdin  bool
	StdinOnce  bool
	Labels     map[string]string
	HostConfig hostConfig
}

type hostConfig struct {
	NetworkMode string
	Mounts      []mountSpec
	AutoRemove  bool
	SecurityOpt []string
}

type mountSpec struct {
	Type         string // "bind" or "tmpfs"
	Source       string `json:",omitempty"`
	Target       string
	ReadOnly     bool
	TmpfsOptions *tmpfsOptions `json:",omitempty"`
}

type tmpfsOptions struct {
	SizeBytes int64
}

// ContainerCreate creates a container and returns its id.
func (e *Engine) ContainerCreate(ctx context.Context, spec containerSpec) (string, error) {
	var created struct {
		ID string `json:"Id"`
	}
	if err := e.call(ctx, http.MethodPost, "/containers/create", nil, spec, &created); err != nil {
		if isNotFound(err) { // the API's one 404 for a create: no such image
			return "", fmt.Errorf("%w: %w", ErrNoImage, err)
		}
		return "", err
	}
	if created.ID == "" {
		return "", errors.New("the engine created a container without an id")
	}
	return created.ID, nil
}

// ContainerAttach returns the container's multiplexed stdout and stderr
// (see demux), from before it starts until it ends.
func (e *Engine) ContainerAttach(ctx context.Context, id string) (io.ReadCloser, error) {
	q := url.Values{"stream": {"1"}, "stdout": {"1"}, "stderr": {"1"}}
	resp, err := e.do(ctx, http.MethodPost, "/containers/"+url.PathEscape(id)+"/attach", q, nil,
		http.Header{"Connection": {"Upgrade"}, "Upgrade": {"tcp"}})
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// ContainerAttachStdin attaches to the container's stdin alone and returns
// a writer to it. Closing the writer ends the container's stdin (the
// container is created with StdinOnce); the engine keeps no copy of what
// was written.
func (e *Engine) ContainerAttachStdin(ctx context.Context, id string) (io.WriteCloser, error) {
	q := url.Values{"stream": {"1"}, "stdin": {"1"}}
	resp, err := e.do(ctx, http.MethodPost, "/containers/"+url.PathEscape(id)+"/attach", q, nil,
		http.Header{"Connection": {"Upgrade"}, "Upgrade": {"tcp"}})
	if err != nil {
		return nil, err
	}
	w, ok := resp.Body.(io.WriteCloser)
	if !ok || resp.StatusCode != http.StatusSwitchingProtocols {
		resp.Body.Close()
		return nil, fmt.Errorf("the engine answered the stdin attach with %s, not a stream hush can write to", resp.Status)
	}
	return w, nil
}

// waitResult is the engine's answer to a wait.
type waitResult struct {
	StatusCode int64
	Error      *struct{ Message string }
}

// ContainerWait asks the engine to answer once the container meets
// condition ("removed": it has exited and AutoRemove has removed it). The
// request is sent, and its headers answered, before ContainerWait returns,
// so a container started after it cannot end unseen.
func (e *Engine) ContainerWait(ctx context.Context, id, condition string) (<-chan waitResult, <-chan error) {
	results := make(chan waitResult, 1)
	errs := make(chan error, 1)
	resp, err := e.do(ctx, http.MethodPost, "/containers/"+url.PathEscape(id)+"/wait", url.Values{"condition": {condition}}, nil, nil)
	if err != nil {
		errs <- err
		return results, errs
	}
	go func() {
		defer resp.Body.Close()
		var w waitResult
		if err := json.NewDecoder(resp.Body).Decode(&w); err != nil {
			errs <- err
			return
		}
		results <- w
	}()
	return results, errs
}

// ContainerStart starts a created container.
func (e *Engine) ContainerStart(ctx context.Context, id string) error {
	return e.call(ctx, http.MethodPost, "/containers/"+url.PathEscape(id)+"/start", nil, nil, nil)
}

// ContainerRemove removes a container, killing it first if it runs.
func (e *Engine) ContainerRemove(ctx context.Context, id string) error {
	return e.call(ctx, http.MethodDelete, "/containers/"+url.PathEscape(id), url.Values{"force": {"1"}}, nil, nil)
}

// demux copies the payload of the engine's multiplexed attach stream —
// frames of an 8-byte header (stream, three zero bytes, big-endian
// length) and that many bytes — to out, stdout and stderr alike, until the
// stream ends. A frame on the engine's own error stream ends it with that
// message.
func demux(out io.Writer, r io.Reader) error {
	var h [8]byte
	for {
		if _, err := io.ReadFull(r, h[:]); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		n := int64(binary.BigEndian.Uint32(h[4:]))
		switch h[0] {
		case 0, 1, 2: // stdin (never attached), stdout, stderr
			if _, err := io.CopyN(out, r, n); err != nil {
				return err
			}
		case 3:
			msg, _ := io.ReadAll(io.LimitReader(r, min(n, 4<<10)))
			return fmt.Errorf("the engine reported: %s", oneLine(string(msg)))
		default:
			return fmt.Errorf("the engine's output stream is malformed (stream %d)", h[0])
		}
	}
}

// pingTimeout bounds the first contact, so a black-holed tcp:// host fails
// with a sentence instead of hanging the turn.
const pingTimeout = 15 * time.Second

// ping reports an unreachable engine as one sentence saying what to do.
func ping(ctx context.Context, cli *Engine, ambient map[string]string) error {
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if err := cli.Ping(pctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, ErrEngineTooOld) {
			return err
		}
		return noEngine(ambient, err)
	}
	return nil
}

func noEngine(ambient map[string]string, err error) error {
	host := shownHost(EngineHost(ambient))
	switch {
	case errors.Is(err, fs.ErrPermission): // EACCES dialling the socket
		return fmt.Errorf("%w: permission denied on %s; add your user to the docker group (or use rootless Docker and set DOCKER_HOST to its socket)", ErrNoEngine, host)
	case errors.Is(err, errTLSRequired):
		return fmt.Errorf("%w at %s over plain HTTP (it may require TLS); set DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH to your client certificates", ErrNoEngine, host)
	}
	if ambient[envHost] == "" {
		return fmt.Errorf("%w at %s; start one (`sudo systemctl start docker`, or `sudo dockerd &`) or set DOCKER_HOST to a running engine", ErrNoEngine, host)
	}
	return fmt.Errorf("%w at DOCKER_HOST=%s; start that engine or point DOCKER_HOST at a running one", ErrNoEngine, host)
}

// engineError turns an engine reply into one sentence: the daemon's own
// message without a multi-line tail.
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
