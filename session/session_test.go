package session

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/provider"
	"github.com/hushcli/hush/vault"
)

type nopEvents struct{}

func (nopEvents) Text(string)                                            {}
func (nopEvents) ToolStart(call provider.ToolCall)                       {}
func (nopEvents) ToolOutput(call provider.ToolCall, chunk []byte)        {}
func (nopEvents) ToolEnd(call provider.ToolCall, res string, isErr bool) {}

// fixture is a user's dirs, a project and a vault, for Open.
type fixture struct {
	opts Options
}

func newFixture(t *testing.T, cfg config.Config) *fixture {
	t.Helper()
	root := t.TempDir()
	dirs := config.Dirs{Config: filepath.Join(root, "config"), Data: filepath.Join(root, "data")}
	project := filepath.Join(root, "project")
	for _, d := range []string{dirs.Config, dirs.Data, project} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ambient := map[string]string{"PATH": os.Getenv("PATH"), "HOME": filepath.Join(root, "home")}
	lv := &vault.Layered{Backend: vault.NewProxy(vault.NewEnvFile(filepath.Join(dirs.Data, vault.EnvFileName))), Process: ambient,
		IsCredential: func(string) bool { return false }}
	if cfg.Model.Provider == "" {
		cfg.Model.Provider = "replay"
	}
	return &fixture{opts: Options{Config: cfg, Dirs: dirs, Ambient: ambient, Dir: project, Vault: lv,
		Scrub: executor.NewSecretCache(lv.All, lv.Version), Events: nopEvents{}, Stderr: os.Stderr, Version: "test"}}
}

func (f *fixture) open(t *testing.T) *Session {
	t.Helper()
	s, err := Open(context.Background(), f.opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestToolCallPolicyTouchesNoDisk: once a session is open, looking up the
// policy of a tool call — an MCP tool, a file tool, bash — reads neither
// config.toml nor mcp.json. Before, each lookup of a tool that is not
// bash, background or dockerbash read mcp.json to build an error message
// it then threw away. The proof: mcp.json is replaced by a FIFO nobody
// writes, on which any open blocks; the lookups must still return.
func TestToolCallPolicyTouchesNoDisk(t *testing.T) {
	t.Parallel()
	f := newFixture(t, config.Config{Tools: map[string]config.ToolConfig{"bash": {Include: []string{"GOFLAGS"}}}})
	mcpJSON := filepath.Join(f.opts.Dirs.Config, config.MCPFileName)
	if err := os.WriteFile(mcpJSON, []byte(`{"mcpServers": {"srv": {"command": "true", "disabled": true}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s := f.open(t)
	if err := os.Remove(mcpJSON); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(mcpJSON, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan []string, 1)
	go func() {
		var got []string
		for _, tool := range []string{"mcp__srv__echo", "read", "http", "bash"} {
			p := s.Agent.Policy(tool)
			got = append(got, tool+":"+string(p.Inherit)+":"+join(p.Include))
		}
		done <- got
	}()
	select {
	case got := <-done:
		want := []string{"mcp__srv__echo::", "read::", "http::", "bash::GOFLAGS"}
		if join(got) != join(want) {
			t.Errorf("policies = %v, want %v", got, want)
		}
	case <-time.After(10 * time.Second):
		// Unblock the reader so the test binary can exit.
		if w, err := os.OpenFile(mcpJSON, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Fatal("a tool call's policy lookup opened mcp.json")
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}

// TestOpenCloseStopsWhatItStarted: Open registers the built-in, file, http,
// background and dockerbash-less tool set; Close may be called twice.
func TestOpenClose(t *testing.T) {
	t.Parallel()
	f := newFixture(t, config.Config{})
	s := f.open(t)
	var names []string
	for _, tool := range s.Agent.Tools.List() {
		names = append(names, tool.Name())
	}
	for _, want := range []string{"bash", "background", "read", "write", "edit", "glob", "grep", "http"} {
		found := false
		for _, n := range names {
			found = found || n == want
		}
		if !found {
			t.Errorf("tool %s missing from %v", want, names)
		}
	}
	if _, err := os.Stat(TranscriptPath(f.opts.Dirs.Data, s.ID)); err != nil {
		t.Errorf("transcript: %v", err)
	}
	s.Close()
	s.Close()
}

func TestOpenInterrupted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, config.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Open(ctx, f.opts); err != ErrInterrupted {
		t.Fatalf("Open with an ended context = %v, want ErrInterrupted", err)
	}
}

// TestOpenMakesHushsDirsFirst: a user who never ran hush setup has no
// config or data dir; Open makes both, 0700, before any tool can start
// (a tool that made ~/.config/hush first would own its config.toml).
// The control: the fixture's dirs are gone before Open.
func TestOpenMakesHushsDirsFirst(t *testing.T) {
	t.Parallel()
	f := newFixture(t, config.Config{})
	for _, d := range []string{f.opts.Dirs.Config, f.opts.Dirs.Data} {
		if err := os.RemoveAll(d); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(d); err == nil {
			t.Fatalf("control: %s is still there", d)
		}
	}
	f.open(t)
	for _, d := range []string{f.opts.Dirs.Config, f.opts.Dirs.Data} {
		fi, err := os.Stat(d)
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s after Open: %v %v, want a 0700 dir", d, fi, err)
		}
	}
}
