package selftest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/vault"
)

// RiskInput is what the configuration check looks at.
type RiskInput struct {
	Config     config.Config
	ProjectDir string
	DataDir    string
	// ParentEnviron is the environment of the process that started hush
	// (the user's shell), as /proc shows it; nil when it cannot be read.
	ParentEnviron []byte
}

// Risks lists configuration risks hush can see: each one sentence, never a
// secret value.
func Risks(in RiskInput) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	if dotEnv := filepath.Join(in.ProjectDir, ".env"); exists(dotEnv) {
		add("%s is in the project directory, where every host tool can read it: move it into the vault with `hush vault import %s`", dotEnv, dotEnv)
	}
	if gitConfig := filepath.Join(in.ProjectDir, ".git", "config"); exists(gitConfig) {
		if what := gitCredential(gitConfig); what != "" {
			add("%s holds %s: every host tool can read it, and docker-bash sees it at /app/.git/config; use a credential helper instead "+
				"(in GitHub Actions, actions/checkout with persist-credentials: false)", gitConfig, what)
		}
	}
	for _, name := range sortedKeys(in.Config.Tools) {
		if in.Config.Tools[name].Inherit == "all" {
			add("tools.%s inherits every non-credential variable (inherit = \"all\"); prefer \"core\" with include globs", name)
		}
	}
	for i, r := range in.Config.Rules {
		if r.Decision == "allow" && strings.HasPrefix(r.Gate, "vault.read:") && strings.ContainsAny(strings.TrimPrefix(r.Gate, "vault.read:"), "*?[") {
			subj := r.Subject
			if subj == "" {
				subj = "*"
			}
			add("rules[%d] allows %s for %s: a tool can read every matching secret without asking; name the secrets instead", i, r.Gate, subj)
		}
	}
	for _, f := range []string{vault.EnvFileName, "audit.jsonl"} {
		p := filepath.Join(in.DataDir, f)
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o077 != 0 {
			add("%s is readable by other users (mode %04o): chmod 600 %s", p, fi.Mode().Perm(), p)
		}
	}
	if fi, err := os.Stat(in.DataDir); err == nil && fi.Mode().Perm()&0o077 != 0 {
		add("the data dir %s is open to other users (mode %04o): chmod 700 %s", in.DataDir, fi.Mode().Perm(), in.DataDir)
	}
	for _, name := range sortedKeys(in.Config.MCP) {
		for _, k := range sortedKeys(in.Config.MCP[name].Env) {
			v := in.Config.MCP[name].Env[k]
			if strings.Contains(v, "${") {
				continue
			}
			if tools.IsCredentialName(k) || tools.IsCredentialValue(v) {
				add("MCP server %s has a literal value for %s in its config: store it with `hush vault set %s` and write \"${%s}\"", name, k, k, k)
			}
		}
	}
	if on := in.Config.Unsafe.Any(); len(on) > 0 {
		add("[unsafe] in config.toml switches protections off (%s)", strings.Join(on, ", "))
	}
	var exported []string
	for _, kv := range strings.Split(string(in.ParentEnviron), "\x00") {
		name, value, ok := strings.Cut(kv, "=")
		if ok && value != "" && (tools.IsCredentialName(name) || tools.IsCredentialValue(value)) {
			exported = append(exported, name)
		}
	}
	if len(exported) > 0 {
		sort.Strings(exported)
		add("the shell that started hush exports %s: any process you run can read that shell's environment in /proc; "+
			"hush hides them from its tools, but the fix is the vault (`hush vault set NAME`, then unset them)", strings.Join(exported, ", "))
	}
	return out
}

// gitCredential says what kind of credential a git config file holds, or
// "": an Authorization extra header (what actions/checkout leaves behind)
// or a URL with a password. It never returns the value.
func gitCredential(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		key, value, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok {
			continue
		}
		key, value = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(value)
		switch {
		case key == "extraheader" && strings.Contains(strings.ToLower(value), "authorization"):
			return "an http.extraheader with an Authorization credential"
		case (key == "url" || key == "pushurl") && tools.IsCredentialValue(value):
			return "a remote URL with a password"
		}
	}
	return ""
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
