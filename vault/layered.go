package vault

import (
	"errors"
	"sort"
	"sync"
)

// Layered is the vault hush runs with: the stored backend, a legacy project
// .env, and credential-named variables of the real environment, merged in
// memory and never written back to any environment.
//
// Names: what the backend stores, plus the .env names, plus the process
// variables IsCredential accepts. A value comes from the first layer that
// has it: the real environment (a defined, non-empty variable wins, as the
// seed's precedence requires), then the backend, then the legacy .env. The
// process environment overrides a secret's value but never turns a plain
// variable such as PATH into a secret.
//
// Set and Delete go to the backend.
type Layered struct {
	Backend Vault
	// DotEnv is the legacy project .env, already parsed (config.LoadDotEnv).
	DotEnv map[string]string
	// DotEnvFrom names, for messages, the file each DotEnv value came from
	// (the root .env, sub/.env, .env.local ...); a name without one is
	// said to come from the project's .env.
	DotEnvFrom map[string]string
	// Process is hush's snapshot of the environment it was started with.
	Process map[string]string
	// IsCredential decides which process variables are secrets in their own right.
	IsCredential func(name string) bool
	// IsSecretValue decides whether a value from the environment or a
	// legacy .env file is also secret text — redacted from output and
	// refused in a command line (All) — rather than only a name a tool can
	// be granted. nil: every such value is. Backend values always are.
	IsSecretValue func(name, value string) bool
	// DotEnvShadowed holds values of legacy .env files that a file of
	// higher precedence shadows (the name is granted from DotEnv), keyed
	// "NAME@file": they are still scrubbed from output.
	DotEnvShadowed map[string]string

	// Process and IsCredential must not change after the first call: which
	// process variables are credentials is worked out once. The agent reads
	// every secret once per turn, and classifying a 200-variable
	// environment each time cost more than reading the backend.
	credOnce sync.Once
	creds    []string // non-empty process variables IsCredential accepts
}

// credentials returns the non-empty process variables IsCredential accepts.
func (l *Layered) credentials() []string {
	l.credOnce.Do(func() {
		for n, v := range l.Process {
			if v != "" && l.IsCredential != nil && l.IsCredential(n) {
				l.creds = append(l.creds, n)
			}
		}
	})
	return l.creds
}

func (l *Layered) Get(name string) (string, error) {
	names, err := l.nameSet()
	if err != nil {
		return "", err
	}
	if !names[name] {
		return "", notFound(name)
	}
	if v := l.Process[name]; v != "" {
		return v, nil
	}
	v, err := l.Backend.Get(name)
	if err == nil {
		return v, nil
	}
	// Only a name the backend does not hold falls through to the legacy
	// .env: a backend that failed (locked keyring, unreadable file) must not
	// be papered over with an older value from the project directory.
	if !errors.Is(err, ErrNotFound) {
		return "", err
	}
	if v, ok := l.DotEnv[name]; ok {
		return v, nil
	}
	return "", err
}

func (l *Layered) Set(name, value string) error { return l.Backend.Set(name, value) }
func (l *Layered) Delete(name string) error     { return l.Backend.Delete(name) }

func (l *Layered) Names() ([]string, error) {
	set, err := l.nameSet()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// Origin says which layer a name's value comes from: "environment",
// "vault" or ".env"; "" when the name is not a secret.
func (l *Layered) Origin(name string) string {
	names, err := l.nameSet()
	if err != nil || !names[name] {
		return ""
	}
	if l.Process[name] != "" {
		return "environment"
	}
	if _, err := l.Backend.Get(name); !errors.Is(err, ErrNotFound) {
		return "vault"
	}
	if _, ok := l.DotEnv[name]; ok {
		return ".env"
	}
	return "vault"
}

// Origins is Origin for every name, from one listing of each layer: asking
// Origin name by name lists the backend and reads a value per name, which
// made `hush vault list` quadratic (8,000 names: 32 s).
func (l *Layered) Origins() (map[string]string, error) {
	stored, err := l.Backend.Names()
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(stored)+len(l.DotEnv))
	for n := range l.DotEnv {
		out[n] = ".env"
	}
	for _, n := range stored {
		out[n] = "vault"
	}
	for _, n := range l.credentials() {
		out[n] = "environment"
	}
	for n := range out {
		if l.Process[n] != "" {
			out[n] = "environment"
		}
	}
	return out, nil
}

// Bulk is a backend that can return every secret in one read. The map it
// returns is the caller's to keep and change.
type Bulk interface {
	All() (map[string]string, error)
}

// Versioned is a backend that can say cheaply whether All would return
// something new: Version changes whenever All's result may have changed
// since the last call, and may change when nothing did.
type Versioned interface {
	Version() (uint64, error)
}

// ErrNoVersion is Version's answer for a backend that cannot tell.
var ErrNoVersion = errors.New("vault: this backend has no cheap version")

// Version is a number that changes whenever All's result may have: the
// backend's version (DotEnv, Process and IsCredential never change). The
// agent asks it before each turn and rebuilds its redactor only when it
// changed. A backend that cannot tell gives ErrNoVersion, and the caller
// reads All.
func (l *Layered) Version() (uint64, error) {
	if v, ok := l.Backend.(Versioned); ok {
		return v.Version()
	}
	return 0, ErrNoVersion
}

// All returns every secret with its effective value, for the redactor and
// the env builder's value check. Callers must not log or return it.
func (l *Layered) All() (map[string]string, error) {
	stored, err := All(l.Backend)
	if err != nil {
		return nil, err
	}
	secret := func(n, v string) bool { return l.IsSecretValue == nil || l.IsSecretValue(n, v) }
	out := stored // the backend's map is ours to change (Bulk)
	if len(l.DotEnv) > 0 || len(l.DotEnvShadowed) > 0 || out == nil {
		out = make(map[string]string, len(stored)+len(l.DotEnv))
		for n, v := range l.DotEnvShadowed {
			if secret(n, v) {
				out[n] = v
			}
		}
		for n, v := range l.DotEnv {
			if pv := l.Process[n]; pv != "" {
				v = pv // the environment's value is the one a tool gets
			}
			if secret(n, v) {
				out[n] = v
			}
		}
		for n, v := range stored {
			out[n] = v
		}
	}
	// A defined process variable overrides a stored secret's value, and a
	// credential-like one is a secret of its own if its value looks like
	// one.
	for n := range stored {
		if v := l.Process[n]; v != "" {
			out[n] = v
		}
	}
	for _, n := range l.credentials() {
		if v := l.Process[n]; secret(n, v) {
			out[n] = v
		} else if _, stored := stored[n]; !stored {
			delete(out, n)
		}
	}
	return out, nil
}

func (l *Layered) nameSet() (map[string]bool, error) {
	stored, err := l.Backend.Names()
	if err != nil {
		return nil, err
	}
	set := make(map[string]bool, len(stored)+len(l.DotEnv))
	for _, n := range stored {
		set[n] = true
	}
	for n := range l.DotEnv {
		set[n] = true
	}
	for _, n := range l.credentials() {
		set[n] = true
	}
	return set, nil
}
