package selftest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/tools"
)

// Names of what the audit plants. AUDIT_INNOCENT_SETTING holds the vault
// canary under a name nothing classifies as a credential: only the value
// check keeps it out.
const (
	grantedName  = "AUDIT_GRANTED"
	grantedVar   = "AUDIT_POS"
	probeServer  = "auditprobe"
	probeToolMCP = "mcp__" + probeServer + "__probe"
)

// world is one agent-under-test's home: dirs, vault, project, config, replay.
type world struct {
	root, home, configDir, dataDir, project, bin string
	env                                          []string
}

// build lays out a world under dir for a hush binary at bin, carrying the
// user's tool policies and [unsafe] settings into the test config.
func build(dir, bin string, c canaries, o Options, paths []string) (*world, error) {
	w := &world{root: dir, home: filepath.Join(dir, "home"), configDir: filepath.Join(dir, "config"),
		dataDir: filepath.Join(dir, "data"), project: filepath.Join(dir, "project"), bin: bin}
	for _, d := range []string{w.home, w.configDir, w.dataDir, w.project} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	vault := fmt.Sprintf("AUDIT_VAULT_SECRET=%q\n%s=%q\n", c[cVault], grantedName, c[cGranted])
	if err := os.WriteFile(filepath.Join(w.dataDir, "vault.env"), []byte(vault), 0o600); err != nil {
		return nil, err
	}
	files := map[string]string{
		".env":   "AUDIT_DOTENV_SECRET=" + c[cDotEnv] + "\n",
		"README": "a project hush audit made to look into\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(w.project, name), []byte(content), 0o600); err != nil {
			return nil, err
		}
	}
	if contains(paths, PathFiles) {
		if err := plantFileTargets(w, c); err != nil {
			return nil, err
		}
	}
	cfg := testConfig(o.User, c, paths, bin, filepath.Join(w.configDir, turnFile))
	if o.NoSandbox {
		cfg.Unsafe.NoSandbox = true
	}
	replay, err := replayFile(paths, bin, w.dataDir)
	if err != nil {
		return nil, err
	}
	if err := writeAgentFiles(w.configDir, cfg, replay); err != nil {
		return nil, err
	}
	w.env = []string{
		"HOME=" + w.home,
		"HUSH_CONFIG_DIR=" + w.configDir,
		"HUSH_DATA_DIR=" + w.dataDir,
		"AUDIT_API_TOKEN=" + c[cEnvCred],
		"AUDIT_DATABASE_URL=postgres://audit:" + c[cEnvURL] + "@db.invalid/app",
		"AUDIT_INNOCENT_SETTING=" + c[cVault],
		"AUDIT_PLAIN_SETTING=" + c[cEnvPlain],
	}
	w.env = append(w.env, ambientEnv(o.Ambient, "PATH", "LANG", "TERM", "TZ", "DOCKER_HOST")...)
	return w, nil
}

// turnFile is the replayed turn beside the agent under test's config.toml.
const turnFile = "turn.json"

// writeAgentFiles writes the agent under test's config.toml and its
// replayed turn into configDir.
func writeAgentFiles(configDir string, cfg config.Config, replay []byte) error {
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(cfg); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(configDir, config.FileName), buf.Bytes(), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(configDir, turnFile), replay, 0o600)
}

// ambientEnv is NAME=value for each of names the user's environment sets.
func ambientEnv(ambient map[string]string, names ...string) []string {
	var env []string
	for _, name := range names {
		if v := ambient[name]; v != "" {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// testConfig is the agent-under-test's config.toml.
func testConfig(user config.Config, c canaries, paths []string, bin, replay string) config.Config {
	cfg := config.Config{
		Model: config.Model{Provider: "replay", Replay: replay},
		Tools: map[string]config.ToolConfig{},
		Rules: []config.Rule{{Gate: "tool.run:*", Subject: "*", Decision: "allow"}},
		Turn:  config.TurnConfig{MaxSteps: 20},
	}
	for _, tool := range []string{PathBash, PathBackground, PathDocker} {
		t, ok := user.Tools[tool]
		if !ok && tool == PathDocker {
			continue // docker-bash is opt-in: it needs an image the user chose
		}
		// The user's policy is what is under test, but their secrets and
		// ${...} values name secrets the temporary vault does not hold.
		t.Secrets = nil
		set := map[string]string{}
		for k, v := range t.Set {
			if !strings.Contains(v, "${") {
				set[k] = v
			}
		}
		t.Set = set
		cfg.Tools[tool] = t
	}
	for _, p := range paths {
		subject := p
		if p == PathMCP {
			subject = "mcp:" + probeServer
		}
		cfg.Rules = append(cfg.Rules, config.Rule{Gate: "vault.read:" + grantedName, Subject: subject, Decision: "allow"})
	}
	cfg.Unsafe = user.Unsafe
	if contains(paths, PathMCP) {
		cfg.MCP = map[string]config.MCPServer{probeServer: {
			Command: bin,
			Args:    []string{"__probe", "--mcp", "--granted-var", grantedVar},
			Env:     map[string]string{grantedVar: "${" + grantedName + "}", "AUDIT_MCP_LITERAL": c[cMCPLiteral]},
		}}
	}
	return cfg
}

// tag marks a script so a command line seen in /proc can be traced to its path.
func tag(path string) string { return ": hush-audit-path=" + path + "; " }

// replayFile scripts the model's side of the audit turn.
func replayFile(paths []string, bin, dataDir string) ([]byte, error) {
	probe := fmt.Sprintf("%q __probe --agent $PPID --file .env --granted-var %s", bin, grantedVar)
	grant := map[string]string{grantedVar: "${" + grantedName + "}"}
	type call struct {
		Name string `json:"name"`
		Args any    `json:"args"`
	}
	type stepT struct {
		Text      string `json:"text"`
		ToolCalls []call `json:"tool_calls,omitempty"`
	}
	var steps []stepT
	add := func(text string, c call) { steps = append(steps, stepT{Text: text, ToolCalls: []call{c}}) }
	if contains(paths, PathBackground) {
		add("Starting a background probe.", call{"background", map[string]any{"action": "start", "command": tag(PathBackground) + probe + "; touch .hush-audit-bg-done", "env": grant}})
	}
	if contains(paths, PathBash) {
		// The bash step also waits (up to 10s) for the background probe, so
		// its output is complete when the model reads it.
		add("Probing from bash.", call{"bash", map[string]any{"script": tag(PathBash) + probe +
			"; env; cat .env; cat /proc/$PPID/environ | tr '\\0' '\\n'; echo \"granted=$" + grantedVar + "\"" +
			"; for i in $(seq 200); do [ -e .hush-audit-bg-done ] && break; sleep 0.05; done", "env": grant}})
	}
	if contains(paths, PathMCP) {
		add("Probing from an MCP server.", call{probeToolMCP, map[string]any{}})
	}
	if contains(paths, PathBackground) {
		add("Reading the background probe.", call{"background", map[string]any{"action": "output", "id": "bg1", "offset": 0}})
	}
	if contains(paths, PathDocker) {
		hexOf := func(cmd string) string { return "$( (" + cmd + ") 2>&1 | " + shellEncode + ")" }
		script := tag(PathDocker) + `printf '` + probeMarker + `{"uid":%s,"env":"%s","files":{"/app/.env":"%s"},"granted":"%s"}\n' ` +
			`"$(id -u)" "` + hexOf("env") + `" "` + hexOf("cat /app/.env") + `" "$(printf %s "$` + grantedVar + `" | sha256sum | cut -d' ' -f1)"` +
			`; env; cat /app/.env; ls -la /app`
		add("Probing from a container.", call{"dockerbash", map[string]any{"script": script, "env": grant}})
	}
	if contains(paths, PathFiles) {
		for _, fc := range fileToolCalls(dataDir) {
			add("Reading through the file tools.", call{fc.name, fc.args})
		}
	}
	steps = append(steps, stepT{Text: "Audit turn finished."})
	return json.MarshalIndent(map[string]any{"model": "hush-audit", "steps": steps}, "", "  ")
}

// agentCommand is the agent under test: `hush run --json --yes PROMPT` in
// the world's project with exactly the world's environment (nothing of the
// auditor's own), as cred when it is set.
func (w *world) agentCommand(ctx context.Context, bin, prompt string, cred *syscall.Credential, stdout, stderr io.Writer) (*tools.Cmd, error) {
	env, _, err := tools.BuildEnv(tools.EnvRequest{Ambient: map[string]string{}, Policy: tools.Policy{Inherit: tools.InheritNone, Set: envMap(w.env)}})
	if err != nil {
		return nil, err
	}
	return tools.Command(ctx, tools.Spec{
		Path: bin, Args: []string{"--dir", w.project, "run", "--json", "--yes", prompt},
		Dir: w.project, Env: env, Stdout: stdout, Stderr: stderr, Credential: cred, KillGrace: time.Second,
	})
}
