package config

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/hushcli/hush/config/atomicfile"
	"github.com/hushcli/hush/config/userfile"
)

// AddProjectRules appends rules to the project dir's [[projects."DIR".rules]]
// in the user's config.toml at path: hush's own write, made when the
// person chose "always in this project" at an approval — never a tool's.
// The entries are appended as text, so every comment and layout stays;
// the new file must load and hold exactly the old rules and the new ones,
// or nothing is written. A rule already there is not added twice.
func AddProjectRules(path, dir string, rules []Rule) error {
	dir = RealDir(dir)
	old, cfg, err := readForRules(path)
	if err != nil {
		return err
	}
	have := cfg.Projects[dir].Rules
	var b strings.Builder
	b.Write(old)
	if len(old) > 0 && !strings.HasSuffix(string(old), "\n") {
		b.WriteByte('\n')
	}
	want := slices.Clone(have)
	for _, r := range rules {
		if slices.Contains(want, r) {
			continue
		}
		want = append(want, r)
		fmt.Fprintf(&b, "\n# saved by hush: \"always in this project\" at an approval (hush rules rm to remove)\n[[projects.%s.rules]]\ngate = %s\nsubject = %s\ndecision = %s\n",
			quote(dir), quote(r.Gate), quote(r.Subject), quote(r.Decision))
		if r.Command != "" {
			fmt.Fprintf(&b, "command = %s\n", quote(r.Command))
		}
	}
	if len(want) == len(have) {
		return nil
	}
	return writeRules(path, []byte(b.String()), dir, want)
}

// RemoveProjectRule removes the project dir's rule number i (0-based, in
// file order, as ProjectRulesOf lists them) from the user's config.toml at
// path, and returns it. Only a rule written as its own [[projects."DIR".rules]]
// table (as hush writes them) can be removed; anything else is left for
// the person to edit, with an error that says so.
func RemoveProjectRule(path, dir string, i int) (Rule, error) {
	dir = RealDir(dir)
	old, cfg, err := readForRules(path)
	if err != nil {
		return Rule{}, err
	}
	have := cfg.Projects[dir].Rules
	if i < 0 || i >= len(have) {
		return Rule{}, fmt.Errorf("no rule %d for %s (it has %d; hush rules list shows them)", i+1, dir, len(have))
	}
	lines := splitLines(old)
	n := -1
	start, end := -1, len(lines)
	for j, l := range lines {
		if !l.start || !strings.HasPrefix(strings.TrimSpace(l.text), "[") {
			continue
		}
		if start >= 0 {
			end = j
			break
		}
		if isProjectRulesHeader(l.text, dir) {
			n++
			if n == i {
				start = j
			}
		}
	}
	if start < 0 {
		return Rule{}, fmt.Errorf("rule %d of %s is not written as its own [[projects.\"…\".rules]] table in %s; remove it there by hand", i+1, dir, path)
	}
	// The comment hush wrote above the table goes with it.
	for start > 0 && strings.HasPrefix(strings.TrimSpace(lines[start-1].text), "# saved by hush") {
		start--
	}
	var b strings.Builder
	for j, l := range lines {
		if j < start || j >= end {
			b.WriteString(l.text)
		}
	}
	want := slices.Delete(slices.Clone(have), i, i+1)
	if err := writeRules(path, []byte(b.String()), dir, want); err != nil {
		return Rule{}, fmt.Errorf("%w; remove it from %s by hand", err, path)
	}
	return have[i], nil
}

// isProjectRulesHeader reports whether text is the header [[projects."DIR".rules]]
// for dir, however its keys are quoted.
func isProjectRulesHeader(text, dir string) bool {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "[[") {
		return false
	}
	var doc struct {
		Projects map[string]struct {
			Rules []map[string]any `toml:"rules"`
		} `toml:"projects"`
	}
	if _, err := toml.Decode(t+"\n", &doc); err != nil {
		return false
	}
	return len(doc.Projects) == 1 && len(doc.Projects[dir].Rules) == 1
}

func readForRules(path string) ([]byte, Config, error) {
	old, err := userfile.Read(context.Background(), path, userfile.ConfigLimit)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, Config{}, fmt.Errorf("read %s: %w", path, err)
	}
	cfg, err := Parse(path, old)
	if err != nil {
		return nil, Config{}, fmt.Errorf("%w (fix it, then run this again; nothing was changed)", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, Config{}, fmt.Errorf("create config dir: %w", err)
	}
	return old, cfg, nil
}

// writeRules replaces path with data once it loads with exactly want as
// dir's project rules.
func writeRules(path string, data []byte, dir string, want []Rule) error {
	err := atomicfile.WriteFile(path, data, func(tmp string) error {
		c, err := Parse(path, data)
		if err != nil {
			return err
		}
		if got := c.Projects[dir].Rules; !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			return fmt.Errorf("the edited %s would not hold the rules asked for", path)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
