package vault

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"golang.org/x/term"
)

// What `hush vault` does, on the layered vault: package main parses the
// flags and calls these. Values are never printed, only names.

// Commands runs `hush vault` subcommands: Layered is the session's view
// (environment, backend, legacy .env), Proxy the backend behind it, Backend
// the configured backend's name. Results go to Out, warnings to Err.
type Commands struct {
	Layered  *Layered
	Proxy    *Proxy
	Backend  string
	Out, Err io.Writer
}

// Where names the backend in use and where it keeps secrets.
func (c *Commands) Where() string { return Describe(c.Backend, c.Proxy.Backend()) }

// Describe says where backend name (opened as v) keeps its secrets.
func Describe(name string, v Vault) string {
	if d := detail(v); d != "" {
		return name + " (" + d + ")"
	}
	return name
}

// describeInner is Describe for inside parentheses: "envfile: PATH", so a
// sentence never reads "(envfile (PATH))".
func describeInner(name string, v Vault) string {
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

// whereInner is Where for inside parentheses (describeInner).
func (c *Commands) whereInner() string { return describeInner(c.Backend, c.Proxy.Backend()) }

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

// Set stores value under name (`hush vault set`), and warns when the
// environment hush was started with shadows it.
func (c *Commands) Set(name, value string) error {
	if value == "" {
		return errors.New("no value given; nothing was stored (to remove a secret: hush vault rm " + name + ")")
	}
	if err := c.Layered.Set(name, value); err != nil {
		return err
	}
	fmt.Fprintf(c.Out, "stored %s in the vault (%s)\n", name, c.whereInner())
	if c.Layered.Origin(name) == "environment" {
		fmt.Fprintf(c.Err, "hush: warning: %s is also set in the environment hush was started with, and that value wins over the vault; unset it in your shell to use the stored one\n", name)
	}
	return nil
}

// List prints every secret name with where it comes from (`hush vault
// list`): for a legacy .env value, the file it came from.
func (c *Commands) List() error {
	origins, err := c.Layered.Origins()
	if err != nil {
		return err
	}
	names := slices.Sorted(maps.Keys(origins))
	stored, err := c.Proxy.Names()
	if err != nil {
		return err
	}
	inVault := map[string]bool{}
	for _, n := range stored {
		inVault[n] = true
	}
	if len(names) == 0 {
		fmt.Fprintln(c.Out, "no secrets")
	} else {
		out := bufio.NewWriter(c.Out)
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tFROM")
		for _, n := range names {
			from := origins[n]
			switch {
			case from == "environment" && inVault[n]:
				from += " (also in the vault; the environment wins)"
			case from == ".env" && c.Layered.DotEnvFrom[n] != "":
				from += " (" + c.Layered.DotEnvFrom[n] + "; move it with `hush vault import`)"
			case from == ".env":
				from += " (move it with `hush vault import`)"
			}
			fmt.Fprintf(tw, "%s\t%s\n", n, from)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if err := out.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintf(c.Out, "backend: %s\n", c.Where())
	return nil
}

// Remove deletes name from the backend (`hush vault rm`); a name that
// comes from another layer is an error that says where.
func (c *Commands) Remove(name string) error {
	stored, err := c.Proxy.Names()
	if err != nil {
		return err
	}
	if !slices.Contains(stored, name) {
		switch c.Layered.Origin(name) {
		case "environment":
			return fmt.Errorf("%s is not in the vault: it comes from the environment hush was started with; unset it in your shell", name)
		case ".env":
			file := "the project's .env file"
			if f := c.Layered.DotEnvFrom[name]; f != "" {
				file = f
			}
			return fmt.Errorf("%s is not in the vault: it comes from %s; remove it there (or import the file and delete it)", name, file)
		}
		return fmt.Errorf("no secret %s in the vault", name)
	}
	if err := c.Layered.Delete(name); err != nil {
		return err
	}
	fmt.Fprintf(c.Out, "removed %s from the vault (%s)\n", name, c.whereInner())
	if o := c.Layered.Origin(name); o != "" {
		fmt.Fprintf(c.Err, "hush: note: %s is still set in the %s\n", name, o)
	}
	return nil
}

// ImportFile stores the entries of the legacy file path (`hush vault
// import`) in the backend and prints what happened to each name.
func (c *Commands) ImportFile(path string, entries map[string]string, overwrite bool) ImportReport {
	rep := Import(c.Proxy, entries, overwrite)
	if len(rep.Imported) > 0 {
		fmt.Fprintf(c.Out, "copied into the vault (%s): %s\n", c.whereInner(), strings.Join(rep.Imported, ", "))
	}
	if len(rep.Already) > 0 {
		fmt.Fprintf(c.Out, "already in the vault with the same value: %s\n", strings.Join(rep.Already, ", "))
	}
	for _, n := range slices.Sorted(maps.Keys(rep.Kept)) {
		fmt.Fprintf(c.Out, "not imported: %s: %s\n", n, rep.Kept[n])
	}
	for _, n := range slices.Sorted(maps.Keys(rep.Refused)) {
		fmt.Fprintf(c.Out, "refused: %s\n", rep.Refused[n])
	}
	if len(entries) == 0 {
		fmt.Fprintf(c.Out, "%s holds no entries\n", path)
	}
	return rep
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

// DisposeSource deletes the imported file path (only when rep is Safe),
// renames it to ImportedName(path), or says it is still there.
func (c *Commands) DisposeSource(path string, rep ImportReport, action string) error {
	switch action {
	case DeleteSource:
		if !rep.Safe() {
			return fmt.Errorf("not deleting %s: %d entr(ies) are not in the vault (listed above); fix them, or keep the file aside with --rename-source", path, len(rep.Refused)+len(rep.Kept))
		}
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("delete %s: %w", path, err)
		}
		fmt.Fprintf(c.Out, "deleted %s\n", path)
	case RenameSource:
		renamed := ImportedName(path)
		if err := os.Rename(path, renamed); err != nil {
			return fmt.Errorf("rename %s: %w", path, err)
		}
		_ = os.Chmod(renamed, 0o600)
		fmt.Fprintf(c.Out, "renamed %s to %s (hush no longer reads it; delete it when you no longer need it)\n", path, renamed)
	default:
		fmt.Fprintf(c.Out, "%s is still there (import copies, it does not move): hush still reads it; delete it, or use --delete-source or --rename-source\n", path)
	}
	return nil
}

// ShowBackend prints the backend in use, its secret count, and every
// backend of reg (`hush vault backend`).
func (c *Commands) ShowBackend(reg *Registry) error {
	names, err := c.Proxy.Names()
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Out, "backend: %s, %d secret(s)\n", c.Where(), len(names))
	for _, n := range reg.Names() {
		fmt.Fprintf(c.Out, "  %-8s %s\n", n, BackendDescription(n))
	}
	fmt.Fprintln(c.Out, "switch with: hush vault backend NAME")
	return nil
}

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

// Switch makes backend name the backend (`hush vault backend NAME`):
// known are the backends hush can open, and move moves every secret there
// with the config change as its commit point (session.Vault.MoveTo, the
// one backend switch). With secrets to move, confirm(n) must say yes — it
// asks the person at the controlling terminal and fails without one, so a
// tool cannot move secrets somewhere it can read.
func (c *Commands) Switch(known []string, name string, confirm func(n int) (bool, error), move func() (MoveReport, error)) error {
	cur := c.Backend
	if name == cur {
		fmt.Fprintf(c.Out, "already using the %s backend\n", name)
		return nil
	}
	if !slices.Contains(known, name) {
		return fmt.Errorf("unknown vault backend %q (known: %s)", name, strings.Join(known, ", "))
	}
	names, err := c.Proxy.Names()
	if err != nil {
		return err
	}
	if len(names) > 0 {
		ok, err := confirm(len(names))
		if err != nil {
			return err
		}
		if !ok {
			fmt.Fprintln(c.Out, "nothing was changed")
			return nil
		}
	}
	rep, err := move()
	if err != nil {
		return err
	}
	c.Backend = name
	fmt.Fprintf(c.Out, "moved %d secret(s) to %s; config.toml now says [vault] backend = %q\n", len(rep.Moved), c.Where(), name)
	if w := rep.Warning(cur); w != "" {
		fmt.Fprintf(c.Err, "hush: warning: %s\n", w)
	}
	return nil
}
