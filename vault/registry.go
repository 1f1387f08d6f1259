package vault

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Factory opens a backend. dataDir is hush's data dir; a backend that keeps
// a file keeps it there.
type Factory func(dataDir string) (Vault, error)

// Registry maps backend names ("envfile", "keyring", ...) to factories. It is
// built once in main and passed down; there is no package-level registry.
type Registry struct {
	mu        sync.Mutex
	factories map[string]Factory
}

// NewRegistry returns a registry holding the built-in envfile backend.
func NewRegistry() *Registry {
	r := &Registry{factories: map[string]Factory{}}
	r.Register("envfile", func(dataDir string) (Vault, error) {
		// A relative or empty dir would put the vault file under the working
		// directory, which is usually the project: the place it must not be.
		if !filepath.IsAbs(dataDir) {
			return nil, fmt.Errorf("data dir %q is not an absolute path", dataDir)
		}
		return NewEnvFile(filepath.Join(dataDir, EnvFileName)), nil
	})
	return r
}

// Register adds or replaces the factory for name.
func (r *Registry) Register(name string, f Factory) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.factories[name] = f
}

// Names lists the registered backends, sorted.
func (r *Registry) Names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.factories))
	for n := range r.factories {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// OpenError is a backend that could not be opened, with why.
type OpenError struct {
	Backend string
	Err     error
}

func (e *OpenError) Error() string { return "open vault backend " + e.Backend + ": " + e.Err.Error() }
func (e *OpenError) Unwrap() error { return e.Err }

// Open builds the backend registered under name.
func (r *Registry) Open(name, dataDir string) (Vault, error) {
	r.mu.Lock()
	f, ok := r.factories[name]
	r.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("unknown vault backend %q (known: %s)", name, strings.Join(r.Names(), ", "))
	}
	v, err := f(dataDir)
	if err != nil {
		return nil, &OpenError{Backend: name, Err: err}
	}
	if v == nil {
		// Caught here, not as a nil dereference at the first secret read.
		return nil, &OpenError{Backend: name, Err: errors.New("its factory returned no vault")}
	}
	return v, nil
}

// Proxy forwards every call to the backend installed last. A reference to
// the Proxy taken before a Swap resolves to the new backend after it, so
// nothing that captured the vault (a tool, the redactor's source) keeps
// reading a backend that was replaced.
type Proxy struct {
	mu      sync.RWMutex
	backend Vault

	swaps uint64 // Swap calls, under mu

	verMu     sync.Mutex
	version   uint64
	lastSwaps uint64 // swaps and the backend's version when version was last given
	lastInner uint64
}

// NewProxy returns a proxy forwarding to v.
func NewProxy(v Vault) *Proxy { return &Proxy{backend: v} }

// Swap installs v and returns the backend it replaced.
func (p *Proxy) Swap(v Vault) Vault {
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.backend
	p.backend = v
	p.swaps++
	return old
}

// Backend returns the live backend.
func (p *Proxy) Backend() Vault {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.backend
}

func (p *Proxy) Get(name string) (string, error) { return p.Backend().Get(name) }
func (p *Proxy) Set(name, value string) error    { return p.Backend().Set(name, value) }
func (p *Proxy) Delete(name string) error        { return p.Backend().Delete(name) }
func (p *Proxy) Names() ([]string, error)        { return p.Backend().Names() }

// Version implements Versioned: it changes when the live backend's version
// does and when another backend is swapped in (whose own version may
// happen to equal the old one's).
func (p *Proxy) Version() (uint64, error) {
	p.mu.RLock()
	b, swaps := p.backend, p.swaps
	p.mu.RUnlock()
	v, ok := b.(Versioned)
	if !ok {
		return 0, ErrNoVersion
	}
	bv, err := v.Version()
	if err != nil {
		return 0, err
	}
	p.verMu.Lock()
	defer p.verMu.Unlock()
	if swaps != p.lastSwaps || bv != p.lastInner || p.version == 0 {
		p.version++
		p.lastSwaps, p.lastInner = swaps, bv
	}
	return p.version, nil
}

// All forwards to the live backend, in one call when it can list
// everything at once.
func (p *Proxy) All() (map[string]string, error) { return All(p.Backend()) }
