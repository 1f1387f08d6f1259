package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/session"
	"github.com/hushcli/hush/tools/sandbox"
	"github.com/hushcli/hush/toolset/mcp"
	"github.com/hushcli/hush/vault"
)

// writeMCPJSON puts an mcpServers block in ta's mcp.json.
func (ta *testApp) writeMCPJSON(t *testing.T, body string) {
	t.Helper()
	if err := os.MkdirAll(ta.configDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ta.configDir, config.MCPFileName), []byte(body), 0o600); err != nil {
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
	ta := newTestApp(t, "")
	ta.writeMCPJSON(t, `{"mcpServers":{"fault":{"command":"`+server+`"}}}`)

	if err := runMCPList(mcpListOpts(ta.again(""), true)); err != nil {
		t.Fatal(err)
	}
	if out := ta.out.String(); !strings.HasPrefix(out, "NAME") || !strings.Contains(out, "fault") || !strings.Contains(out, "not started") {
		t.Errorf("mcp list --no-start:\n%s", out)
	}
	ta.out.Reset()
	if err := runMCPList(mcpListOpts(ta.again(""), false)); err != nil {
		t.Fatal(err)
	}
	if out := ta.out.String(); !strings.Contains(out, "running") || strings.Contains(out, "not started") {
		t.Errorf("mcp list:\n%s%s", out, ta.errOut)
	}
	ta.out.Reset()
	if err := runMCPTools(&mcpToolsOptions{Out: ta.out, Servers: ta.again("").mcpServers, Start: ta.again("").startMCP, Name: "fault"}); err != nil {
		t.Fatal(err)
	}
	if out := ta.out.String(); !strings.Contains(out, "mcp__fault__echo") {
		t.Errorf("mcp tools fault:\n%s", out)
	}
	if err := runMCPTools(&mcpToolsOptions{Out: ta.out, Servers: ta.again("").mcpServers, Start: ta.again("").startMCP, Name: "nosuch"}); err == nil || !strings.Contains(err.Error(), "fault") {
		t.Errorf("mcp tools nosuch = %v, want the known servers named", err)
	}
}

func TestMCPListWithoutServers(t *testing.T) {
	t.Parallel()
	ta := newTestApp(t, "")
	if err := runMCPList(mcpListOpts(ta.again(""), true)); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ta.out.String(), "no MCP servers configured: add [mcp.NAME] to "+filepath.Join(ta.configDir, config.FileName)) {
		t.Errorf("mcp list without servers:\n%s", ta.out)
	}
	ta.writeMCPJSON(t, `{"mcpServers": [`)
	if err := runMCPList(mcpListOpts(ta.again(""), true)); err == nil {
		t.Error("a malformed mcp.json was accepted")
	}
}

// TestMCPImport: `hush mcp import -` adds the pasted server to mcp.json;
// its literal token goes to the vault and mcp.json holds ${NAME} only.
func TestMCPImport(t *testing.T) {
	t.Parallel()
	const token = "ghp_canaryImportValue0123456789abcdef"
	ta := newTestApp(t, "")
	paste := `{"mcpServers":{"gh":{"command":"npx","args":["-y","srv"],"env":{"GITHUB_TOKEN":"` + token + `"}}}}`
	if err := runMCPImport(mcpImportOpts(ta.again(paste), "-")); err != nil {
		t.Fatalf("%v\n%s", err, ta.errOut)
	}
	js, err := os.ReadFile(filepath.Join(ta.configDir, config.MCPFileName))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(js), token) || !strings.Contains(string(js), "${GITHUB_TOKEN}") {
		t.Errorf("mcp.json:\n%s", js)
	}
	if got, _ := ta.storedValue("GITHUB_TOKEN"); got != token {
		t.Errorf("control: the vault holds %q", got)
	}
	if strings.Contains(ta.out.String()+ta.errOut.String(), token) {
		t.Error("the import printed the token")
	}
	if err := runMCPImport(mcpImportOpts(ta.again(""), filepath.Join(ta.project, "missing.json"))); err == nil {
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
		ta := newTestApp(t, "")
		if err := runVaultSet(vaultSetOpts(ta.again(value), "SOME_TOKEN")); err != nil {
			t.Fatal(err)
		}
		seen := filepath.Join(ta.project, "seen") // the project: in the server's world
		script := "cat " + filepath.Join(ta.dir, vault.EnvFileName) + " > " + seen + " 2>&1; ls /proc | grep -c '^[0-9]' >> " + seen + "; exit 1"
		js, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"peek": map[string]any{"command": "sh", "args": []string{"-c", script}}}})
		ta.writeMCPJSON(t, string(js))
		if !sandboxed {
			if err := os.WriteFile(filepath.Join(ta.configDir, config.FileName), []byte("[unsafe]\nno_sandbox = true\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := runMCPList(mcpListOpts(ta.again(""), false)); err != nil {
			t.Fatal(err)
		}
		// Outside a session the servers get a /tmp of their own per start,
		// and nothing is left in the system's temporary directory.
		if left, _ := filepath.Glob(filepath.Join(os.TempDir(), "hush-*", "<session>")); len(left) > 0 {
			t.Errorf("hush mcp list left a session /tmp behind: %v", left)
		}
		raw, err := os.ReadFile(seen)
		if err != nil {
			t.Fatalf("sandboxed=%v: the server wrote nothing: %v\n%s", sandboxed, err, ta.out)
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

func mcpListOpts(a *app, noStart bool) *mcpListOptions {
	return &mcpListOptions{Out: a.Stdout, Config: a.loadConfig, Servers: a.mcpServers, Start: a.startMCP, NoStart: noStart}
}

func mcpImportOpts(a *app, src string) *mcpImportOptions {
	return &mcpImportOptions{In: a.Stdin, Out: a.Stdout, Ambient: a.Ambient, Config: a.loadConfig, Vault: a.Vault, Source: src}
}

// buildFaultServer builds toolset/mcp's fault-injecting MCP server.
func buildFaultServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "faultserver")
	build := exec.Command("go", "build", "-o", bin, "./toolset/mcp/testdata/faultserver")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the fault server: %v\n%s", err, out)
	}
	return bin
}

// TestMCPLoginNeedsATerminal: without a terminal nothing is started and
// the sentence says why; Ctrl-C during the sign-in is exit 130.
func TestMCPLoginNeedsATerminal(t *testing.T) {
	t.Parallel()
	called := false
	login := func(context.Context, string, io.Reader, io.Writer) error {
		called = true
		return session.ErrInterrupted
	}
	servers := func() ([]mcp.Server, error) { return []mcp.Server{{Name: "remote"}}, nil }
	err := runMCPLogin(&mcpLoginOptions{Err: io.Discard, Servers: servers, Login: login, Name: "remote"})
	if err == nil || !strings.HasPrefix(err.Error(), "hush mcp login needs a terminal") || called {
		t.Errorf("without a terminal: %v (login called: %v)", err, called)
	}
	tty, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	err = runMCPLogin(&mcpLoginOptions{Err: io.Discard, Terminal: tty, Servers: servers, Login: login, Name: "remote"})
	if asExit(err).code != exitInterrupted || !called {
		t.Errorf("an interrupted sign-in = %v (exit %d)", err, asExit(err).code)
	}
	if err := runMCPLogin(&mcpLoginOptions{Err: io.Discard, Terminal: tty, Servers: servers, Login: login, Name: "nosuch"}); err == nil || !strings.Contains(err.Error(), "remote") {
		t.Errorf("an unknown server = %v, want the known ones named", err)
	}
}
