package config_test

import (
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/hushcli/hush/config"
)

var setupSettings = []config.Setting{
	{Table: "model", Key: "provider", Value: "openai"},
	{Table: "model", Key: "base_url", Value: "http://127.0.0.1:11434/v1"},
	{Table: "model", Key: "model", Value: "llama3.2"},
	{Table: "model", Key: "api_key", Value: "${OPENAI_API_KEY}"},
	{Table: "vault", Key: "backend", Value: "keyring"},
}

func TestUpdateConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, before, want string
		settings           []config.Setting
		rewritten          bool
	}{
		{
			name:     "no file yet",
			settings: setupSettings,
			want: `[model]
provider = "openai"
base_url = "http://127.0.0.1:11434/v1"
model = "llama3.2"
api_key = "${OPENAI_API_KEY}"

[vault]
backend = "keyring"
`,
		},
		{
			name: "other tables, comments and a look-alike header are kept",
			before: `# my hush settings
[turn]
max_steps = 12
system = """
[model]
provider = "not a table"
"""

[model] # the model
# which server
provider = "anthropic"
model = "claude-x"  # trailing comment
replay = "r.json"

[[rules]]
gate = "vault.read:GITHUB_TOKEN"
subject = "bash"
decision = "allow"

[tools.bash]
include = [
  "GOPATH",
  "GOFLAGS", # build flags
]
`,
			settings: setupSettings,
			want: `# my hush settings
[turn]
max_steps = 12
system = """
[model]
provider = "not a table"
"""

[model] # the model
# which server
provider = "openai"
model = "llama3.2"
replay = "r.json"
base_url = "http://127.0.0.1:11434/v1"
api_key = "${OPENAI_API_KEY}"

[[rules]]
gate = "vault.read:GITHUB_TOKEN"
subject = "bash"
decision = "allow"

[tools.bash]
include = [
  "GOPATH",
  "GOFLAGS", # build flags
]

[vault]
backend = "keyring"
`,
		},
		{
			name: "an empty value removes the key, a multi-line value is replaced whole",
			before: `[model]
provider = "openai"
api_key = """
${OLD}"""
base_url = "http://x/v1"
`,
			settings: []config.Setting{{Table: "model", Key: "api_key", Value: ""}, {Table: "model", Key: "base_url", Value: `http://h/"q"\`}},
			want: `[model]
provider = "openai"
base_url = "http://h/\"q\"\\"
`,
		},
		{
			name:      "dotted keys defeat the text edit: the document is re-encoded",
			before:    "model.provider = \"anthropic\"\nmodel.model = \"claude-x\"\n",
			settings:  []config.Setting{{Table: "model", Key: "provider", Value: "openai"}},
			rewritten: true,
			want:      "[model]\n  model = \"claude-x\"\n  provider = \"openai\"\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "cfg", config.FileName)
			if tt.before != "" {
				if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tt.before), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			rewritten, err := config.UpdateConfig(path, tt.settings...)
			if err != nil {
				t.Fatal(err)
			}
			if rewritten != tt.rewritten {
				t.Errorf("rewritten = %v, want %v", rewritten, tt.rewritten)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("config.toml =\n%s\nwant\n%s", got, tt.want)
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want 0600", fi.Mode().Perm())
			}
			if _, err := config.Load(path); err != nil {
				t.Errorf("the result does not load: %v", err)
			}
			left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*"))
			if len(left) > 0 {
				t.Errorf("temp files left: %q", left)
			}
		})
	}
}

// TestUpdateConfigRefusesABrokenFile: a config.toml that does not load is
// not touched (a rewrite would drop what the user meant).
func TestUpdateConfigRefusesABrokenFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), config.FileName)
	before := "[model]\nprovider = \"openai\"\nbogus_key = 1\n"
	if err := os.WriteFile(path, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := config.UpdateConfig(path, setupSettings...)
	want := "invalid config: " + path + ": unknown key model.bogus_key (fix it, then run this again; nothing was changed)"
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant %s", err, want)
	}
	if got, _ := os.ReadFile(path); string(got) != before {
		t.Errorf("the file changed:\n%s", got)
	}
}

// FuzzUpdateConfig: for any file that loads as config.toml, setting the
// setup keys succeeds, and the result loads and says what was asked while
// every other setting is kept (UpdateConfig checks the latter itself).
func FuzzUpdateConfig(f *testing.F) {
	for _, s := range []string{
		"", "[model]\nprovider = \"anthropic\"\n", "# c\n[turn]\nsystem = \"\"\"\n[model]\n\"\"\"\n",
		"model.provider = \"openai\"\n", "[model] # x\nmodel = 'a' # y\n[vault]\nbackend = \"envfile\"\n",
		"[[rules]]\ngate = \"tool.run:*\"\ndecision = \"ask\"\n[model]\napi_key = '''\n${A}'''\n",
		"[tools.bash]\ninclude = [\n \"A\", # ]\n]\n[model]\nbase_url = \"x\"",
		"[vault]\nBackend=\"envfile\"", // a case variant: config.Load refuses it
	} {
		f.Add(s, "http://127.0.0.1:8080/v1")
	}
	f.Fuzz(func(t *testing.T, before, baseURL string) {
		dir := t.TempDir()
		path := filepath.Join(dir, config.FileName)
		if err := os.WriteFile(path, []byte(before), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := config.Load(path); err != nil {
			return // setup refuses to touch a file that does not load
		}
		settings := []config.Setting{
			{Table: "model", Key: "provider", Value: "openai"},
			{Table: "model", Key: "base_url", Value: baseURL},
			{Table: "vault", Key: "backend", Value: "keyring"},
		}
		_, err := config.UpdateConfig(path, settings...)
		if !utf8.ValidString(baseURL) {
			if err == nil || err.Error() != "model.base_url: not valid UTF-8 text; nothing was changed" {
				t.Fatalf("UpdateConfig with invalid UTF-8: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("UpdateConfig on a valid file: %v\n%s", err, before)
		}
		cfg, err := config.Load(path)
		if err != nil {
			t.Fatalf("the result does not load: %v", err)
		}
		if cfg.Model.Provider != "openai" || cfg.Model.BaseURL != baseURL || cfg.Vault.Backend != "keyring" {
			t.Fatalf("the result says %+v %+v", cfg.Model, cfg.Vault)
		}
	})
}

// TestUpdateConfigOneTable: setup edits the table the file already has —
// also when its header is quoted — instead of appending a second one beside
// it; a case variant of a table (which made one file mean two things) is
// refused, naming both spellings, and the file is left as it was.
func TestUpdateConfigOneTable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, config.FileName)
	before := "# mine\n[\"vault\"]\nbackend = \"envfile\" # was\n"
	if err := os.WriteFile(path, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	rewritten, err := config.UpdateConfig(path, config.Setting{Table: "vault", Key: "backend", Value: "keyring"})
	if err != nil || rewritten {
		t.Fatalf("UpdateConfig = %v, %v", rewritten, err)
	}
	if got, _ := os.ReadFile(path); string(got) != "# mine\n[\"vault\"]\nbackend = \"keyring\"\n" {
		t.Errorf("file:\n%s", got)
	}

	variant := "[vauLt]\nBackend = \"envfile\"\n"
	if err := os.WriteFile(path, []byte(variant), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = config.UpdateConfig(path, config.Setting{Table: "vault", Key: "backend", Value: "keyring"})
	want := "invalid config: " + path + ": vauLt is not vault: TOML names are case-sensitive, so hush reads only vault; rename it (fix it, then run this again; nothing was changed)"
	if err == nil || err.Error() != want {
		t.Errorf("UpdateConfig on a case variant: %v\nwant %s", err, want)
	}
	if got, _ := os.ReadFile(path); string(got) != variant {
		t.Errorf("the file changed:\n%s", got)
	}
}
