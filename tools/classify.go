package tools

import (
	"net/url"
	"os"
	"path"
	"strings"
)

// The lists in this file are the only copies in hush. The env builder reads
// them for every child; the vault's layered view reads IsCredentialName to
// decide which process variables are secrets; `hush env` and `hush audit`
// read them to explain a policy.

// coreNames is the hygiene allowlist a child gets under inherit = "core":
// what shells and compilers need to behave, nothing that authenticates.
var coreNames = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "COLORTERM", "NO_COLOR",
	"LANG", "LANGUAGE", "LC_*", "TZ", "TMPDIR", "EDITOR", "VISUAL", "PAGER",
}

// MCPBaseNames is the set the MCP SDKs pass to a stdio server by default;
// an MCP server gets these plus exactly the env its config names.
var MCPBaseNames = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}

// credentialSubstrings mark a name as a credential wherever they appear in
// its upper-cased form.
var credentialSubstrings = []string{
	"KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL",
	"AUTH", "PRIVATE", "COOKIE", "SESSION_ID", "SIGNATURE",
}

// credentialsByFirstByte is credentialSubstrings indexed by first byte, so
// IsCredentialName reads a name once instead of once per substring: it
// runs for every ambient variable on every turn (the layered vault's
// classification, BuildEnv), and twelve strings.Contains per name made it
// the largest cost of reading the vault. Built once; never written after.
var credentialsByFirstByte = func() (idx [256][]string) {
	for _, s := range credentialSubstrings {
		idx[s[0]] = append(idx[s[0]], s)
	}
	return idx
}()

// credentialPrefixes and credentialSuffixes mark whole families of names.
var (
	credentialPrefixes = []string{"AWS_", "AZURE_", "GCP_", "GOOGLE_", "VAULT_", "NPM_CONFIG__AUTH", "DOCKER_AUTH"}
	credentialSuffixes = []string{"_PAT", "_PWD", "_PASS", "_DSN"}
)

// loaderNames can make a child load code of the parent's choosing; they
// never pass to a child, whatever the policy says.
var loaderNames = []string{"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "LD_*", "DYLD_*"}

// CoreNames returns a copy of the core allowlist (globs allowed).
func CoreNames() []string { return append([]string(nil), coreNames...) }

// IsCredentialName reports whether a variable name looks like it holds a
// credential. It errs on the side of yes: a false positive costs a child a
// variable it can still be granted through the scope; a false negative leaks.
func IsCredentialName(name string) bool {
	u := strings.ToUpper(name)
	if u == "PWD" || u == "OLDPWD" {
		return false
	}
	for i := 0; i < len(u); i++ {
		for _, s := range credentialsByFirstByte[u[i]] {
			if strings.HasPrefix(u[i:], s) {
				return true
			}
		}
	}
	for _, p := range credentialPrefixes {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	for _, s := range credentialSuffixes {
		if strings.HasSuffix(u, s) {
			return true
		}
	}
	return false
}

// IsCredentialValue reports whether a value carries a credential on its own,
// whatever its name: today, a URL with a password in its user info
// (postgres://user:pw@host/db, https://user:token@host).
func IsCredentialValue(v string) bool {
	i := strings.Index(v, "://")
	if i <= 0 || !strings.Contains(v[i:], "@") {
		return false
	}
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil {
		// Unparseable but shaped like scheme://user:pw@host: treat as one.
		at := strings.LastIndex(v, "@")
		return strings.Contains(v[i+3:at], ":")
	}
	if u.User == nil {
		return false
	}
	_, has := u.User.Password()
	return has
}

// IsLoaderName reports whether a name is a dynamic-loader injection variable.
func IsLoaderName(name string) bool { return MatchAny(loaderNames, name) }

// MatchAny reports whether name matches any of the glob patterns (path.Match
// syntax: *, ?, [...]). A malformed pattern matches nothing; config
// validation (config.Config.validate) reports it before it gets here.
func MatchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if matchGlob(p, name) {
			return true
		}
	}
	return false
}

// isGlob reports whether p has any path.Match syntax; one without is a
// plain name.
func isGlob(p string) bool {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '*', '?', '[', '\\':
			return true
		}
	}
	return false
}

// matchGlob is path.Match without its cost for the two shapes the
// allowlists are made of, a literal name and a literal prefix followed by
// one '*': BuildEnv tests every ambient name against every allowlist
// pattern on every tool call, and path.Match took most of its time. The
// literal part is compared as it is scanned, so most patterns are rejected
// at their first byte.
func matchGlob(p, name string) bool {
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '*', '?', '[', '\\':
			if c == '*' && i == len(p)-1 {
				// '*' matches any run of non-'/' bytes, as in path.Match.
				return strings.IndexByte(name[i:], '/') < 0
			}
			ok, err := path.Match(p, name)
			return err == nil && ok
		default:
			if i >= len(name) || name[i] != c {
				return false // the literal part already differs
			}
		}
	}
	return len(p) == len(name)
}

// MinSecretLen is the shortest ambient or legacy value that counts as a
// secret by its look (LooksLikeSecret). Shorter values — "1", "true",
// "json", a port — occur everywhere; redacting them would shred ordinary
// output and refuse ordinary commands. A vault value of any length is a
// secret.
const MinSecretLen = 8

// LooksLikeSecret reports whether a value found in the environment or a
// legacy .env file looks like a credential, so that hush redacts it and
// refuses it in a command line. Its name alone decides whether it is kept
// out of a tool's environment (IsCredentialName); this decides whether the
// value is also treated as secret text. It is not one when it is
// shorter than MinSecretLen, a path that exists (AWS_CA_BUNDLE=/etc/ssl/…),
// a URL without a password (https://sso.example.com), or a word-like
// value (default, us-east-1, production, eu-central-1): lower- or
// upper-case letter runs and short numbers joined by - _ or . . A URL with a
// password always is one. Vault values and names the user marks are
// secrets whatever they look like; the caller decides that.
func LooksLikeSecret(v string) bool {
	v = strings.TrimSpace(v)
	if IsCredentialValue(v) {
		return true
	}
	if len(v) < MinSecretLen {
		return false
	}
	if i := strings.Index(v, "://"); i > 0 && !strings.ContainsAny(v[:i], " \t\n") {
		if _, err := url.Parse(v); err == nil {
			return false // a URL, and IsCredentialValue found no password in it
		}
	}
	if wordLike(v) {
		return false
	}
	if isPathLike(v) {
		if _, err := os.Stat(v); err == nil {
			return false
		}
	}
	return true
}

// wordLike: segments separated by - _ . each a run of letters of one case
// (or one capital and lower case) or a number of at most four digits; at
// most eight segments, no segment of letters longer than 14.
func wordLike(v string) bool {
	segs := strings.FieldsFunc(v, func(r rune) bool { return r == '-' || r == '_' || r == '.' })
	if len(segs) == 0 || len(segs) > 8 {
		return false
	}
	for _, s := range segs {
		switch {
		case isDigits(s):
			if len(s) > 4 {
				return false
			}
		case isLetters(s):
			if len(s) > 14 {
				return false
			}
		default:
			return false
		}
	}
	// A separator at either end or two in a row is not word-like.
	return len(strings.Join(segs, "-")) == len(v)
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// isLetters: all lower case, all upper case, or one capital then lower case.
func isLetters(s string) bool {
	lower, upper := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z':
			lower++
		case 'A' <= c && c <= 'Z':
			upper++
		default:
			return false
		}
	}
	return lower == len(s) || upper == len(s) || upper == 1 && 'A' <= s[0] && s[0] <= 'Z'
}

func isPathLike(v string) bool {
	return strings.HasPrefix(v, "/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") || strings.HasPrefix(v, "~/")
}
