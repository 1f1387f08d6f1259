package dockerbash_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/auditlog"
	"github.com/hushcli/hush/executor/provider"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/tools/sandbox/egress"
	"github.com/hushcli/hush/toolset/dockerbash"
)

// testImage is built by scripts/provision from Debian's busybox-static,
// with no registry.
const testImage = "hush-test/busybox:latest"

// engineAmbient returns the engine settings of the test's environment, as
// hush's snapshot would hold them, or skips with the reason the tests
// cannot run. HUSH_TEST_REQUIRE_DOCKER=1 turns the skip into a failure, for
// CI that provisioned an engine and must not pass by skipping.
func engineAmbient(t *testing.T) map[string]string {
	t.Helper()
	ambient := map[string]string{}
	for _, n := range []string{"DOCKER_HOST", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH", "DOCKER_API_VERSION", "HOME"} {
		if v := os.Getenv(n); v != "" {
			ambient[n] = v
		}
	}
	skip := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("HUSH_TEST_REQUIRE_DOCKER") != "" {
			t.Fatalf("HUSH_TEST_REQUIRE_DOCKER is set but %s", msg)
		}
		t.Skip("needs docker: " + msg)
	}
	cli, err := officialClient(ambient)
	if err != nil {
		skip("no Docker client: %v", err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx); err != nil {
		skip("no Docker engine answers at %s (scripts/provision starts one): %v", dockerbash.EngineHost(ambient), err)
	}
	if _, err := cli.ImageInspect(ctx, testImage); err != nil {
		skip("the engine at %s has no %s (scripts/provision imports it from busybox-static): %v", dockerbash.EngineHost(ambient), testImage, err)
	}
	return ambient
}

func canary(label string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "canary-" + label + "-" + hex.EncodeToString(b)
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// syncBuffer is tc.Output for direct calls; the test reads it while the
// tool writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type mapVault map[string]string

func (m mapVault) Get(name string) (string, error) {
	v, ok := m[name]
	if !ok {
		return "", fmt.Errorf("no secret %s", name)
	}
	return v, nil
}

// denyVault is a gated vault whose gate says no.
type denyVault struct{}

func (denyVault) Get(name string) (string, error) {
	return "", fmt.Errorf("%w: vault.read:%s for dockerbash needs a rule", executor.ErrDenied, name)
}

// call runs the tool directly with a plain ToolContext.
func call(t *testing.T, ctx context.Context, tool dockerbash.Tool, tc *executor.ToolContext, args map[string]any) (executor.Result, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return tool.Run(ctx, tc, raw)
}

func newToolContext(t *testing.T, ambient map[string]string, vault executor.SecretReader, secrets map[string]string) (*executor.ToolContext, *syncBuffer) {
	t.Helper()
	out := &syncBuffer{}
	project := t.TempDir()
	if err := os.WriteFile(filepath.Join(project, "README"), []byte("a project\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &executor.ToolContext{
		Subject: dockerbash.Name, Dir: project, Ambient: tools.NewAmbient(ambient), Vault: vault,
		Secrets: tools.NewSecretSet(secrets), Output: out,
	}, out
}

func newTool(t *testing.T) dockerbash.Tool {
	return dockerbash.Tool{Image: testImage, DataDir: filepath.Join(t.TempDir(), "data"), Timeout: time.Minute}
}

// gone asserts the engine no longer knows the container whose short id
// (its hostname) is id, neither by id nor under the tool's label.
func gone(t *testing.T, ambient map[string]string, id string) {
	t.Helper()
	if len(id) < 12 {
		t.Fatalf("no container id captured (got %q)", id)
	}
	cli, err := officialClient(ambient)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx := context.Background()
	if _, err := cli.ContainerInspect(ctx, id); !cerrdefs.IsNotFound(err) {
		t.Errorf("container %s still exists after the call (inspect: %v)", id, err)
	}
	list, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", dockerbash.LabelTool+"="+dockerbash.Name))})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list {
		if strings.HasPrefix(c.ID, id) {
			t.Errorf("container %s is still listed under label %s=%s (state %s)", id, dockerbash.LabelTool, dockerbash.Name, c.State)
		}
	}
}

// scripted is a provider that plays responses and records every request.
type scripted struct {
	mu    sync.Mutex
	steps []provider.Response
	seen  []provider.Request
}

func (s *scripted) Name() string { return "scripted" }

func (s *scripted) Stream(_ context.Context, req provider.Request, onText func(string)) (provider.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, req)
	if len(s.steps) == 0 {
		return provider.Response{Text: "done"}, nil
	}
	r := s.steps[0]
	s.steps = s.steps[1:]
	if onText != nil && r.Text != "" {
		onText(r.Text)
	}
	return r, nil
}

type recorder struct{ syncBuffer }

func (r *recorder) Text(d string) { _, _ = r.Write([]byte(d)) }
func (r *recorder) ToolStart(c provider.ToolCall) {
	_, _ = r.Write([]byte("\n[call " + c.Name + "]\n"))
}
func (r *recorder) ToolOutput(_ provider.ToolCall, b []byte) { _, _ = r.Write(b) }
func (r *recorder) ToolEnd(_ provider.ToolCall, s string, _ bool) {
	_, _ = r.Write([]byte("\n[result " + s + "]\n"))
}

// scanCmdlines reads every process's command line on the host until stop
// is closed. It records any that holds a canary, and whether it ever saw a
// command line holding marker — the container's own `sh -c SCRIPT`, which
// proves the scan ran while the container did.
type cmdlineScan struct {
	mu        sync.Mutex
	leaks     []string
	sawMarker bool
	passes    int
}

func (s *cmdlineScan) run(stop <-chan struct{}, marker string, canaries map[string]string) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		files, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil || len(data) == 0 {
				continue
			}
			line := string(data)
			s.mu.Lock()
			if strings.Contains(line, marker) {
				s.sawMarker = true
			}
			for label, v := range canaries {
				if strings.Contains(line, v) {
					s.leaks = append(s.leaks, fmt.Sprintf("%s holds the %s canary", f, label))
				}
			}
			s.mu.Unlock()
		}
		s.mu.Lock()
		s.passes++
		s.mu.Unlock()
	}
}

func (s *cmdlineScan) state() (bool, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sawMarker, s.passes
}

// TestTurnRecoversNoSecret is seed 000's step 4 against a real engine: a
// docker-bash turn with canaries in the vault, hush's environment, a
// project .env (root and nested) and a configured mask runs env, cat
// /app/.env and ls -la /app, and nothing of them comes back — not even
// redacted. A granted ${GRANTED} arrives exactly (its sha256 computed in
// the container) and comes back redacted. Meanwhile no host process's
// command line holds a secret.
func TestTurnRecoversNoSecret(t *testing.T) {
	t.Parallel()
	ambient := engineAmbient(t)
	c := map[string]string{
		"vault": canary("vault"), "granted": canary("granted"), "dotenv": canary("dotenv"), "nested-dotenv": canary("nested"),
		"pem": canary("pem"), "env-credential": canary("envcred"), "env-url": canary("envurl"), "env-plain": canary("envplain"),
		"data-dir": canary("datadir"),
	}
	project := t.TempDir()
	dataDir := filepath.Join(project, ".hush-data") // a data dir inside the project is hidden too
	files := map[string]string{
		".env":                 fmt.Sprintf("DOTENV_CANARY=%s\n", c["dotenv"]),
		"svc/api/.env.local":   fmt.Sprintf("NESTED_CANARY=%s\n", c["nested-dotenv"]),
		"certs/server.pem":     c["pem"] + "\n",
		".hush-data/vault.env": fmt.Sprintf("VAULT_CANARY=%s\n", c["data-dir"]),
		"README":               "a project\n",
	}
	for rel, content := range files {
		p := filepath.Join(project, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The vault: what hush's Layered vault would hold. The ambient canaries
	// are deliberately not in it, so a leak of them would show raw.
	vault := mapVault{"VAULT_CANARY": c["vault"], "GRANTED": c["granted"], "DOTENV_CANARY": c["dotenv"], "NESTED_CANARY": c["nested-dotenv"]}
	amb := map[string]string{
		"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": t.TempDir(), "LANG": "C.UTF-8",
		"OPENAI_API_KEY": c["env-credential"], "DATABASE_URL": "postgres://app:" + c["env-url"] + "@db/app",
		"INNOCENT_SETTING": c["vault"], "HUSH_PLAIN_PROBE": c["env-plain"],
	}
	for k, v := range ambient {
		if k != "HOME" {
			amb[k] = v
		}
	}
	marker := "marker-" + hex.EncodeToString([]byte(c["granted"][len(c["granted"])-4:]))
	script := `env | sort; echo ---; cat /app/.env; echo "dotenv-bytes=$(wc -c < /app/.env)"; ` +
		`cat /app/svc/api/.env.local; echo "nested-bytes=$(wc -c < /app/svc/api/.env.local)"; ` +
		`cat /app/certs/server.pem; echo "pem-bytes=$(wc -c < /app/certs/server.pem)"; ` +
		`ls -A /app/.hush-data | wc -l; echo ---; ls -la /app; echo ---; ` +
		`echo "positive=$POS"; printf %s "$POS" | sha256sum; ` +
		`: ` + marker + `; while [ ! -e /app/release ]; do sleep 0.05; done`
	args, _ := json.Marshal(map[string]any{"script": script, "env": map[string]string{"POS": "${GRANTED}"}, "timeout_seconds": 60})
	model := &scripted{steps: []provider.Response{
		{Text: "Looking.", ToolCalls: []provider.ToolCall{{ID: "c1", Name: dockerbash.Name, Args: args}}},
		{Text: "All clean."},
	}}
	events := &recorder{}
	transcript := &syncBuffer{}
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	agent := &executor.Agent{
		Provider: model,
		Tools:    executor.NewRegistry(dockerbash.Tool{Image: testImage, DataDir: dataDir, Mask: []string{"*.pem"}}),
		Gate: &executor.RuleGate{Rules: []executor.Rule{
			{Gate: "tool.run:dockerbash", Subject: "dockerbash", Decision: executor.Allow},
			{Gate: "vault.read:GRANTED", Subject: "dockerbash", Decision: executor.Allow},
		}},
		Audit:   auditlog.Open(auditPath),
		Vault:   vault,
		Secrets: func() (map[string]string, error) { return vault, nil },
		Ambient: amb,
		Dir:     project,
		// A policy that would copy everything on the host: the container
		// must still start empty.
		Policy:     func(string) tools.Policy { return tools.Policy{Inherit: tools.InheritAll, Include: []string{"*"}} },
		Events:     events,
		Transcript: transcript,
		Session:    "test",
	}

	stop := make(chan struct{})
	scan := &cmdlineScan{}
	var scanDone sync.WaitGroup
	scanDone.Add(1)
	go func() { defer scanDone.Done(); scan.run(stop, marker, c) }()
	// Release the container once the scan has seen it running and made a
	// few full passes while it did.
	go func() {
		start := 0
		for {
			select {
			case <-stop:
				return
			default:
			}
			saw, passes := scan.state()
			if saw && start == 0 {
				start = passes
			}
			if saw && passes >= start+3 {
				_ = os.WriteFile(filepath.Join(project, "release"), nil, 0o644)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	res, err := agent.RunTurn(context.Background(), nil, "look around")
	added := res.Messages
	close(stop)
	scanDone.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if len(added) != 4 {
		t.Fatalf("added %d messages, want user, assistant, tool, assistant", len(added))
	}
	result := added[2].Text
	t.Logf("tool result:\n%s", result)
	t.Logf("/proc scan: %d passes", scan.passes)

	saw, passes := scan.state()
	if !saw {
		t.Fatalf("the /proc scan never saw the container's command line (%d passes): it did not run while the container did", passes)
	}
	for _, l := range scan.leaks {
		t.Error(l)
	}

	sections := strings.Split(result, "---\n")
	if len(sections) != 4 {
		t.Fatalf("result has %d sections, want 4:\n%s", len(sections), result)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(sections[0]), "\n") {
		name, _, _ := strings.Cut(line, "=")
		names = append(names, name)
	}
	sort.Strings(names)
	// The engine adds HOSTNAME and HOME, the image PATH, sh PWD and SHLVL;
	// hush adds only the granted POS.
	if got, want := strings.Join(names, " "), "HOME HOSTNAME PATH POS PWD SHLVL"; got != want {
		t.Errorf("container env names = %q, want %q", got, want)
	}
	if got, want := sections[1], "dotenv-bytes=0\nnested-bytes=0\npem-bytes=0\n0\n"; got != want {
		t.Errorf("masked files section = %q, want %q", got, want)
	}
	if !strings.Contains(sections[2], " .env\n") || !strings.Contains(sections[2], " README\n") {
		t.Errorf("ls -la /app does not show the (empty) .env and README:\n%s", sections[2])
	}
	if got, want := sections[3], "positive=[REDACTED:GRANTED]\n"+sha(c["granted"])+"  -\n[exit code 0]"; got != want {
		t.Errorf("positive control = %q, want %q", got, want)
	}

	sent, _ := json.Marshal(model.seen[1].Messages)
	audit, _ := os.ReadFile(auditPath)
	for where, text := range map[string]string{"the model's next request": string(sent), "the screen": events.String(), "the transcript": transcript.String(), "the audit log": string(audit)} {
		for label, v := range c {
			if strings.Contains(text, v) {
				t.Errorf("%s holds the %s canary", where, label)
			}
		}
		// Not even redacted: the masked files' contents never reached the output.
		for _, name := range []string{"DOTENV_CANARY", "NESTED_CANARY", "VAULT_CANARY", "OPENAI_API_KEY", "DATABASE_URL", "INNOCENT_SETTING", "HUSH_PLAIN_PROBE"} {
			if strings.Contains(text, name) {
				t.Errorf("%s mentions %s", where, name)
			}
		}
	}
	if !strings.Contains(string(audit), `"tool":"dockerbash","gate":"vault.read:GRANTED","decision":"allow","source":"rule"`) {
		t.Errorf("audit lacks the grant to dockerbash:\n%s", audit)
	}
	host := strings.TrimSpace(strings.SplitN(strings.SplitN(sections[0], "HOSTNAME=", 2)[1], "\n", 2)[0])
	gone(t, ambient, host)
}

// TestConfiguredSecretsAndSetArrive: the policy's set values (literal and
// ${NAME}) and configured secrets reach the container exactly, through the
// gated vault; ambient variables never do, whatever the policy says.
func TestConfiguredSecretsAndSetArrive(t *testing.T) {
	t.Parallel()
	ambient := engineAmbient(t)
	token, api := canary("token"), canary("api")
	vault := mapVault{"GH_TOKEN": token, "API_SECRET": api}
	amb := map[string]string{"PATH": "/host/bin", "HUSH_AMBIENT_PROBE": "ambient-visible", "EDITOR": "vim"}
	for k, v := range ambient {
		amb[k] = v
	}
	tc, out := newToolContext(t, amb, vault, vault)
	tc.Policy = tools.Policy{
		Inherit: tools.InheritCore, Include: []string{"HUSH_*"},
		Set:     map[string]string{"MODE": "ci", "API": "${API_SECRET}"},
		Secrets: []string{"GH_TOKEN"},
	}
	res, err := call(t, context.Background(), newTool(t), tc,
		map[string]any{"script": `echo "mode=$MODE editor=[$EDITOR] probe=[$HUSH_AMBIENT_PROBE] path=$PATH"; printf %s "$GH_TOKEN" | sha256sum; printf %s "$API" | sha256sum`})
	if err != nil {
		t.Fatal(err)
	}
	want := "mode=ci editor=[] probe=[] path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n" + sha(token) + "  -\n" + sha(api) + "  -\n"
	if out.String() != want || res.Status != "exit code 0" || res.IsError {
		t.Fatalf("output %q (%+v), want %q", out.String(), res, want)
	}
}

// TestAppIsReadOnlyAndNetworkIsOff: a write to /app fails and leaves the
// host file alone; the container has only a loopback interface, and a
// connection attempt fails. The positive control runs with network "host"
// and sees more than lo, so the check can tell the difference.
func TestAppIsReadOnlyAndNetworkIsOff(t *testing.T) {
	t.Parallel()
	ambient := engineAmbient(t)
	tc, out := newToolContext(t, ambient, mapVault{}, nil)
	script := `if touch /app/new 2>/dev/null; then echo create=ok; else echo create=refused; fi; ` +
		`if { echo x >> /app/README; } 2>/dev/null; then echo append=ok; else echo append=refused; fi; ` +
		`if rm /app/README 2>/dev/null; then echo rm=ok; else echo rm=refused; fi; ` +
		`echo "net=$(ls /sys/class/net | tr '\n' ' ')"; ` +
		`sh -c 'wget -q -T 3 -O /dev/null http://192.0.2.1/' >/dev/null 2>&1; echo "wget=$?"`
	res, err := call(t, context.Background(), newTool(t), tc, map[string]any{"script": script})
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if want := "create=refused\nappend=refused\nrm=refused\nnet=lo \nwget="; !strings.HasPrefix(got, want) || strings.HasSuffix(got, "wget=0\n") {
		t.Fatalf("output %q, want prefix %q and a failed wget", got, want)
	}
	if res.Status != "exit code 0" {
		t.Fatalf("status %q", res.Status)
	}
	if data, err := os.ReadFile(filepath.Join(tc.Dir, "README")); err != nil || string(data) != "a project\n" {
		t.Fatalf("host README changed: %q %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(tc.Dir, "new")); err == nil {
		t.Fatal("a file created in /app appeared on the host")
	}

	// Positive control: a configured network is really used.
	tc2, out2 := newToolContext(t, ambient, mapVault{}, nil)
	tool := newTool(t)
	tool.Network = "host"
	if _, err := call(t, context.Background(), tool, tc2, map[string]any{"script": `ls /sys/class/net | tr '\n' ' '`}); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out2.String()) == "lo" || out2.String() == "" {
		t.Fatalf("with network \"host\" the container saw %q; the network setting is not applied", out2.String())
	}
}

// TestContainerIsRemoved: after a normal call, a failing one, a cancelled
// one (Ctrl-C) and a timed-out one, the engine no longer has the container.
func TestContainerIsRemoved(t *testing.T) {
	t.Parallel()
	ambient := engineAmbient(t)
	cases := []struct {
		name       string
		script     string
		timeout    int
		cancel     bool
		wantStatus string
	}{
		{name: "normal", script: "hostname", wantStatus: "exit code 0"},
		{name: "failing", script: "hostname; exit 3", wantStatus: "exit code 3"},
		{name: "cancelled", script: "hostname; sleep 300", cancel: true, wantStatus: "cancelled; the container was stopped and removed"},
		// The time-out covers creating and starting the container: 5s leaves a loaded
		// machine time to start it and print the hostname first.
		{name: "timed out", script: "hostname; sleep 300", timeout: 5, wantStatus: "timed out after 5s; the container was stopped and removed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tc, out := newToolContext(t, ambient, mapVault{}, nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if c.cancel {
				// Cancel as Ctrl-C does, once the container is running.
				go func() {
					for !strings.Contains(out.String(), "\n") {
						select {
						case <-ctx.Done():
							return
						case <-time.After(10 * time.Millisecond):
						}
					}
					cancel()
				}()
			}
			args := map[string]any{"script": c.script}
			if c.timeout > 0 {
				args["timeout_seconds"] = c.timeout
			}
			res, err := call(t, ctx, newTool(t), tc, args)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != c.wantStatus || res.IsError != (c.wantStatus != "exit code 0") {
				t.Fatalf("result %+v, want status %q", res, c.wantStatus)
			}
			gone(t, ambient, strings.TrimSpace(out.String()))
		})
	}
}

// TestErrorsAreOneSentence: each failure is a single line that says what
// to do, holds no secret value, and starts nothing. Local checks come
// before the engine is asked (an engine address that answers nothing
// proves it: the error is the local one, not "no engine"); the gate comes
// last, so nobody is asked for a secret a missing engine would waste.
func TestErrorsAreOneSentence(t *testing.T) {
	t.Parallel()
	secret := canary("secret")
	nowhere := map[string]string{"DOCKER_HOST": "unix://" + filepath.Join(t.TempDir(), "no-engine.sock")}
	vault := mapVault{"TOKEN": secret}

	type tcase struct {
		name    string
		ambient map[string]string
		vault   executor.SecretReader
		tool    func(dockerbash.Tool) dockerbash.Tool
		dir     func(string) string
		args    map[string]any
		want    string
		is      error
	}
	cases := []tcase{
		{name: "no engine", ambient: nowhere, vault: vault, args: map[string]any{"script": "true"},
			want: "no Docker engine answers at DOCKER_HOST=" + nowhere["DOCKER_HOST"] + "; start that engine or point DOCKER_HOST at a running one", is: dockerbash.ErrNoEngine},
		{name: "engine refuses tcp", ambient: map[string]string{"DOCKER_HOST": "tcp://127.0.0.1:1"}, vault: vault, args: map[string]any{"script": "true"},
			want: "no Docker engine answers at DOCKER_HOST=tcp://127.0.0.1:1; start that engine or point DOCKER_HOST at a running one", is: dockerbash.ErrNoEngine},
		// The gate (here: one that denies) is not even asked without an engine.
		{name: "no engine, no secret asked for", ambient: nowhere, vault: denyVault{}, args: map[string]any{"script": "true", "env": map[string]string{"X": "${TOKEN}"}},
			want: "no Docker engine answers at DOCKER_HOST=" + nowhere["DOCKER_HOST"] + "; start that engine or point DOCKER_HOST at a running one", is: dockerbash.ErrNoEngine},
		{name: "secret in the script", ambient: nowhere, vault: vault, args: map[string]any{"script": "echo " + secret},
			want: tools.ErrSecretInArgv.Error(), is: tools.ErrSecretInArgv},
		{name: "missing project dir", ambient: nowhere, vault: vault, dir: func(d string) string { return filepath.Join(d, "gone") }, args: map[string]any{"script": "true"},
			want: "project directory DIR/gone cannot be mounted at /app: it does not exist or cannot be read"},
		{name: "bad mask", ambient: nowhere, vault: vault, tool: func(t dockerbash.Tool) dockerbash.Tool { t.Mask = []string{"[x"}; return t },
			args: map[string]any{"script": "true"}, want: `tools.dockerbash.mask in config.toml: mask pattern "[x" is not a valid glob`},
		{name: "no image configured", ambient: nowhere, vault: vault, tool: func(t dockerbash.Tool) dockerbash.Tool { t.Image = ""; return t },
			args: map[string]any{"script": "true"}, want: "dockerbash has no image: set image in [tools.dockerbash] of config.toml"},
		{name: "unknown argument", ambient: nowhere, vault: vault, args: map[string]any{"script": "true", "network": "host"},
			want: `bad arguments: json: unknown field "network"`},
	}
	if ambient, ok := engineAmbientOrNil(t); ok {
		// The gate is asked only once the call can run, and a denial
		// starts nothing (the output stays empty).
		cases = append(cases, tcase{name: "denied secret", ambient: ambient, vault: denyVault{}, args: map[string]any{"script": "echo ran", "env": map[string]string{"X": "${TOKEN}"}},
			want: "env: X: permission denied: vault.read:TOKEN for dockerbash needs a rule", is: executor.ErrDenied})
		cases = append(cases, tcase{name: "image missing", ambient: ambient, vault: vault,
			tool: func(t dockerbash.Tool) dockerbash.Tool { t.Image = "hush-test/absent:never"; return t }, args: map[string]any{"script": "true"},
			want: "image not on the Docker engine: hush-test/absent:never is not on the engine at " + dockerbash.EngineHost(ambient) +
				"; hush never pulls, so get it with `docker pull hush-test/absent:never` (or build it with `docker build -t hush-test/absent:never .`), or set image in [tools.dockerbash] of config.toml to one that `docker images` lists",
			is: dockerbash.ErrNoImage})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tc, out := newToolContext(t, c.ambient, c.vault, map[string]string{"TOKEN": secret})
			dir := tc.Dir
			if c.dir != nil {
				tc.Dir = c.dir(dir)
			}
			tool := newTool(t)
			if c.tool != nil {
				tool = c.tool(tool)
			}
			_, err := call(t, context.Background(), tool, tc, c.args)
			if err == nil {
				t.Fatalf("no error; output %q", out.String())
			}
			want := strings.ReplaceAll(c.want, "DIR", dir)
			if err.Error() != want {
				t.Fatalf("error\n%q\nwant\n%q", err.Error(), want)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error does not wrap %v", c.is)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "\n") || out.String() != "" {
				t.Errorf("error holds a secret or several lines, or something ran: %q / %q", err, out.String())
			}
		})
	}
}

// engineAmbientOrNil is engineAmbient for a subtest that is optional
// inside a test that has engine-free cases too.
func engineAmbientOrNil(t *testing.T) (map[string]string, bool) {
	var ambient map[string]string
	ok := t.Run("engine available", func(t *testing.T) { ambient = engineAmbient(t) })
	return ambient, ok && ambient != nil
}

// TestMaskIsLoadBearing: the same project and script, with and without the
// masks. Without them (the [unsafe] switch `hush audit` uses) the container
// reads the .env — so the mount, not luck, is what keeps it out.
func TestMaskIsLoadBearing(t *testing.T) {
	t.Parallel()
	ambient := engineAmbient(t)
	secret := canary("dotenv")
	for _, unsafe := range []bool{false, true} {
		tc, out := newToolContext(t, ambient, mapVault{}, nil)
		if err := os.WriteFile(filepath.Join(tc.Dir, ".env"), []byte("DOTENV="+secret+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		tool := newTool(t)
		tool.UnsafeNoMountMask = unsafe
		if _, err := call(t, context.Background(), tool, tc, map[string]any{"script": "cat /app/.env"}); err != nil {
			t.Fatal(err)
		}
		want := ""
		if unsafe {
			want = "DOTENV=" + secret + "\n"
		}
		if out.String() != want {
			t.Errorf("UnsafeNoMountMask=%v: cat /app/.env gave %q, want %q", unsafe, out.String(), want)
		}
	}
}

// officialClient is the Docker project's own client. The tests use it, not
// hush's, to see what the engine holds after a call.
func officialClient(ambient map[string]string) (*client.Client, error) {
	return client.NewClientWithOpts(client.WithHost(dockerbash.EngineHost(ambient)), client.WithAPIVersionNegotiation())
}

// proxyNetwork is a session's egress proxy as executor.Network, for direct
// calls.
type proxyNetwork struct{ p *egress.Proxy }

func (n proxyNetwork) Proxied(tool string) bool { return tool == dockerbash.Name }
func (n proxyNetwork) Serve(ctx context.Context, l net.Listener, call executor.NetCall) {
	_ = n.p.Serve(ctx, l, egress.Call{Tool: call.Tool, Secrets: call.Secrets, Turn: call.Turn})
}
func (n proxyNetwork) Local() *tools.LocalServices { return nil }

// TestProxyNetworkGoesOnlyThroughTheProxy: with network = "proxy" the
// container reaches the network only through hush's proxy, found in
// HTTP_PROXY, under the call's policy. Three listeners on the host's
// loopback keep every byte: bound (listed in [network] allow, and the
// secret's one host), other (listed too) and unlisted. A call holding no
// secret reaches bound and other (the control) and is refused at
// unlisted; a call granted the secret posts it to other and to bound, and
// only bound receives it. The same port at the proxy's address, without
// the proxy, is not the host's loopback. Every connection is a record of
// the tool; the call's network is gone after the call.
func TestProxyNetworkGoesOnlyThroughTheProxy(t *testing.T) {
	ambient := engineAmbient(t)
	bound, other, unlisted := keepingListener(t), keepingListener(t), keepingListener(t)
	c, err := config.Parse("config.toml", []byte(fmt.Sprintf("[network]\nallow = [%q, %q]\n[secrets.HUSH_TEST_TOKEN]\nhosts = [%q]\n", bound.addr, other.addr, bound.addr)))
	if err != nil {
		t.Fatal(err)
	}
	pol, err := egress.NewPolicy(c)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var records []egress.Record
	p, err := egress.New(egress.Options{Policy: pol, Audit: func(r egress.Record) { mu.Lock(); records = append(records, r); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	tool := newTool(t)
	tool.Network = dockerbash.NetworkProxy
	tool.Session = canary("session")
	_, boundPort, _ := net.SplitHostPort(bound.addr)
	connect := func(addr, payload string) string {
		// nc's stdin stays open a while, for busybox nc to wait for the
		// answer.
		return `(printf 'CONNECT ` + addr + ` HTTP/1.1\r\nHost: ` + addr + `\r\n\r\n'; printf %s "` + payload + `"; sleep 2) | nc -w 3 "$h" "$p"; echo; `
	}
	const findProxy = `hp=${HTTP_PROXY#http://}; h=${hp%:*}; p=${hp##*:}; echo "proxy=$HTTP_PROXY"; `
	run := func(script string, secrets map[string]string, granted []string) string {
		t.Helper()
		tc, out := newToolContext(t, ambient, mapVault(secrets), secrets)
		tc.Network = proxyNetwork{p}
		res, err := call(t, context.Background(), tool, tc, map[string]any{"script": script + "echo done", "secrets": granted})
		if err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		if o := out.String(); res.IsError || !strings.Contains(o, "done") || !strings.Contains(o, "proxy=http://") {
			t.Fatalf("result %+v:\n%s", res, o)
		}
		return out.String()
	}

	o := run(findProxy+connect(bound.addr, "plain-to-bound")+connect(other.addr, "plain-to-other")+connect(unlisted.addr, "plain-to-unlisted")+
		`echo direct | nc -w 2 "$h" `+boundPort+` && echo DIRECT-REACHED; `, nil, []string{})
	if !strings.Contains(bound.seen(), "plain-to-bound") || !strings.Contains(other.seen(), "plain-to-other") {
		t.Fatalf("control: a call without secrets did not reach both listed hosts (they read %q and %q):\n%s", bound.seen(), other.seen(), o)
	}
	if got := unlisted.seen(); got != "" || !strings.Contains(o, "403") {
		t.Errorf("the unlisted host read %q; the container saw:\n%s", got, o)
	}
	if strings.Contains(o, "DIRECT-REACHED") || strings.Contains(bound.seen(), "direct") {
		t.Errorf("the container reached the host's loopback without the proxy:\n%s", o)
	}

	token := canary("token")
	o = run(findProxy+connect(other.addr, `t=$HUSH_TEST_TOKEN`)+connect(bound.addr, `t=$HUSH_TEST_TOKEN`),
		map[string]string{"HUSH_TEST_TOKEN": token}, []string{"HUSH_TEST_TOKEN"})
	if strings.Contains(other.seen(), token) {
		t.Errorf("a host the secret is not bound to received it:\n%s", o)
	}
	if !strings.Contains(bound.seen(), "t="+token) {
		t.Errorf("control: the secret's host did not receive it (it read %q):\n%s", bound.seen(), o)
	}

	mu.Lock()
	want := map[string]egress.Action{"plain " + bound.addr: egress.Allow, "plain " + other.addr: egress.Allow, "plain " + unlisted.addr: egress.Deny,
		"secret " + other.addr: egress.Deny, "secret " + bound.addr: egress.Allow}
	got := map[string]egress.Action{}
	for _, r := range records {
		if r.Tool != dockerbash.Name {
			t.Errorf("record of tool %q", r.Tool)
		}
		kind := "plain"
		if len(r.Secrets) > 0 {
			kind = "secret"
		}
		got[kind+" "+net.JoinHostPort(r.Host, strconv.Itoa(r.Port))] = r.Action
	}
	mu.Unlock()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("records %v, want %v", got, want)
	}
	cli, err := officialClient(ambient)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	nets, err := cli.NetworkList(context.Background(), network.ListOptions{Filters: filters.NewArgs(filters.Arg("label", dockerbash.LabelSession+"="+tool.Session))})
	if err != nil {
		t.Fatal(err)
	}
	if len(nets) != 0 {
		t.Errorf("the call's network outlived it: %v", nets[0].Name)
	}
}

// TestProxyNetworkNeedsTheProxy: network = "proxy" without hush's proxy
// (the sandbox off) refuses to run rather than run unfiltered.
func TestProxyNetworkNeedsTheProxy(t *testing.T) {
	ambient := engineAmbient(t)
	tool := newTool(t)
	tool.Network = dockerbash.NetworkProxy
	tc, _ := newToolContext(t, ambient, mapVault{}, nil)
	_, err := call(t, context.Background(), tool, tc, map[string]any{"script": "echo ran", "secrets": []string{}})
	if err == nil || !strings.Contains(err.Error(), "egress proxy") {
		t.Fatalf("want a refusal naming the egress proxy, got %v", err)
	}
}

// keeping is a loopback listener that keeps what each client sends.
type keeping struct {
	addr string
	mu   sync.Mutex
	raw  bytes.Buffer
}

func keepingListener(t *testing.T) *keeping {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	k := &keeping{addr: l.Addr().String()}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
				b := make([]byte, 4096)
				n, _ := c.Read(b)
				k.mu.Lock()
				k.raw.Write(b[:n])
				k.mu.Unlock()
				_, _ = c.Write([]byte("ok\n"))
			}()
		}
	}()
	return k
}

func (k *keeping) seen() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.raw.String()
}
