package vault_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/vault"
)

// BenchmarkLayeredAll is what hush's agent reads once per turn to build
// the redactor (Agent.Secrets): the envfile backend holding 100 secrets,
// behind the proxy, layered over 200 process variables classified the way
// app.go classifies them.
func BenchmarkLayeredAll(b *testing.B) {
	path := filepath.Join(b.TempDir(), vault.EnvFileName)
	backend := vault.NewEnvFile(path)
	for i := range 100 {
		if err := backend.Set(fmt.Sprintf("SERVICE_%d_API_TOKEN", i), fmt.Sprintf("tok-%040d", i)); err != nil {
			b.Fatal(err)
		}
	}
	process := map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/home/dev", "GITHUB_TOKEN": "ghp_x"}
	for i := 0; len(process) < 200; i++ {
		process[fmt.Sprintf("TOOL_SETTING_%d", i)] = fmt.Sprintf("/opt/tool/%d", i)
	}
	l := &vault.Layered{Backend: vault.NewProxy(backend), Process: process, IsCredential: func(name string) bool {
		return tools.IsCredentialName(name) || tools.IsCredentialValue(process[name])
	}}
	b.ReportAllocs()
	for b.Loop() {
		all, err := l.All()
		if err != nil || len(all) != 101 {
			b.Fatalf("All: %d secrets, %v", len(all), err)
		}
	}
}
