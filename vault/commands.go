package vault

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"golang.org/x/term"
)

// What `hush vault` needs of the vault beyond its own methods: how a
// backend is described, reading a value, naming an imported file. The
// commands themselves are package main's (cmd_vault_ops.go).

// Describe says where backend name (opened as v) keeps its secrets.
func Describe(name string, v Vault) string {
	if d := detail(v); d != "" {
		return name + " (" + d + ")"
	}
	return name
}

// DescribeInner is Describe for inside parentheses: "envfile: PATH", so a
// sentence never reads "(envfile (PATH))".
func DescribeInner(name string, v Vault) string {
	if d := detail(v); d != "" {
		return name + ": " + d
	}
	return name
}

// detail is where v keeps its secrets, if it says: its file, or its own
// description.
func detail(v Vault) string {
	switch b := v.(type) {
	case interface{ Path() string }:
		return b.Path()
	case interface{ Describe() string }:
		return b.Describe()
	}
	return ""
}

// BackendDescription is what `hush setup` and `hush vault backend` say
// about each backend of the registry.
func BackendDescription(name string) string {
	switch name {
	case "envfile":
		return "a file in hush's data dir (vault.env, mode 0600): works everywhere; any program running as you can read it"
	case "keyring":
		return "the OS keyring (Secret Service, macOS Keychain): no file, nothing in the environment"
	}
	return name
}

// MaxValue bounds a value `hush vault set` reads from stdin.
const MaxValue = 1 << 20

// ReadValue reads a value for `hush vault set`: a prompt on Err with echo
// off (before the prompt is written) when in is a terminal, else all of in
// (one trailing newline dropped, as `echo` adds it).
func ReadValue(in io.Reader, prompt io.Writer, name string) (string, error) {
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		defer HideTyping(int(f.Fd()))()
		fmt.Fprintf(prompt, "Value for %s (typing is not shown): ", name)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(prompt)
		if err != nil {
			return "", fmt.Errorf("read the value: %w", err)
		}
		return string(b), nil
	}
	b, err := io.ReadAll(io.LimitReader(in, MaxValue+1))
	if err != nil {
		return "", fmt.Errorf("read the value from stdin: %w", err)
	}
	if len(b) > MaxValue {
		return "", fmt.Errorf("the value on stdin is longer than %d bytes; nothing was stored", MaxValue)
	}
	s := string(b)
	if strings.HasSuffix(s, "\r\n") {
		s = s[:len(s)-2]
	} else {
		s = strings.TrimSuffix(s, "\n")
	}
	return s, nil
}

// ImportedName is the name an imported file is renamed to: path.imported,
// or path.imported-N when that exists.
func ImportedName(path string) string {
	renamed := path + ".imported"
	for i := 2; ; i++ {
		if _, err := os.Lstat(renamed); errors.Is(err, fs.ErrNotExist) {
			return renamed
		}
		renamed = fmt.Sprintf("%s.imported-%d", path, i)
	}
}

// What DisposeSource does with an imported file.
const (
	KeepSource   = "keep"
	DeleteSource = "delete"
	RenameSource = "rename"
)

// SwitchBackend opens backend name from reg in dataDir and moves every
// secret of the proxy's backend into it, plus extra (a key typed in
// setup). commit — the config change naming the new backend — is the
// commit point (see Move). Afterwards the proxy forwards to the new
// backend, so everything holding the vault follows.
func (p *Proxy) SwitchBackend(reg *Registry, name, dataDir string, extra map[string]string, commit func() error) (MoveReport, error) {
	if !slices.Contains(reg.Names(), name) {
		return MoveReport{}, fmt.Errorf("unknown vault backend %q (known: %s)", name, strings.Join(reg.Names(), ", "))
	}
	target, err := reg.Open(name, dataDir)
	if err != nil {
		return MoveReport{}, err
	}
	rep, err := Move(p.Backend(), target, extra, commit)
	if err != nil {
		if c, ok := target.(io.Closer); ok {
			_ = c.Close()
		}
		return rep, err
	}
	p.Swap(target)
	return rep, nil
}
