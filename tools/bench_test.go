package tools

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// timeEach runs f once per benchmark iteration and reports the median
// time of one call as med-ns/op next to the usual mean. The machines this
// runs on are shared: a descheduled iteration moves the mean a lot and the
// median hardly at all.
func timeEach(b *testing.B, f func()) {
	b.Helper()
	var samples []time.Duration
	for b.Loop() {
		start := time.Now()
		f()
		samples = append(samples, time.Since(start))
	}
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)/2].Nanoseconds()), "med-ns/op")
}

// benchAmbient is a start-up environment of n variables shaped like a
// developer's shell: the core allowlist, locale variables, tool settings,
// credential-named variables, a URL with a password, and some variables
// whose names the vault also holds. vault is the vault those names come
// from.
func benchAmbient(n int, vault map[string]string) map[string]string {
	env := map[string]string{
		"PATH": "/usr/local/go/bin:/root/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME": "/home/dev", "USER": "dev", "LOGNAME": "dev", "SHELL": "/bin/bash", "TERM": "xterm-256color",
		"COLORTERM": "truecolor", "LANG": "en_GB.UTF-8", "LC_ALL": "en_GB.UTF-8", "LC_CTYPE": "en_GB.UTF-8",
		"TZ": "Europe/London", "TMPDIR": "/tmp", "EDITOR": "vim", "PAGER": "less",
		"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"GITHUB_TOKEN":          "ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"DATABASE_URL":          "postgres://app:hunter2hunter2@db.internal:5432/app",
		"HTTPS_PROXY":           "http://proxy.internal:3128",
	}
	i := 0
	for name, value := range vault { // a vault name in the environment too
		if i == 10 {
			break
		}
		env[name] = value
		i++
	}
	rng := rand.New(rand.NewPCG(uint64(n), 3))
	families := []string{"XDG_", "npm_config_", "GO", "PYTHON", "JAVA_", "CARGO_", "DOCKER_", "KUBE", "SSH_", "GIT_", "CI_", "APP_"}
	for i := 0; len(env) < n; i++ {
		name := fmt.Sprintf("%s%s_%d", families[rng.IntN(len(families))], []string{"HOME", "DIR", "LEVEL", "MODE", "OPTS", "PATH"}[rng.IntN(6)], i)
		env[name] = fmt.Sprintf("/opt/%x/%d", rng.Uint64(), i)
	}
	return env
}

// benchVault is n vault entries with token-like values.
func benchVault(n int) map[string]string {
	rng := rand.New(rand.NewPCG(uint64(n), 5))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	v := make(map[string]string, n)
	for i := range n {
		b := make([]byte, 40)
		for j := range b {
			b[j] = alphabet[rng.IntN(len(alphabet))]
		}
		v[fmt.Sprintf("SERVICE_%d_API_TOKEN", i)] = string(b)
	}
	return v
}

// BenchmarkBuildEnv builds one tool call's environment the way the bash
// tool does: 200 ambient variables, a vault of 100 names, the default
// policy, and a call that passes one secret by ${NAME} reference. The
// target is 20 µs per build (scripts/bench).
func BenchmarkBuildEnv(b *testing.B) {
	vault := benchVault(100)
	ambient := benchAmbient(200, vault)
	secrets := NewSecretSet(vault)
	grant := func(name string) (string, error) { return vault[name], nil }
	for _, tc := range []struct {
		name   string
		policy Policy
		extra  map[string]string
	}{
		{"default", Policy{}, map[string]string{"GH": "${SERVICE_7_API_TOKEN}", "DEBUG": "1"}},
		{"no-extra", Policy{}, nil},
		{"inherit-all", Policy{Inherit: InheritAll, Exclude: []string{"npm_config_*"}}, nil},
		{"include", Policy{Include: []string{"GO*", "CARGO_*"}, Set: map[string]string{"CI": "1"}}, nil},
	} {
		for _, indexed := range []bool{false, true} {
			name := tc.name
			req := EnvRequest{Ambient: ambient, Policy: tc.policy, Secrets: secrets, Grant: grant, Extra: tc.extra}
			if indexed {
				// As the agent calls it: the ambient names sorted once per session.
				name += "/indexed"
				req.AmbientNames = SortedNames(ambient)
			}
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				timeEach(b, func() {
					env, _, err := BuildEnv(req)
					if err != nil || len(env) == 0 {
						b.Fatalf("BuildEnv: %d vars, %v", len(env), err)
					}
				})
			})
		}
	}
}

// BenchmarkCommand is the spawn layer's own cost of preparing a child
// (argv check, PATH lookup, environ), without starting it.
func BenchmarkCommand(b *testing.B) {
	vault := benchVault(100)
	secrets := NewSecretSet(vault)
	env, _, err := BuildEnv(EnvRequest{Ambient: benchAmbient(200, vault), Secrets: secrets})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Command(b.Context(), Spec{Path: "bash", Args: []string{"-c", "true"}, Dir: dir, Env: env, Secrets: secrets}); err != nil {
			b.Fatal(err)
		}
	}
}
