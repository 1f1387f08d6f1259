package files

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hushcli/hush/tools/sandbox"
)

// TestReadOnlyMasks: with the session's real mask list, write and edit
// refuse hush's own executable (in the project too, and through a
// symlink) and everything in ~/.ssh — authorized_keys, and one not made
// yet — even where a rule would allow a write outside the project; read
// still reads them. The raw bytes are checked afterwards, and a write
// beside them in the project is the positive control.
func TestReadOnlyMasks(t *testing.T) {
	f := newFixture(t)
	home := filepath.Join(filepath.Dir(f.dir), "home")
	exe := f.write(filepath.Join(f.dir, "hush"), "ELF-original")
	keys := f.write(filepath.Join(home, ".ssh", "authorized_keys"), "ssh-ed25519 AAAAoriginal\n")
	if err := os.Symlink(exe, filepath.Join(f.dir, "hush-link")); err != nil {
		t.Fatal(err)
	}
	m, err := sandbox.NewMaskSet(sandbox.MaskOptions{Home: home, DataDir: f.vault, Project: f.dir, Executable: exe})
	if err != nil {
		t.Fatal(err)
	}
	var read Read
	var write Write
	var edit Edit
	for _, tool := range Tools(m.Masked, m.MaskedResolved, m.WriteMasked) {
		switch x := tool.(type) {
		case Read:
			read = x
		case Write:
			write = x
		case Edit:
			edit = x
		}
	}
	old, repl := "original", "evil"
	for _, p := range []string{exe, "hush", "hush-link", keys, filepath.Join(home, ".ssh", "authorized_keys2"), filepath.Join(home, ".ssh", "rc")} {
		if _, _, _, err := f.call(write, WriteParams{Path: p, Content: "evil"}); !strings.HasPrefix(errString(err), "refused: ") && !strings.HasPrefix(errString(err), "masked: ") {
			t.Errorf("write %s: %v; want it refused", p, err)
		}
		if _, _, _, err := f.call(edit, EditParams{Path: p, Old: &old, New: &repl}); !strings.HasPrefix(errString(err), "refused: ") && !strings.HasPrefix(errString(err), "masked: ") {
			t.Errorf("edit %s: %v; want it refused", p, err)
		}
	}
	if _, _, _, err := f.call(write, WriteParams{Path: "hush", Content: "x"}); !strings.Contains(errString(err), "hush's own executable, read-only") {
		t.Errorf("the refusal does not say why: %v", err)
	}
	if b, _ := os.ReadFile(exe); string(b) != "ELF-original" {
		t.Errorf("hush's executable was changed: %q", b)
	}
	if b, _ := os.ReadFile(keys); string(b) != "ssh-ed25519 AAAAoriginal\n" {
		t.Errorf("authorized_keys was changed: %q", b)
	}
	for _, p := range []string{"authorized_keys2", "rc"} {
		if _, err := os.Lstat(filepath.Join(home, ".ssh", p)); err == nil {
			t.Errorf("~/.ssh/%s was created", p)
		}
	}
	// Positive controls: reading them works, and so does a write beside.
	if out, _, _, err := f.call(read, ReadParams{Path: keys}); err != nil || !strings.Contains(out, "AAAAoriginal") {
		t.Errorf("read authorized_keys: %v %q", err, out)
	}
	if _, _, _, err := f.call(write, WriteParams{Path: "hush2", Content: "built"}); err != nil {
		t.Errorf("write beside hush's executable: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(f.dir, "hush2")); string(b) != "built" {
		t.Errorf("positive control: the write beside did not arrive: %q", b)
	}
}
