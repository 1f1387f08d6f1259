//go:build !linux

package keyring

import (
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/hushcli/hush/vault"
	gokeyring "github.com/zalando/go-keyring"
)

func platformName() string {
	switch runtime.GOOS {
	case "darwin":
		return "macOS Keychain"
	}
	return "OS keyring (go-keyring)"
}

// goKeyring is a Store on zalando/go-keyring: the macOS Keychain (through
// /usr/bin/security, value on its stdin).
type goKeyring struct{}

// openStore ignores the timeout: go-keyring's calls take none.
func openStore(map[string]string, time.Duration) (Store, func() error, error) {
	// A lookup of an item that need not exist proves the keyring answers.
	_, err := gokeyring.Get(DefaultService, indexUser)
	if err != nil && !errors.Is(err, gokeyring.ErrNotFound) {
		return nil, nil, &UnavailableError{Reason: fmt.Sprintf("%v; keep secrets in a file with the envfile backend", err), NamesEnvfile: true}
	}
	return goKeyring{}, func() error { return nil }, nil
}

func (goKeyring) Get(service, user string) (string, error) {
	v, err := gokeyring.Get(service, user)
	if errors.Is(err, gokeyring.ErrNotFound) {
		return "", errNoItem
	}
	return v, err
}

func (goKeyring) Set(service, user, value string) error {
	err := gokeyring.Set(service, user, value)
	if errors.Is(err, gokeyring.ErrSetDataTooBig) {
		return fmt.Errorf("the value is too long for this keyring: %w", vault.ErrUnstorable)
	}
	return err
}

func (goKeyring) Delete(service, user string) error {
	err := gokeyring.Delete(service, user)
	if errors.Is(err, gokeyring.ErrNotFound) {
		return nil
	}
	return err
}
