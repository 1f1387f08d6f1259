package vault

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Moving secrets between backends (`hush vault backend`, `hush setup`) and
// importing a .env file (`hush vault import`). Neither ever puts a value in
// an error or a report: secrets are named, never shown.

// ImportReport is what Import did with each name.
type ImportReport struct {
	Imported, Already []string
	Refused, Kept     map[string]string // name → reason, never a value
}

// Safe reports whether every entry is in the vault.
func (r ImportReport) Safe() bool { return len(r.Refused) == 0 && len(r.Kept) == 0 }

// Import stores entries (a .env file's, `hush vault import`) in v, reading
// each back. A name v holds with another value is kept unless overwrite.
func Import(v Vault, entries map[string]string, overwrite bool) ImportReport {
	rep := ImportReport{Refused: map[string]string{}, Kept: map[string]string{}}
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		value := entries[name]
		if err := CheckName(name); err != nil {
			rep.Refused[name] = err.Error()
			continue
		}
		cur, err := v.Get(name)
		switch {
		case err == nil && cur == value:
			rep.Already = append(rep.Already, name)
			continue
		case err == nil && !overwrite:
			rep.Kept[name] = "the vault already holds another value (kept; --overwrite replaces it)"
			continue
		case err != nil && !errors.Is(err, ErrNotFound):
			rep.Refused[name] = err.Error()
			continue
		}
		if err := v.Set(name, value); err != nil {
			rep.Refused[name] = err.Error()
			continue
		}
		if back, err := v.Get(name); err != nil || back != value {
			rep.Refused[name] = fmt.Sprintf("secret %s did not read back unchanged from the vault", name)
			continue
		}
		rep.Imported = append(rep.Imported, name)
	}
	return rep
}

// MoveReport is what Move did.
type MoveReport struct {
	Moved []string
	// LeftBehind are names copied and switched to the new backend that
	// could not be deleted from the old one; DeleteErr says why.
	LeftBehind []string
	DeleteErr  error
}

// Warning is the sentence to show when secrets were left behind in the
// backend named from, or "".
func (r MoveReport) Warning(from string) string {
	if len(r.LeftBehind) == 0 {
		return ""
	}
	return fmt.Sprintf("could not delete %s from the %s backend (%v); they are safe in the new one — delete them there by hand",
		strings.Join(r.LeftBehind, ", "), from, r.DeleteErr)
}

// Move moves every secret from one backend to another without
// losing any: copy all (and extra) into to, read each back, commit (switch
// the config), and only then delete them from from. Until the commit, any
// failure restores to — names it did not hold are deleted, values it held
// are put back — and from is never touched; after the commit, a failed
// delete only leaves copies behind in from. A name both backends hold with
// different values is refused up front: after the move one would be lost.
func Move(from, to Vault, extra map[string]string, commit func() error) (MoveReport, error) {
	src, err := All(from)
	if err != nil {
		return MoveReport{}, fmt.Errorf("read the current backend: %w", err)
	}
	want := make(map[string]string, len(src)+len(extra))
	for n, v := range src {
		want[n] = v
	}
	for n, v := range extra {
		want[n] = v
	}
	// What to holds now, to refuse conflicts and to restore on failure.
	before := map[string]string{}
	var conflicts []string
	for _, n := range slices.Sorted(maps.Keys(want)) {
		v, err := to.Get(n)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return MoveReport{}, fmt.Errorf("read the new backend: %w", err)
		}
		before[n] = v
		if _, isExtra := extra[n]; !isExtra && v != src[n] {
			conflicts = append(conflicts, n)
		}
	}
	if len(conflicts) > 0 {
		return MoveReport{}, fmt.Errorf("both backends hold %s with different values; nothing was moved (remove one of the two copies first)", strings.Join(conflicts, ", "))
	}
	var written []string
	rollback := func(cause error) error {
		var failed []string
		for _, n := range written {
			var err error
			if old, had := before[n]; had {
				err = to.Set(n, old)
			} else {
				err = to.Delete(n)
			}
			if err != nil {
				failed = append(failed, n)
			}
		}
		if len(failed) > 0 {
			return fmt.Errorf("%w; nothing was switched, and the old backend is unchanged, but copies of %s are left in the new backend", cause, strings.Join(failed, ", "))
		}
		return fmt.Errorf("%w; nothing was switched: the old backend is unchanged and the copies were removed", cause)
	}
	for _, n := range slices.Sorted(maps.Keys(want)) {
		if old, had := before[n]; had && old == want[n] {
			continue
		}
		written = append(written, n)
		if err := to.Set(n, want[n]); err != nil {
			return MoveReport{}, rollback(fmt.Errorf("copy %s: %w", n, err))
		}
	}
	for _, n := range slices.Sorted(maps.Keys(want)) {
		v, err := to.Get(n)
		if err != nil || v != want[n] {
			return MoveReport{}, rollback(fmt.Errorf("secret %s did not read back unchanged from the new backend", n))
		}
	}
	if err := commit(); err != nil {
		return MoveReport{}, rollback(fmt.Errorf("switch the config: %w", err))
	}
	rep := MoveReport{Moved: slices.Sorted(maps.Keys(src))}
	for _, n := range rep.Moved {
		if err := from.Delete(n); err != nil {
			rep.LeftBehind = append(rep.LeftBehind, n)
			rep.DeleteErr = err
		}
	}
	return rep, nil
}
