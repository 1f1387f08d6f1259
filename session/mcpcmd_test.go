package session

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/tools/sandbox"
	"github.com/hushcli/hush/vault"
)

// writeMCPJSON puts an mcpServers block in the world's mcp.json.
func (w *vaultWorld) writeMCPJSON(t *testing.T, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(w.configDir, config.MCPFileName), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestMCPListAndTools: `hush mcp list --no-start` shows the configured
// server without starting it; `hush mcp list` starts it and counts its
// tools; `hush mcp tools` lists them, and names the known servers for an
// unknown one.
func TestMCPListAndTools(t *testing.T) {
	t.Parallel()
	server := buildFaultServer(t)
	w := newVaultWorld(t)
	w.writeMCPJSON(t, `{"mcpServers":{"fault":{"command":"`+server+`"}}}`)

	if err := w.env("").MCPList(true); err != nil {
		t.Fatal(err)
	}
	if out := w.out.String(); !strings.HasPrefix(out, "NAME") || !strings.Contains(out, "fault") || !strings.Contains(out, "not started") {
		t.Errorf("mcp list --no-start:\n%s", out)
	}
	w.out.Reset()
	if err := w.env("").MCPList(false); err != nil {
		t.Fatal(err)
	}
	if out := w.out.String(); !strings.Contains(out, "running") || strings.Contains(out, "not started") {
		t.Errorf("mcp list:\n%s%s", out, w.errOut)
	}
	w.out.Reset()
	if err := w.env("").MCPTools("fault", false); err != nil {
		t.Fatal(err)
	}
	if out := w.out.String(); !strings.Contains(out, "mcp__fault__echo") {
		t.Errorf("mcp tools fault:\n%s", out)
	}
	if err := w.env("").MCPTools("nosuch", false); err == nil || !strings.Contains(err.Error(), "fault") {
		t.Errorf("mcp tools nosuch = %v, want the known servers named", err)
	}
}

func TestMCPListWithoutServers(t *testing.T) {
	t.Parallel()
	w := newVaultWorld(t)
	if err := w.env("").MCPList(true); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(w.out.String(), "no MCP servers configured: add [mcp.NAME] to "+filepath.Join(w.configDir, config.FileName)) {
		t.Errorf("mcp list without servers:\n%s", w.out)
	}
	w.writeMCPJSON(t, `{"mcpServers": [`)
	if err := w.env("").MCPList(true); err == nil {
		t.Error("a malformed mcp.json was accepted")
	}
}

// TestMCPImport: `hush mcp import -` adds the pasted server to mcp.json;
// its literal token goes to the vault and mcp.json holds ${NAME} only.
func TestMCPImport(t *testing.T) {
	t.Parallel()
	const token = "ghp_canaryImportValue0123456789abcdef"
	w := newVaultWorld(t)
	paste := `{"mcpServers":{"gh":{"command":"npx","args":["-y","srv"],"env":{"GITHUB_TOKEN":"` + token + `"}}}}`
	if err := w.env(paste).MCPImport("-", false); err != nil {
		t.Fatalf("%v\n%s", err, w.errOut)
	}
	js, err := os.ReadFile(filepath.Join(w.configDir, config.MCPFileName))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(js), token) || !strings.Contains(string(js), "${GITHUB_TOKEN}") {
		t.Errorf("mcp.json:\n%s", js)
	}
	if got, _ := w.storedValue("GITHUB_TOKEN"); got != token {
		t.Errorf("control: the vault holds %q", got)
	}
	if strings.Contains(w.out.String()+w.errOut.String(), token) {
		t.Error("the import printed the token")
	}
	if err := w.env("").MCPImport(filepath.Join(w.project, "missing.json"), false); err == nil {
		t.Error("importing a missing file succeeded")
	}
}

// TestMCPListStartsServersInTheSandbox: `hush mcp list` starts a server in
// the sandbox a session gives it: the server cannot read the vault file,
// and sees only its own processes. The positive control is the same server
// with [unsafe] no_sandbox: it reads the value. Checked on the raw bytes
// the server wrote, not on what hush shows.
func TestMCPListStartsServersInTheSandbox(t *testing.T) {
	t.Parallel()
	if st := sandbox.Status(); !st.Namespaces {
		t.Skipf("the kernel refuses the sandbox here: %s", st.Reason)
	}
	const value = "vaultcanary-5e6f7a8b9c0d"
	for _, sandboxed := range []bool{true, false} {
		w := newVaultWorld(t)
		if err := w.open(t).Set("SOME_TOKEN", value); err != nil {
			t.Fatal(err)
		}
		seen := filepath.Join(t.TempDir(), "seen")
		script := "cat " + filepath.Join(w.dataDir, vault.EnvFileName) + " > " + seen + " 2>&1; ls /proc | grep -c '^[0-9]' >> " + seen + "; exit 1"
		js, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"peek": map[string]any{"command": "sh", "args": []string{"-c", script}}}})
		w.writeMCPJSON(t, string(js))
		if !sandboxed {
			if err := os.WriteFile(filepath.Join(w.configDir, config.FileName), []byte("[unsafe]\nno_sandbox = true\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.env("").MCPList(false); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(seen)
		if err != nil {
			t.Fatalf("sandboxed=%v: the server wrote nothing: %v\n%s", sandboxed, err, w.out)
		}
		lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
		procs, _ := strconv.Atoi(lines[len(lines)-1])
		switch {
		case sandboxed && (bytes.Contains(raw, []byte(value)) || procs > 10):
			t.Errorf("hush mcp list ran the server outside the sandbox: it read the vault or saw %d processes:\n%s", procs, raw)
		case !sandboxed && !bytes.Contains(raw, []byte(value)):
			t.Errorf("control: without the sandbox the server did not read the vault file:\n%s", raw)
		}
	}
}
