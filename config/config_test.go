package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hushcli/hush/config"
)

func TestLoadMissingFile(t *testing.T) {
	t.Parallel()
	got, err := config.Load(filepath.Join(t.TempDir(), config.FileName))
	if err != nil {
		t.Fatalf("Load of a missing file: %v", err)
	}
	if !reflect.DeepEqual(got, config.Config{}) {
		t.Errorf("Load of a missing file = %+v, want the zero Config", got)
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	// {path} stands for the file's path in the expected message.
	tests := []struct {
		name, content, want string
	}{
		{
			"unknown key",
			"[tools.bash]\ninheirt = \"core\"\n",
			"invalid config: {path}: unknown key tools.bash.inheirt",
		},
		{
			"unknown keys, sorted",
			"[tools.bash]\ninheirt = \"core\"\n[model]\nprovder = \"openai\"\n",
			"invalid config: {path}: unknown key model.provder, tools.bash.inheirt",
		},
		{
			"unknown top-level table",
			"[modle]\nprovider = \"openai\"\n",
			"invalid config: {path}: unknown key modle, modle.provider",
		},
		{
			"string where an integer belongs",
			"[turn]\nmax_steps = \"ten\"\n",
			"invalid config: {path}: toml: line 2 (last key \"turn.max_steps\"): incompatible types: TOML value has type string; destination has type integer",
		},
		{
			"integer where a string belongs",
			"[model]\nprovider = 3\n",
			"invalid config: {path}: toml: line 2 (last key \"model.provider\"): incompatible types: TOML value has type int64; destination has type string",
		},
		{
			"string where a list belongs",
			"[tools.bash]\ninclude = \"LC_*\"\n",
			"invalid config: {path}: toml: line 2 (last key \"tools.bash.include\"): incompatible types: TOML value has type string; destination has type slice",
		},
		{
			"bad duration names line and key",
			"[tools.bash]\ninherit = \"core\"\ntimeout = \"30x\"\n",
			"invalid config: {path} line 3: tools.bash.timeout: not a duration (want e.g. \"30s\" or \"2m\"): \"30x\"",
		},
		{
			"integer duration names line and key",
			"[mcp.gh]\ncommand = \"gh-mcp\"\ntimeout = 30\n",
			"invalid config: {path} line 3: mcp.gh.timeout: not a duration (want e.g. \"30s\" or \"2m\"): \"30\"",
		},
		{
			"syntax error names the line",
			"[model]\nprovider = \"openai\"\n[tools\n",
			"invalid config: {path} line 4: expected '.' or ']' to end table name, but got '\\n' instead",
		},
		{
			"duplicate key names the line",
			"[model]\nprovider = \"openai\"\nprovider = \"anthropic\"\n",
			"invalid config: {path} line 3: Key 'model.provider' has already been defined.",
		},
		{
			"invalid provider",
			"[model]\nprovider = \"gpt\"\n",
			"invalid config: {path}: model.provider \"gpt\": want openai, anthropic or replay",
		},
		{
			"invalid inherit",
			"[tools.bash]\ninherit = \"some\"\n",
			"invalid config: {path}: tools.bash.inherit \"some\": want core, none or all",
		},
		{
			"first invalid tool by name",
			"[tools.zsh]\ninherit = \"z\"\n[tools.bash]\ninherit = \"b\"\n",
			"invalid config: {path}: tools.bash.inherit \"b\": want core, none or all",
		},
		{
			"bad include glob",
			"[tools.bash]\ninclude = [\"LC_[\"]\n",
			"invalid config: {path}: tools.bash: bad glob \"LC_[\"",
		},
		{
			"invalid decision",
			"[[rules]]\ngate = \"tool.run:*\"\ndecision = \"allow\"\n[[rules]]\ngate = \"vault.read:X\"\ndecision = \"maybe\"\n",
			"invalid config: {path}: rules[1].decision \"maybe\": want allow, deny or ask",
		},
		{
			"missing decision",
			"[[rules]]\ngate = \"tool.run:*\"\n",
			"invalid config: {path}: rules[0].decision \"\": want allow, deny or ask",
		},
		{
			"empty gate",
			"[[rules]]\nsubject = \"bash\"\ndecision = \"deny\"\n",
			"invalid config: {path}: rules[0]: gate is empty (e.g. gate = \"vault.read:GITHUB_TOKEN\")",
		},
		{
			"bad subject glob",
			"[[rules]]\ngate = \"tool.run:*\"\nsubject = \"mcp:[\"\ndecision = \"ask\"\n",
			"invalid config: {path}: rules[0]: bad glob \"mcp:[\"",
		},
		{
			"mcp server without command",
			"[mcp.github]\nargs = [\"serve\"]\n",
			"invalid config: {path}: mcp.github: command is empty (or give a url for a remote server)",
		},
		{
			"negative max_steps",
			"[turn]\nmax_steps = -1\n",
			"invalid config: {path}: turn.max_steps must not be negative",
		},
		{
			"empty sandbox allow entry",
			"[sandbox]\nallow = [\"~/.ssh\", \" \"]\n",
			"invalid config: {path}: sandbox.allow: an entry is empty",
		},
		{
			"another user's home in sandbox hide",
			"[sandbox]\nhide = [\"~bob/.aws\"]\n",
			"invalid config: {path}: sandbox.hide: \"~bob/.aws\": only ~/ (your own home) is expanded",
		},
		{
			"unknown sandbox key",
			"[sandbox]\nallowed = [\"~/.ssh\"]\n",
			"invalid config: {path}: unknown key sandbox.allowed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, t.TempDir(), config.FileName, tt.content)
			_, err := config.Load(path)
			want := strings.ReplaceAll(tt.want, "{path}", path)
			if err == nil || err.Error() != want {
				t.Fatalf("Load error = %v\nwant          %s", err, want)
			}
			if !errors.Is(err, config.ErrConfig) {
				t.Errorf("error %q does not wrap ErrConfig", err)
			}
		})
	}
}

func TestLoadFullExample(t *testing.T) {
	t.Parallel()
	path := writeFile(t, t.TempDir(), config.FileName, `
[model]
provider = "anthropic"
base_url = "http://127.0.0.1:8080"
model = "claude-x"
api_key = "${ANTHROPIC_API_KEY}"
replay = "turns.jsonl"

[vault]
backend = "keyring"

[tools.bash]
inherit = "core"
include = ["LC_*", "GOPATH"]
exclude = ["LC_ALL"]
secrets = ["GITHUB_TOKEN"]
timeout = "2m"
home_dir = "/tmp/home"
isolate_npm = true
proxy = ""

[tools.bash.set]
EDITOR = "true"
GH_TOKEN = "${GITHUB_TOKEN}"

[tools.dockerbash]
inherit = "none"
image = "alpine:3"
network = "none"
mask = [".env", ".env.local"]
timeout = "30s"

[[rules]]
gate = "vault.read:GITHUB_TOKEN"
subject = "bash"
decision = "allow"

[[rules]]
gate = "tool.run:*"
subject = "*"
decision = "ask"

[mcp.github]
command = "github-mcp"
args = ["stdio"]
env = { GITHUB_TOKEN = "${GITHUB_TOKEN}" }
dir = "/srv"
timeout = "1m30s"
disabled = true

[turn]
max_steps = 12
system = "be brief"

`)
	got, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	empty := ""
	want := config.Config{
		Model: config.Model{
			Provider: "anthropic", BaseURL: "http://127.0.0.1:8080", Name: "claude-x",
			APIKey: "${ANTHROPIC_API_KEY}", Replay: "turns.jsonl",
		},
		Vault: config.VaultConfig{Backend: "keyring"},
		Tools: map[string]config.ToolConfig{
			"bash": {
				Inherit: "core",
				Include: []string{"LC_*", "GOPATH"},
				Exclude: []string{"LC_ALL"},
				Set:     map[string]string{"EDITOR": "true", "GH_TOKEN": "${GITHUB_TOKEN}"},
				Secrets: []string{"GITHUB_TOKEN"},
				Timeout: config.Duration{Duration: 2 * time.Minute},
				HomeDir: "/tmp/home", IsolateNpm: true, Proxy: &empty,
			},
			"dockerbash": {
				Inherit: "none", Image: "alpine:3", Network: "none",
				Mask:    []string{".env", ".env.local"},
				Timeout: config.Duration{Duration: 30 * time.Second},
			},
		},
		Rules: []config.Rule{
			{Gate: "vault.read:GITHUB_TOKEN", Subject: "bash", Decision: "allow"},
			{Gate: "tool.run:*", Subject: "*", Decision: "ask"},
		},
		MCP: map[string]config.MCPServer{
			"github": {
				Command: "github-mcp", Args: []string{"stdio"},
				Env: map[string]string{"GITHUB_TOKEN": "${GITHUB_TOKEN}"},
				Dir: "/srv", Timeout: config.Duration{Duration: 90 * time.Second}, Disabled: true,
			},
		},
		Turn: config.TurnConfig{MaxSteps: 12, System: "be brief"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Load =\n%+v\nwant\n%+v", got, want)
	}
}

func TestDurationText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, out string
		ok      bool
	}{
		{"30s", "30s", true},
		{"2m", "2m0s", true},
		{"1h2m3s", "1h2m3s", true},
		{"0", "0s", true},
		{"30", "", false},
		{"", "", false},
		{"soon", "", false},
	}
	for _, tt := range tests {
		var d config.Duration
		err := d.UnmarshalText([]byte(tt.in))
		if (err == nil) != tt.ok {
			t.Errorf("UnmarshalText(%q) error = %v, want ok=%v", tt.in, err, tt.ok)
			continue
		}
		if !tt.ok {
			continue
		}
		b, _ := d.MarshalText()
		if string(b) != tt.out {
			t.Errorf("round trip of %q = %q, want %q", tt.in, b, tt.out)
		}
	}
}

// TestLoadCaseVariants: a table or key that matches hush's name only when
// case is ignored is an error naming both spellings — it made one file mean
// two things (which backend, so which secrets exist, flipped between runs).
func TestLoadCaseVariants(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, toml, want string }{
		{"table and key beside the real table", "[vauLt]\nBackend = \"envfile\"\n[vault]\nbackend = \"keyring\"\n",
			"vauLt is not vault: TOML names are case-sensitive, so hush reads only vault; rename it"},
		{"key", "[vault]\nBackend = \"keyring\"\n", "vault.Backend is not vault.backend: TOML names are case-sensitive, so hush reads only vault.backend; rename it"},
		{"key in a map value", "[tools.bash]\nInherit = \"none\"\n", "tools.bash.Inherit is not tools.bash.inherit: TOML names are case-sensitive, so hush reads only tools.bash.inherit; rename it"},
		{"key in an array of tables", "[[rules]]\nGate = \"tool.run:*\"\ndecision = \"allow\"\n", "rules[0].Gate is not rules[0].gate: TOML names are case-sensitive, so hush reads only rules[0].gate; rename it"},
		{"dotted key", "Model.provider = \"openai\"\n", "Model is not model: TOML names are case-sensitive, so hush reads only model; rename it"},
	} {
		path := writeConfig(t, c.toml)
		for i := 0; i < 20; i++ { // one meaning: the same answer every run
			_, err := config.Load(path)
			want := "invalid config: " + path + ": " + c.want
			if err == nil || err.Error() != want || !errors.Is(err, config.ErrConfig) {
				t.Fatalf("%s: Load = %v\nwant %s", c.name, err, want)
			}
		}
	}
	// Names the user chooses keep their case: two tools, two servers.
	cfg, err := config.Load(writeConfig(t, "[tools.Bash]\ninherit = \"none\"\n[tools.bash]\ninherit = \"all\"\n[tools.bash.set]\nMyVar = \"x\"\n[vault]\nbackend = \"keyring\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Tools["Bash"].Inherit != "none" || cfg.Tools["bash"].Inherit != "all" || cfg.Tools["bash"].Set["MyVar"] != "x" || cfg.Vault.Backend != "keyring" {
		t.Errorf("cfg = %+v", cfg)
	}
}

func writeConfig(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), config.FileName)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCheckBackend: config keeps no list of backends; the vault registry's
// names decide, with the message config validation gave.
func TestCheckBackend(t *testing.T) {
	t.Parallel()
	known := []string{"envfile", "keyring"}
	var c config.Config
	for _, ok := range []string{"", "envfile", "keyring"} {
		c.Vault.Backend = ok
		if err := config.CheckBackend(c, "/c/config.toml", known); err != nil {
			t.Errorf("CheckBackend(%q) = %v", ok, err)
		}
	}
	c.Vault.Backend = "dotenv"
	err := config.CheckBackend(c, "/c/config.toml", known)
	if err == nil || !errors.Is(err, config.ErrConfig) || err.Error() != `invalid config: /c/config.toml: vault.backend "dotenv": want envfile or keyring` {
		t.Errorf("CheckBackend(dotenv) = %v", err)
	}
	if err := config.CheckBackend(c, "/c/config.toml", []string{"envfile", "keyring", "pass"}); err == nil || !strings.HasSuffix(err.Error(), "want envfile, keyring or pass") {
		t.Errorf("three backends: %v", err)
	}
}
