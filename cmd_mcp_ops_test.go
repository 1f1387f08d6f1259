package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/toolset/mcp"
	"github.com/hushcli/hush/vault"
)

func TestRenderMCPList(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := renderMCPList(&out, nil, "/c/config.toml"); err != nil || !strings.HasPrefix(out.String(), "no MCP servers configured: add [mcp.NAME] to /c/config.toml") {
		t.Errorf("empty list: %q, %v", out.String(), err)
	}
	st := mcp.Configured([]mcp.Server{{Name: "a", Source: "mcp.json", Command: "npx", Args: []string{"srv\x1b]0;x\x07"}}, {Name: "b", Source: "config.toml", Command: "b", Disabled: true}})
	st = append(st, mcp.Status{Name: "c", Source: "mcp.json", State: mcp.Running, Tools: 3, PID: 7, Command: "c"},
		mcp.Status{Name: "d", Source: "mcp.json", State: mcp.Failed, Reason: "exit 1", Command: "d"})
	out.Reset()
	if err := renderMCPList(&out, st, "/c/config.toml"); err != nil {
		t.Fatal(err)
	}
	want := "NAME  STATE        TOOLS  SOURCE       COMMAND\n" +
		"a     not started  -      mcp.json     npx srv\\x1b]0;x\\x07\n" +
		"b     disabled     -      config.toml  b\n" +
		"c     running      3      mcp.json     c\n" +
		"d     failed       -      mcp.json     d\n" +
		"\nd: failed to start: exit 1\n"
	if out.String() != want {
		t.Errorf("list =\n%q\nwant\n%q", out.String(), want)
	}
}

// TestMCPImportFileRun: a literal token goes into the vault, never into
// mcp.json or the output; the stored value is the positive control.
func TestMCPImportFileRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const canary = "ghp_canaryImportFile0123456789abcdefXY"
	ef := vault.NewEnvFile(filepath.Join(dir, vault.EnvFileName))
	lv := &vault.Layered{Backend: ef}
	mcpJSON := filepath.Join(dir, config.MCPFileName)
	var out bytes.Buffer
	f := mcpImportFile{Data: []byte(`{"mcpServers":{"gh":{"command":"npx","args":["srv"],"env":{"GITHUB_TOKEN":"` + canary + `"}}}}`),
		Source: "pasted.json", MCPJSON: mcpJSON, ConfigTOML: filepath.Join(dir, config.FileName), Vault: lv, Ambient: map[string]string{}}
	if err := f.Run(&out); err != nil {
		t.Fatal(err)
	}
	written, err := os.ReadFile(mcpJSON)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(written, []byte(canary)) || strings.Contains(out.String(), canary) {
		t.Errorf("the token leaked: mcp.json %s\noutput %s", written, out.String())
	}
	if !bytes.Contains(written, []byte("${GITHUB_TOKEN}")) || !strings.Contains(out.String(), "added gh to "+mcpJSON) {
		t.Errorf("mcp.json %s\noutput %s", written, out.String())
	}
	if v, err := ef.Get("GITHUB_TOKEN"); err != nil || v != canary {
		t.Errorf("vault GITHUB_TOKEN = %q, %v", v, err)
	}
	if err := f.Run(&out); err == nil || err.Error() != "nothing imported" { // gh is in mcp.json now
		t.Errorf("import again without --replace: %v", err)
	}
	f.Data = []byte(`{`)
	if err := f.Run(&out); err == nil || !strings.HasPrefix(err.Error(), "pasted.json: ") {
		t.Errorf("malformed import: %v", err)
	}
}
