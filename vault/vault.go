// Package vault owns hush's secrets: the Vault interface, its backends, the
// registry that picks one, the forwarding proxy that lets a reference survive
// a backend swap, the layered view that adds a legacy project .env and the
// real environment, and the secret names ${NAME} substitution (config) resolves.
//
// Nothing here writes the process environment or starts a process, and no
// error built here ever contains a secret value: errors name the secret.
package vault

import (
	"errors"
	"fmt"

	"github.com/hushcli/hush/config"
)

// Vault is a store of named secrets.
type Vault interface {
	// Get returns the value of name, or an error wrapping ErrNotFound.
	Get(name string) (string, error)
	// Set stores value under name, replacing any previous value.
	Set(name, value string) error
	// Delete removes name; deleting a name that is not there is not an error.
	Delete(name string) error
	// Names lists the stored names, sorted.
	Names() ([]string, error)
}

// ErrNotFound means the vault holds no secret of that name.
var ErrNotFound = errors.New("not in the vault")

// ErrUnstorable means a backend cannot round-trip the name or value.
var ErrUnstorable = errors.New("cannot be stored")

// CheckName is the name policy every backend shares: a name must be usable
// as an environment variable and inside ${NAME}, since that is how secrets
// reach tools. Backends narrow it further with their own checks (the envfile
// backend, for one, cannot store a value it could not read back).
func CheckName(name string) error {
	if name == "" {
		return fmt.Errorf("secret name is empty: %w", ErrUnstorable)
	}
	if len(name) > 256 {
		return fmt.Errorf("secret name %.32q... is longer than 256 characters: %w", name, ErrUnstorable)
	}
	if !config.ValidSecretName(name) {
		return fmt.Errorf("secret name %q %w: use letters, digits and _, not starting with a digit", name, ErrUnstorable)
	}
	return nil
}

func notFound(name string) error {
	return fmt.Errorf("secret %s: %w", name, ErrNotFound)
}
