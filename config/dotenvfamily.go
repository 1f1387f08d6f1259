package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/hushcli/hush/config/userfile"
	"github.com/joho/godotenv"
)

// Bounds of the search for legacy .env files: a project is searched this
// deep and this wide at most, and at most this many files are read, so a
// huge tree costs hush a bounded walk at start.
const (
	DotEnvMaxFiles = 32
	dotEnvMaxDirs  = 4000
	dotEnvMaxDepth = 8
)

// dotEnvSkipDirs are trees hush does not search: version control, and
// dependencies vendored or installed into the project, whose .env files
// belong to someone else's project.
var dotEnvSkipDirs = map[string]bool{
	".git": true, ".hg": true, ".svn": true, "node_modules": true, "bower_components": true,
	"vendor": true, "third_party": true, ".venv": true, "venv": true, "site-packages": true,
	"__pycache__": true, ".tox": true, ".terraform": true, "target": true, ".cache": true,
}

// IsDotEnvName reports whether a file name is one of the .env family:
// .env, .env.<anything> (.env.local, .env.production …) and .envrc —
// except what `hush vault import --rename-source` leaves behind
// (.env.imported, .env.imported-2 …), whose values are in the vault.
func IsDotEnvName(name string) bool {
	if i := strings.Index(name, ".imported"); i >= 0 && (i+len(".imported") == len(name) || name[i+len(".imported")] == '-') {
		return false
	}
	return name == ".env" || name == ".envrc" || strings.HasPrefix(name, ".env.")
}

// DotEnvFile is one legacy file found in the project.
type DotEnvFile struct {
	Path   string // absolute
	Rel    string // relative to the project root, for messages
	Values map[string]string
}

// DotEnvFamily is every legacy .env file of a project, read.
type DotEnvFamily struct {
	Files []DotEnvFile
	// Merged is name → value, the first file in Files order winning:
	// the project root before subdirectories, .env before .env.* before
	// .envrc.
	Merged map[string]string
	// Shadowed is every other value of a name, keyed "NAME@rel".
	Shadowed map[string]string
	// From is name → the file (absolute) whose value Merged holds.
	From map[string]string
	// Skipped says, one sentence each, which files could not be read and
	// were left out, and which are malformed (file and line; what parses
	// of them is used); Truncated that the bounds were hit.
	Skipped   []string
	Truncated bool
	// RootFault is set when the project root's .env is malformed: the
	// error names the file and the line. What of it parses is in Files
	// and Merged all the same (salvage), so its values are still
	// kept from tools; a session that runs tools refuses to start on it.
	RootFault error
}

// FindDotEnvFiles lists the .env family files under root, in precedence
// order, within the bounds above; truncated reports that a bound was hit.
// Symlinked directories are not followed.
func FindDotEnvFiles(root string) (files []string, truncated bool, err error) {
	dirs := 0
	type found struct {
		path  string
		depth int
	}
	var all []found
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // an unreadable subdirectory: skip it
		}
		rel, _ := filepath.Rel(root, p)
		depth := 0
		if rel != "." {
			depth = strings.Count(rel, string(filepath.Separator)) + 1
		}
		if d.IsDir() {
			if p != root && (dotEnvSkipDirs[d.Name()] || depth > dotEnvMaxDepth) {
				return filepath.SkipDir
			}
			if dirs++; dirs > dotEnvMaxDirs {
				truncated = true
				return filepath.SkipAll
			}
			return nil
		}
		if IsDotEnvName(d.Name()) {
			if len(all) >= DotEnvMaxFiles {
				truncated = true
				return filepath.SkipAll
			}
			all = append(all, found{p, depth})
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	rank := func(name string) int {
		switch {
		case name == ".env":
			return 0
		case name == ".envrc":
			return 2
		}
		return 1
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.depth != b.depth {
			return a.depth < b.depth
		}
		if da, db := filepath.Dir(a.path), filepath.Dir(b.path); da != db {
			return da < db
		}
		if ra, rb := rank(filepath.Base(a.path)), rank(filepath.Base(b.path)); ra != rb {
			return ra < rb
		}
		return a.path < b.path
	})
	for _, f := range all {
		files = append(files, f.path)
	}
	return files, truncated, nil
}

// LoadDotEnvFamily finds and reads every legacy .env file under root. The
// project root's .env must be readable (an error, as LoadDotEnv); if it is
// malformed, RootFault says so and what parses of it is used. Of any
// other malformed file what parses is used too, with a sentence naming the
// file and the line in Skipped; one that cannot be read is left out with a
// sentence there, so one stray file does not stop hush. An .envrc is a shell script for
// direnv: its NAME=value and export NAME=value lines are read and the rest
// ignored.
func LoadDotEnvFamily(root string) (DotEnvFamily, error) {
	fam := DotEnvFamily{Merged: map[string]string{}, Shadowed: map[string]string{}, From: map[string]string{}}
	paths, truncated, err := FindDotEnvFiles(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fam, nil
		}
		return fam, fmt.Errorf("look for .env files in %s: %w", root, err)
	}
	fam.Truncated = truncated
	rootDotEnv := filepath.Join(root, ".env")
	for _, p := range paths {
		rel, _ := filepath.Rel(root, p)
		var values map[string]string
		var err error
		if filepath.Base(p) == ".envrc" {
			values, err = loadEnvrc(p)
		} else {
			// What parses of a malformed file is still a secret to keep
			// from tools and scrub; leaving the file out would hand its
			// readable values to any tool that prints them.
			var fault error
			values, fault, err = loadDotEnvSalvaged(p)
			if fault != nil && p == rootDotEnv {
				fam.RootFault = fault
			} else if fault != nil {
				fam.Skipped = append(fam.Skipped, fmt.Sprintf("%v; hush uses the file's other values", fault))
			}
		}
		if err != nil {
			if p == rootDotEnv {
				return fam, err
			}
			fam.Skipped = append(fam.Skipped, fmt.Sprintf("%s was left out: %v", rel, err))
			continue
		}
		if len(values) == 0 {
			continue
		}
		fam.Files = append(fam.Files, DotEnvFile{Path: p, Rel: rel, Values: values})
		for n, v := range values {
			if old, ok := fam.Merged[n]; !ok {
				fam.Merged[n], fam.From[n] = v, p
			} else if old != v {
				fam.Shadowed[n+"@"+rel] = v
			}
		}
	}
	return fam, nil
}

var envrcAssign = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)=`)
})

// loadEnvrc reads the assignments of a direnv .envrc.
func loadEnvrc(path string) (map[string]string, error) {
	data, err := userfile.Read(context.Background(), path, userfile.DotEnvLimit)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if !envrcAssign().Match(line) {
			continue
		}
		// One assignment at a time through the same parser as .env, so
		// quoting means the same; a line it rejects (a $(command)) is
		// skipped.
		if m, err := godotenv.UnmarshalBytes(line); err == nil {
			for k, v := range m {
				if !strings.Contains(v, "$(") && !strings.Contains(v, "`") {
					out[k] = v // a command's output is not a value hush can know
				}
			}
		}
	}
	return out, nil
}

// DotEnvWarnings are the start-up warnings about the legacy files: one
// line naming every file that holds values, and one per file left out.
func DotEnvWarnings(f DotEnvFamily) []string {
	var out []string
	if len(f.Files) > 0 {
		parts := make([]string, len(f.Files))
		for i, d := range f.Files {
			parts[i] = fmt.Sprintf("%s (%d)", d.Rel, len(d.Values))
		}
		more := ""
		if f.Truncated {
			more = fmt.Sprintf("; hush stopped looking after %d files", DotEnvMaxFiles)
		}
		out = append(out, fmt.Sprintf("legacy secret files in the project, values hush treats as secrets: %s%s; "+
			"move each into the vault with `hush vault import FILE`, then delete it", strings.Join(parts, ", "), more))
	}
	return append(out, f.Skipped...)
}

// LoadLegacyFile reads one legacy file: an .envrc by its assignments, any
// other as a .env file.
func LoadLegacyFile(path string) (map[string]string, error) {
	if filepath.Base(path) == ".envrc" {
		return loadEnvrc(path)
	}
	return LoadDotEnv(path)
}
