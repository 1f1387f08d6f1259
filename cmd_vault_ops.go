package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/hushcli/hush/vault"
)

// vaultCmds runs `hush vault` subcommands: Layered is the session's view
// (environment, backend, legacy .env), Proxy the backend behind it, Backend
// the configured backend's name. Results go to Out, warnings to Err.
type vaultCmds struct {
	Layered  *vault.Layered
	Proxy    *vault.Proxy
	Backend  string
	Out, Err io.Writer
}

// Where names the backend in use and where it keeps secrets.
func (c *vaultCmds) Where() string { return vault.Describe(c.Backend, c.Proxy.Backend()) }

// whereInner is Where for inside parentheses (describeInner).
func (c *vaultCmds) whereInner() string { return vault.DescribeInner(c.Backend, c.Proxy.Backend()) }

// Set stores value under name (`hush vault set`), and warns when the
// environment hush was started with shadows it.
func (c *vaultCmds) Set(name, value string) error {
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
func (c *vaultCmds) List() error {
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
func (c *vaultCmds) Remove(name string) error {
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
func (c *vaultCmds) ImportFile(path string, entries map[string]string, overwrite bool) vault.ImportReport {
	rep := vault.Import(c.Proxy, entries, overwrite)
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

// DisposeSource deletes the imported file path (only when rep is Safe),
// renames it to vault.ImportedName(path), or says it is still there.
func (c *vaultCmds) DisposeSource(path string, rep vault.ImportReport, action string) error {
	switch action {
	case vault.DeleteSource:
		if !rep.Safe() {
			return fmt.Errorf("not deleting %s: %d entr(ies) are not in the vault (listed above); fix them, or keep the file aside with --rename-source", path, len(rep.Refused)+len(rep.Kept))
		}
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("delete %s: %w", path, err)
		}
		fmt.Fprintf(c.Out, "deleted %s\n", path)
	case vault.RenameSource:
		renamed := vault.ImportedName(path)
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
func (c *vaultCmds) ShowBackend(reg *vault.Registry) error {
	names, err := c.Proxy.Names()
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Out, "backend: %s, %d secret(s)\n", c.Where(), len(names))
	for _, n := range reg.Names() {
		fmt.Fprintf(c.Out, "  %-8s %s\n", n, vault.BackendDescription(n))
	}
	fmt.Fprintln(c.Out, "switch with: hush vault backend NAME")
	return nil
}

// Switch makes backend name the backend (`hush vault backend NAME`):
// known are the backends hush can open, and move moves every secret there
// with the config change as its commit point (session.Vault.MoveTo, the
// one backend switch). With secrets to move, confirm(n) must say yes — it
// asks the person at the controlling terminal and fails without one, so a
// tool cannot move secrets somewhere it can read.
func (c *vaultCmds) Switch(known []string, name string, confirm func(n int) (bool, error), move func() (vault.MoveReport, error)) error {
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
