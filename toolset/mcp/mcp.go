// Package mcp is hush's MCP client, for stdio servers it starts and remote
// (streamable HTTP or SSE, with OAuth) ones it connects to: it starts the
// configured servers, offers their tools to the model namespaced by server,
// calls them, and stops and reaps every server when the session ends.
//
// A server gets the environment the MCP SDKs give one by default (HOME,
// LOGNAME, PATH, SHELL, TERM, USER) plus exactly the env its config names;
// a ${NAME} there is resolved through the permission-gated vault with the
// subject mcp:<server>, and a denial means the server is not started. This
// package never starts a process except through the spawn layer
// (tools.Command), never hands the SDK an *exec.Cmd (whose nil Env would
// mean "inherit everything"), and never lets a server's output reach the
// model except as a tool result, which the executor scrubs.
package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/redact"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/tools/sandbox"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// pingTimeout is how long a server whose call timed out gets to answer a
// ping before it is judged hung; deathNotice bounds the wait, after a call
// failed on a broken connection, for the watcher to say why it broke.
const (
	pingTimeout = 5 * time.Second
	deathNotice = 5 * time.Second
)

// Defaults for Server and Options fields left zero.
const (
	DefaultStartTimeout = 30 * time.Second
	DefaultCallTimeout  = 2 * time.Minute
	DefaultMaxRestarts  = 3
)

// Server is one configured MCP server, in the shape of the de-facto
// mcpServers JSON: a stdio server (command, args, env) or a remote one
// (url, transport, headers).
type Server struct {
	Name string
	// URL is a remote server's endpoint; empty for a stdio server.
	URL string
	// Transport is a remote server's: TransportHTTP (default) or TransportSSE.
	Transport string
	// Headers go with every request to a remote server's origin; values
	// may hold ${NAME} references, read through the gate as mcp:<server>
	// when the server is first contacted. They never appear in a message.
	Headers map[string]string
	// OAuth signs in to a remote server (Streamable HTTP) with OAuth; its
	// tokens are kept in the vault as config.OAuthTokenName(Name).
	// ClientID is a client registered beforehand (default: dynamic client
	// registration); CallbackPort fixes the loopback redirect's port.
	OAuth        bool
	ClientID     string
	CallbackPort int
	Command      string
	Args         []string
	// Env is exactly what the server gets beyond the base set; values may
	// hold ${NAME} references.
	Env map[string]string
	// Dir is the server's working directory: empty means the project dir,
	// and a relative one is inside it.
	Dir          string
	StartTimeout time.Duration
	CallTimeout  time.Duration
	Disabled     bool
	// Source says where the server is configured ("config.toml",
	// "mcp.json"), for messages.
	Source string
}

// Subject is the gate subject of a server's vault reads.
func Subject(server string) string { return "mcp:" + server }

// Options configures a Manager. Every field without a default is required.
type Options struct {
	Servers []Server
	// Dir is the project directory.
	Dir string
	// Ambient is hush's snapshot of its start-up environment; the base set
	// is copied from it.
	Ambient map[string]string
	// Secrets is the session's secret snapshots, to classify ambient
	// values and to scrub what servers say about themselves (tool
	// descriptions, stderr in error messages). nil means no secrets.
	Secrets *executor.SecretCache
	// Grant returns the gated vault read for one server start: it asks the
	// PermissionGate for vault.read:<NAME> with Subject(server), records
	// the decision, and returns an *executor.DeniedError when the answer is
	// no (executor.GatedVault over executor.Audited is exactly that).
	Grant func(ctx context.Context, server string, turn int) tools.Grant
	// HTTPClient carries remote servers' requests (proxy settings); nil
	// means a default client.
	HTTPClient *http.Client
	// MaxRestarts bounds restarts of a server that died, per session.
	MaxRestarts int
	// Version is hush's version, sent as the client version.
	Version string
	// Sandbox is the sandbox every server runs in (nil: none).
	Sandbox *sandbox.Config
	// Egress, when set, gives each stdio server's start its way out
	// (tools.Spec.Egress) from the names of the secrets it was granted;
	// Local are the session's local services (tools.Spec.Local).
	Egress func(server string, secrets []string) func(context.Context, net.Listener)
	Local  *tools.LocalServices
	// UnsafeNoCredentialFilter is config.toml's [unsafe] switch, for
	// `hush audit` to prove the filter matters; see tools.Policy.
	UnsafeNoCredentialFilter bool
	// Store is where OAuth servers' tokens are kept (the vault); nil: an
	// OAuth server can sign in but its tokens last only this session.
	Store SecretStore
	// SignIn is the person who signs in to an OAuth server that has no
	// stored sign-in; nil (hush run, CI) means such a server is not
	// started, and says how to sign in.
	SignIn *SignIn
	// Notice receives one-line notes (a token that could not be stored).
	Notice func(string)
}

// State is where a server is in its life.
type State string

const (
	NotStarted State = "not started"
	Disabled   State = "disabled"
	// NeedsSignIn is an OAuth server with no usable sign-in and no one to
	// sign in: it was not contacted.
	NeedsSignIn State = "needs sign-in"
	Running     State = "running"
	Denied      State = "denied"
	Failed      State = "failed"
	Stopped     State = "stopped" // it died after starting; restarted on next use
	Closed      State = "closed"
)

// Status describes one server.
type Status struct {
	Name, Source string
	// Command is the command line, for display.
	Command  string
	State    State
	Reason   string // why it is not running
	Tools    int
	PID      int
	Restarts int
}

// Describe is the state in one phrase, for `hush mcp list` and notices.
func (s Status) Describe() string {
	switch s.State {
	case Running:
		if s.PID == 0 {
			return "connected"
		}
		return fmt.Sprintf("running (pid %d)", s.PID)
	case Denied:
		return "not started: " + s.Reason
	case NeedsSignIn:
		return "not started: " + s.Reason + "; " + LoginHint(s.Name)
	case Failed:
		return "failed to start: " + s.Reason
	case Stopped:
		return "stopped: " + s.Reason
	case Disabled:
		return "disabled in " + s.Source
	}
	return string(s.State)
}

// noSignIn is why an OAuth server with no stored sign-in is not started
// (its Status.Reason; Describe adds how to sign in).
const noSignIn = "it signs in with OAuth and no sign-in is stored"

// Manager owns one session's MCP servers. It is safe for concurrent use.
type Manager struct {
	opts   Options
	client *sdk.Client

	// startMu serialises env resolution, so gate prompts never overlap.
	startMu sync.Mutex

	mu      sync.Mutex
	servers map[string]*server
	order   []string
	red     *redact.Redactor
	closed  bool
	// started is set once Start has returned: from then on no sign-in is
	// shown (it would land in the middle of a turn), and an OAuth server
	// that needs one says to run hush mcp login.
	started atomic.Bool
}

type server struct {
	cfg Server

	// restartMu makes one caller restart a dead server while the others wait.
	restartMu sync.Mutex

	mu       sync.Mutex
	state    State
	reason   string
	c        *conn
	tools    []*sdk.Tool
	restarts int
}

// NewManager checks the configuration; nothing starts until Start.
func NewManager(opts Options) (*Manager, error) {
	if opts.Dir == "" || opts.Ambient == nil || opts.Grant == nil {
		return nil, errors.New("mcp: project dir, ambient snapshot and grant are required")
	}
	if opts.MaxRestarts == 0 {
		opts.MaxRestarts = DefaultMaxRestarts
	}
	m := &Manager{opts: opts, servers: map[string]*server{}}
	for _, s := range opts.Servers {
		if s.Name == "" || (s.Command == "") == (s.URL == "") {
			return nil, fmt.Errorf("mcp: server %q needs a name and either a command or a url", s.Name)
		}
		if _, dup := m.servers[s.Name]; dup {
			return nil, fmt.Errorf("mcp: server %q is configured twice", s.Name)
		}
		if s.StartTimeout <= 0 {
			s.StartTimeout = DefaultStartTimeout
		}
		if s.CallTimeout <= 0 {
			s.CallTimeout = DefaultCallTimeout
		}
		st := NotStarted
		if s.Disabled {
			st = Disabled
		}
		m.servers[s.Name] = &server{cfg: s, state: st}
		m.order = append(m.order, s.Name)
	}
	sort.Strings(m.order)
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	m.client = sdk.NewClient(&sdk.Implementation{Name: "hush", Version: version}, nil)
	return m, nil
}

// Start starts the named servers, or every enabled one when names is
// empty, and returns when each is running or has failed; Status says
// which. Secrets are resolved one server at a time, since the gate may ask
// the user; the servers then start in parallel.
func (m *Manager) Start(ctx context.Context, names ...string) {
	defer m.started.Store(true)
	if len(names) == 0 {
		names = m.order
	}
	secrets, err := m.secrets()
	type job struct {
		s       *server
		env     tools.Env
		held    []string
		headers http.Header
		hide    []string
		tokens  *tokenStore
	}
	var jobs []job
	for _, name := range names {
		s := m.server(name)
		if s == nil {
			continue
		}
		s.mu.Lock()
		skip := s.state == Disabled || s.state == Running
		s.mu.Unlock()
		if skip {
			continue
		}
		if err != nil {
			s.set(Failed, err.Error(), nil, nil)
			continue
		}
		if s.cfg.remote() {
			if err := checkURL(s.cfg); err != nil {
				s.set(Failed, err.Error(), nil, nil)
				continue
			}
			headers, hide, err := m.headers(ctx, s, 0)
			if err != nil {
				s.refuse(err)
				continue
			}
			var tokens *tokenStore
			if s.cfg.OAuth {
				if tokens, err = m.oauthTokens(ctx, s, 0); err != nil {
					s.refuse(err)
					continue
				}
				if tokens == nil {
					s.set(NeedsSignIn, noSignIn, nil, nil)
					continue
				}
			}
			jobs = append(jobs, job{s: s, headers: headers, hide: hide, tokens: tokens})
			continue
		}
		if err := checkArgs(s.cfg); err != nil {
			s.set(Failed, err.Error(), nil, nil)
			continue
		}
		env, held, err := m.buildEnv(ctx, s, 0, secrets)
		if err != nil {
			s.refuse(err)
			continue
		}
		jobs = append(jobs, job{s: s, env: env, held: held})
	}
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if j.s.cfg.remote() {
				m.dial(ctx, j.s, j.headers, j.hide, j.tokens)
				return
			}
			m.connect(ctx, j.s, j.env, j.held, secrets)
		}()
	}
	wg.Wait()
}

func (m *Manager) server(name string) *server {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.servers[name]
}

// secrets takes the session's current snapshot, for classification and
// for the scrubber.
func (m *Manager) secrets() (*tools.SecretSet, error) {
	snap, err := m.opts.Secrets.Current()
	if err != nil {
		return nil, fmt.Errorf("read the vault: %w", err)
	}
	m.mu.Lock()
	m.red = snap.Redactor
	m.mu.Unlock()
	return snap.Secrets, nil
}

// scrub removes secret values from text a server produced.
func (m *Manager) scrub(s string) string {
	m.mu.Lock()
	red := m.red
	m.mu.Unlock()
	return red.String(s)
}

// buildEnv is the one place a server's environment is made: the MCP base
// set from the ambient snapshot, plus exactly the configured env, each
// ${NAME} read through the gate as mcp:<server>; with the names of the
// secrets it read.
func (m *Manager) buildEnv(ctx context.Context, s *server, turn int, secrets *tools.SecretSet) (tools.Env, []string, error) {
	m.startMu.Lock()
	defer m.startMu.Unlock()
	grant := m.opts.Grant(ctx, s.cfg.Name, turn)
	var held []string
	env, _, err := tools.BuildEnv(tools.EnvRequest{
		Ambient: m.opts.Ambient,
		Policy:  tools.Policy{Inherit: tools.InheritCore, Base: tools.MCPBaseNames, UnsafeNoCredentialFilter: m.opts.UnsafeNoCredentialFilter},
		Secrets: secrets,
		Grant: func(name string) (string, error) {
			v, err := grant(name)
			if err == nil && !slices.Contains(held, name) {
				held = append(held, name)
			}
			return v, err
		},
		Extra: s.cfg.Env,
	})
	return env, held, err
}

// headers resolves a remote server's headers through the gate, one server
// at a time like buildEnv, and returns them with the values to hide.
func (m *Manager) headers(ctx context.Context, s *server, turn int) (http.Header, []string, error) {
	m.startMu.Lock()
	defer m.startMu.Unlock()
	h, _, err := resolveHeaders(s.cfg.Headers, m.opts.Grant(ctx, s.cfg.Name, turn))
	if err != nil {
		return nil, nil, err
	}
	// Every header value is kept out of messages, not only the secret
	// ones: a literal token in config.toml is a token too.
	var hide []string
	for _, vs := range h {
		for _, v := range vs {
			if len(v) >= 4 {
				hide = append(hide, v)
			}
		}
	}
	return h, hide, nil
}

// dial connects to a remote server; tokens, for an OAuth server, signs
// its requests in.
func (m *Manager) dial(ctx context.Context, s *server, headers http.Header, hide []string, tokens *tokenStore) {
	scrub := func(text string) string {
		for _, v := range append(hide, tokens.values()...) {
			text = strings.ReplaceAll(text, v, "[REDACTED]")
		}
		return m.scrub(text)
	}
	var oauth *oauthHandler
	if tokens != nil {
		oauth = &oauthHandler{m: m, s: s.cfg, tokens: tokens}
	}
	c, list, err := dialRemote(ctx, m.client, s.cfg, m.opts.HTTPClient, headers, oauth, s.cfg.StartTimeout, scrub, func(c *conn) { m.died(s, c) })
	if err != nil {
		if oauth != nil && ctx.Err() == nil {
			if oauth.signInNeeded() {
				s.set(NeedsSignIn, errNeedsSignIn.Error(), nil, nil)
				return
			}
			if ferr := oauth.signInFailed(); ferr != nil {
				s.set(Failed, "the OAuth sign-in failed: "+scrub(ferr.Error()), nil, nil)
				return
			}
		}
		s.set(Failed, scrub(err.Error()), nil, nil)
		return
	}
	c.hide, c.tokens = hide, tokens
	if tokens.didSignIn() && m.opts.SignIn != nil && m.opts.SignIn.Out != nil {
		fmt.Fprintf(m.opts.SignIn.Out, "hush: signed in to mcp server %q; its tokens are in the vault as %s\n", s.cfg.Name, tokens.name)
	}
	m.running(s, c, list)
}

// checkArgs refuses a ${NAME} on a server's command line: hush resolves
// references only in env, because a command line is readable by every
// process on the machine (ps, /proc/PID/cmdline).
func checkArgs(s Server) error {
	for _, a := range append([]string{s.Command, s.Dir}, s.Args...) {
		refs, err := config.References(a)
		if err != nil || len(refs) == 0 {
			continue
		}
		return fmt.Errorf("its command line refers to the secret %s; hush never puts a secret on a command line (anyone can read it with ps): give it to the server in env instead, e.g. env = { %s = \"${%s}\" }, if the server can read it from there",
			refs[0], refs[0], refs[0])
	}
	return nil
}

// refuse records why a server's environment could not be built.
func (s *server) refuse(err error) {
	var denied *executor.DeniedError
	if errors.As(err, &denied) {
		s.set(Denied, denied.Message, nil, nil)
		return
	}
	if errors.Is(err, executor.ErrDenied) {
		s.set(Denied, err.Error(), nil, nil)
		return
	}
	s.set(Failed, err.Error(), nil, nil)
}

func (s *server) set(st State, reason string, c *conn, list []*sdk.Tool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state, s.reason, s.c = st, reason, c
	if list != nil {
		s.tools = list
	}
}

// WorkDir is the directory s runs in for a project at project: its dir,
// relative to the project, or the project itself.
func (s Server) WorkDir(project string) string {
	switch {
	case s.Dir == "":
		return project
	case !filepath.IsAbs(s.Dir):
		return filepath.Join(project, s.Dir)
	}
	return s.Dir
}

// Program is what s runs, as paths for sandbox.Config.ForProgram: its
// command (a relative one with a slash is below its dir), its dir and its
// arguments.
func (s Server) Program(project string) []string {
	dir := s.WorkDir(project)
	cmd := s.Command
	if strings.Contains(cmd, "/") && !filepath.IsAbs(cmd) {
		cmd = filepath.Join(dir, cmd)
	}
	return append([]string{cmd, dir}, s.Args...)
}

func (m *Manager) connect(ctx context.Context, s *server, env tools.Env, held []string, secrets *tools.SecretSet) {
	// A relative dir is the project's, not wherever hush was started.
	dir := s.cfg.WorkDir(m.opts.Dir)
	// The server's own program comes into its world, read-only, where the
	// world leaves it out (a script under the home, a node_modules).
	box := m.opts.Sandbox.ForProgram(s.cfg.Program(m.opts.Dir)...)
	var egress func(context.Context, net.Listener)
	if m.opts.Egress != nil {
		egress = m.opts.Egress(s.cfg.Name, held)
	}
	c, list, err := spawn(ctx, m.client, s.cfg, dir, env, secrets, box, egress, m.opts.Local, s.cfg.StartTimeout, func(c *conn) { m.died(s, c) })
	if err != nil {
		s.set(Failed, m.scrub(err.Error()), nil, nil)
		return
	}
	m.running(s, c, list)
}

// running records that s came up on c, unless the manager closed meanwhile.
func (m *Manager) running(s *server, c *conn, list []*sdk.Tool) {
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		c.close()
		s.set(Closed, "", nil, nil)
		return
	}
	s.set(Running, "", c, list)
	// It may have died between the handshake and now.
	select {
	case <-c.dead:
		m.died(s, c)
	default:
	}
}

// died records that c, s's connection, ended on its own.
func (m *Manager) died(s *server, c *conn) {
	reason := m.scrub(c.hideIn(c.reason + c.stderrNote())) // before s.mu: scrub takes m.mu
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c == c && c.reason != "" {
		s.state, s.reason, s.c = Stopped, reason, nil
	}
}

// Status describes every configured server, sorted by name.
func (m *Manager) Status() []Status {
	m.mu.Lock()
	names := append([]string(nil), m.order...)
	m.mu.Unlock()
	out := make([]Status, 0, len(names))
	for _, n := range names {
		out = append(out, m.server(n).status())
	}
	return out
}

func (s *server) status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Name: s.cfg.Name, Source: s.cfg.Source, Command: commandLine(s.cfg), State: s.state,
		Reason: s.reason, Tools: len(s.tools), Restarts: s.restarts}
	if s.c != nil {
		st.PID = s.c.pid
	}
	if s.state != Running && s.state != Stopped {
		st.Tools = 0
	}
	return st
}

func commandLine(s Server) string {
	if s.remote() {
		t := s.Transport
		if t == "" {
			t = TransportHTTP
		}
		if s.OAuth {
			t += ", oauth"
		}
		return displayURL(s.URL) + " (" + t + ")"
	}
	parts := append([]string{s.Command}, s.Args...)
	for i, p := range parts {
		if p == "" || strings.ContainsAny(p, " \t\"'\\$") {
			parts[i] = fmt.Sprintf("%q", p)
		}
	}
	return strings.Join(parts, " ")
}

// Tools returns the tools of every running (or restartable) server as executor tools,
// named for the model (see ToolName), sorted by name.
func (m *Manager) Tools() []*Tool {
	var out []*Tool
	used := map[string]bool{}
	for _, st := range m.Status() {
		// A server that died keeps its tools: calling one restarts it.
		if st.State != Running && st.State != Stopped {
			continue
		}
		s := m.server(st.Name)
		s.mu.Lock()
		list := append([]*sdk.Tool(nil), s.tools...)
		s.mu.Unlock()
		for _, t := range list {
			out = append(out, m.newTool(s.cfg.Name, t, used))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// ServerTools returns one server's tools; the server must have started.
func (m *Manager) ServerTools(name string) ([]*Tool, error) {
	s := m.server(name)
	if s == nil {
		return nil, fmt.Errorf("no MCP server %q is configured", name)
	}
	if st := s.status(); st.State != Running && st.State != Stopped {
		return nil, fmt.Errorf("mcp server %q: %s", name, st.Describe())
	}
	var out []*Tool
	for _, t := range m.Tools() {
		if t.server == name {
			out = append(out, t)
		}
	}
	return out, nil
}

// ensure returns a live connection to s, restarting it if it died.
func (m *Manager) ensure(ctx context.Context, s *server, turn int) (*conn, error) {
	s.restartMu.Lock()
	defer s.restartMu.Unlock()
	s.mu.Lock()
	st, c := s.state, s.c
	s.mu.Unlock()
	if st == Running && c.gone() {
		// It exited a moment ago and the watcher has not said so yet: a
		// call now would go to a dead pipe (the next call failed in the
		// 50 ms before the watcher caught up). Let it, then restart.
		if !c.isDead(deathNotice) || c.reason == "" {
			c.markDead("exited")
		}
		m.died(s, c)
	}
	s.mu.Lock()
	st, reason, c, restarts := s.state, s.reason, s.c, s.restarts
	s.mu.Unlock()
	switch {
	case st == Running:
		return c, nil
	case st != Stopped:
		return nil, fmt.Errorf("mcp server %q: %s", s.cfg.Name, s.status().Describe())
	case restarts >= m.opts.MaxRestarts:
		return nil, fmt.Errorf("mcp server %q %s, and it was already restarted %d times this session; not restarting it again", s.cfg.Name, reason, restarts)
	}
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("mcp server %q: hush is shutting down", s.cfg.Name)
	}
	s.mu.Lock()
	s.restarts++
	s.mu.Unlock()
	secrets, err := m.secrets()
	if err != nil {
		return nil, err
	}
	if s.cfg.remote() {
		headers, hide, err := m.headers(ctx, s, turn)
		if err != nil {
			s.refuse(err)
			return nil, fmt.Errorf("mcp server %q was not reconnected: %w", s.cfg.Name, err)
		}
		var tokens *tokenStore
		if s.cfg.OAuth {
			if tokens, err = m.oauthTokens(ctx, s, turn); err != nil {
				s.refuse(err)
				return nil, fmt.Errorf("mcp server %q was not reconnected: %w", s.cfg.Name, err)
			}
			if tokens == nil {
				s.set(NeedsSignIn, noSignIn, nil, nil)
				return nil, fmt.Errorf("mcp server %q was not reconnected: %s; %s", s.cfg.Name, noSignIn, LoginHint(s.cfg.Name))
			}
		}
		m.dial(ctx, s, headers, hide, tokens)
	} else {
		env, held, err := m.buildEnv(ctx, s, turn, secrets)
		if err != nil {
			s.refuse(err)
			return nil, fmt.Errorf("mcp server %q was not restarted: %w", s.cfg.Name, err)
		}
		m.connect(ctx, s, env, held, secrets)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != Running {
		return nil, fmt.Errorf("mcp server %q could not be restarted: %s", s.cfg.Name, s.reason)
	}
	return s.c, nil
}

// Call calls tool on server and writes its result to out. A tool that
// reports failure is a Result with IsError; a server that crashed, hung or
// broke the protocol is an error saying so — and the session goes on.
func (m *Manager) Call(ctx context.Context, turn int, serverName, tool string, args map[string]any, out io.Writer) (executor.Result, error) {
	s := m.server(serverName)
	if s == nil {
		return executor.Result{}, fmt.Errorf("no MCP server %q is configured", serverName)
	}
	c, err := m.ensure(ctx, s, turn)
	if err != nil {
		return executor.Result{}, err
	}
	timeout := s.cfg.CallTimeout
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	sent := time.Now()
	res, err := c.cs.CallTool(callCtx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil && ctx.Err() == nil && c.exitedOnItsOwn(sent, justExited) {
		// The server was ending its own session as the call arrived (it
		// exited by itself within moments of it, unanswered): the call
		// went to a process on its way out. Restart it and send the call
		// once more, as a call that came a moment later would have been.
		if c2, rerr := m.ensure(ctx, s, turn); rerr == nil {
			c = c2
			res, err = c.cs.CallTool(callCtx, &sdk.CallToolParams{Name: tool, Arguments: args})
		}
	}
	if err != nil {
		var wire *jsonrpc.Error
		switch {
		case ctx.Err() != nil:
			return executor.Result{Status: "cancelled", IsError: true}, nil
		case errors.Is(callCtx.Err(), context.DeadlineExceeded):
			return executor.Result{}, m.hung(s, c, tool, timeout)
		case errors.As(err, &wire):
			// The server answered with an error (an unknown tool, bad
			// arguments): the call failed, the server is fine.
			return executor.Result{Status: "mcp server " + serverName + " refused the call: " + c.hideIn(err.Error()), IsError: true}, nil
		case c.isDead(deathNotice):
			return executor.Result{}, fmt.Errorf("mcp server %q %s during the call to %s; it is restarted on the next call%s",
				serverName, c.hideIn(c.reason), tool, m.scrub(c.stderrNote()))
		}
		return executor.Result{}, fmt.Errorf("mcp server %q: the call to %s failed: %s", serverName, tool, c.hideIn(err.Error()))
	}
	writeContent(out, res)
	if res.IsError {
		return executor.Result{Status: "the tool reported an error", IsError: true}, nil
	}
	return executor.Result{}, nil
}

// hung handles a call that timed out: a server that still answers a ping
// keeps running; one that does not is stopped, to be restarted on next use.
func (m *Manager) hung(s *server, c *conn, tool string, timeout time.Duration) error {
	pctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
	defer cancel()
	if c.cs.Ping(pctx, nil) == nil {
		return fmt.Errorf("mcp server %q did not answer the call to %s within %s; the call was abandoned (the server still answers, so it keeps running)",
			s.cfg.Name, tool, timeout)
	}
	reason := fmt.Sprintf("stopped answering (no reply to %s within %s, nor to a ping)", tool, timeout)
	c.markDead(reason)
	c.kill()
	return fmt.Errorf("mcp server %q %s; it was stopped and is restarted on the next call", s.cfg.Name, reason)
}

// Close stops every server and reaps it and its process group. It may be
// called more than once; servers cannot start after it.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	servers := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		servers = append(servers, s)
	}
	m.mu.Unlock()
	var conns []*conn
	for _, s := range servers {
		s.mu.Lock()
		if s.c != nil {
			conns = append(conns, s.c)
			s.c = nil
			s.state = Closed
		}
		s.mu.Unlock()
	}
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.close()
		}()
	}
	wg.Wait()
}
