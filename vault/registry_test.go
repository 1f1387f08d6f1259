package vault_test

import (
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/hushcli/hush/vault"
)

func TestRegistryBuiltin(t *testing.T) {
	t.Parallel()
	r := vault.NewRegistry()
	if got := r.Names(); !slices.Equal(got, []string{"envfile"}) {
		t.Errorf("Names = %q, want [envfile]", got)
	}
	dir := t.TempDir()
	v, err := r.Open("envfile", dir)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := v.(*vault.EnvFile)
	if !ok {
		t.Fatalf("envfile backend is %T", v)
	}
	if want := filepath.Join(dir, vault.EnvFileName); e.Path() != want {
		t.Errorf("Path = %q, want %q", e.Path(), want)
	}
}

func TestRegistryOpenErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	r := vault.NewRegistry()
	r.Register("keyring", func(string) (vault.Vault, error) { return newMem(), nil })
	r.Register("broken", func(string) (vault.Vault, error) { return nil, boom })
	r.Register("empty", func(string) (vault.Vault, error) { return nil, nil })
	tests := []struct {
		backend, dataDir, want string
	}{
		{"nope", "/d", `unknown vault backend "nope" (known: broken, empty, envfile, keyring)`},
		{"", "/d", `unknown vault backend "" (known: broken, empty, envfile, keyring)`},
		{"broken", "/d", "open vault backend broken: boom"},
		{"empty", "/d", "open vault backend empty: its factory returned no vault"},
		// The vault file must never land in the working dir (the project).
		{"envfile", "", `open vault backend envfile: data dir "" is not an absolute path`},
		{"envfile", "data", `open vault backend envfile: data dir "data" is not an absolute path`},
	}
	for _, tt := range tests {
		v, err := r.Open(tt.backend, tt.dataDir)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Open(%q, %q) = %v, %v; want error %q", tt.backend, tt.dataDir, v, err, tt.want)
		}
	}
	if _, err := r.Open("broken", "/d"); !errors.Is(err, boom) {
		t.Errorf("Open(broken) error %v does not wrap the factory's error", err)
	}
}

func TestRegistryRegisterReplaces(t *testing.T) {
	t.Parallel()
	r := vault.NewRegistry()
	mem := newMem("A", "1")
	var gotDir string
	r.Register("envfile", func(dataDir string) (vault.Vault, error) {
		gotDir = dataDir
		return mem, nil
	})
	v, err := r.Open("envfile", "/data")
	if err != nil {
		t.Fatal(err)
	}
	if v != vault.Vault(mem) {
		t.Errorf("Open after Register = %T, want the replacement backend", v)
	}
	if gotDir != "/data" {
		t.Errorf("factory got dataDir %q, want /data", gotDir)
	}
	if got := r.Names(); !slices.Equal(got, []string{"envfile"}) {
		t.Errorf("Names after replacing = %q, want [envfile]", got)
	}
}

func TestRegistryConcurrent(t *testing.T) {
	t.Parallel()
	r := vault.NewRegistry()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			r.Register("keyring", func(string) (vault.Vault, error) { return newMem(), nil })
			_ = r.Names()
			if _, err := r.Open("keyring", "/d"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

// TestProxyFollowsSwap: a reference taken before the swap, held only as the
// Vault interface, reaches the new backend for every method after it.
func TestProxyFollowsSwap(t *testing.T) {
	t.Parallel()
	oldB, newB := newMem("A", "old-a"), newMem("B", "new-b")
	p := vault.NewProxy(oldB)
	var held vault.Vault = p // what a tool or the redactor captured

	if got, err := held.Get("A"); err != nil || got != "old-a" {
		t.Fatalf("Get before swap = %q, %v", got, err)
	}
	if prev := p.Swap(newB); prev != vault.Vault(oldB) {
		t.Errorf("Swap returned %v, want the old backend", prev)
	}
	if p.Backend() != vault.Vault(newB) {
		t.Errorf("Backend after Swap is not the new backend")
	}
	oldCalls := len(oldB.Calls())

	if got, err := held.Get("B"); err != nil || got != "new-b" {
		t.Errorf("Get(B) after swap = %q, %v; want new-b", got, err)
	}
	if _, err := held.Get("A"); !errors.Is(err, vault.ErrNotFound) {
		t.Errorf("Get(A) after swap = %v; want ErrNotFound from the new backend", err)
	}
	if err := held.Set("C", "c"); err != nil {
		t.Fatal(err)
	}
	names, err := held.Names()
	if err != nil || !slices.Equal(names, []string{"B", "C"}) {
		t.Errorf("Names after swap = %q, %v; want [B C]", names, err)
	}
	if err := held.Delete("B"); err != nil {
		t.Fatal(err)
	}
	all, err := p.All()
	if err != nil || !maps.Equal(all, map[string]string{"C": "c"}) {
		t.Errorf("All after swap = %q, %v; want C only", all, err)
	}

	if n := len(oldB.Calls()); n != oldCalls {
		t.Errorf("the old backend got calls after the swap: %q", oldB.Calls()[oldCalls:])
	}
	want := []string{"Get B", "Get A", "Set C", "Names", "Delete B", "Names", "Get C"}
	if got := newB.Calls(); !slices.Equal(got, want) {
		t.Errorf("new backend calls = %q, want %q", got, want)
	}
	if v, ok := oldB.m["C"]; ok {
		t.Errorf("Set after the swap reached the old backend: C=%q", v)
	}
}

func TestProxyAllUsesBulk(t *testing.T) {
	t.Parallel()
	e := vault.NewEnvFile(filepath.Join(t.TempDir(), vault.EnvFileName))
	mustSet(t, e, "A", "1", "B", "2")
	all, err := vault.NewProxy(e).All()
	if err != nil || !maps.Equal(all, map[string]string{"A": "1", "B": "2"}) {
		t.Errorf("All = %q, %v", all, err)
	}
	_, err = vault.NewProxy(brokenVault{names: []string{"A"}, err: errLocked}).All()
	if !errors.Is(err, errLocked) {
		t.Errorf("All over a failing backend = %v, want its error", err)
	}
}

func TestProxyConcurrentSwap(t *testing.T) {
	t.Parallel()
	a, b := newMem("X", "a"), newMem("X", "b")
	p := vault.NewProxy(a)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 100 {
				if i%2 == 0 {
					p.Swap(b)
					p.Swap(a)
				} else if v, err := p.Get("X"); err != nil || (v != "a" && v != "b") {
					t.Errorf("Get during swaps = %q, %v", v, err)
				}
			}
		})
	}
	wg.Wait()
}
