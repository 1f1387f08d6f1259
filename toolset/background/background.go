// Package background runs long-lived commands detached from the turn that
// started them — dev servers, watchers, long builds — for the background
// tool: start, list, read output, stop.
//
// It owns each process's lifetime and its output log. It starts processes
// only through the spawn layer (tools.Command: a new session and process
// group, no controlling terminal, stdin from /dev/null) with an environment
// the caller built under the tool's policy, so a background process gets
// exactly what bash would get and no more. It must never leave a process
// behind silently: Close stops every process the user did not ask to keep
// and returns the ones it keeps, so hush can say where they are.
package background

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/redact"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/tools/sandbox"
)

// Defaults for Options fields left zero.
const (
	DefaultLogCap     = 8 << 20
	DefaultMaxRunning = 64
	DefaultKillGrace  = 2 * time.Second
)

// Options configures a Manager.
type Options struct {
	// LogDir holds this session's output logs; it is created 0700 on the
	// first start. Required.
	LogDir string
	// LogCap bounds one process's log on disk (two rotated halves).
	LogCap int64
	// MaxRunning bounds the processes running at once.
	MaxRunning int
	// KillGrace is the time between SIGTERM and SIGKILL when stopping.
	KillGrace time.Duration
	// Secrets is the session's secret snapshots, so a log is scrubbed as it
	// is written, by the same snapshot as the turn that started it: the log
	// is on disk, and no log holds a secret value. nil means no secrets.
	Secrets *executor.SecretCache
	// Sandbox is the sandbox every process runs in (nil: none). A kept
	// process keeps its sandbox; only its lifetime differs.
	Sandbox *sandbox.Config
}

// Manager owns one hush session's background processes. It is safe for
// concurrent use.
type Manager struct {
	opts Options

	mu     sync.Mutex
	procs  map[string]*proc
	next   int
	closed bool
}

// New returns a Manager; nothing is created on disk until the first start.
func New(opts Options) (*Manager, error) {
	if opts.LogDir == "" {
		return nil, errors.New("background: no log directory given")
	}
	if opts.LogCap <= 0 {
		opts.LogCap = DefaultLogCap
	}
	if opts.MaxRunning <= 0 {
		opts.MaxRunning = DefaultMaxRunning
	}
	if opts.KillGrace <= 0 {
		opts.KillGrace = DefaultKillGrace
	}
	return &Manager{opts: opts, procs: map[string]*proc{}}, nil
}

// Spec is one process to start.
type Spec struct {
	// Script is run with bash -c.
	Script string
	// Dir is the working directory. Required.
	Dir string
	// Env is the whole child environment, built under the tool's policy.
	Env tools.Env
	// Secrets lets the spawn layer refuse a script holding a vault value.
	Secrets *tools.SecretSet
	// Keep lets the process outlive hush. Its output then goes straight
	// to its log file, which hush cannot scrub or rotate.
	Keep bool
	// Egress serves the process's egress proxy (tools.Spec.Egress); nil
	// leaves it the network its sandbox gives. A kept process loses its
	// way out when hush exits.
	Egress func(context.Context, net.Listener)
	// Local are the session's local services (tools.Spec.Local).
	Local *tools.LocalServices
}

// State is where a process is in its life.
type State string

const (
	Running State = "running"
	Exited  State = "exited"
	Stopped State = "stopped"
)

// Info describes one process.
type Info struct {
	ID      string
	PID     int
	Command string
	Keep    bool
	State   State
	// Exit says how it ended ("exit code 0", "killed by signal 9"); empty
	// while running.
	Exit    string
	Started time.Time
	Ended   time.Time
	// Size is the number of output bytes written so far.
	Size    int64
	LogPath string
}

// Describe is the state in words, for the model and the user.
func (i Info) Describe() string {
	switch i.State {
	case Running:
		return fmt.Sprintf("running (pid %d)", i.PID)
	case Stopped:
		return "stopped (" + i.Exit + ")"
	}
	return "exited (" + i.Exit + ")"
}

// ErrUnknownID, ErrNotRunning and ErrClosed are what callers branch on.
var (
	ErrUnknownID  = errors.New("no such background process")
	ErrNotRunning = errors.New("background process is not running")
	ErrClosed     = errors.New("hush is shutting down; no new background processes")
)

type proc struct {
	id      string
	command string
	keep    bool
	started time.Time
	pid     int
	log     *logFile
	done    chan struct{}

	mu       sync.Mutex
	stopping bool
	state    State
	exit     string
	ended    time.Time
}

// Start starts spec in the background and returns at once.
func (m *Manager) Start(spec Spec) (Info, error) {
	if strings.TrimSpace(spec.Script) == "" {
		return Info{}, errors.New("start: command is empty")
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return Info{}, ErrClosed
	}
	running := 0
	for _, p := range m.procs {
		if p.isRunning() {
			running++
		}
	}
	if running >= m.opts.MaxRunning {
		m.mu.Unlock()
		return Info{}, fmt.Errorf("start: %d background processes are already running (the limit); stop one first", running)
	}
	m.next++
	id := "bg" + strconv.Itoa(m.next)
	m.mu.Unlock()

	// exec reports a missing directory as the program missing
	// ("fork/exec /usr/bin/bash: no such file or directory"); say which.
	if fi, err := os.Stat(spec.Dir); spec.Dir != "" && (err != nil || !fi.IsDir()) {
		return Info{}, fmt.Errorf("start: working directory %s does not exist", spec.Dir)
	}
	if err := os.MkdirAll(m.opts.LogDir, 0o700); err != nil {
		return Info{}, fmt.Errorf("start: create log dir: %w", err)
	}
	log, err := createLog(filepath.Join(m.opts.LogDir, id+".log"), m.opts.LogCap/2, spec.Keep)
	if err != nil {
		return Info{}, fmt.Errorf("start: %w", err)
	}
	p := &proc{id: id, command: spec.Script, keep: spec.Keep, log: log, done: make(chan struct{}), state: Running}

	// A kept process must be able to write after hush is gone, so it gets
	// the file itself; any other process writes through a pipe hush reads,
	// scrubbing and rotating as it goes.
	var out io.Writer
	var red *redact.Writer
	if spec.Keep {
		out = log.f
	} else {
		r, err := m.redactor()
		if err != nil {
			log.remove()
			return Info{}, fmt.Errorf("start: %w", err)
		}
		red = r.Writer(log)
		out = red
	}
	// Stdout and Stderr are the same writer, so exec copies them through
	// one pipe in one goroutine: the redacting writer sees one stream.
	cmd, err := tools.Command(context.Background(), tools.Spec{
		Path: "bash", Args: []string{"-c", tools.StopOnTerm + spec.Script}, Dir: spec.Dir, Env: spec.Env,
		Stdout: out, Stderr: out, Secrets: spec.Secrets, Outlive: spec.Keep, KillGrace: m.opts.KillGrace,
		Sandbox: m.opts.Sandbox, Egress: spec.Egress, Local: spec.Local,
	})
	if err == nil {
		err = cmd.Start()
	}
	if spec.Keep {
		log.closeWrite() // the child holds its own descriptor
	}
	if err != nil {
		log.remove()
		return Info{}, fmt.Errorf("start: %w", err)
	}
	p.pid = cmd.Process.Pid
	p.started = time.Now()
	go p.wait(cmd, red)

	m.mu.Lock()
	m.procs[id] = p
	m.mu.Unlock()
	return p.info(), nil
}

func (m *Manager) redactor() (*redact.Redactor, error) {
	snap, err := m.opts.Secrets.Current()
	if err != nil {
		return nil, fmt.Errorf("read the vault to scrub the log: %w", err)
	}
	return snap.Redactor, nil
}

// wait reaps the process and records how it ended.
func (p *proc) wait(cmd *tools.Cmd, red *redact.Writer) {
	err := cmd.Wait()
	if red != nil {
		_ = red.Close() // flush a held-back tail
	}
	p.log.closeWrite()
	p.mu.Lock()
	p.ended = time.Now()
	p.exit = describeExit(cmd.ProcessState, err)
	if p.stopping {
		p.state = Stopped
	} else {
		p.state = Exited
	}
	p.mu.Unlock()
	close(p.done)
}

func describeExit(ps *os.ProcessState, err error) string {
	var limit *sandbox.LimitError
	if errors.As(err, &limit) {
		return limit.Error()
	}
	if ps == nil {
		if err != nil {
			return "wait failed: " + err.Error()
		}
		return "unknown"
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "killed by signal " + ws.Signal().String()
	}
	return "exit code " + strconv.Itoa(ps.ExitCode())
}

func (p *proc) isRunning() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state == Running
}

func (p *proc) info() Info {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Info{ID: p.id, PID: p.pid, Command: p.command, Keep: p.keep, State: p.state, Exit: p.exit,
		Started: p.started, Ended: p.ended, Size: p.log.size(), LogPath: p.log.path}
}

func (m *Manager) get(id string) (*proc, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.procs[id]
	if !ok {
		ids := make([]string, 0, len(m.procs))
		for k := range m.procs {
			ids = append(ids, k)
		}
		sortIDs(ids)
		known := "none started yet"
		if len(ids) > 0 {
			known = "known: " + strings.Join(ids, ", ")
		}
		return nil, fmt.Errorf("%w %q (%s)", ErrUnknownID, id, known)
	}
	return p, nil
}

// List returns every process of the session, in start order.
func (m *Manager) List() []Info {
	m.mu.Lock()
	ps := make([]*proc, 0, len(m.procs))
	for _, p := range m.procs {
		ps = append(ps, p)
	}
	m.mu.Unlock()
	out := make([]Info, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.info())
	}
	sort.Slice(out, func(i, j int) bool { return idNum(out[i].ID) < idNum(out[j].ID) })
	return out
}

// Chunk is a piece of a process's output.
type Chunk struct {
	Data []byte
	// Start and End are the logical offsets of Data; Size is everything
	// written so far. Start > the offset asked for means older output was
	// rotated away.
	Start, End, Size int64
	Info             Info
}

// Query picks what Output returns: Offset when set, else the last Tail
// lines; at most Max bytes either way.
type Query struct {
	Offset *int64
	Tail   int
	Max    int
}

// Output reads a process's output, running or not.
func (m *Manager) Output(id string, q Query) (Chunk, error) {
	p, err := m.get(id)
	if err != nil {
		return Chunk{}, err
	}
	if q.Max <= 0 {
		q.Max = 32 << 10 // what the executor passes whole (16 KiB head + 16 KiB tail)
	}
	var c Chunk
	if q.Offset != nil {
		if *q.Offset < 0 {
			return Chunk{}, fmt.Errorf("output: offset %d is negative", *q.Offset)
		}
		c.Data, c.Start, c.Size, err = p.log.read(*q.Offset, q.Max)
	} else {
		size := p.log.size()
		c.Data, c.Start, c.Size, err = p.log.read(max(size-int64(q.Max), 0), q.Max)
		if err == nil && q.Tail > 0 {
			cut := tailStart(c.Data, q.Tail)
			// Tail lines start at a line boundary: drop a partial first
			// line unless the data begins the output.
			c.Data, c.Start = c.Data[cut:], c.Start+int64(cut)
		}
	}
	if err != nil {
		return Chunk{}, err
	}
	c.End = c.Start + int64(len(c.Data))
	c.Info = p.info()
	return c, nil
}

// tailStart returns the index where the last n lines of b begin.
func tailStart(b []byte, n int) int {
	end := len(b)
	if end > 0 && b[end-1] == '\n' {
		end--
	}
	for i := end - 1; i >= 0; i-- {
		if b[i] == '\n' {
			n--
			if n == 0 {
				return i + 1
			}
		}
	}
	return 0
}

// Stop stops a running process and its whole process group: SIGTERM, then
// SIGKILL after the grace period, and waits until it is reaped.
func (m *Manager) Stop(id string) (Info, error) {
	p, err := m.get(id)
	if err != nil {
		return Info{}, err
	}
	p.mu.Lock()
	if p.state != Running {
		p.mu.Unlock()
		i := p.info()
		if !p.keep && tools.GroupAlive(p.pid) {
			// The leader exited but left members of its group running.
			_ = tools.KillGroup(p.pid, syscall.SIGKILL)
			tools.WaitGroupGone(p.pid, 2*time.Second)
			return i, nil
		}
		return i, fmt.Errorf("%w: %s already %s; its output can still be read", ErrNotRunning, id, i.Describe())
	}
	p.stopping = true
	p.mu.Unlock()
	p.stop(m.opts.KillGrace)
	return p.info(), nil
}

func (p *proc) stop(grace time.Duration) {
	_ = tools.KillGroup(p.pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
	}
	// Also after the leader exited: a group member that ignored SIGTERM or
	// closed its output would otherwise outlive the stop. The group id
	// cannot be reused while any member lives.
	_ = tools.KillGroup(p.pid, syscall.SIGKILL)
	<-p.done
	tools.WaitGroupGone(p.pid, 2*time.Second)
}

// Close stops every running process the user did not ask to keep, deletes
// their logs, and returns the kept processes still running. Start fails
// after Close; Close may be called more than once.
func (m *Manager) Close() []Info {
	m.mu.Lock()
	m.closed = true
	ps := make([]*proc, 0, len(m.procs))
	for _, p := range m.procs {
		ps = append(ps, p)
	}
	m.mu.Unlock()

	var wg sync.WaitGroup
	var kept []Info
	for _, p := range ps {
		if p.keep {
			if p.isRunning() {
				kept = append(kept, p.info())
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.mu.Lock()
			running := p.state == Running
			p.stopping = p.stopping || running
			p.mu.Unlock()
			if running {
				p.stop(m.opts.KillGrace)
			} else if tools.GroupAlive(p.pid) {
				// The leader exited earlier but left its group running.
				_ = tools.KillGroup(p.pid, syscall.SIGKILL)
				tools.WaitGroupGone(p.pid, 2*time.Second)
			}
			p.log.remove()
		}()
	}
	wg.Wait()
	// The session's log dir goes too, unless a kept process still writes there.
	_ = os.Remove(m.opts.LogDir)
	sort.Slice(kept, func(i, j int) bool { return idNum(kept[i].ID) < idNum(kept[j].ID) })
	return kept
}

func idNum(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "bg"))
	return n
}

func sortIDs(ids []string) {
	sort.Slice(ids, func(i, j int) bool { return idNum(ids[i]) < idNum(ids[j]) })
}
