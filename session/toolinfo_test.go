package session

import (
	"context"
	"slices"
	"testing"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/toolset/bash"
	"github.com/hushcli/hush/toolset/dockerbash"
	httptool "github.com/hushcli/hush/toolset/http"
)

func TestToolsSummarizesPolicies(t *testing.T) {
	t.Parallel()
	cfg := config.Config{Tools: map[string]config.ToolConfig{"bash": {Secrets: []string{"GH_TOKEN"}, Set: map[string]string{"DB": "${DB_URL}", "LEVEL": "1"}}}}
	agent := &executor.Agent{Tools: executor.NewRegistry(bash.Tool{}, dockerbash.Tool{}, httptool.Tool{})}
	got := map[string]ToolSummary{}
	for _, s := range Tools(cfg, t.TempDir(), agent) {
		got[s.Name] = s
	}
	b := got["bash"]
	slices.Sort(b.Secrets)
	if !slices.Equal(b.Secrets, []string{"GH_TOKEN"}) || b.Sandbox != "runs on this machine, sandbox "+SandboxWord() {
		t.Errorf("bash = %+v", b)
	}
	if got[dockerbash.Name].Sandbox != "runs in a container" || got["http"].Sandbox != "runs inside hush with no vault; no private addresses unless allowed" {
		t.Errorf("summaries = %+v", got)
	}
	if w := SandboxWord(); w != "on" && w != "off" {
		t.Errorf("SandboxWord = %q", w)
	}
}

func TestStandaloneStartsNothingUnconfigured(t *testing.T) {
	t.Parallel()
	mgr, err := Standalone{Dir: t.TempDir(), DataDir: t.TempDir(), Ambient: map[string]string{"PATH": "/bin"}, Vault: mapReader{},
		Scrub: executor.NewSecretCache(func() (map[string]string, error) { return nil, nil }, func() (uint64, error) { return 1, nil })}.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Close()
	if st := mgr.Status(); len(st) != 0 {
		t.Errorf("status = %+v", st)
	}
}

type mapReader map[string]string

func (m mapReader) Get(name string) (string, error) { return m[name], nil }
