package keyring

import (
	"fmt"
	"path/filepath"
)

// OpenStore connects to the platform keyring as New does (on Linux the
// Secret Service on the session bus named in env), for tests that wrap
// the store. The returned func closes the connection.
func OpenStore(env map[string]string) (Store, func() error, error) { return openStore(env, 0) }

// NewWithStore returns a backend over any Store, for tests that wrap a store
// (to inject failures).
func NewWithStore(store Store, service, dataDir string) (*Backend, error) {
	if !filepath.IsAbs(dataDir) {
		return nil, fmt.Errorf("keyring: data dir %q is not an absolute path", dataDir)
	}
	if service == "" {
		service = DefaultService
	}
	return &Backend{store: store, service: service, lock: filepath.Join(dataDir, lockFileName)}, nil
}
