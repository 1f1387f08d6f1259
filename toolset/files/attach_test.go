package files

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttachFollowsTheReadRules: a project file is read; a .env, a
// masked path and a symlink out of the project are refused, and a
// missing file says so with os.ErrNotExist. The refused files' bytes are
// in no answer.
func TestAttachFollowsTheReadRules(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "project")
	outside := filepath.Join(root, "outside")
	for _, d := range []string{dir, outside, filepath.Join(dir, "secret")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "wc.py"), "print(1)\n")
	write(filepath.Join(dir, ".env"), "K=canary-dotenv\n")
	write(filepath.Join(dir, "secret", "k"), "canary-masked\n")
	write(filepath.Join(outside, "o"), "canary-outside\n")
	if err := os.Symlink(filepath.Join(outside, "o"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	check := func(p string) (string, bool) {
		if strings.Contains(p, "/secret/") || strings.HasSuffix(p, "/.env") {
			return "masked for the test", true
		}
		return "", false
	}
	got, err := Attach(check, dir, "wc.py")
	if err != nil || got != "print(1)\n" {
		t.Fatalf("Attach(wc.py) = %q, %v", got, err)
	}
	for _, p := range []string{".env", "secret/k", "link"} {
		got, err := Attach(check, dir, p)
		if !errors.Is(err, ErrNotAttachable) || strings.Contains(got+err.Error(), "canary") {
			t.Errorf("Attach(%s) = %q, %v; want ErrNotAttachable and no bytes of it", p, got, err)
		}
	}
	if _, err := Attach(check, dir, "someone"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Attach(someone) = %v, want os.ErrNotExist", err)
	}

	// The completion list honours .gitignore and the mask check.
	write(filepath.Join(dir, ".gitignore"), "build/\n")
	if err := os.MkdirAll(filepath.Join(dir, "build"), 0o700); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(dir, "build", "gen.py"), "x\n")
	list, err := ProjectFiles(context.Background(), check, dir, 100)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(list, " ") != ".gitignore wc.py" {
		t.Errorf("ProjectFiles = %q, want [.gitignore wc.py]", list)
	}
}
