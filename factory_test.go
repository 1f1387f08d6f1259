package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor/events"
	"github.com/hushcli/hush/executor/provider"
	"github.com/hushcli/hush/session"
)

// TestFactoryLoadsLazilyAndOnce: nothing is read until a command asks — a factory
// whose config.toml cannot be read still redacts, warns and names its
// project — and the first load's answer is kept: fixing config.toml
// afterwards changes nothing for this process.
func TestFactoryLoadsLazilyAndOnce(t *testing.T) {
	t.Parallel()
	ta := newTestApp(t, "")
	// A directory where config.toml should be: reading it fails.
	if err := os.MkdirAll(filepath.Join(ta.configDir, config.FileName), 0o700); err != nil {
		t.Fatal(err)
	}
	e := ta.again("")
	if dir, err := e.ProjectDir(); err != nil || dir != ta.project {
		t.Errorf("ProjectDir = %q, %v", dir, err)
	}
	e.Ambient["SOME_API_TOKEN"] = "tok-9f8e7d6c5b4a3928"
	if got := e.Redact("x tok-9f8e7d6c5b4a3928 y"); strings.Contains(got, "tok-9f8e7d6c5b4a3928") {
		t.Errorf("before the vault, an ambient credential is not redacted: %q", got)
	}
	if e.Proxy() != nil || e.Scrub() != nil || ta.errOut.Len() != 0 {
		t.Errorf("something was loaded before anyone asked: proxy %v scrub %v stderr %q", e.Proxy(), e.Scrub(), ta.errOut)
	}
	loadErr := e.Load()
	if loadErr == nil {
		t.Fatal("Load read a config.toml that is a directory")
	}
	if _, err := e.Vault(); err != loadErr {
		t.Errorf("Vault = %v, want the load error %v", err, loadErr)
	}
	if err := os.Remove(filepath.Join(ta.configDir, config.FileName)); err != nil {
		t.Fatal(err)
	}
	if err := e.Load(); err != loadErr {
		t.Errorf("the second Load = %v: config was read again", err)
	}
	if _, err := ta.again("").Vault(); err != nil {
		t.Errorf("control: a fresh factory opens the fixed config: %v", err)
	}
}

// TestFactoryVaultIsOpenedOnce: every accessor sees the same vault, and the
// redactor follows what is stored in it.
func TestFactoryVaultIsOpenedOnce(t *testing.T) {
	t.Parallel()
	ta := newTestApp(t, "")
	e := ta.again("v-2b7c9d1e3f4a5b6c\n")
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
		t.Errorf("the vault the factory handed out does not see the secret: %q, %v", v, err)
	}
}

// TestFactoryMaskSetIsBuiltOnce: one mask list per process, which the host
// sandbox uses.
func TestFactoryMaskSetIsBuiltOnce(t *testing.T) {
	t.Parallel()
	e := newTestApp(t, "").app
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
	e := newTestApp(t, "").app
	_, err := e.FindSession(session.Resume{Resume: true}, false)
	if asExit(err).code != exitUsage || !errors.Is(err, session.ErrNeedsID) {
		t.Errorf("FindSession(--resume, no terminal) = %v, want a usage error around ErrNeedsID", err)
	}
	if _, err := e.FindSession(session.Resume{Continue: true}, false); err == nil || asExit(err).code == exitUsage {
		t.Errorf("--continue without sessions = %v, want a plain error", err)
	}
}

// TestFactoryRunAndContinue: `hush run` on the factory's config: a replayed turn
// streams its text, session.started names the model and a transcript in
// the data dir, and --continue finds that session again.
func TestFactoryRunAndContinue(t *testing.T) {
	t.Parallel()
	ta := newTestApp(t, "")
	replay := filepath.Join(t.TempDir(), "replay.json")
	if err := os.WriteFile(replay, []byte(`{"steps":[{"text":"first answer"},{"text":"second answer"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	m := session.Model{Provider: provider.Replay, Replay: replay}
	e := ta.again("")
	if res := e.Run(m, true, session.Resume{}).Once("one"); res.Kind != "" {
		t.Fatalf("run: %s %v\n%s", res.Kind, res.Err, ta.errOut)
	}
	out := ta.out.String()
	if !strings.Contains(out, "first answer") || !strings.Contains(out, `"transcript":"`+ta.dir) {
		t.Errorf("the event stream lacks the answer or the transcript path:\n%s", out)
	}
	ta.out.Reset()
	if res := ta.again("").Run(m, true, session.Resume{Continue: true}).Once("two"); res.Kind != "" {
		t.Fatalf("run --continue: %s %v", res.Kind, res.Err)
	}
	ids := [2]string{}
	for i, stream := range []string{out, ta.out.String()} {
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

// TestFactoryChatPlain: `hush chat` without a terminal reads lines from stdin
// and answers each through the factory's session.
func TestFactoryChatPlain(t *testing.T) {
	t.Parallel()
	ta := newTestApp(t, "")
	replay := filepath.Join(t.TempDir(), "replay.json")
	if err := os.WriteFile(replay, []byte(`{"steps":[{"text":"chat answer"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e := ta.again("hello\n")
	c, err := e.Chat(session.Model{Provider: provider.Replay, Replay: replay}, nil, session.Resume{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Plain(false, func(os.Signal) { t.Error("exit called") }); err != nil {
		t.Fatalf("%v\n%s", err, ta.errOut)
	}
	if !strings.Contains(ta.out.String(), "chat answer") {
		t.Errorf("no answer in the chat:\n%s", ta.out)
	}
}

// TestStartAgentStoppedWhileAnMCPServerStarts: SIGHUP while a hung MCP
// server starts ends StartAgent at once with a *stoppedError naming the
// signal (hush exits 129), not after the server's start_timeout. Not
// parallel: the signal goes to the whole test process.
func TestStartAgentStoppedWhileAnMCPServerStarts(t *testing.T) {
	server := buildFaultServer(t)
	ta := newTestApp(t, "")
	// The marker goes in the project, which is in the server's world; the
	// server itself is brought in by [sandbox] allow.
	started := filepath.Join(ta.project, "started")
	toml := fmt.Sprintf("[sandbox]\nallow = [%q]\n\n[mcp.hang]\ncommand = \"sh\"\nargs = [\"-c\", %q]\nstart_timeout = \"60s\"\n",
		filepath.Dir(server), "touch "+started+"; exec "+server+" -start hang")
	ta.writeConfig(t, toml)
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
	_, _, err := ta.again("").StartAgent(session.Model{Provider: provider.Replay}, nil, events.New(io.Discard), nil, session.Resume{})
	var stopped *stoppedError
	if !errors.As(err, &stopped) || stopped.Signal != syscall.SIGHUP || !errors.Is(err, session.ErrInterrupted) {
		t.Fatalf("StartAgent = %v, want a stoppedError for SIGHUP around ErrInterrupted\n%s", err, ta.errOut)
	}
	if d := time.Since(begin); d > 30*time.Second {
		t.Errorf("StartAgent waited %v: the server's start_timeout, not the signal, ended it", d)
	}
}
