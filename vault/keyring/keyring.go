// Package keyring is hush's OS-keyring vault backend: secrets live in the
// Secret Service on Linux (gnome-keyring, KeePassXC, …) or the macOS
// Keychain — no file hush writes, nothing in any environment. It is
// registered in the vault registry as "keyring". (hush does not build for
// Windows: its file and process handling is POSIX.)
//
// On macOS it uses zalando/go-keyring. On Linux it speaks the
// Secret Service D-Bus API itself (over godbus, the library go-keyring uses)
// and files items exactly as go-keyring does, so the two read each other's
// items. The reason is the session bus address: go-keyring finds the bus
// only through hush's own process environment, which guard.Guard reduces to
// the core allowlist, and otherwise launches dbus-launch — a process started
// outside hush's spawn layer. Here the address comes from hush's in-memory
// environment snapshot, passed in explicitly, and nothing is ever launched.
//
// The keyring APIs cannot list what a service holds, so the backend keeps
// the list of names in one more keyring item (see indexUser), updated under
// a lock file in hush's data dir.
//
// Nothing here writes the process environment or starts a process, and no
// error built here contains a secret value.
package keyring

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/gofrs/flock"
	"github.com/hushcli/hush/vault"
)

// DefaultService is the keyring service hush files its secrets under.
const DefaultService = "hush"

// ServiceEnv names the environment variable that overrides DefaultService,
// so two hush installations (or parallel tests) on one keyring stay apart.
// Its name avoids the credential patterns (KEY, TOKEN, …): a variable
// classified as a credential would be treated, and redacted, as a secret.
const ServiceEnv = "HUSH_VAULT_SERVICE"

// indexUser is the item holding the sorted JSON list of stored names. It is
// not a valid secret name (vault.CheckName rejects ':'), so no secret can
// overwrite it and Get never returns it.
const indexUser = "hush:index"

// lockFileName is the lock the names index is updated under, in the data dir.
const lockFileName = "keyring.lock"

// ErrUnavailable means no keyring service can be reached. Callers name the
// fallback: the envfile backend. The errors that say so are
// *UnavailableError.
var ErrUnavailable = errors.New("no OS keyring service is available")

// UnavailableError is why no keyring service can be reached: it is
// ErrUnavailable (errors.Is) with its reason.
type UnavailableError struct {
	// Reason is one sentence; NamesEnvfile says it ends by pointing at the
	// envfile backend, after which Error adds the config line to write.
	Reason       string
	NamesEnvfile bool
}

func (e *UnavailableError) Error() string {
	s := ErrUnavailable.Error() + ": " + e.Reason
	if e.NamesEnvfile {
		s += ` ([vault] backend = "envfile")`
	}
	return s
}

func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// ErrLocked means the keyring is locked and was not unlocked.
var ErrLocked = errors.New("the keyring is locked")

// errNoItem is what a Store returns for an item it does not hold.
var errNoItem = errors.New("no such keyring item")

// Store is a keyring: items addressed by service and user, the shape every
// OS keyring API (and go-keyring) shares. Get returns an error wrapping
// errNoItem for a missing item; Delete of a missing item is not an error.
type Store interface {
	Get(service, user string) (string, error)
	Set(service, user, value string) error
	Delete(service, user string) error
}

// Options configure a keyring backend.
type Options struct {
	// Service is the keyring service name; "" means DefaultService.
	Service string
	// Env is hush's environment snapshot. On Linux it says where the
	// session bus is (DBUS_SESSION_BUS_ADDRESS, XDG_RUNTIME_DIR).
	Env map[string]string
	// DataDir is hush's data dir (absolute): the names index lock lives there.
	DataDir string
	// CallTimeout bounds each call to the keyring service (Linux); zero
	// means 25 s. An error after it says so.
	CallTimeout time.Duration
}

// Backend is the keyring vault backend. It is safe for concurrent use, also
// by several processes sharing one keyring.
type Backend struct {
	store   Store
	service string
	lock    string
	mu      sync.Mutex
	closer  func() error
}

// Factory returns the vault registry's factory for the keyring backend,
// reading the service name and the bus address from env, hush's snapshot.
func Factory(env map[string]string) vault.Factory {
	return func(dataDir string) (vault.Vault, error) {
		return Open(Options{Service: env[ServiceEnv], Env: env, DataDir: dataDir})
	}
}

// Open connects to the platform keyring and checks that it answers, so a
// missing service is reported once, when the backend is chosen, rather than
// at the first secret a tool asks for.
func Open(opts Options) (*Backend, error) {
	if !filepath.IsAbs(opts.DataDir) {
		return nil, fmt.Errorf("keyring: data dir %q is not an absolute path", opts.DataDir)
	}
	service := opts.Service
	if service == "" {
		service = DefaultService
	}
	store, closer, err := openStore(opts.Env, opts.CallTimeout)
	if err != nil {
		return nil, err
	}
	b := &Backend{store: store, service: service, lock: filepath.Join(opts.DataDir, lockFileName), closer: closer}
	// A real round trip of the one item hush always may read: the index.
	if _, err := b.readIndex(); err != nil {
		_ = b.Close()
		return nil, err
	}
	return b, nil
}

// Service is the keyring service the backend files items under.
func (b *Backend) Service() string { return b.service }

// Describe says where the secrets are, for `hush vault list` and `backend`.
func (b *Backend) Describe() string {
	return fmt.Sprintf("%s, service %q", platformName(), b.service)
}

// Close releases the connection to the keyring. It may be called more than
// once; the backend must not be used afterwards.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closer == nil {
		return nil
	}
	err := b.closer()
	b.closer = nil
	return err
}

func notFound(name string) error { return fmt.Errorf("secret %s: %w", name, vault.ErrNotFound) }

// Get implements vault.Vault.
func (b *Backend) Get(name string) (string, error) {
	if vault.CheckName(name) != nil {
		return "", notFound(name) // also keeps the index item out of reach
	}
	v, err := b.store.Get(b.service, name)
	if errors.Is(err, errNoItem) {
		return "", notFound(name)
	}
	if err != nil {
		return "", fmt.Errorf("keyring: read secret %s: %w", name, err)
	}
	return v, nil
}

// Set implements vault.Vault. The value is stored before the index: a crash
// between the two leaves a stored secret that is not listed yet (the next Set
// of any name does not repair it; setting it again does), never a listed name
// whose value was lost.
func (b *Backend) Set(name, value string) error {
	if err := vault.CheckName(name); err != nil {
		return err
	}
	unlock, err := b.lockIndex()
	if err != nil {
		return err
	}
	defer unlock()
	if err := b.store.Set(b.service, name, value); err != nil {
		return fmt.Errorf("keyring: store secret %s: %w", name, err)
	}
	names, err := b.readIndex()
	if err != nil {
		return err
	}
	i, found := slices.BinarySearch(names, name)
	if found {
		return nil
	}
	return b.writeIndex(slices.Insert(names, i, name))
}

// Delete implements vault.Vault. The value goes first: a crash between the
// two leaves a listed name that reads as not found, never a secret that was
// reported deleted but is still in the keyring.
func (b *Backend) Delete(name string) error {
	if vault.CheckName(name) != nil {
		return nil // nothing by that name can have been stored
	}
	unlock, err := b.lockIndex()
	if err != nil {
		return err
	}
	defer unlock()
	if err := b.store.Delete(b.service, name); err != nil && !errors.Is(err, errNoItem) {
		return fmt.Errorf("keyring: delete secret %s: %w", name, err)
	}
	names, err := b.readIndex()
	if err != nil {
		return err
	}
	i, found := slices.BinarySearch(names, name)
	if !found {
		return nil
	}
	return b.writeIndex(slices.Delete(names, i, i+1))
}

// Names implements vault.Vault.
func (b *Backend) Names() ([]string, error) {
	return b.readIndex()
}

// All implements vault.Bulk. A listed name whose item is gone (a crash
// between the two writes of a Delete) is left out.
func (b *Backend) All() (map[string]string, error) {
	names, err := b.readIndex()
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(names))
	for _, n := range names {
		v, err := b.Get(n)
		if errors.Is(err, vault.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[n] = v
	}
	return out, nil
}

// index is the names item's content.
type index struct {
	Names []string `json:"names"`
}

func (b *Backend) readIndex() ([]string, error) {
	raw, err := b.store.Get(b.service, indexUser)
	if errors.Is(err, errNoItem) {
		return []string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("keyring: read the list of names: %w", err)
	}
	var ix index
	if err := json.Unmarshal([]byte(raw), &ix); err != nil {
		return nil, fmt.Errorf("keyring: the list of names (item %q of service %q) is damaged; delete that item to rebuild it from `hush vault set`", indexUser, b.service)
	}
	names := ix.Names[:0:0]
	for _, n := range ix.Names {
		if vault.CheckName(n) == nil {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

func (b *Backend) writeIndex(names []string) error {
	if names == nil {
		names = []string{}
	}
	data, err := json.Marshal(index{Names: names})
	if err != nil {
		return fmt.Errorf("keyring: write the list of names: %w", err)
	}
	if err := b.store.Set(b.service, indexUser, string(data)); err != nil {
		return fmt.Errorf("keyring: write the list of names: %w", err)
	}
	return nil
}

// lockIndex serializes index updates: the mutex within this process, the
// lock file across processes (two `hush vault set` at once must not lose a
// name from the list).
func (b *Backend) lockIndex() (func(), error) {
	b.mu.Lock()
	if err := os.MkdirAll(filepath.Dir(b.lock), 0o700); err != nil {
		b.mu.Unlock()
		return nil, fmt.Errorf("keyring: create data dir: %w", err)
	}
	l := flock.New(b.lock)
	if err := l.Lock(); err != nil {
		b.mu.Unlock()
		return nil, fmt.Errorf("keyring: lock %s: %w", b.lock, err)
	}
	return func() {
		_ = l.Unlock()
		b.mu.Unlock()
	}, nil
}
