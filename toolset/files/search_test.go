package files

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
	"time"
)

// tree makes a small repository: .gitignore'd files, a nested .gitignore,
// a negation, .git, a .env and a symlink to the vault.
func tree(t *testing.T) *fixture {
	f := newFixture(t)
	if err := os.MkdirAll(filepath.Join(f.dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.write(".git/config", "needle in git\n")
	f.write(".gitignore", "build/\n*.log\n!keep.log\n")
	f.write("main.go", "package main\n\nfunc main() { needle() }\n")
	f.write("pkg/a.go", "package pkg\n\n// needle one\nvar x = 1\nvar y = 2\nvar z = 3\n// needle two\n")
	f.write("pkg/a_test.go", "package pkg\n")
	f.write("pkg/.gitignore", "gen/\n")
	f.write("pkg/gen/g.go", "needle generated\n")
	f.write("build/out.go", "needle built\n")
	f.write("debug.log", "needle log\n")
	f.write("keep.log", "needle kept\n")
	f.write(".env", "needle=canary-dotenv\n")
	f.write("sub/.env.local", "needle=canary-dotenv\n")
	f.write("img.bin", "needle\x00\x01")
	if err := os.Symlink(filepath.Join(f.vault, "vault.env"), filepath.Join(f.dir, "vault-link.go")); err != nil {
		t.Fatal(err)
	}
	// mtimes: newest first in glob.
	now := time.Now()
	for i, p := range []string{"pkg/a_test.go", "pkg/a.go", "main.go"} {
		ts := now.Add(-time.Duration(i+1) * time.Hour)
		if err := os.Chtimes(filepath.Join(f.dir, p), ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func TestGlob(t *testing.T) {
	f := tree(t)
	tests := []struct {
		name   string
		args   GlobParams
		out    string
		status string
		err    string
	}{
		{"go files, newest first", GlobParams{Pattern: "**/*.go"}, "pkg/a_test.go\npkg/a.go\nmain.go\n", "3 files match **/*.go", ""},
		{"masked names", GlobParams{Pattern: "**/.env*"}, "", "no files match **/.env*; 2 masked paths skipped", ""},
		{"top level", GlobParams{Pattern: "*.go"}, "main.go\n", "1 file matches *.go", ""},
		{"in a subdirectory", GlobParams{Pattern: "*.go", Path: "pkg"}, "pkg/a_test.go\npkg/a.go\n", "2 files match *.go", ""},
		{"negation", GlobParams{Pattern: "*.log"}, "keep.log\n", "1 file matches *.log", ""},
		{"none", GlobParams{Pattern: "*.rs"}, "", "no files match *.rs", ""},
		{"bad pattern", GlobParams{Pattern: "[a"}, "", "", `bad arguments: "[a" is not a valid glob pattern`},
		{"empty", GlobParams{}, "", "", "bad arguments: pattern is empty"},
		{"missing dir", GlobParams{Pattern: "*", Path: "nope"}, "", "", "nope does not exist"},
		{"vault dir", GlobParams{Pattern: "*", Path: f.vault}, "", "", "masked: " + f.vault + " is hush's data dir; hush's file tools never touch it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, res, err := f.call(Glob{Check: f.check}, tt.args)
			if errString(err) != tt.err {
				t.Fatalf("error = %q, want %q", errString(err), tt.err)
			}
			if out != tt.out || res.Status != tt.status {
				t.Errorf("out = %q status = %q\nwant  %q         %q", out, res.Status, tt.out, tt.status)
			}
		})
	}
}

func TestGrep(t *testing.T) {
	f := tree(t)
	tests := []struct {
		name   string
		args   GrepParams
		out    string
		status string
		err    string
	}{
		{"tree", GrepParams{Pattern: "needle"}, "keep.log:1:needle kept\nmain.go:3:func main() { needle() }\npkg/a.go:3:// needle one\npkg/a.go:7:// needle two\n",
			"4 matching lines in 3 files; 2 masked paths skipped", ""},
		{"regexp", GrepParams{Pattern: `needle (one|two)$`, Path: "pkg"}, "pkg/a.go:3:// needle one\npkg/a.go:7:// needle two\n", "2 matching lines in 1 file", ""},
		{"ignore case", GrepParams{Pattern: "NEEDLE T", IgnoreCase: true}, "pkg/a.go:7:// needle two\n", "1 matching line; 2 masked paths skipped", ""},
		{"glob", GrepParams{Pattern: "needle", Glob: "**/*.go"}, "main.go:3:func main() { needle() }\npkg/a.go:3:// needle one\npkg/a.go:7:// needle two\n", "3 matching lines in 2 files", ""},
		{"context", GrepParams{Pattern: "needle", Path: "pkg/a.go", Context: 1}, "pkg/a.go-2-\npkg/a.go:3:// needle one\npkg/a.go-4-var x = 1\n--\npkg/a.go-6-var z = 3\npkg/a.go:7:// needle two\n", "2 matching lines in 1 file", ""},
		{"context joins", GrepParams{Pattern: "needle", Path: "pkg/a.go", Context: 2}, "pkg/a.go-1-package pkg\npkg/a.go-2-\npkg/a.go:3:// needle one\npkg/a.go-4-var x = 1\npkg/a.go-5-var y = 2\npkg/a.go-6-var z = 3\npkg/a.go:7:// needle two\n", "2 matching lines in 1 file", ""},
		{"cap", GrepParams{Pattern: "needle", Path: "pkg", MaxMatches: 1}, "pkg/a.go:3:// needle one\n", "1 matching line; stopped at 1: narrow the pattern, path or glob, or raise max_matches", ""},
		{"no match", GrepParams{Pattern: "haystack"}, "", "no matches for haystack; 2 masked paths skipped", ""},
		{"proc", GrepParams{Pattern: "PATH=", Path: "/proc/self"}, "", "", procRefusal},
		{"bad regexp", GrepParams{Pattern: "a("}, "", "", `bad arguments: pattern "a(" is not a valid regular expression: missing closing )`},
		{"bad context", GrepParams{Pattern: "a", Context: 11}, "", "", "bad arguments: context must be between 0 and 10"},
		{"bad cap", GrepParams{Pattern: "a", MaxMatches: 5000}, "", "", "bad arguments: max_matches must be between 1 and 2000"},
		{"dotenv named", GrepParams{Pattern: "needle", Path: "sub/.env.local"}, "", "", MaskedDotEnv},
		{"symlink to vault", GrepParams{Pattern: "SECRET", Path: "vault-link.go"}, "", "", "masked: " + filepath.Join(f.vault, "vault.env") + " is hush's data dir (" + filepath.Join(f.dir, "vault-link.go") + " leads there through a symlink); hush's file tools never touch it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, res, err := f.call(Grep{Check: f.check}, tt.args)
			if errString(err) != tt.err {
				t.Fatalf("error = %q, want %q", errString(err), tt.err)
			}
			if out != tt.out || res.Status != tt.status {
				t.Errorf("out = %q\nstatus = %q\nwant %q\n     %q", out, res.Status, tt.out, tt.status)
			}
			if strings.Contains(out, "canary") {
				t.Errorf("grep output leaks a canary: %q", out)
			}
		})
	}
}

// A line split across grep's read blocks is still found with its number.
func TestGrepAcrossBlocks(t *testing.T) {
	f := newFixture(t)
	var b strings.Builder
	line := strings.Repeat("a", 99) + "\n"
	for b.Len() < grepBlock-50 {
		b.WriteString(line)
	}
	n := strings.Count(b.String(), "\n")
	b.WriteString(strings.Repeat("b", 30) + "needle" + strings.Repeat("c", 70) + "\n")
	b.WriteString("tail needle\n")
	f.write("big.txt", b.String())
	out, _, _, err := f.call(Grep{Check: f.check}, GrepParams{Pattern: "needle"})
	if err != nil {
		t.Fatal(err)
	}
	want := "big.txt:" + itoa(n+1) + ":" + strings.Repeat("b", 30) + "needle" + strings.Repeat("c", 70) + "\nbig.txt:" + itoa(n+2) + ":tail needle\n"
	if out != want {
		t.Errorf("out = %q\nwant %q", out, want)
	}
	out, _, _, err = f.call(Grep{Check: f.check}, GrepParams{Pattern: "ne+dle"})
	if err != nil || out != want {
		t.Errorf("regexp across blocks: %v\n%q", err, out)
	}
}

func itoa(n int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(n)) }

func fmtInt(n int) string {
	if n == 0 {
		return "0"
	}
	var d []byte
	for ; n > 0; n /= 10 {
		d = append([]byte{byte('0' + n%10)}, d...)
	}
	return string(d)
}

// globWant's name-only fast path agrees with doublestar on the relative path.
func TestGlobWant(t *testing.T) {
	for _, pattern := range []string{"**/*.go", "**/*", "**/*_test.go", "**/*[.]go", "**/*\\.go", "**/a_test.go", "pkg/**/*.go", "*.go", "**/*.{go,md}", "**/.env*"} {
		want := globWant(pattern)
		for _, rel := range []string{"main.go", "pkg/a.go", "pkg/sub/a_test.go", "README.md", ".env", "x/.env.local", "go"} {
			dir, name := "", rel
			if i := strings.LastIndexByte(rel, '/'); i >= 0 {
				dir, name = rel[:i], rel[i+1:]
			}
			ok, _ := doublestar.Match(pattern, rel)
			if got := want(dir, name); got != ok {
				t.Errorf("globWant(%q)(%q) = %v, doublestar says %v", pattern, rel, got, ok)
			}
		}
	}
}
