package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hushcli/hush/executor/outbuf"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/tools/sandbox"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Shutdown steps: how long a server gets after its stdin closes, and then
// after SIGTERM, before its process group is killed.
const (
	closeGrace = 2 * time.Second
	termGrace  = 2 * time.Second
)

// exitNotice bounds the wait, once a connection broke, for the process to
// be reaped, so the message can say how it exited. It only delays failure
// paths, and only for a server that broke its connection but still runs.
// (A variable for a test that makes it long.)
var exitNotice = 2 * time.Second

// conn is one running server process and its MCP session. hush owns the
// process: it starts it through the spawn layer, it alone calls Wait, and it
// kills the whole process group when the connection ends, so a server's own
// children cannot outlive it.
type conn struct {
	pid    int
	cs     *sdk.ClientSession
	stderr *tailBuffer
	cancel context.CancelFunc // kills the process group (SIGTERM, then SIGKILL)
	pipes  []*os.File         // hush's ends: closed on kill so reads unblock

	exited   chan struct{} // closed once the process is reaped
	waitErr  error         // Wait's result, set before exited closes
	ps       *os.ProcessState
	exitedAt time.Time // when it was reaped; set before exited closes

	closing   atomic.Bool
	stdoutEOF atomic.Bool   // the server closed its stdout
	dead      chan struct{} // closed once the session ended, for any reason
	reason    string        // why it ended unexpectedly; set before dead closes (stderr aside)
	onDead    func(*conn)
	once      sync.Once

	// remote: an HTTP session, no process of hush's (pid 0). hide are its
	// header values, kept out of every message.
	remote bool
	hide   []string
	// tokens are an OAuth server's, hidden like hide.
	tokens *tokenStore
}

// hideIn removes the connection's header values from text.
func (c *conn) hideIn(text string) string {
	for _, v := range append(c.hide, c.tokens.values()...) {
		text = strings.ReplaceAll(text, v, "[REDACTED]")
	}
	return text
}

// spawn starts the server with env and completes the MCP handshake and the
// tool listing within the start timeout.
//
// onDead is called once if the session later ends without hush closing it,
// before the conn's dead channel closes.
func spawn(ctx context.Context, client *sdk.Client, s Server, dir string, env tools.Env, secrets *tools.SecretSet, sandbox *sandbox.Config,
	egress func(context.Context, net.Listener), local *tools.LocalServices, startTimeout time.Duration, onDead func(*conn)) (*conn, []*sdk.Tool, error) {
	// The server's stdin and stdout are plain pipes hush holds, not
	// exec's StdinPipe/StdoutPipe: those are closed by Wait, which would
	// race the protocol reader for a server's last words.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("create pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, fmt.Errorf("create pipe: %w", err)
	}
	procCtx, cancel := context.WithCancel(context.Background())
	stderr := &tailBuffer{max: 4 << 10}
	cmd, err := tools.Command(procCtx, tools.Spec{
		Path: s.Command, Args: s.Args, Dir: dir, Env: env,
		Stdin: inR, Stdout: outW, Stderr: stderr,
		Secrets: secrets, Sandbox: sandbox, KillGrace: termGrace, Egress: egress, Local: local,
	})
	if err == nil {
		err = cmd.Start()
	}
	inR.Close()
	outW.Close()
	if err != nil {
		cancel()
		inW.Close()
		outR.Close()
		return nil, nil, startError(s, dir, err)
	}
	c := &conn{pid: cmd.Process.Pid, stderr: stderr, cancel: cancel, onDead: onDead,
		pipes: []*os.File{inW, outR}, exited: make(chan struct{}), dead: make(chan struct{})}
	go c.reap(cmd)

	startCtx, stop := context.WithTimeout(ctx, startTimeout)
	defer stop()
	cs, err := client.Connect(startCtx, &sdk.IOTransport{Reader: eofReader{outR, &c.stdoutEOF}, Writer: inW}, nil)
	if err != nil {
		return nil, nil, c.failStart(startCtx, "the MCP handshake", startTimeout, err)
	}
	c.cs = cs
	var list []*sdk.Tool
	for t, err := range cs.Tools(startCtx, nil) {
		if err != nil {
			return nil, nil, c.failStart(startCtx, "listing its tools", startTimeout, err)
		}
		list = append(list, t)
	}
	go c.watch()
	return c, list, nil
}

// startError turns exec's errors into what the user must fix.
func startError(s Server, dir string, err error) error {
	if fi, serr := os.Stat(dir); serr != nil || !fi.IsDir() {
		return fmt.Errorf("working directory %s does not exist", dir)
	}
	if errors.Is(err, tools.ErrSecretInArgv) {
		return err
	}
	if errors.Is(err, exec.ErrNotFound) {
		return fmt.Errorf("command %q not found in the PATH it is given; use an absolute path or check that PATH reaches it", s.Command)
	}
	return fmt.Errorf("cannot start %q: %w", s.Command, err)
}

func (c *conn) reap(cmd *tools.Cmd) {
	c.waitErr = cmd.Wait()
	c.ps = cmd.ProcessState
	c.exitedAt = time.Now()
	close(c.exited)
}

// justExited is how soon after a call was sent a server that exits by
// itself is taken to have been on its way out already (see Call): a
// server that ends its own session exits a few milliseconds after its
// last answer, and the next call can arrive within them. The exit is
// timed when hush reaps it, behind the reaper process and the Go
// scheduler: on a loaded machine (load 10 on 2 cores, -race) that came
// 300-380 ms after a call sent 5-10 ms before the exit, and the call was
// not sent again (TestCallBackToBackAfterBye). Hence seconds, not the
// milliseconds the exit itself takes.
const justExited = 2 * time.Second

// exitedOnItsOwn reports whether the server process exited by itself and
// cleanly (status 0: not killed by a signal, not crashed, not stopped by
// hush, not cut off for breaking the protocol) no later than within of
// sent.
func (c *conn) exitedOnItsOwn(sent time.Time, within time.Duration) bool {
	if c.remote || c.closing.Load() || !c.isDead(deathNotice) {
		return false
	}
	select {
	case <-c.exited:
	default:
		return false
	}
	if c.ps == nil {
		return false
	}
	// A server that ends its own session exits cleanly; one that exits
	// with a failure status while the call was under way crashed on it,
	// and sending the call again would crash it again.
	if ws, ok := c.ps.Sys().(syscall.WaitStatus); ok && (ws.Signaled() || ws.ExitStatus() != 0) {
		return false
	}
	return strings.HasPrefix(c.reason, "exited") && c.exitedAt.Sub(sent) <= within
}

// failStart kills a server that did not come up and says why.
func (c *conn) failStart(ctx context.Context, step string, timeout time.Duration, err error) error {
	// A server that exited is usually why the handshake failed; give the
	// reaper a moment so the exit status can be reported. Not when the
	// start timed out: the server ran all that time and still runs, and
	// waiting would only hold up the message (and `hush mcp list`).
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		select {
		case <-c.exited:
		case <-time.After(exitNotice):
		}
	}
	var why string
	exited := false
	select {
	case <-c.exited:
		exited = true
	default:
	}
	// Garbage first: a server whose output hush rejected exits when hush
	// closes its stdin, and that exit is not the news.
	switch g := garbage(err); {
	case g != "":
		why = step + " failed: it wrote something that is not JSON-RPC to stdout (" + g + ")"
	case exited:
		why = "exited during " + step + " (" + c.exitText() + ")"
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		why = fmt.Sprintf("did not finish %s within %s", step, timeout)
	case errors.Is(ctx.Err(), context.Canceled):
		why = "start interrupted during " + step
	default:
		why = step + " failed: " + shorten(err.Error(), 200)
	}
	c.kill()
	return errors.New(why + c.stderrNote())
}

// garbage returns the JSON decoder's complaint when err says the server
// wrote something that is not JSON-RPC, else "". Where the SDK keeps the
// decoder's error in the chain (a reply to a call) it is found by type;
// where it flattens it into text (%v: "client is closing: invalid
// character …", the handshake and the session's end), the text is all
// there is to go on: TestSDKFlattensTheDecoderError shows which, and fails
// when the SDK keeps the type there too.
func garbage(err error) string {
	if err == nil {
		return ""
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return shorten(syntax.Error(), 120)
	case errors.As(err, &typ):
		return shorten(strings.TrimPrefix(typ.Error(), "json: "), 120)
	}
	msg := err.Error()
	for _, sign := range garbageSigns {
		if i := strings.Index(msg, sign); i >= 0 {
			return shorten(msg[i:], 120)
		}
	}
	return ""
}

// garbageSigns are encoding/json's and the SDK's words for output that is
// not JSON, as they reach hush in flattened text.
var garbageSigns = []string{"invalid character", "invalid trailing data", "cannot unmarshal", "unexpected end of JSON input"}

// frameTooLarge reports whether err is the SDK refusing a message over its
// line limit. Reading stops there, so the server, still writing the rest,
// dies of a broken pipe — which is not what went wrong. The SDK's error
// (errFrameTooLarge) is unexported and reaches here only as text;
// TestReplyOverTheMessageLimit fails if that text changes.
func frameTooLarge(err error) bool {
	return err != nil && strings.Contains(err.Error(), "exceeded the configured maximum line length")
}

// gone reports, without waiting, whether the server's process was reaped
// or its session ended.
func (c *conn) gone() bool {
	if c.remote {
		select {
		case <-c.dead:
			return true
		default:
			return false
		}
	}
	select {
	case <-c.exited:
		return true
	case <-c.dead:
		return true
	default:
		return c.stdoutEOF.Load() || exitedUnreaped(c.pid)
	}
}

// eofReader records that the server closed its stdout: what a server that
// exits does first.
type eofReader struct {
	r   *os.File
	eof *atomic.Bool
}

func (e eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil {
		e.eof.Store(true)
	}
	return n, err
}

func (e eofReader) Close() error { return e.r.Close() }

func shorten(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func (c *conn) exitText() string {
	if c.ps == nil {
		if c.waitErr != nil {
			return c.waitErr.Error()
		}
		return "unknown status"
	}
	if ws, ok := c.ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "killed by signal " + ws.Signal().String()
	}
	return fmt.Sprintf("exit status %d", c.ps.ExitCode())
}

func (c *conn) stderrNote() string {
	if t := c.stderr.lastLines(3); t != "" {
		return "; its stderr ends: " + t
	}
	return ""
}

// watch notices a session that ends without hush closing it: the server
// crashed, exited, or broke the protocol.
func (c *conn) watch() {
	werr := c.cs.Wait()
	if c.closing.Load() {
		c.markDead("")
		return
	}
	if c.remote {
		reason := "closed the MCP connection"
		if werr != nil {
			reason = "broke the MCP connection: " + shorten(c.hideIn(werr.Error()), 200)
		}
		c.markDead(reason)
		return
	}
	select {
	case <-c.exited:
	case <-time.After(exitNotice):
	}
	var reason string
	exited := false
	select {
	case <-c.exited:
		exited = true
	default:
	}
	switch g := garbage(werr); {
	case frameTooLarge(werr):
		reason = fmt.Sprintf("sent a message larger than the %d MiB an MCP message may be (the limit of the MCP SDK hush uses); the message was dropped and the server stopped", sdk.DefaultMaxLineLength>>20)
	case g != "":
		reason = "broke the MCP connection: it wrote something that is not JSON-RPC to stdout (" + g + ")"
	case exited:
		reason = "exited unexpectedly (" + c.exitText() + ")"
	case werr != nil:
		reason = "broke the MCP connection: " + shorten(werr.Error(), 200)
	default:
		reason = "closed the MCP connection"
	}
	c.kill()
	c.markDead(reason)
}

func (c *conn) markDead(reason string) {
	c.once.Do(func() {
		c.reason = reason
		if reason != "" && c.onDead != nil {
			c.onDead(c)
		}
		close(c.dead)
	})
}

// isDead reports whether the session ended, waiting up to d for it: a
// call's error can arrive a moment before the watcher has noticed.
func (c *conn) isDead(d time.Duration) bool {
	select {
	case <-c.dead:
		return true
	case <-time.After(d):
		return false
	}
}

// kill stops the process group at once and reaps the process.
func (c *conn) kill() {
	if c.remote {
		if c.cs != nil {
			_ = c.cs.Close()
		}
		c.cancel()
		return
	}
	c.cancel()
	_ = tools.KillGroup(c.pid, syscall.SIGKILL)
	for _, f := range c.pipes {
		_ = f.Close()
	}
	<-c.exited
	// Members of the group that outlived the leader.
	_ = tools.KillGroup(c.pid, syscall.SIGKILL)
	tools.WaitGroupGone(c.pid, 2*time.Second)
}

// close shuts the server down the way the MCP spec asks (close its stdin,
// wait, SIGTERM, SIGKILL) and reaps it and its process group. Close may be
// called more than once.
func (c *conn) close() {
	c.closing.Store(true)
	if c.remote {
		if c.cs != nil {
			_ = c.cs.Close() // ends the HTTP session (DELETE, for Streamable HTTP)
		}
		c.cancel()
		c.markDead("")
		return
	}
	done := make(chan struct{})
	go func() {
		if c.cs != nil {
			_ = c.cs.Close() // closes the pipes: the server sees EOF on stdin
		}
		close(done)
	}()
	select {
	case <-c.exited:
	case <-time.After(closeGrace):
		c.cancel() // SIGTERM to the group; SIGKILL after termGrace
	}
	select {
	case <-c.exited:
	case <-time.After(termGrace + time.Second):
	}
	c.kill()
	<-done
	c.markDead("")
}

// tailBuffer keeps the last bytes a server wrote to stderr, for error
// messages.
type tailBuffer struct {
	mu  sync.Mutex
	b   []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

// lastLines returns the last n non-empty lines on one line, control
// characters removed.
func (t *tailBuffer) lastLines(n int) string {
	t.mu.Lock()
	text := string(t.b)
	t.mu.Unlock()
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(outbuf.VisibleLine(l))
		if l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	s := strings.Join(lines, " | ")
	if len(s) > 400 {
		s = "…" + s[len(s)-400:]
	}
	return s
}
