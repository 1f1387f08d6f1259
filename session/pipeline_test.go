package session

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor/provider"
)

// TestOneSnapshotScrubsEveryPath: in one session, a bash result, an MCP
// tool's result and a background process's log on disk are scrubbed by the
// session's one secret snapshot. A value printed by all three before it is
// stored is the positive control (the outputs really carry it); stored
// between turns, it is [REDACTED:NAME] in all three from the next turn on.
// The log is read as raw bytes from disk.
func TestOneSnapshotScrubsEveryPath(t *testing.T) {
	t.Parallel()
	server := buildFaultServer(t)
	const value = "canary-midsession-4d1c9e2a77"
	// The model's arguments are scrubbed too, so no call names the value:
	// the shell joins it from two halves, and the MCP server was started
	// with it in a plain setting of its env and prints its environment.
	const joined = `canary-mid""session-4d1c9e2a77`
	calls := func(turn string) []map[string]any {
		return []map[string]any{
			{"id": "b" + turn, "name": "bash", "args": map[string]any{"script": "echo bash:" + joined}},
			{"id": "m" + turn, "name": "mcp__fault__env", "args": map[string]any{}},
			{"id": "g" + turn, "name": "background", "args": map[string]any{"action": "start", "command": "echo bg:" + joined}},
		}
	}
	replay, err := json.Marshal(map[string]any{"steps": []map[string]any{
		{"tool_calls": calls("1")}, {"text": "one"},
		{"tool_calls": calls("2")}, {"text": "two"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Config{
		Rules:  []config.Rule{{Gate: "tool.run:*", Subject: "*", Decision: "allow"}},
		MCP:    map[string]config.MCPServer{"fault": {Command: server, Env: map[string]string{"PLAIN_SETTING": value}}},
		Unsafe: config.Unsafe{NoSandbox: true}, // what is checked here is redaction, on any kernel
	}
	f := newFixture(t, cfg)
	replayPath := filepath.Join(t.TempDir(), "replay.json")
	if err := os.WriteFile(replayPath, replay, 0o600); err != nil {
		t.Fatal(err)
	}
	f.opts.Model = Model{Provider: provider.Replay, Replay: replayPath}
	s := f.open(t)

	turn := func(n int) (results map[string]string, bgLog string) {
		t.Helper()
		added, err := s.RunTurn(context.Background(), nil, "go")
		if err != nil {
			t.Fatal(err)
		}
		results = map[string]string{}
		for _, m := range added {
			if m.Role == provider.RoleTool {
				results[m.ToolCallID[:1]] = m.Text
			}
		}
		logs, _ := filepath.Glob(filepath.Join(f.opts.Dirs.Data, "background", s.ID, "*.log"))
		deadline := time.Now().Add(10 * time.Second)
		for {
			if len(logs) == n {
				b, _ := os.ReadFile(logs[n-1])
				if strings.Contains(string(b), "bg:") || time.Now().After(deadline) {
					return results, string(b)
				}
			} else if time.Now().After(deadline) {
				t.Fatalf("turn %d: %d background logs, want %d", n, len(logs), n)
			}
			time.Sleep(20 * time.Millisecond)
			logs, _ = filepath.Glob(filepath.Join(f.opts.Dirs.Data, "background", s.ID, "*.log"))
		}
	}

	before, bgBefore := turn(1)
	for path, out := range map[string]string{"bash": before["b"], "mcp": before["m"], "background log": bgBefore} {
		if !strings.Contains(out, value) {
			t.Fatalf("control: before the value is stored, the %s output lacks it: %q", path, out)
		}
	}
	if err := f.opts.Vault.Set("LATER_TOKEN", value); err != nil {
		t.Fatal(err)
	}
	after, bgAfter := turn(2)
	for path, out := range map[string]string{"bash": after["b"], "mcp": after["m"], "background log": bgAfter} {
		if strings.Contains(out, value) {
			t.Errorf("stored mid-session, the value is still in the %s output: %q", path, out)
		}
		if !strings.Contains(out, "[REDACTED:LATER_TOKEN]") {
			t.Errorf("the %s output lacks [REDACTED:LATER_TOKEN]: %q", path, out)
		}
	}
}

// buildFaultServer builds toolset/mcp's fault-injection MCP server (its echo
// tool is all this package needs).
func buildFaultServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "faultserver")
	build := exec.Command("go", "build", "-o", bin, "../toolset/mcp/testdata/faultserver")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the fault server: %v\n%s", err, out)
	}
	return bin
}

// RunTurn runs one turn with ctx cancelling it.
func (s *Session) RunTurn(ctx context.Context, history []provider.Message, prompt string) ([]provider.Message, error) {
	r, err := s.Agent.RunTurn(ctx, history, strings.TrimSpace(prompt))
	return r.Messages, err
}
