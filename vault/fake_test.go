package vault_test

import (
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/hushcli/hush/vault"
)

// memVault is an in-memory backend that records which calls reached it.
type memVault struct {
	mu    sync.Mutex
	m     map[string]string
	calls []string
}

func newMem(kv ...string) *memVault {
	v := &memVault{m: map[string]string{}}
	for i := 0; i+1 < len(kv); i += 2 {
		v.m[kv[i]] = kv[i+1]
	}
	return v
}

func (v *memVault) record(call string) {
	v.calls = append(v.calls, call)
}

func (v *memVault) Get(name string) (string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.record("Get " + name)
	val, ok := v.m[name]
	if !ok {
		return "", fmt.Errorf("secret %s: %w", name, vault.ErrNotFound)
	}
	return val, nil
}

func (v *memVault) Set(name, value string) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.record("Set " + name)
	v.m[name] = value
	return nil
}

func (v *memVault) Delete(name string) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.record("Delete " + name)
	delete(v.m, name)
	return nil
}

func (v *memVault) Names() ([]string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.record("Names")
	names := make([]string, 0, len(v.m))
	for n := range v.m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

func (v *memVault) Calls() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.calls...)
}

// brokenVault lists names but cannot read them, like a locked keyring.
type brokenVault struct {
	names []string
	err   error
}

var errLocked = errors.New("keyring is locked")

func (b brokenVault) Get(string) (string, error) { return "", b.err }
func (b brokenVault) Set(string, string) error   { return b.err }
func (b brokenVault) Delete(string) error        { return b.err }
func (b brokenVault) Names() ([]string, error)   { return b.names, nil }
