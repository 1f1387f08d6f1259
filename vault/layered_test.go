package vault_test

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/hushcli/hush/vault"
)

// A backend that fails (a locked keyring) is an error, not a cue to serve the
// older value from the project's .env.
func TestLayeredBackendErrorIsNotMasked(t *testing.T) {
	t.Parallel()
	l := &vault.Layered{
		Backend: brokenVault{names: []string{"API_KEY"}, err: errLocked},
		DotEnv:  map[string]string{"API_KEY": "stale-dotenv-value"},
	}
	got, err := l.Get("API_KEY")
	if !errors.Is(err, errLocked) || got != "" {
		t.Errorf("Get = %q, %v; want the backend's error", got, err)
	}
	if o := l.Origin("API_KEY"); o != "vault" {
		t.Errorf("Origin = %q, want vault", o)
	}
	if _, err := l.All(); !errors.Is(err, errLocked) {
		t.Errorf("All = %v, want the backend's error", err)
	}
}

func TestLayeredWithoutClassifier(t *testing.T) {
	t.Parallel()
	l := &vault.Layered{
		Backend: newMem("STORED", "s"),
		Process: map[string]string{"GITHUB_TOKEN": "ghp", "STORED": "env-wins"},
	}
	names, err := l.Names()
	if err != nil || !slices.Equal(names, []string{"STORED"}) {
		t.Errorf("Names = %q, %v; want [STORED] (no classifier, no process secrets)", names, err)
	}
	if got, err := l.Get("STORED"); err != nil || got != "env-wins" {
		t.Errorf("Get(STORED) = %q, %v; want env-wins", got, err)
	}
	if _, err := l.Get("GITHUB_TOKEN"); !errors.Is(err, vault.ErrNotFound) {
		t.Errorf("Get(GITHUB_TOKEN) = %v, want ErrNotFound", err)
	}
	all, err := l.All()
	if err != nil || !maps.Equal(all, map[string]string{"STORED": "env-wins"}) {
		t.Errorf("All = %q, %v", all, err)
	}
}

func TestLayeredWritesGoToBackend(t *testing.T) {
	t.Parallel()
	mem := newMem("A", "1")
	dotEnv := map[string]string{"D": "d"}
	process := map[string]string{"P_TOKEN": "p"}
	l := &vault.Layered{Backend: mem, DotEnv: dotEnv, Process: process, IsCredential: isCredential}
	if err := l.Set("B", "2"); err != nil {
		t.Fatal(err)
	}
	if err := l.Delete("A"); err != nil {
		t.Fatal(err)
	}
	if err := l.Delete("D"); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(mem.m, map[string]string{"B": "2"}) {
		t.Errorf("backend = %q, want B only", mem.m)
	}
	if !maps.Equal(dotEnv, map[string]string{"D": "d"}) || !maps.Equal(process, map[string]string{"P_TOKEN": "p"}) {
		t.Errorf("Set/Delete touched the in-memory layers: %q %q", dotEnv, process)
	}
	// Names read the backend each time: a Set is visible at once.
	names, err := l.Names()
	if err != nil || !slices.Equal(names, []string{"B", "D", "P_TOKEN"}) {
		t.Errorf("Names = %q, %v", names, err)
	}
}

func isCredential(name string) bool {
	return len(name) > 6 && name[len(name)-6:] == "_TOKEN"
}

// Origins, the one-pass listing `hush vault list` uses, says what Origin
// says for every name.
func TestLayeredOriginsAgreeWithOrigin(t *testing.T) {
	t.Parallel()
	l := &vault.Layered{
		Backend:      newMem("STORED", "s", "BOTH", "b", "SHADOWED", "x"),
		DotEnv:       map[string]string{"LEGACY": "l", "BOTH": "old"},
		Process:      map[string]string{"GITHUB_TOKEN": "ghp", "SHADOWED": "env-wins", "PATH": "/bin"},
		IsCredential: func(n string) bool { return n == "GITHUB_TOKEN" },
	}
	origins, err := l.Origins()
	if err != nil {
		t.Fatal(err)
	}
	names, _ := l.Names()
	if !slices.Equal(slices.Sorted(maps.Keys(origins)), names) {
		t.Fatalf("Origins names %q, Names %q", slices.Sorted(maps.Keys(origins)), names)
	}
	want := map[string]string{"STORED": "vault", "BOTH": "vault", "SHADOWED": "environment", "LEGACY": ".env", "GITHUB_TOKEN": "environment"}
	for _, n := range names {
		if origins[n] != l.Origin(n) || origins[n] != want[n] {
			t.Errorf("%s: Origins says %q, Origin %q, want %q", n, origins[n], l.Origin(n), want[n])
		}
	}
}
