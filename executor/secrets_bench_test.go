package executor_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hushcli/hush/executor"
)

// BenchmarkSecretSnapshot is the session's secret snapshot over a vault
// of 8,000 secrets of 40 characters, as API keys are:
//
//   - start: what a session pays before its first byte (the snapshot the
//     agent, the MCP manager and background processes take; the redactor
//     is not built yet);
//   - first-output: that plus the first tool output long enough to hold a
//     secret, which builds the redactor — the redactor and the secret set
//     for 8,000 secrets (target ≤ 50 ms, scripts/bench);
//   - none: the start of a session with no secrets, beside them.
//
// Each iteration is a new cache (a new session).
func BenchmarkSecretSnapshot(b *testing.B) {
	rng := rand.New(rand.NewPCG(8000, 40))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	all := make(map[string]string, 8000)
	for i := range 8000 {
		v := make([]byte, 40)
		for j := range v {
			v[j] = alphabet[rng.IntN(len(alphabet))]
		}
		all[fmt.Sprintf("BENCH_SECRET_%05d", i)] = string(v)
	}
	output := strings.Repeat("ok: build finished in 1.2s, 0 warnings\n", 26) // 1 KiB
	source := func(m map[string]string) func() (map[string]string, error) {
		return func() (map[string]string, error) { return m, nil }
	}
	for _, c := range []struct {
		name  string
		all   map[string]string
		first bool
	}{
		{"none", map[string]string{}, true},
		{"start", all, false},
		{"first-output", all, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				snap, err := executor.NewSecretCache(source(c.all), nil).Current()
				if err != nil {
					b.Fatal(err)
				}
				if c.first && snap.Redactor.String(output) != output {
					b.Fatal("clean output was changed")
				}
			}
		})
	}
}
