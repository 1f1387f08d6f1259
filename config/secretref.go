package config

// The ${NAME} syntax of config values and tool env arguments. It lives in
// config, the leaf, because config validation and the trust prompt read
// references; the vault, the tools and the session resolve them here too.

import (
	"errors"
	"fmt"
	"strings"
)

// ErrBadReference is returned (wrapped) for a malformed ${...} reference.
var ErrBadReference = errors.New("malformed secret reference")

// Lookup resolves one secret name. In hush it is the gated vault, so a
// substitution asks the PermissionGate once per name it meets.
type Lookup func(name string) (string, error)

// Substitute replaces every ${NAME} in s with lookup(NAME). "$${" stands for
// a literal "${". A "$" not followed by "{" is left alone, so shell text such
// as "$HOME" or "$1" passes through. An unknown name or a lookup error stops
// the substitution with an error naming the secret, never a value.
func Substitute(s string, lookup Lookup) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "$${") {
			b.WriteString("${")
			i += 3
			continue
		}
		if !strings.HasPrefix(s[i:], "${") {
			b.WriteByte(s[i])
			i++
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			return "", fmt.Errorf("%w: unterminated ${ at offset %d", ErrBadReference, i)
		}
		name := s[i+2 : i+2+end]
		if !ValidSecretName(name) {
			// The text between the braces is not shown: what is not a name
			// may well be a value pasted where its name belongs.
			return "", fmt.Errorf("%w: the ${...} at offset %d does not hold a valid secret name (letters, digits and _, not starting with a digit; write $${ for a literal ${)", ErrBadReference, i)
		}
		v, err := lookup(name)
		if err != nil {
			return "", err
		}
		b.WriteString(v)
		i += 2 + end + 1
	}
	return b.String(), nil
}

// References lists the secret names s refers to, in order, without resolving
// them (for showing what a config would ask for).
func References(s string) ([]string, error) {
	var names []string
	_, err := Substitute(s, func(name string) (string, error) {
		names = append(names, name)
		return "", nil
	})
	return names, err
}

// ValidSecretName reports whether name can be a secret's name: usable as
// an environment variable and inside ${NAME} (^[A-Za-z_][A-Za-z0-9_]*$, at
// most 256 bytes), checked without a regexp since every ${NAME} in a tool
// call's env is checked on every call. vault.CheckName is this policy with
// an error that says why.
func ValidSecretName(name string) bool {
	if name == "" || len(name) > 256 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}
