package selftest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/vault"
)

// RiskInput is what the configuration check looks at.
type RiskInput struct {
	Config     config.Config
	ProjectDir string
	ConfigDir  string
	DataDir    string
	// ParentEnviron is the environment of the process that started hush
	// (the user's shell), as /proc shows it; nil when it cannot be read.
	ParentEnviron []byte
	// MCPJSON is the servers of mcp.json beside config.toml.
	MCPJSON map[string]config.MCPServer
	// Home is $HOME; Executable is hush's own binary and PathEnv $PATH:
	// what the sandbox keeps read-only, checked for what it cannot.
	Home, Executable, PathEnv string
}

// Risks lists configuration risks hush can see: each one sentence, never a
// secret value.
func Risks(in RiskInput) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	if files, truncated, err := config.FindDotEnvFiles(in.ProjectDir); err == nil {
		for _, f := range files {
			add("%s is a legacy secret file in the project: its values are secrets hush scrubs, but they belong in the vault: `hush vault import %s`, then delete the file", f, f)
		}
		if truncated {
			add("the project holds more .env files than hush reads (%d): look for the rest with `find . -name '.env*'`", config.DotEnvMaxFiles)
		}
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
	for _, d := range []struct{ what, path string }{{"config", in.ConfigDir}, {"data", in.DataDir}} {
		if link := linkOnTheWay(d.path); link != "" {
			add("hush's %s dir %s is reached through the symlink %s, in a directory your tools may write: the sandbox hides the dir, "+
				"but a tool can replace the link with a directory of its own, and the next session would read that (a config.toml allowing every secret); "+
				"point HUSH_%s_DIR at the real path, or make the link's directory read-only", d.what, d.path, link, strings.ToUpper(d.what))
		}
	}
	out = append(out, readOnlyRisks(in)...)
	if fi, err := os.Stat(in.DataDir); err == nil && fi.Mode().Perm()&0o077 != 0 {
		add("the data dir %s is open to other users (mode %04o): chmod 700 %s", in.DataDir, fi.Mode().Perm(), in.DataDir)
	}
	out = append(out, tools.LiteralSecrets(in.Config, in.MCPJSON)...)
	if on := in.Config.Unsafe.Any(); len(on) > 0 {
		add("[unsafe] in config.toml switches protections off (%s)", strings.Join(on, ", "))
	}
	var exported []string
	for _, kv := range strings.Split(string(in.ParentEnviron), "\x00") {
		name, value, ok := strings.Cut(kv, "=")
		// The same rule as the vault's: a credential name with a value that
		// looks like one (AWS_CA_BUNDLE=/etc/ssl/… is not), or a URL with
		// a password under any name.
		if ok && value != "" && (tools.IsCredentialName(name) && tools.LooksLikeSecret(value) || tools.IsCredentialValue(value)) {
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

// readOnlyRisks names what the sandbox's read-only masks cannot cover:
// ~/.ssh, or a directory on the way to hush in PATH, reached through a
// symlink a tool may replace (the mount stays on the old target), and a
// missing ~/.ssh where an ssh server listens (nothing exists to mount on,
// so a tool may make one with an authorized_keys).
func readOnlyRisks(in RiskInput) []string {
	var out []string
	if filepath.IsAbs(in.Home) {
		ssh := filepath.Join(in.Home, ".ssh")
		if link := linkOnTheWay(ssh); link != "" {
			out = append(out, fmt.Sprintf("%s is reached through the symlink %s, in a directory your tools may write: the sandbox makes ~/.ssh read-only, "+
				"but a tool can replace the link with a directory of its own holding an authorized_keys, an ssh login outside the sandbox; make %s a real directory", ssh, link, ssh))
		} else if _, err := os.Lstat(ssh); os.IsNotExist(err) && sshdListening() {
			out = append(out, fmt.Sprintf("an ssh server listens on port 22 and %s does not exist: a tool can make it with an authorized_keys and log in, outside the sandbox; "+
				"make it yourself (mkdir -m 700 %s), and the sandbox keeps it read-only", ssh, ssh))
		}
	}
	if real, err := filepath.EvalSymlinks(in.Executable); err == nil && filepath.IsAbs(in.Executable) {
		for _, dir := range filepath.SplitList(in.PathEnv) {
			if !filepath.IsAbs(dir) {
				continue
			}
			name := filepath.Join(dir, filepath.Base(real))
			if _, e := os.Lstat(name); e != nil {
				continue
			}
			if r, e := filepath.EvalSymlinks(name); e != nil || r != real {
				break // another hush runs first
			}
			if link := linkOnTheWay(dir); link != "" {
				out = append(out, fmt.Sprintf("hush is run as %s, reached through the symlink %s, in a directory your tools may write: the sandbox keeps hush's executable read-only, "+
					"but a tool can replace the link, and your next hush would be its program; put the real directory in PATH", name, link))
			}
			break // the first hush in PATH is the one that runs
		}
	}
	return out
}

// sshdListening reports whether something listens on TCP port 22 (either
// family), by the kernel's own tables.
var sshdListening = func() bool { return listeningOn(22) }

// listeningOn reports whether a TCP socket of this network, IPv4 or
// IPv6, listens on port.
func listeningOn(port int) bool {
	for _, l := range tools.Listeners("/proc/net") {
		if l.Port == port {
			return true
		}
	}
	return false
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

// linkOnTheWay returns the first symlink on the way to path whose
// directory its owner can write (a link in /, or in a directory only root
// writes while hush is not root, is not a tool's to replace), or "".
func linkOnTheWay(path string) string {
	if path == "" || !filepath.IsAbs(path) {
		return ""
	}
	cur := "/"
	for _, part := range strings.Split(strings.Trim(filepath.Clean(path), "/"), "/") {
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		if err != nil {
			return ""
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			if parent, err := os.Stat(cur); err == nil && cur != "/" && writableByUs(parent) {
				return next
			}
			target, err := filepath.EvalSymlinks(next)
			if err != nil {
				return ""
			}
			next = target
		}
		cur = next
	}
	return ""
}

// writableByUs reports whether this process's user owns fi and may write
// it (root: any directory it owns).
func writableByUs(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid() && fi.Mode().Perm()&0o200 != 0
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
