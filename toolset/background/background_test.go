package background_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/redact"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/toolset/background"
)

func canary(label string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "canary-" + label + "-" + hex.EncodeToString(b)
}

// fixture is one session: canaries in the vault and the ambient
// environment, a gated vault that allows only GRANTED, and a manager.
type fixture struct {
	t        *testing.T
	m        *background.Manager
	dir      string
	logDir   string
	ambient  map[string]string
	secrets  map[string]string
	canaries map[string]string
	granted  string
	mu       sync.Mutex
	asked    []string
	// gate decides what tc.Confirm asks (tool.keep:background); nil
	// allows.
	gate executor.Gate
}

func newFixture(t *testing.T, opts background.Options) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir(), canaries: map[string]string{}}
	f.logDir = filepath.Join(t.TempDir(), "background")
	f.canaries["vault"] = canary("vault")
	f.canaries["env-credential"] = canary("envcred")
	f.canaries["env-url"] = canary("envurl")
	f.granted = canary("granted")
	f.secrets = map[string]string{"VAULT_CANARY": f.canaries["vault"], "GRANTED": f.granted,
		"OPENAI_API_KEY": f.canaries["env-credential"], "DATABASE_URL": "postgres://u:" + f.canaries["env-url"] + "@db/x"}
	f.ambient = map[string]string{
		"PATH": os.Getenv("PATH"), "HOME": f.dir, "LANG": "C.UTF-8",
		"OPENAI_API_KEY":   f.canaries["env-credential"],
		"DATABASE_URL":     f.secrets["DATABASE_URL"],
		"INNOCENT_SETTING": f.canaries["vault"],
	}
	opts.LogDir = f.logDir
	opts.Secrets = executor.NewSecretCache(func() (map[string]string, error) { return f.secrets, nil }, nil)
	m, err := background.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.m = m
	t.Cleanup(func() { m.Close() })
	return f
}

func (f *fixture) Get(name string) (string, error) {
	f.mu.Lock()
	f.asked = append(f.asked, name)
	f.mu.Unlock()
	if name != "GRANTED" {
		return "", fmt.Errorf("%w: vault.read:%s for background is denied", executor.ErrDenied, name)
	}
	return f.granted, nil
}

// call runs the tool once the way the executor does: output through a
// redactor of every secret.
func (f *fixture) call(args any) (string, executor.Result, error) {
	f.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		f.t.Fatal(err)
	}
	var secrets []redact.Secret
	for n, v := range f.secrets {
		secrets = append(secrets, redact.Secret{Name: n, Value: v})
	}
	sort.Slice(secrets, func(i, j int) bool { return secrets[i].Name < secrets[j].Name })
	var buf bytes.Buffer
	w := redact.New(secrets).Writer(&buf)
	tc := &executor.ToolContext{Subject: background.Name, Dir: f.dir, Ambient: tools.NewAmbient(f.ambient), Vault: f,
		Secrets: tools.NewSecretSet(f.secrets), Output: w}
	tc.Confirm = func(gateID, detail string) (executor.Verdict, error) {
		f.mu.Lock()
		f.asked = append(f.asked, gateID)
		f.mu.Unlock()
		if f.gate == nil {
			return executor.Verdict{Decision: executor.Allow}, nil
		}
		return f.gate.Decide(context.Background(), executor.Request{GateID: gateID, Subject: background.Name, Detail: detail})
	}
	res, err := background.Tool{M: f.m}.Run(context.Background(), tc, raw)
	_ = w.Close()
	return buf.String(), res, err
}

func (f *fixture) assertNoCanary(where, text string) {
	f.t.Helper()
	for label, v := range f.canaries {
		if strings.Contains(text, v) {
			f.t.Errorf("%s leaks the %s canary", where, label)
		}
	}
	if strings.Contains(text, f.granted) {
		f.t.Errorf("%s shows the granted secret unredacted", where)
	}
}

// waitState polls until process id leaves the running state.
func waitEnded(t *testing.T, m *background.Manager, id string) background.Info {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, i := range m.List() {
			if i.ID == id && i.State != background.Running {
				return i
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s still running after 30s", id)
	return background.Info{}
}

// waitOutput polls until id's output contains want.
func waitOutput(t *testing.T, m *background.Manager, id, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		zero := int64(0)
		c, err := m.Output(id, background.Query{Offset: &zero})
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(c.Data, []byte(want)) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never printed %q", id, want)
}

// survivors lists live processes whose argv[0] begins with marker (set
// with exec -a, so the shell that started them does not count).
func survivors(t *testing.T, marker string) []string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !bytes.HasPrefix(cmdline, []byte(marker)) {
			continue
		}
		out = append(out, filepath.Base(d)+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return out
}

var startedRE = regexp.MustCompile(`^started bg1 \(pid [0-9]+\); it is stopped when hush exits\.\nRead its output with \{"action": "output", "id": "bg1"\}\.\n$`)

func TestEnvInBackgroundLeaksNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, background.Options{})
	if err := os.WriteFile(filepath.Join(f.dir, ".env"), []byte("VAULT_CANARY="+f.canaries["vault"]+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := `env; echo ---; cat /proc/$PPID/environ | tr '\0' '\n'; echo ---; echo "positive=$POS"; printf %s "$POS" | sha256sum`
	out, res, err := f.call(map[string]any{"action": "start", "command": script, "env": map[string]string{"POS": "${GRANTED}"}})
	if err != nil || res.IsError {
		t.Fatalf("start: %v %+v %s", err, res, out)
	}
	if !startedRE.MatchString(out) {
		t.Errorf("start said %q", out)
	}
	info := waitEnded(t, f.m, "bg1")
	if info.Exit != "exit code 0" {
		t.Fatalf("bg1 ended with %s", info.Exit)
	}
	out, res, err = f.call(map[string]any{"action": "output", "id": "bg1", "offset": 0})
	if err != nil || res.IsError {
		t.Fatalf("output: %v %+v", err, res)
	}
	f.assertNoCanary("the output the model sees", out)
	want := fmt.Sprintf("%x", sha256.Sum256([]byte(f.granted)))
	if !strings.Contains(out, want) {
		t.Errorf("positive control: the granted secret did not arrive exactly:\n%s", out)
	}
	for _, s := range []string{"PATH=", "POS=[REDACTED:GRANTED]", "positive=[REDACTED:GRANTED]", "LANG=C.UTF-8"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	for _, s := range []string{"OPENAI_API_KEY", "DATABASE_URL", "INNOCENT_SETTING"} {
		if strings.Contains(out, s+"=") {
			t.Errorf("the child got %s from hush's environment", s)
		}
	}
	if got := strings.Join(f.asked, ","); got != "GRANTED" {
		t.Errorf("vault reads = %s, want GRANTED", got)
	}
	wantStatus := fmt.Sprintf("bg1 exited (exit code 0); bytes 0–%d of %d; next offset %d", info.Size, info.Size, info.Size)
	if res.Status != wantStatus {
		t.Errorf("status %q, want %q", res.Status, wantStatus)
	}
	// The log on disk is scrubbed too, and private.
	data, err := os.ReadFile(info.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	f.assertNoCanary("the log file", string(data))
	if !strings.Contains(string(data), "positive=[REDACTED:GRANTED]") {
		t.Errorf("the log file is not the scrubbed output:\n%s", data)
	}
	for path, want := range map[string]os.FileMode{info.LogPath: 0o600, f.logDir: 0o700 | os.ModeDir} {
		if fi, err := os.Stat(path); err != nil || fi.Mode() != want {
			t.Errorf("%s: mode %v (%v), want %v", path, fi.Mode(), err, want)
		}
	}
}

func TestDeniedSecretStartsNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, background.Options{})
	marker := canary("marker")
	_, _, err := f.call(map[string]any{"action": "start", "command": "touch " + marker, "env": map[string]string{"X": "${VAULT_CANARY}"}})
	if !errors.Is(err, executor.ErrDenied) {
		t.Fatalf("err = %v, want a denial", err)
	}
	if _, serr := os.Stat(filepath.Join(f.dir, marker)); serr == nil {
		t.Fatal("the command ran although its secret was denied")
	}
	if len(f.m.List()) != 0 {
		t.Fatalf("a process was registered: %+v", f.m.List())
	}
}

func TestStopKillsTheWholeTree(t *testing.T) {
	t.Parallel()
	f := newFixture(t, background.Options{KillGrace: 200 * time.Millisecond})
	marker := canary("tree")
	// Children, a grandchild that escaped its parent (double fork), and
	// one that ignores SIGTERM: all in the group, all must go.
	script := fmt.Sprintf(`(exec -a %[1]s-a sleep 300) & (exec -a %[1]s-b sleep 300 &) ; `+
		`(trap '' TERM; exec -a %[1]s-c sleep 300) & echo ready; wait`, marker)
	if _, res, err := f.call(map[string]any{"action": "start", "command": script}); err != nil || res.IsError {
		t.Fatalf("start: %v %+v", err, res)
	}
	waitOutput(t, f.m, "bg1", "ready")
	deadline := time.Now().Add(10 * time.Second)
	for len(survivors(t, marker)) < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(survivors(t, marker)); n != 3 {
		t.Fatalf("%d marked processes before stop, want 3: %q", n, survivors(t, marker))
	}
	out, res, err := f.call(map[string]any{"action": "stop", "id": "bg1"})
	if err != nil || res.IsError {
		t.Fatalf("stop: %v %+v %s", err, res, out)
	}
	if res.Status != "bg1 stopped (killed by signal terminated)" {
		t.Errorf("stop status %q", res.Status)
	}
	if s := survivors(t, marker); len(s) > 0 {
		t.Fatalf("survivors after stop: %q", s)
	}
}

func TestManyConcurrentProcesses(t *testing.T) {
	t.Parallel()
	const n = 50
	f := newFixture(t, background.Options{KillGrace: 500 * time.Millisecond})
	marker := canary("many")
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			info, err := f.m.Start(background.Spec{Script: fmt.Sprintf("echo started-%d; exec -a %s-%d sleep 300", i, marker, i),
				Dir: f.dir, Env: tools.Env{{Name: "PATH", Value: f.ambient["PATH"]}}})
			if err != nil {
				errs <- err
				return
			}
			ids[i] = info.ID
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, id := range ids {
		if seen[id] {
			t.Fatalf("id %s given twice", id)
		}
		seen[id] = true
		waitOutput(t, f.m, id, fmt.Sprintf("started-%d\n", i))
	}
	list := f.m.List()
	if len(list) != n {
		t.Fatalf("list has %d processes, want %d", len(list), n)
	}
	for k, info := range list {
		if info.ID != fmt.Sprintf("bg%d", k+1) || info.State != background.Running {
			t.Errorf("list[%d] = %s %s", k, info.ID, info.State)
		}
	}
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := f.m.Stop(id); err != nil {
				t.Error(err)
			}
			_ = f.m.List() // reads race with stops
		}()
	}
	wg.Wait()
	for _, info := range f.m.List() {
		if info.State != background.Stopped {
			t.Errorf("%s is %s after stop", info.ID, info.Describe())
		}
	}
	if s := survivors(t, marker); len(s) > 0 {
		t.Fatalf("survivors after stopping all: %q", s)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t, background.Options{})
	if _, res, err := f.call(map[string]any{"action": "start", "command": "echo done"}); err != nil || res.IsError {
		t.Fatalf("start: %v %+v", err, res)
	}
	waitEnded(t, f.m, "bg1")
	missing := filepath.Join(f.dir, "missing")
	cases := []struct {
		name    string
		args    map[string]any
		status  string // a tool result the model sees
		errText string // or an error
	}{
		{"unknown id", map[string]any{"action": "output", "id": "bg9"}, `no such background process "bg9" (known: bg1)`, ""},
		{"stop unknown", map[string]any{"action": "stop", "id": "web"}, `no such background process "web" (known: bg1)`, ""},
		{"stop exited", map[string]any{"action": "stop", "id": "bg1"}, "background process is not running: bg1 already exited (exit code 0); its output can still be read", ""},
		{"bad action", map[string]any{"action": "restart"}, "", `bad arguments: action "restart": want start, list, output or stop`},
		{"no command", map[string]any{"action": "start"}, "", "bad arguments: start needs a command"},
		{"no id", map[string]any{"action": "stop"}, "", "bad arguments: stop needs the id start returned (see action list)"},
		{"misplaced", map[string]any{"action": "list", "id": "bg1"}, "", "bad arguments: id is not used by action list"},
		{"both", map[string]any{"action": "output", "id": "bg1", "offset": 0, "tail": 3}, "", "bad arguments: give offset or tail, not both"},
		{"unknown field", map[string]any{"action": "list", "pid": 1}, "", `bad arguments: json: unknown field "pid"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, res, err := f.call(c.args)
			switch {
			case c.errText != "":
				if err == nil || err.Error() != c.errText {
					t.Errorf("err = %v, want %q", err, c.errText)
				}
			case err != nil:
				t.Errorf("err = %v, want a result %q", err, c.status)
			case !res.IsError || res.Status != c.status:
				t.Errorf("result = %+v, want error result %q", res, c.status)
			}
		})
	}
	// A command that cannot start: its directory is gone.
	_, err := f.m.Start(background.Spec{Script: "true", Dir: missing, Env: tools.Env{}})
	if want := "start: working directory " + missing + " does not exist"; err == nil || err.Error() != want {
		t.Errorf("start in a missing dir: %v, want %q", err, want)
	}
	// A secret value on the command line is refused before anything runs.
	_, err = f.m.Start(background.Spec{Script: "echo " + f.granted, Dir: f.dir, Env: tools.Env{}, Secrets: tools.NewSecretSet(f.secrets)})
	if !errors.Is(err, tools.ErrSecretInArgv) {
		t.Errorf("secret in the script: %v", err)
	}
	if strings.Contains(fmt.Sprint(err), f.granted) {
		t.Error("the error echoes the secret")
	}
}

func TestOutputTailOffsetAndRotation(t *testing.T) {
	t.Parallel()
	f := newFixture(t, background.Options{LogCap: 1000})
	// 200 numbered lines of 10 bytes: 2000 bytes through a 1000-byte cap.
	if _, res, err := f.call(map[string]any{"action": "start", "command": `for i in $(seq 1 200); do printf 'line %04d\n' $i; done`}); err != nil || res.IsError {
		t.Fatalf("start: %v %+v", err, res)
	}
	info := waitEnded(t, f.m, "bg1")
	if info.Size != 2000 {
		t.Fatalf("size %d, want 2000", info.Size)
	}
	var onDisk int64
	for _, p := range []string{info.LogPath, info.LogPath + ".1"} {
		if fi, err := os.Stat(p); err == nil {
			onDisk += fi.Size()
			if fi.Mode() != 0o600 {
				t.Errorf("%s mode %v", p, fi.Mode())
			}
		}
	}
	if onDisk > 1000 {
		t.Errorf("%d bytes on disk, cap 1000", onDisk)
	}
	cases := []struct {
		args   map[string]any
		out    string
		status string
	}{
		{map[string]any{"tail": 2}, "line 0199\nline 0200\n", "bg1 exited (exit code 0); bytes 1980–2000 of 2000; next offset 2000"},
		{map[string]any{}, "", "bg1 exited (exit code 0); bytes 1500–2000 of 2000; next offset 2000"},
		{map[string]any{"offset": 1990}, "line 0200\n", "bg1 exited (exit code 0); bytes 1990–2000 of 2000; next offset 2000"},
		{map[string]any{"offset": 2000}, "", "bg1 exited (exit code 0); bytes 2000–2000 of 2000; next offset 2000"},
		{map[string]any{"offset": 0, "max_bytes": 20}, "line 0101\nline 0102\n", "bg1 exited (exit code 0); bytes 1000–1020 of 2000; next offset 1020; bytes 0–1000 were rotated out of the log"},
		{map[string]any{"offset": 1495, "max_bytes": 15}, "0150\nline 0151\n", "bg1 exited (exit code 0); bytes 1495–1510 of 2000; next offset 1510"},
	}
	for _, c := range cases {
		args := map[string]any{"action": "output", "id": "bg1"}
		for k, v := range c.args {
			args[k] = v
		}
		out, res, err := f.call(args)
		if err != nil || res.IsError {
			t.Fatalf("%v: %v %+v", c.args, err, res)
		}
		if res.Status != c.status {
			t.Errorf("%v: status %q, want %q", c.args, res.Status, c.status)
		}
		if c.out != "" && out != c.out {
			t.Errorf("%v: output %q, want %q", c.args, out, c.out)
		}
	}
}

func TestCloseStopsAllButKept(t *testing.T) {
	t.Parallel()
	f := newFixture(t, background.Options{KillGrace: 200 * time.Millisecond})
	marker := canary("close")
	// bg1: running; bg2: a leader that exited leaving a group member; bg3: kept.
	for _, args := range []map[string]any{
		{"action": "start", "command": fmt.Sprintf("echo up; exec -a %s-run sleep 300", marker)},
		{"action": "start", "command": fmt.Sprintf("(exec -a %s-orphan sleep 300 >/dev/null 2>&1 &); echo up; exit 0", marker)},
		{"action": "start", "command": fmt.Sprintf("echo up; exec -a %s-kept sleep 300", marker), "keep": true},
	} {
		if _, res, err := f.call(args); err != nil || res.IsError {
			t.Fatalf("start: %v %+v", err, res)
		}
	}
	for _, id := range []string{"bg1", "bg2", "bg3"} {
		waitOutput(t, f.m, id, "up")
	}
	waitEnded(t, f.m, "bg2")
	kept := f.m.Close()
	t.Cleanup(func() {
		for _, k := range kept {
			_ = tools.KillGroup(k.PID, 9)
		}
	})
	if len(kept) != 1 || kept[0].ID != "bg3" || kept[0].State != background.Running {
		t.Fatalf("kept = %+v, want bg3 running", kept)
	}
	got := survivors(t, marker)
	if len(got) != 1 || !strings.Contains(got[0], marker+"-kept") {
		t.Fatalf("after Close, survivors = %q, want only the kept one", got)
	}
	if _, err := os.Stat(kept[0].LogPath); err != nil {
		t.Errorf("the kept process's log is gone: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.logDir, "bg1.log")); err == nil {
		t.Error("a stopped process's log was left behind")
	}
	if _, err := f.m.Start(background.Spec{Script: "true", Dir: f.dir, Env: tools.Env{}}); !errors.Is(err, background.ErrClosed) {
		t.Errorf("start after Close: %v", err)
	}
	// The kept process survives Close and still writes to its log.
	if c, err := f.m.Output("bg3", background.Query{Tail: 1}); err != nil || string(c.Data) != "up\n" {
		t.Errorf("kept output %q %v", c.Data, err)
	}
}

// TestKeepNeedsItsOwnGate: a process that outlives hush is a decision of
// its own, tool.keep:background, which --yes (AutoApproveTools) does not
// make; denied, nothing starts.
func TestKeepNeedsItsOwnGate(t *testing.T) {
	t.Parallel()
	f := newFixture(t, background.Options{})
	f.gate = &executor.RuleGate{AutoApproveTools: true}
	marker := canary("keep")
	_, res, err := f.call(map[string]any{"action": "start", "command": "exec -a " + marker + " sleep 300", "keep": true})
	if err != nil || !res.IsError || !strings.HasPrefix(res.Status, "denied: keep: ") {
		t.Fatalf("keep under --yes: %v %+v, want a denial", err, res)
	}
	if l := f.m.List(); len(l) != 0 {
		t.Errorf("a denied keep started a process: %+v", l)
	}
	f.mu.Lock()
	asked := strings.Join(f.asked, ",")
	f.mu.Unlock()
	if asked != executor.GateToolKeep+background.Name {
		t.Errorf("asked %q, want tool.keep:background", asked)
	}
	// Positive control: a rule allowing it lets it start.
	f.gate = &executor.RuleGate{Rules: []executor.Rule{{Gate: "tool.keep:background", Subject: "background", Decision: executor.Allow}}}
	if _, res, err := f.call(map[string]any{"action": "start", "command": "exec -a " + marker + " sleep 300", "keep": true}); err != nil || res.IsError {
		t.Fatalf("keep allowed by a rule: %v %+v", err, res)
	}
	for _, i := range f.m.List() {
		_ = tools.KillGroup(i.PID, 9)
	}
}
