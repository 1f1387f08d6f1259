package mcp_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/redact"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/toolset/mcp"
)

// faultServer is the Go fault-injection server (testdata/faultserver),
// built once for the package's tests.
var faultServer string

// setupFailed is the exit code of a test binary that could not build the
// fault server.
const setupFailed = 1

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hush-mcp-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(setupFailed)
	}
	faultServer = filepath.Join(dir, "faultserver")
	build := exec.Command("go", "build", "-o", faultServer, "./testdata/faultserver")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build the fault server:", err)
		os.Exit(setupFailed)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func canary(label string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "canary-" + label + "-" + hex.EncodeToString(b)
}

// fixture is one session: canaries in the vault and in hush's environment,
// and a gate that allows vault reads only as configured.
type fixture struct {
	t        *testing.T
	dir      string
	ambient  map[string]string
	secrets  map[string]string
	canaries map[string]string
	granted  string
	allow    map[string]bool // "mcp:srv vault.read:NAME"
	marker   string          // in every server's env, to find its processes

	mu    sync.Mutex
	asked []string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir(), canaries: map[string]string{}, allow: map[string]bool{}, marker: canary("marker")}
	f.canaries["vault"] = canary("vault")
	f.canaries["env-credential"] = canary("envcred")
	f.canaries["env-token"] = canary("envtoken")
	f.canaries["env-url"] = canary("envurl")
	f.granted = canary("granted")
	f.secrets = map[string]string{"VAULT_CANARY": f.canaries["vault"], "GRANTED": f.granted,
		"OPENAI_API_KEY": f.canaries["env-credential"], "MY_SERVICE_TOKEN": f.canaries["env-token"],
		"DATABASE_URL": "postgres://app:" + f.canaries["env-url"] + "@db/app"}
	f.ambient = map[string]string{
		"PATH": os.Getenv("PATH"), "HOME": f.dir, "TERM": "xterm-256color", "USER": "hush-test",
		"LANG": "C.UTF-8", "EDITOR": "vi",
		"OPENAI_API_KEY":   f.canaries["env-credential"],
		"MY_SERVICE_TOKEN": f.canaries["env-token"],
		"DATABASE_URL":     f.secrets["DATABASE_URL"],
		"INNOCENT_SETTING": f.canaries["vault"],
	}
	return f
}

func (f *fixture) grant(_ context.Context, server string, _ int) tools.Grant {
	return func(name string) (string, error) {
		key := mcp.Subject(server) + " vault.read:" + name
		f.mu.Lock()
		f.asked = append(f.asked, key)
		f.mu.Unlock()
		if !f.allow[key] {
			return "", &executor.DeniedError{Message: fmt.Sprintf("vault.read:%s for %s is denied: no rule allows it", name, mcp.Subject(server))}
		}
		v, ok := f.secrets[name]
		if !ok {
			return "", fmt.Errorf("no secret %s", name)
		}
		return v, nil
	}
}

func (f *fixture) manager(servers ...mcp.Server) *mcp.Manager {
	f.t.Helper()
	for i := range servers {
		if servers[i].Env == nil {
			servers[i].Env = map[string]string{}
		}
		servers[i].Env["HUSH_TEST_MARKER"] = f.marker
	}
	m, err := mcp.NewManager(mcp.Options{Servers: servers, Dir: f.dir, Ambient: f.ambient,
		Secrets: executor.NewSecretCache(func() (map[string]string, error) { return f.secrets, nil }, nil), Grant: f.grant})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() {
		m.Close()
		if s := f.survivors(); len(s) > 0 {
			f.t.Errorf("server processes survived Close: %q", s)
		}
	})
	return m
}

// survivors lists live processes started for this fixture: those whose
// environment holds the marker, or whose argv[0] begins with it.
func (f *fixture) survivors() []string {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []string
	for _, d := range dirs {
		environ, _ := os.ReadFile(filepath.Join(d, "environ"))
		cmdline, _ := os.ReadFile(filepath.Join(d, "cmdline"))
		if len(cmdline) == 0 { // a zombie or a kernel thread
			continue
		}
		if bytes.HasPrefix(cmdline, []byte("hush-reaper\x00")) {
			continue // a server's reaper (no sandbox here), which carries its environment and dies with it
		}
		if bytes.Contains(environ, []byte(f.marker)) || bytes.HasPrefix(cmdline, []byte(f.marker)) {
			out = append(out, filepath.Base(d)+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return out
}

// call runs tool the way the executor does, returning the raw output (to
// check exact values) and the output through the redactor (what the model
// would see).
func (f *fixture) call(m *mcp.Manager, name string, args any) (raw, redacted string, res executor.Result, err error) {
	f.t.Helper()
	var tool executor.Tool
	for _, t := range m.Tools() {
		if t.Name() == name {
			tool = t
		}
	}
	if tool == nil {
		f.t.Fatalf("no tool %s; have %v", name, names(m.Tools()))
	}
	argBytes, _ := json.Marshal(args)
	var buf bytes.Buffer
	tc := &executor.ToolContext{Subject: name, Dir: f.dir, Ambient: tools.NewAmbient(f.ambient), Output: &buf}
	res, err = tool.Run(context.Background(), tc, argBytes)
	var list []redact.Secret
	for n, v := range f.secrets {
		list = append(list, redact.Secret{Name: n, Value: v})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	return buf.String(), redact.New(list).String(buf.String()), res, err
}

func names(ts []*mcp.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name())
	}
	return out
}

func (f *fixture) assertNoCanary(where, text string) {
	f.t.Helper()
	for label, v := range f.canaries {
		if strings.Contains(text, v) {
			f.t.Errorf("%s leaks the %s canary", where, label)
		}
	}
}

func status(m *mcp.Manager, name string) mcp.Status {
	for _, s := range m.Status() {
		if s.Name == name {
			return s
		}
	}
	return mcp.Status{}
}

// everythingBin finds the real third-party server that scripts/provision
// installs, or skips the test saying why it cannot run.
func everythingBin(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("needs mcp-everything: node is not installed, so @modelcontextprotocol/server-everything cannot run (run scripts/provision on a machine with Node)")
	}
	cache := os.Getenv("HUSH_TEST_CACHE")
	if cache == "" {
		cache = filepath.Join(os.Getenv("HOME"), ".cache", "hush-test")
	}
	bin := filepath.Join(cache, "npm", "node_modules", ".bin", "mcp-server-everything")
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("needs mcp-everything: %s is not installed; run scripts/provision", bin)
	}
	return bin
}

// TestEverythingSeesOnlyWhatItIsGiven launches the real third-party server
// and calls its environment-printing tool: the output holds the base set
// and the configured env, the granted secret arrives exactly, no canary.
func TestEverythingSeesOnlyWhatItIsGiven(t *testing.T) {
	t.Parallel()
	bin := everythingBin(t)
	f := newFixture(t)
	f.allow["mcp:everything vault.read:GRANTED"] = true
	m := f.manager(mcp.Server{Name: "everything", Command: bin, Args: []string{"stdio"},
		Env: map[string]string{"HUSH_GRANTED": "${GRANTED}", "PLAIN_SETTING": "visible"}})
	m.Start(context.Background())
	if st := status(m, "everything"); st.State != mcp.Running || st.Tools == 0 {
		t.Fatalf("server-everything: %s (%d tools)", st.Describe(), st.Tools)
	}
	raw, redacted, res, err := f.call(m, "mcp__everything__get-env", map[string]any{})
	if err != nil || res.IsError {
		t.Fatalf("get-env: %v %+v\n%s", err, res, redacted)
	}
	f.assertNoCanary("get-env's output", raw)
	var env map[string]string
	if err := json.Unmarshal([]byte(raw), &env); err != nil {
		t.Fatalf("get-env output is not the JSON environment: %v\n%s", err, redacted)
	}
	// Exactly the MCP base set (of what hush's environment holds) plus the
	// configured env, the marker included.
	want := map[string]string{"HOME": f.dir, "PATH": f.ambient["PATH"], "TERM": "xterm-256color", "USER": "hush-test",
		"HUSH_GRANTED": f.granted, "PLAIN_SETTING": "visible", "HUSH_TEST_MARKER": f.marker}
	if len(env) != len(want) {
		var keys []string
		for k := range env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		t.Errorf("the server got %d variables %v, want %d", len(env), keys, len(want))
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want the configured value", k, redact.New([]redact.Secret{{Name: "GRANTED", Value: f.granted}}).String(env[k]))
		}
	}
	if !strings.Contains(redacted, `"HUSH_GRANTED": "[REDACTED:GRANTED]"`) {
		t.Errorf("the granted value is not redacted in what the model sees:\n%s", redacted)
	}
	if got := strings.Join(f.asked, ","); got != "mcp:everything vault.read:GRANTED" {
		t.Errorf("vault reads = %s", got)
	}
}

// TestEverythingDeniedSecretNotStarted: with no rule allowing the read, the
// server is not started with (or without) the value, and the reason says
// which rule to add.
func TestEverythingDeniedSecretNotStarted(t *testing.T) {
	t.Parallel()
	bin := everythingBin(t)
	f := newFixture(t)
	m := f.manager(mcp.Server{Name: "everything", Command: bin, Args: []string{"stdio"},
		Env: map[string]string{"HUSH_GRANTED": "${GRANTED}"}})
	m.Start(context.Background())
	st := status(m, "everything")
	if st.State != mcp.Denied || st.PID != 0 {
		t.Fatalf("state %s, pid %d; want denied, never started", st.State, st.PID)
	}
	if want := "not started: vault.read:GRANTED for mcp:everything is denied: no rule allows it"; st.Describe() != want {
		t.Errorf("describe = %q, want %q", st.Describe(), want)
	}
	if s := f.survivors(); len(s) > 0 {
		t.Errorf("a server process exists although its secret was denied: %q", s)
	}
	if len(m.Tools()) != 0 {
		t.Errorf("tools of a server that is not running are offered: %v", names(m.Tools()))
	}
}

// TestServerEnvironmentIsExact checks the same rules without Node, with the
// Go server, including a secret named in env that is granted and one that
// would only come from the ambient environment.
func TestServerEnvironmentIsExact(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.allow["mcp:faulty vault.read:GRANTED"] = true
	m := f.manager(mcp.Server{Name: "faulty", Command: faultServer,
		Env: map[string]string{"LEAKED": "${GRANTED}", "LITERAL": "$${NOT_A_REF}"}})
	m.Start(context.Background())
	if st := status(m, "faulty"); st.State != mcp.Running {
		t.Fatalf("faulty: %s", st.Describe())
	}
	raw, _, _, err := f.call(m, "mcp__faulty__env", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	f.assertNoCanary("the env tool's output", raw)
	var env map[string]string
	if err := json.Unmarshal([]byte(raw), &env); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if got, want := strings.Join(keys, ","), "HOME,HUSH_TEST_MARKER,LEAKED,LITERAL,PATH,TERM,USER"; got != want {
		t.Errorf("variables %s, want %s", got, want)
	}
	if env["LEAKED"] != f.granted || env["LITERAL"] != "${NOT_A_REF}" {
		t.Errorf("LEAKED/LITERAL not exactly as configured")
	}
	raw, redacted, res, err := f.call(m, "mcp__faulty__leak", map[string]any{"name": "LEAKED"})
	if err != nil || res.IsError {
		t.Fatal(err, res)
	}
	if raw != "value="+f.granted || redacted != "value=[REDACTED:GRANTED]" {
		t.Errorf("leak: redacted output %q", redacted)
	}
}

func TestStartFaults(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		server mcp.Server
		want   string
	}{
		{"exits at once", mcp.Server{Command: faultServer, Args: []string{"-start=exit"}},
			"failed to start: exited during the MCP handshake (exit status 2); its stderr ends: faultserver: starting in mode exit | faultserver: fatal: no configuration found"},
		{"exits during handshake", mcp.Server{Command: faultServer, Args: []string{"-start=exit-in-handshake"}},
			"failed to start: exited during the MCP handshake (exit status 4); its stderr ends: faultserver: starting in mode exit-in-handshake | faultserver: giving up during the handshake"},
		{"garbage on stdout", mcp.Server{Command: faultServer, Args: []string{"-start=garbage"}},
			"failed to start: the MCP handshake failed: it wrote something that is not JSON-RPC to stdout (invalid character 'W' looking for beginning of value); its stderr ends: faultserver: starting in mode garbage"},
		{"hangs", mcp.Server{Command: faultServer, Args: []string{"-start=hang"}, StartTimeout: time.Second},
			"failed to start: did not finish the MCP handshake within 1s; its stderr ends: faultserver: starting in mode hang"},
		{"not found", mcp.Server{Command: "no-such-mcp-server"},
			`failed to start: command "no-such-mcp-server" not found in the PATH it is given; use an absolute path or check that PATH reaches it`},
		{"secret on the command line", mcp.Server{Command: faultServer, Args: []string{"--token=${GRANTED}"}},
			"failed to start: refusing to start: a secret value would appear on the command line (pass it as ${NAME} in env instead)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			c.server.Name = "bad"
			if strings.Contains(strings.Join(c.server.Args, " "), "${GRANTED}") {
				// What a careless config would produce after substitution.
				c.server.Args = []string{"--token=" + f.granted}
			}
			m := f.manager(c.server, mcp.Server{Name: "good", Command: faultServer})
			m.Start(context.Background())
			st := status(m, "bad")
			if st.State != mcp.Failed || st.Describe() != c.want {
				t.Errorf("bad: %q\nwant %q", st.Describe(), c.want)
			}
			if s := f.survivors(); len(s) != 1 {
				t.Errorf("processes after the failed start: %q, want only the good server", s)
			}
			// The session goes on: the other server works.
			if _, out, res, err := f.call(m, "mcp__good__echo", map[string]any{"text": "still here"}); err != nil || out != "still here" {
				t.Errorf("good server after bad start: %q %+v %v", out, res, err)
			}
			if strings.Contains(st.Describe(), f.granted) {
				t.Error("the error shows the secret")
			}
		})
	}
}

func TestCallFaults(t *testing.T) {
	t.Parallel()
	stderr := "; its stderr ends: faultserver: starting in mode normal"
	cases := []struct {
		name    string
		tool    string
		args    map[string]any
		timeout time.Duration
		errText string // an error the model sees
		status  string // or a tool result with this status
		out     string
		after   mcp.State
	}{
		{name: "crash", tool: "crash", errText: `mcp server "faulty" exited unexpectedly (exit status 3) during the call to crash; it is restarted on the next call` + stderr + " | faultserver: panic: simulated crash", after: mcp.Stopped},
		{name: "freeze", tool: "freeze", timeout: time.Second, errText: `mcp server "faulty" stopped answering (no reply to freeze within 1s, nor to a ping); it was stopped and is restarted on the next call`, after: mcp.Stopped},
		{name: "slow", tool: "slow", args: map[string]any{"seconds": 30}, timeout: time.Second, errText: `mcp server "faulty" did not answer the call to slow within 1s; the call was abandoned (the server still answers, so it keeps running)`, after: mcp.Running},
		{name: "garbage", tool: "garbage", errText: `mcp server "faulty" broke the MCP connection: it wrote something that is not JSON-RPC to stdout (invalid character '<' looking for beginning of value) during the call to garbage; it is restarted on the next call` + stderr, after: mcp.Stopped},
		{name: "tool error", tool: "fail", status: "the tool reported an error", out: "the widget is broken", after: mcp.Running},
		{name: "unknown tool", tool: "vanished", status: `mcp server faulty refused the call: calling "tools/call": unknown tool "vanished"`, after: mcp.Running},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			m := f.manager(mcp.Server{Name: "faulty", Command: faultServer, CallTimeout: c.timeout},
				mcp.Server{Name: "other", Command: faultServer})
			m.Start(context.Background())
			args := c.args
			if args == nil {
				args = map[string]any{}
			}
			var out string
			var res executor.Result
			var err error
			if c.tool == "vanished" {
				// A tool the server listed at start but no longer has.
				var buf bytes.Buffer
				res, err = m.Call(context.Background(), 1, "faulty", c.tool, args, &buf)
				out = buf.String()
			} else {
				_, out, res, err = f.call(m, "mcp__faulty__"+c.tool, args)
			}
			switch {
			case c.errText != "":
				if err == nil || err.Error() != c.errText {
					t.Errorf("err = %v\nwant    %s", err, c.errText)
				}
			case err != nil:
				t.Errorf("err = %v, want result %q", err, c.status)
			case !res.IsError || res.Status != c.status || out != c.out:
				t.Errorf("result %+v %q, want error result %q %q", res, out, c.status, c.out)
			}
			if st := status(m, "faulty"); st.State != c.after {
				t.Errorf("after the call: %s, want %s", st.Describe(), c.after)
			}
			// The session goes on: the other server is untouched, and the
			// faulty one answers again (restarted if it died).
			if _, out, _, err := f.call(m, "mcp__other__echo", map[string]any{"text": "ok"}); err != nil || out != "ok" {
				t.Errorf("other server: %q %v", out, err)
			}
			if _, out, _, err := f.call(m, "mcp__faulty__echo", map[string]any{"text": "back"}); err != nil || out != "back" {
				t.Errorf("faulty server after the fault: %q %v", out, err)
			}
			wantRestarts := 0
			if c.after == mcp.Stopped {
				wantRestarts = 1
			}
			if st := status(m, "faulty"); st.State != mcp.Running || st.Restarts != wantRestarts {
				t.Errorf("faulty: %s with %d restarts, want running with %d", st.Describe(), st.Restarts, wantRestarts)
			}
		})
	}
}

func TestRestartsAreBounded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	m := f.manager(mcp.Server{Name: "faulty", Command: faultServer})
	m.Start(context.Background())
	for i := 0; i <= mcp.DefaultMaxRestarts; i++ {
		if _, _, _, err := f.call(m, "mcp__faulty__crash", map[string]any{}); err == nil {
			t.Fatalf("crash %d did not fail", i)
		}
	}
	_, _, _, err := f.call(m, "mcp__faulty__echo", map[string]any{"text": "x"})
	want := `mcp server "faulty" exited unexpectedly (exit status 3); its stderr ends: faultserver: starting in mode normal | faultserver: panic: simulated crash, and it was already restarted 3 times this session; not restarting it again`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant  %s", err, want)
	}
}

// TestCloseReapsServersAndTheirChildren: Close leaves no server and no
// grandchild a server started.
func TestCloseReapsServersAndTheirChildren(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	m := f.manager(mcp.Server{Name: "a", Command: faultServer}, mcp.Server{Name: "b", Command: faultServer},
		mcp.Server{Name: "c", Command: faultServer, Args: []string{"-start=hang"}, StartTimeout: time.Second})
	m.Start(context.Background())
	for _, s := range []string{"a", "b"} {
		if _, out, _, err := f.call(m, "mcp__"+s+"__spawn", map[string]any{"marker": f.marker + "-" + s}); err != nil || !strings.HasPrefix(out, "spawned pid ") {
			t.Fatalf("spawn in %s: %q %v", s, out, err)
		}
	}
	// A grandchild between its fork and its exec can be counted once and
	// missed by the next scan: wait for two scans 20 ms apart that agree.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if len(f.survivors()) == 4 {
			time.Sleep(20 * time.Millisecond)
			if len(f.survivors()) == 4 {
				break
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(f.survivors()); n != 4 {
		t.Fatalf("%d processes before Close, want 2 servers + 2 grandchildren: %q", n, f.survivors())
	}
	m.Close()
	if s := f.survivors(); len(s) > 0 {
		t.Fatalf("survivors after Close: %q", s)
	}
	for _, st := range m.Status() {
		if st.State == mcp.Running {
			t.Errorf("%s still running after Close", st.Name)
		}
	}
	m.Close() // a second Close is harmless
	if _, err := m.Call(context.Background(), 1, "a", "echo", map[string]any{"text": "x"}, &bytes.Buffer{}); err == nil ||
		err.Error() != `mcp server "a": closed` {
		t.Errorf("call after Close: %v", err)
	}
}

func TestToolName(t *testing.T) {
	t.Parallel()
	cases := []struct{ server, tool, want string }{
		{"everything", "get-env", "mcp__everything__get-env"},
		{"github", "create_issue", "mcp__github__create_issue"},
		{"my.server", "get env", "mcp__my_server__get_env_317a1c64"},
		{"files", "read/file", "mcp__files__read_file_3e69995b"},
		{"s", strings.Repeat("x", 70), "mcp__s__" + strings.Repeat("x", 47) + "_7790a31a"},
	}
	for _, c := range cases {
		got := mcp.ToolName(c.server, c.tool)
		if got != c.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", c.server, c.tool, got, c.want)
		}
		if len(got) > 64 || strings.Trim(got, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
			t.Errorf("%q breaks ^[a-zA-Z0-9_-]{1,64}$", got)
		}
	}
}

func TestDescriptionsAndSchemas(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	m := f.manager(mcp.Server{Name: "faulty", Command: faultServer})
	m.Start(context.Background())
	tools, err := m.ServerTools("faulty")
	if err != nil {
		t.Fatal(err)
	}
	var echo *mcp.Tool
	for _, tl := range tools {
		if tl.MCPName() == "echo" {
			echo = tl
		}
	}
	if echo == nil {
		t.Fatalf("no echo among %v", names(tools))
	}
	if got, want := echo.Description(), "[MCP server faulty, tool echo] Echo the text back."; got != want {
		t.Errorf("description %q, want %q", got, want)
	}
	if got, want := string(echo.Schema()), `{"properties":{"text":{"type":"string"}},"required":["text"],"type":"object"}`; got != want {
		t.Errorf("schema %s, want %s", got, want)
	}
	if echo.Subject() != "mcp:faulty" {
		t.Errorf("subject %q", echo.Subject())
	}
	if _, err := m.ServerTools("nope"); err == nil || err.Error() != `no MCP server "nope" is configured` {
		t.Errorf("unknown server: %v", err)
	}
	if !errors.Is(&executor.DeniedError{}, executor.ErrDenied) {
		t.Error("DeniedError is not an ErrDenied")
	}
}

// TestCallRightAfterTheServerExited: a server that ends its own session
// after answering is restarted by the next call, however soon it comes
// (it failed when it came within the ~50 ms before the watcher noticed).
func TestCallRightAfterTheServerExited(t *testing.T) {
	t.Parallel()
	for i := 0; i < 5; i++ {
		f := newFixture(t)
		m := f.manager(mcp.Server{Name: "s", Command: faultServer})
		m.Start(context.Background())
		pid := status(m, "s").PID
		if _, out, _, err := f.call(m, "mcp__s__bye", map[string]any{}); err != nil || out != "bye" {
			t.Fatalf("bye: %q %v", out, err)
		}
		// Until the process is gone: reaped (hush's reaper is quick; the
		// watcher that marks the server stopped was not).
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if syscall.Kill(pid, 0) == syscall.ESRCH {
				break
			}
		}
		if _, out, _, err := f.call(m, "mcp__s__echo", map[string]any{"text": "again"}); err != nil || out != "again" {
			t.Fatalf("run %d: the call right after the server exited: %q %v", i, out, err)
		}
		if st := status(m, "s"); st.State != mcp.Running || st.Restarts != 1 {
			t.Errorf("after: %s with %d restarts, want running with 1", st.Describe(), st.Restarts)
		}
		m.Close()
	}
}

// TestCallBackToBackAfterBye: the call sent at once after the one that
// made the server end its own session (before it has even exited) is run
// by a restarted server, 20 times out of 20; a server that crashes in the
// middle of a call is not called twice (TestRestartsAreBounded).
func TestCallBackToBackAfterBye(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for i := 0; i < 20; i++ {
		m := f.manager(mcp.Server{Name: "s", Command: faultServer})
		m.Start(context.Background())
		if _, out, _, err := f.call(m, "mcp__s__bye", map[string]any{}); err != nil || out != "bye" {
			t.Fatalf("run %d: bye: %q %v", i, out, err)
		}
		want := fmt.Sprintf("again %d", i)
		if _, out, _, err := f.call(m, "mcp__s__echo", map[string]any{"text": want}); err != nil || out != want {
			t.Fatalf("run %d: the call right after bye: %q %v", i, out, err)
		}
		m.Close()
	}
}

// TestReplyOverTheMessageLimit: a reply larger than the SDK's 16 MiB limit
// is reported as that, not as the broken pipe the server then dies of.
func TestReplyOverTheMessageLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	m := f.manager(mcp.Server{Name: "s", Command: faultServer})
	m.Start(context.Background())
	_, _, _, err := f.call(m, "mcp__s__big", map[string]any{"mib": 17})
	want := `mcp server "s" sent a message larger than the 16 MiB an MCP message may be (the limit of the MCP SDK hush uses); the message was dropped and the server stopped during the call to big; it is restarted on the next call`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %v\nwant    %s", err, want)
	}
	// Positive control: a reply under the limit arrives whole, and the
	// server is back.
	if _, out, _, err := f.call(m, "mcp__s__big", map[string]any{"mib": 1}); err != nil || len(out) != 1<<20 {
		t.Errorf("1 MiB reply: %d bytes, %v", len(out), err)
	}
}

// TestStartTimeoutFailsAtOnce: a server that did not finish its start within
// its start timeout is reported (and stopped) when the timeout ends, not
// after a further wait for it to exit: here that wait is made 30s, so a
// start that waited it out cannot pass. Not parallel: it sets ExitNotice
// before the parallel tests run.
func TestStartTimeoutFailsAtOnce(t *testing.T) {
	defer func(d time.Duration) { *mcp.ExitNotice = d }(*mcp.ExitNotice)
	*mcp.ExitNotice = 30 * time.Second
	f := newFixture(t)
	m := f.manager(mcp.Server{Name: "bad", Command: faultServer, Args: []string{"-start=hang"}, StartTimeout: time.Second})
	done := make(chan struct{})
	go func() { m.Start(context.Background()); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("a start that timed out waited for the server to exit")
	}
	want := "failed to start: did not finish the MCP handshake within 1s; its stderr ends: faultserver: starting in mode hang"
	if st := status(m, "bad"); st.State != mcp.Failed || st.Describe() != want {
		t.Errorf("bad: %q\nwant %q", st.Describe(), want)
	}
	if s := f.survivors(); len(s) != 0 {
		t.Errorf("processes after the failed start: %q", s)
	}
}
