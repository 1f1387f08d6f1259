package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor/events"
	"github.com/hushcli/hush/executor/provider"
)

// env is an Env in the world: its config and data dirs, its project, and
// stdin; its output goes to w.out and w.errOut.
func (w *vaultWorld) env(stdin string) *Env {
	amb := map[string]string{"HUSH_CONFIG_DIR": w.configDir, "HUSH_DATA_DIR": w.dataDir}
	for k, v := range w.ambient {
		amb[k] = v
	}
	return &Env{Ambient: amb, Stdin: strings.NewReader(stdin), Stdout: w.out, Stderr: w.errOut, WorkDir: w.project, Version: "test"}
}

// TestEnvLoadsLazilyAndOnce: nothing is read until a command asks — an Env
// whose config.toml cannot be read still redacts, warns and names its
// project — and the first load's answer is kept: fixing config.toml
// afterwards changes nothing for this process.
func TestEnvLoadsLazilyAndOnce(t *testing.T) {
	t.Parallel()
	w := newVaultWorld(t)
	// A directory where config.toml should be: reading it fails.
	if err := os.Mkdir(filepath.Join(w.configDir, config.FileName), 0o700); err != nil {
		t.Fatal(err)
	}
	e := w.env("")
	if dir, err := e.ProjectDir(); err != nil || dir != w.project {
		t.Errorf("ProjectDir = %q, %v", dir, err)
	}
	e.Ambient["SOME_API_TOKEN"] = "tok-9f8e7d6c5b4a3928"
	if got := e.Redact("x tok-9f8e7d6c5b4a3928 y"); strings.Contains(got, "tok-9f8e7d6c5b4a3928") {
		t.Errorf("before the vault, an ambient credential is not redacted: %q", got)
	}
	if e.Proxy() != nil || e.Scrub() != nil || w.errOut.Len() != 0 {
		t.Errorf("something was loaded before anyone asked: proxy %v scrub %v stderr %q", e.Proxy(), e.Scrub(), w.errOut)
	}
	loadErr := e.Load()
	if loadErr == nil {
		t.Fatal("Load read a config.toml that is a directory")
	}
	if _, err := e.Vault(); err != loadErr {
		t.Errorf("Vault = %v, want the load error %v", err, loadErr)
	}
	if err := os.Remove(filepath.Join(w.configDir, config.FileName)); err != nil {
		t.Fatal(err)
	}
	if err := e.Load(); err != loadErr {
		t.Errorf("the second Load = %v: config was read again", err)
	}
	if _, err := w.env("").Vault(); err != nil {
		t.Errorf("control: a fresh Env opens the fixed config: %v", err)
	}
}

// TestEnvVaultIsOpenedOnce: every accessor sees the same vault, and the
// redactor follows what is stored in it.
func TestEnvVaultIsOpenedOnce(t *testing.T) {
	t.Parallel()
	w := newVaultWorld(t)
	e := w.env("v-2b7c9d1e3f4a5b6c\n")
	lv, err := e.Vault()
	if err != nil {
		t.Fatal(err)
	}
	again, _ := e.Vault()
	if lv != again || e.Proxy() == nil || e.Scrub() == nil {
		t.Fatalf("Vault opened twice or without its proxy and cache: %p %p %v %v", lv, again, e.Proxy(), e.Scrub())
	}
	if got := e.Redact("v-2b7c9d1e3f4a5b6c"); got != "v-2b7c9d1e3f4a5b6c" {
		t.Errorf("control: a value not in the vault is redacted: %q", got)
	}
	if err := lv.Set("DEPLOY_TOKEN", "v-2b7c9d1e3f4a5b6c"); err != nil {
		t.Fatal(err)
	}
	if got := e.Redact("v-2b7c9d1e3f4a5b6c"); got != "[REDACTED:DEPLOY_TOKEN]" {
		t.Errorf("a stored secret is not redacted: %q", got)
	}
	if v, err := lv.Get("DEPLOY_TOKEN"); err != nil || v != "v-2b7c9d1e3f4a5b6c" {
		t.Errorf("the vault the Env handed out does not see the secret: %q, %v", v, err)
	}
}

// TestEnvMaskSetIsBuiltOnce: one mask list per process, which the host
// sandbox uses.
func TestEnvMaskSetIsBuiltOnce(t *testing.T) {
	t.Parallel()
	e := newVaultWorld(t).env("")
	m1, err := e.MaskSet()
	if err != nil {
		t.Fatal(err)
	}
	m2, _ := e.MaskSet()
	if m1 == nil || m1 != m2 {
		t.Errorf("MaskSet = %p then %p", m1, m2)
	}
	if _, err := e.HostSandbox("bash"); err != nil {
		t.Errorf("HostSandbox(bash): %v", err)
	}
}

func TestFindSessionWithoutIDIsAUsageError(t *testing.T) {
	t.Parallel()
	e := newVaultWorld(t).env("")
	_, err := e.FindSession(Resume{Resume: true}, false)
	var usage *UsageError
	if !errors.As(err, &usage) || !errors.Is(err, ErrNeedsID) {
		t.Errorf("FindSession(--resume, no terminal) = %v, want a UsageError around ErrNeedsID", err)
	}
	if _, err := e.FindSession(Resume{Continue: true}, false); err == nil || errors.As(err, &usage) {
		t.Errorf("--continue without sessions = %v, want a plain error", err)
	}
}

// TestEnvRunAndContinue: `hush run` on the Env's config: a replayed turn
// streams its text, session.started names the model and a transcript in
// the data dir, and --continue finds that session again.
func TestEnvRunAndContinue(t *testing.T) {
	t.Parallel()
	w := newVaultWorld(t)
	replay := filepath.Join(t.TempDir(), "replay.json")
	if err := os.WriteFile(replay, []byte(`{"steps":[{"text":"first answer"},{"text":"second answer"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	m := Model{Provider: provider.Replay, Replay: replay}
	e := w.env("")
	if res := e.Run(m, true, Resume{}).Once("one"); res.Kind != "" {
		t.Fatalf("run: %s %v\n%s", res.Kind, res.Err, w.errOut)
	}
	out := w.out.String()
	if !strings.Contains(out, "first answer") || !strings.Contains(out, `"transcript":"`+w.dataDir) {
		t.Errorf("the event stream lacks the answer or the transcript path:\n%s", out)
	}
	w.out.Reset()
	if res := w.env("").Run(m, true, Resume{Continue: true}).Once("two"); res.Kind != "" {
		t.Fatalf("run --continue: %s %v", res.Kind, res.Err)
	}
	ids := [2]string{}
	for i, stream := range []string{out, w.out.String()} {
		line, _, _ := strings.Cut(stream, "\n")
		var ev struct {
			Type string `json:"type"`
			events.Session
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("first event %q: %v", line, err)
		}
		if ev.Type != "session.started" {
			t.Fatalf("first event is not session.started: %s", line)
		}
		ids[i] = ev.ID
		if i == 1 && !ev.Resumed {
			t.Errorf("--continue: session.started says not resumed: %s", line)
		}
	}
	if ids[0] == "" || ids[0] != ids[1] {
		t.Errorf("--continue started session %q, want %q", ids[1], ids[0])
	}
}

// TestEnvChatPlain: `hush chat` without a terminal reads lines from stdin
// and answers each through the Env's session.
func TestEnvChatPlain(t *testing.T) {
	t.Parallel()
	w := newVaultWorld(t)
	replay := filepath.Join(t.TempDir(), "replay.json")
	if err := os.WriteFile(replay, []byte(`{"steps":[{"text":"chat answer"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e := w.env("hello\n")
	c, err := e.Chat(Model{Provider: provider.Replay, Replay: replay}, nil, Resume{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Plain(false, func(os.Signal) { t.Error("exit called") }); err != nil {
		t.Fatalf("%v\n%s", err, w.errOut)
	}
	if !strings.Contains(w.out.String(), "chat answer") {
		t.Errorf("no answer in the chat:\n%s", w.out)
	}
}

// TestStartAgentStoppedWhileAnMCPServerStarts: SIGHUP while a hung MCP
// server starts ends StartAgent at once with a *StoppedError naming the
// signal (hush exits 129), not after the server's start_timeout. Not
// parallel: the signal goes to the whole test process.
func TestStartAgentStoppedWhileAnMCPServerStarts(t *testing.T) {
	server := buildFaultServer(t)
	w := newVaultWorld(t)
	started := filepath.Join(t.TempDir(), "started")
	toml := fmt.Sprintf("[mcp.hang]\ncommand = \"sh\"\nargs = [\"-c\", %q]\nstart_timeout = \"60s\"\n", "touch "+started+"; exec "+server+" -start hang")
	if err := os.WriteFile(filepath.Join(w.configDir, config.FileName), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		for range 500 {
			if _, err := os.Stat(started); err == nil {
				_ = syscall.Kill(syscall.Getpid(), syscall.SIGHUP)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	begin := time.Now()
	_, _, err := w.env("").StartAgent(Model{Provider: provider.Replay}, nil, nopEvents{}, nil, Resume{})
	var stopped *StoppedError
	if !errors.As(err, &stopped) || stopped.Signal != syscall.SIGHUP || !errors.Is(err, ErrInterrupted) {
		t.Fatalf("StartAgent = %v, want a StoppedError for SIGHUP around ErrInterrupted\n%s", err, w.errOut)
	}
	if d := time.Since(begin); d > 30*time.Second {
		t.Errorf("StartAgent waited %v: the server's start_timeout, not the signal, ended it", d)
	}
}
