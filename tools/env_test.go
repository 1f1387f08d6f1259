package tools

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
)

func TestIsCredentialName(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{
		"OPENAI_API_KEY": true, "MY_SERVICE_TOKEN": true, "GITHUB_TOKEN": true, "DB_PASSWORD": true,
		"MYSQL_PASSWD": true, "GPG_PASSPHRASE": true, "GOOGLE_APPLICATION_CREDENTIALS": true,
		"HTTP_AUTH": true, "AUTHORIZATION": true, "GH_PAT": true, "AWS_REGION": true, "AWS_ACCESS_KEY_ID": true,
		"client_secret": true, "ssh_private_key_file": true, "SENTRY_DSN": true, "REDIS_PASS": true,
		"PATH": false, "HOME": false, "PWD": false, "OLDPWD": false, "TERM": false, "LANG": false,
		"EDITOR": false, "DATABASE_URL": false, "PATH_INFO": false, "GOPATH": false,
	}
	for name, want := range cases {
		if got := IsCredentialName(name); got != want {
			t.Errorf("IsCredentialName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestIsCredentialValue(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{
		"postgres://u:pw@h/db":              true,
		"https://user:ghp_x@github.com/a/b": true,
		"redis://:secret@localhost:6379/0":  true,
		"mysql://u:p%zz@h/db":               true, // unparseable, still shaped like one
		"postgres://u@h/db":                 false,
		"https://example.com/a@b":           false,
		"/usr/bin:/bin":                     false,
		"user@example.com":                  false,
		"":                                  false,
	}
	for v, want := range cases {
		if got := IsCredentialValue(v); got != want {
			t.Errorf("IsCredentialValue(%q) = %v, want %v", v, got, want)
		}
	}
}

// fakeVault is a vault for BuildEnv tests that records every grant.
type fakeVault struct {
	values  map[string]string
	deny    map[string]bool
	granted []string
}

func (f *fakeVault) grant(name string) (string, error) {
	if f.deny[name] {
		return "", fmt.Errorf("vault.read:%s denied for bash", name)
	}
	v, ok := f.values[name]
	if !ok {
		return "", fmt.Errorf("secret %s: not in the vault", name)
	}
	f.granted = append(f.granted, name)
	return v, nil
}

func render(env Env) string {
	var b strings.Builder
	for _, v := range env {
		fmt.Fprintf(&b, "%s=%s(%s)\n", v.Name, v.Value, v.Source)
	}
	return b.String()
}

var ambient = map[string]string{
	"PATH": "/usr/bin:/bin", "HOME": "/home/u", "USER": "u", "TERM": "xterm", "LANG": "C.UTF-8",
	"LC_ALL": "C", "EDITOR": "vi", "GOPATH": "/home/u/go", "FOO": "bar",
	"OPENAI_API_KEY":        "sk-ambient-canary",
	"MCP_API_TOKEN":         "other-tenant",
	"DATABASE_URL":          "postgres://u:pw-canary@h/db",
	"INNOCUOUS":             "vault-value-canary", // an innocent name holding a vault value
	"LD_PRELOAD":            "/tmp/evil.so",
	"DYLD_INSERT_LIBRARIES": "/tmp/evil.dylib",
	"HTTP_PROXY":            "http://proxy:3128",
	"NO_PROXY":              "localhost",
}

func TestBuildEnvPolicies(t *testing.T) {
	t.Parallel()
	vaultValues := map[string]string{"MCP_API_TOKEN": "tenant-a", "GITHUB_TOKEN": "ghp-vault", "STORED": "vault-value-canary"}
	cases := []struct {
		name   string
		policy Policy
		extra  map[string]string
		want   string
	}{
		{
			name:   "default core",
			policy: Policy{},
			want:   "EDITOR=vi(core)\nHOME=/home/u(core)\nLANG=C.UTF-8(core)\nLC_ALL=C(core)\nPATH=/usr/bin:/bin(core)\nTERM=xterm(core)\nUSER=u(core)\n",
		},
		{
			name:   "none",
			policy: Policy{Inherit: InheritNone, Set: map[string]string{"A": "1"}},
			want:   "A=1(set)\n",
		},
		{
			name:   "all keeps credentials, loader vars and vault values out",
			policy: Policy{Inherit: InheritAll},
			want: "EDITOR=vi(inherit-all)\nFOO=bar(inherit-all)\nGOPATH=/home/u/go(inherit-all)\nHOME=/home/u(inherit-all)\n" +
				"HTTP_PROXY=http://proxy:3128(inherit-all)\nLANG=C.UTF-8(inherit-all)\nLC_ALL=C(inherit-all)\nNO_PROXY=localhost(inherit-all)\n" +
				"PATH=/usr/bin:/bin(inherit-all)\nTERM=xterm(inherit-all)\nUSER=u(inherit-all)\n",
		},
		{
			name:   "include cannot bring a credential in; exclude removes",
			policy: Policy{Inherit: InheritNone, Include: []string{"*_KEY", "MCP_*", "DATABASE_URL", "GO*", "LD_*", "INNOCUOUS", "FOO"}, Exclude: []string{"FOO"}},
			want:   "GOPATH=/home/u/go(include)\n",
		},
		{
			name:   "seed 002: allowlisted credential with explicitly empty scope is absent",
			policy: Policy{Inherit: InheritAll, Include: []string{"MCP_API_TOKEN"}, Secrets: []string{"MCP_API_TOKEN"}, Scope: []string{}},
			want: "EDITOR=vi(inherit-all)\nFOO=bar(inherit-all)\nGOPATH=/home/u/go(inherit-all)\nHOME=/home/u(inherit-all)\n" +
				"HTTP_PROXY=http://proxy:3128(inherit-all)\nLANG=C.UTF-8(inherit-all)\nLC_ALL=C(inherit-all)\nNO_PROXY=localhost(inherit-all)\n" +
				"PATH=/usr/bin:/bin(inherit-all)\nTERM=xterm(inherit-all)\nUSER=u(inherit-all)\n",
		},
		{
			name:   "seed 002: granted name gets the vault's value, not the ambient one",
			policy: Policy{Inherit: InheritNone, Include: []string{"MCP_API_TOKEN"}, Scope: []string{"MCP_API_TOKEN"}},
			want:   "MCP_API_TOKEN=tenant-a(secret)\n",
		},
		{
			name:   "nil scope means the configured secrets",
			policy: Policy{Inherit: InheritNone, Secrets: []string{"GITHUB_TOKEN"}},
			want:   "GITHUB_TOKEN=ghp-vault(secret)\n",
		},
		{
			name:   "a declared scope replaces the configured secrets",
			policy: Policy{Inherit: InheritNone, Secrets: []string{"GITHUB_TOKEN"}, Scope: []string{"MCP_API_TOKEN"}},
			want:   "MCP_API_TOKEN=tenant-a(secret)\n",
		},
		{
			name:   "set and extras resolve ${NAME} through the grant; $${ is literal",
			policy: Policy{Inherit: InheritNone, Set: map[string]string{"AUTH_HEADER": "Bearer ${GITHUB_TOKEN}", "LIT": "$${X}"}},
			extra:  map[string]string{"T": "${MCP_API_TOKEN}", "PLAIN": "x"},
			want:   "AUTH_HEADER=Bearer ghp-vault(set)\nLIT=${X}(set)\nPLAIN=x(call)\nT=tenant-a(call)\n",
		},
		{
			name:   "seed-001 options: home redirect, empty npmrc, proxy set",
			policy: Policy{HomeDir: "/tmp/run1", EmptyNpmrc: "/tmp/run1/.npmrc", Proxy: &ProxyOption{URL: "http://127.0.0.1:9"}, Include: []string{"*PROXY"}},
			want: "EDITOR=vi(core)\nHOME=/tmp/run1(option)\nHTTPS_PROXY=http://127.0.0.1:9(option)\nHTTP_PROXY=http://127.0.0.1:9(option)\n" +
				"HUSH_REAL_HOME=/home/u(option)\nLANG=C.UTF-8(core)\nLC_ALL=C(core)\nNPM_CONFIG_GLOBALCONFIG=/tmp/run1/.npmrc(option)\n" +
				"NPM_CONFIG_USERCONFIG=/tmp/run1/.npmrc(option)\nPATH=/usr/bin:/bin(core)\nTERM=xterm(core)\nUSER=u(core)\n" +
				"ALL_PROXY=http://127.0.0.1:9(option)\nall_proxy=http://127.0.0.1:9(option)\nhttp_proxy=http://127.0.0.1:9(option)\nhttps_proxy=http://127.0.0.1:9(option)\n",
		},
		{
			name:   "proxy cleared",
			policy: Policy{Inherit: InheritNone, Include: []string{"*PROXY"}, Proxy: &ProxyOption{}},
			want:   "",
		},
		{
			name:   "MCP base set",
			policy: Policy{Base: MCPBaseNames},
			want:   "HOME=/home/u(core)\nPATH=/usr/bin:/bin(core)\nTERM=xterm(core)\nUSER=u(core)\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fv := &fakeVault{values: vaultValues}
			req := EnvRequest{Ambient: ambient, Policy: tc.policy, Secrets: NewSecretSet(vaultValues), Grant: fv.grant, Extra: tc.extra}
			env, dropped, err := BuildEnv(req)
			if err != nil {
				t.Fatal(err)
			}
			got := render(env)
			// The sorted-names index finds the same variables.
			req.AmbientNames = SortedNames(ambient)
			indexed, indexedDropped, err := BuildEnv(req)
			if err != nil {
				t.Fatal(err)
			}
			if render(indexed) != got || !slices.Equal(indexedDropped, dropped) {
				t.Errorf("with AmbientNames:\n%s%v\nwithout:\n%s%v", render(indexed), indexedDropped, got, dropped)
			}
			if sortLines(got) != sortLines(tc.want) {
				t.Errorf("env:\n%s\nwant:\n%s", got, tc.want)
			}
			for _, canary := range []string{"sk-ambient-canary", "other-tenant", "pw-canary", "vault-value-canary", "evil"} {
				if strings.Contains(got, canary) {
					t.Errorf("env holds ambient canary %q", canary)
				}
			}
		})
	}
}

func sortLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := range lines {
		for j := i + 1; j < len(lines); j++ {
			if lines[j] < lines[i] {
				lines[i], lines[j] = lines[j], lines[i]
			}
		}
	}
	return strings.Join(lines, "\n")
}

func TestBuildEnvErrors(t *testing.T) {
	t.Parallel()
	fv := &fakeVault{values: map[string]string{"A": "secret-a"}, deny: map[string]bool{"D": true}}
	cases := []struct {
		name string
		req  EnvRequest
		want string
	}{
		{"no ambient", EnvRequest{}, "env: no ambient snapshot given"},
		{"bad inherit", EnvRequest{Ambient: ambient, Policy: Policy{Inherit: "some"}}, `env: unknown inherit "some" (want core, none or all)`},
		{"denied scope", EnvRequest{Ambient: ambient, Policy: Policy{Scope: []string{"D"}}, Grant: fv.grant}, "vault.read:D denied for bash"},
		{"unknown secret", EnvRequest{Ambient: ambient, Extra: map[string]string{"X": "${NOPE}"}, Grant: fv.grant}, "env: X: secret NOPE: not in the vault"},
		{"no grant", EnvRequest{Ambient: ambient, Policy: Policy{Scope: []string{"A"}}}, "env: secret A: secret requested but no vault access was given"},
		{"loader via set", EnvRequest{Ambient: ambient, Policy: Policy{Set: map[string]string{"LD_PRELOAD": "x"}}}, "env: set LD_PRELOAD: loader injection variables are never passed to a child"},
		{"bad reference", EnvRequest{Ambient: ambient, Extra: map[string]string{"X": "${A"}, Grant: fv.grant}, "env: X: malformed secret reference: unterminated ${ at offset 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := BuildEnv(tc.req)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "secret-a") {
				t.Fatal("error holds a secret value")
			}
		})
	}
	if !errors.Is(func() error {
		_, _, err := BuildEnv(EnvRequest{Ambient: ambient, Policy: Policy{Scope: []string{"A"}}})
		return err
	}(), ErrNoGrant) {
		t.Error("missing grant does not wrap ErrNoGrant")
	}
}

func TestBuildEnvDroppedReasons(t *testing.T) {
	t.Parallel()
	vals := map[string]string{"STORED": "vault-value-canary", "MCP_API_TOKEN": "x"}
	_, dropped, err := BuildEnv(EnvRequest{Ambient: ambient, Policy: Policy{Inherit: InheritAll}, Secrets: NewSecretSet(vals)})
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(dropped)
	want := "[{DATABASE_URL value is a URL with a password} {DYLD_INSERT_LIBRARIES loader injection variable} {INNOCUOUS value equals the value of a secret} " +
		"{LD_PRELOAD loader injection variable} {MCP_API_TOKEN credential-named; grant it as a secret instead} {OPENAI_API_KEY credential-named; grant it as a secret instead}]"
	if got != want {
		t.Errorf("dropped = %s\nwant      %s", got, want)
	}
}

// FuzzBuildEnv: whatever the ambient names and values and include globs, no
// vault value and no credential-named variable is copied from the ambient
// environment, and the result is never nil.
func FuzzBuildEnv(f *testing.F) {
	f.Add("FOO", "bar", "*", "all")
	f.Add("MY_TOKEN", "x", "MY_*", "core")
	f.Add("X", "s3cr3t-value", "X", "none")
	f.Add("DB", "mysql://a:b@c/d", "D*", "all")
	f.Fuzz(func(t *testing.T, name, value, glob, inherit string) {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return
		}
		secrets := map[string]string{"VAULTED": "s3cr3t-value"}
		amb := map[string]string{name: value, "PATH": "/bin", "LC_ALL": "C", name + "_2": value}
		req := EnvRequest{Ambient: amb, Policy: Policy{Inherit: Inherit(inherit), Include: []string{glob}}, Secrets: NewSecretSet(secrets)}
		env, dropped, err := BuildEnv(req)
		if err != nil {
			return // a bad inherit value is an error, which is fine
		}
		req.AmbientNames = SortedNames(amb)
		indexed, indexedDropped, err := BuildEnv(req)
		if err != nil || !slices.Equal(indexed, env) || !slices.Equal(indexedDropped, dropped) {
			t.Fatalf("with AmbientNames: %v %v %v\nwithout: %v %v", indexed, indexedDropped, err, env, dropped)
		}
		if env == nil || env.Environ() == nil {
			t.Fatal("nil environment")
		}
		for _, v := range env {
			if v.Value == "s3cr3t-value" || IsCredentialName(v.Name) || IsLoaderName(v.Name) || IsCredentialValue(v.Value) {
				t.Fatalf("ambient credential copied: %s", v.Name)
			}
		}
	})
}

// FuzzMatchAny: matching never panics and agrees with itself on a literal.
func FuzzMatchAny(f *testing.F) {
	f.Add("LC_*", "LC_ALL")
	f.Add("[", "x")
	f.Add("*_KEY", "A_KEY")
	f.Fuzz(func(t *testing.T, pattern, name string) {
		_ = MatchAny([]string{pattern}, name)
		if ValidGlob(pattern) == nil && !strings.ContainsAny(pattern, `*?[\`) && !MatchAny([]string{pattern}, pattern) {
			t.Fatalf("literal pattern %q does not match itself", pattern)
		}
	})
}

// ValidGlob reports a malformed glob pattern.
func ValidGlob(p string) error {
	_, err := path.Match(p, "")
	return err
}
