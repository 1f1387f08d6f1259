package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func plant(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDotEnvFamilyFindsEveryFile(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	plant(t, root, map[string]string{
		".env":                  "A=root\n",
		".env.local":            "A=local\nB=local-b\n",
		".envrc":                "use nix\nexport C=from-envrc\nPATH_add bin\nD=$(pass show d)\n",
		"sub/.env":              "E=sub\n",
		"sub/deeper/.env.test":  "F=deep\n",
		"node_modules/pkg/.env": "G=dependency\n",
		".git/.env":             "H=git\n",
		"vendor/x/.env":         "I=vendored\n",
		"sub/not-env.txt":       "J=no\n",
		"sub/.environment":      "K=no\n",
		"sub/.env.broken":       "SECRETLINE=\"unterminated sk-abcdef\n",
	})
	fam, err := LoadDotEnvFamily(root)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fam.Names(), []string{".env", ".env.local", ".envrc", "sub/.env", "sub/deeper/.env.test"}; !reflect.DeepEqual(got, want) {
		t.Errorf("files = %v, want %v", got, want)
	}
	want := map[string]string{"A": "root", "B": "local-b", "C": "from-envrc", "E": "sub", "F": "deep"}
	if !reflect.DeepEqual(fam.Merged, want) {
		t.Errorf("merged = %v, want %v", fam.Merged, want)
	}
	if fam.Shadowed["A@.env.local"] != "local" {
		t.Errorf("the shadowed value is lost: %v", fam.Shadowed)
	}
	from := map[string]string{}
	for n, f := range fam.From {
		from[n], _ = filepath.Rel(root, f)
	}
	if want := map[string]string{"A": ".env", "B": ".env.local", "C": ".envrc", "E": "sub/.env", "F": "sub/deeper/.env.test"}; !reflect.DeepEqual(from, want) {
		t.Errorf("from = %v, want %v (each value's own file)", from, want)
	}
	if len(fam.Skipped) != 1 || !strings.Contains(fam.Skipped[0], filepath.Join(root, "sub/.env.broken")+" line 1: malformed .env file") || strings.Contains(fam.Skipped[0], "sk-abcdef") {
		t.Errorf("skipped = %q", fam.Skipped)
	}
	w := DotEnvWarnings(fam)
	if len(w) != 2 || !strings.Contains(w[0], ".env (1), .env.local (2), .envrc (1), sub/.env (1), sub/deeper/.env.test (1)") {
		t.Errorf("warnings = %q", w)
	}
}

func TestDotEnvFamilyIsBounded(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	files := map[string]string{}
	for i := range DotEnvMaxFiles + 5 {
		files[filepath.Join("d"+string(rune('a'+i%26))+string(rune('a'+i/26)), ".env")] = "X=1\n"
	}
	plant(t, root, files)
	got, truncated, err := FindDotEnvFiles(root)
	if err != nil || !truncated || len(got) != DotEnvMaxFiles {
		t.Fatalf("found %d, truncated %t, err %v; want %d and truncated", len(got), truncated, err, DotEnvMaxFiles)
	}
}

// TestRootDotEnvMalformedIsSalvaged: a malformed project .env is no error
// of the family: RootFault names the file and the line, and every entry
// around the broken line is still read (a multi-line value too), so its
// values are still kept from tools.
func TestRootDotEnvMalformedIsSalvaged(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	plant(t, root, map[string]string{".env": "A_TOKEN=one\nbad line\nB=\"multi\nline\"\nC=three\n"})
	fam, err := LoadDotEnvFamily(root)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(root, ".env") + " line 2: malformed .env file"
	if fam.RootFault == nil || !errors.Is(fam.RootFault, ErrMalformedDotEnv) || !strings.HasPrefix(fam.RootFault.Error(), want) {
		t.Errorf("RootFault = %v, want it to start %q", fam.RootFault, want)
	}
	if _, lerr := LoadDotEnv(filepath.Join(root, ".env")); fam.RootFault == nil || lerr == nil || lerr.Error() != fam.RootFault.Error() {
		t.Errorf("RootFault %v is not what LoadDotEnv says of the file: %v", fam.RootFault, lerr)
	}
	for n, v := range map[string]string{"A_TOKEN": "one", "B": "multi\nline", "C": "three"} {
		if fam.Merged[n] != v {
			t.Errorf("%s = %q, want %q", n, fam.Merged[n], v)
		}
	}
	if len(fam.Merged) != 3 || len(fam.Files) != 1 {
		t.Errorf("merged %v, files %v", fam.Merged, fam.Files)
	}

	// Nothing readable: the fault alone (the control for a good file).
	plant(t, root, map[string]string{".env": "KEY=\"unterminated\n"})
	if fam, err := LoadDotEnvFamily(root); err != nil || fam.RootFault == nil || len(fam.Merged) != 0 {
		t.Errorf("unterminated: %v, %v, %v", err, fam.RootFault, fam.Merged)
	}
	plant(t, root, map[string]string{".env": "KEY=fine\n"})
	if fam, err := LoadDotEnvFamily(root); err != nil || fam.RootFault != nil || fam.Merged["KEY"] != "fine" {
		t.Errorf("a good .env: %v, %v, %v", err, fam.RootFault, fam.Merged)
	}
}

func TestParseErrorDoesNotQuoteTheFile(t *testing.T) {
	t.Parallel()
	const key = "ghp_9fK2mQ7xW4tZ8vB1nR6y"
	_, err := Parse("config.toml", []byte("[model]\nprovider = \"openai\"\napi_key = "+key+"\n"))
	if err == nil {
		t.Fatal("an unquoted value parsed")
	}
	for i := 0; i+6 <= len(key); i++ {
		if strings.Contains(err.Error(), key[i:i+6]) {
			t.Fatalf("the error quotes the key: %v", err)
		}
	}
	if !strings.Contains(err.Error(), "line 3") {
		t.Errorf("the error lost its line: %v", err)
	}
}

// TestSubDotEnvMalformedIsSalvaged: a malformed .env below the root keeps
// what parses (so it is still a secret) and says which file and line.
func TestSubDotEnvMalformedIsSalvaged(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	plant(t, root, map[string]string{"sub/.env": "SUB_TOKEN=sub-good-value\nnot valid sk-badline\nPEM=\"a\nb\"\n"})
	fam, err := LoadDotEnvFamily(root)
	if err != nil || fam.RootFault != nil {
		t.Fatalf("%v, %v", err, fam.RootFault)
	}
	if fam.Merged["SUB_TOKEN"] != "sub-good-value" || fam.Merged["PEM"] != "a\nb" || len(fam.Merged) != 2 {
		t.Errorf("merged = %v", fam.Merged)
	}
	want := filepath.Join(root, "sub/.env") + " line 2: malformed .env file (the line is not shown, it may hold a secret); hush uses the file's other values"
	if len(fam.Skipped) != 1 || fam.Skipped[0] != want {
		t.Errorf("skipped = %q, want %q", fam.Skipped, want)
	}
	if w := strings.Join(DotEnvWarnings(fam), "\n"); !strings.Contains(w, "sub/.env (2)") || strings.Contains(w, "sk-badline") || strings.Contains(w, "sub-good-value") {
		t.Errorf("warnings = %q", w)
	}
}

// Names returns the relative paths of the files, in order.
func (f DotEnvFamily) Names() []string {
	out := make([]string, len(f.Files))
	for i, d := range f.Files {
		out[i] = d.Rel
	}
	return out
}
