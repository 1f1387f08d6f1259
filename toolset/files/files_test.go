package files

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hushcli/hush/executor"
)

// testCheck stands in for sandbox.MaskSet.Masked in these unit tests: it
// masks one directory (the "vault dir") and the .env family by name, so
// the tools' handling of a masked path is tested without the real list.
func testCheck(vaultDir string) Check {
	return func(p string) (string, bool) {
		if p == vaultDir || strings.HasPrefix(p, vaultDir+"/") {
			return "hush's data dir", true
		}
		if isDotEnv(p) {
			return "a .env file", true
		}
		return "", false
	}
}

type fixture struct {
	t       *testing.T
	dir     string // project
	outside string
	vault   string
	check   Check
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, dir: filepath.Join(root, "project"), outside: filepath.Join(root, "outside"), vault: filepath.Join(root, "data")}
	for _, d := range []string{f.dir, f.outside, f.vault} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.check = testCheck(f.vault)
	f.write(filepath.Join(f.vault, "vault.env"), "SECRET=canary-vault\n")
	return f
}

func (f *fixture) write(p, content string) string {
	f.t.Helper()
	if !filepath.IsAbs(p) {
		p = filepath.Join(f.dir, p)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// call runs tool as the executor does: Preview, then (approved) Run with
// the Preview handed back. It returns the output and status, or the error
// of whichever step failed.
func (f *fixture) call(tool executor.Tool, args any) (out string, pv executor.Preview, res executor.Result, err error) {
	f.t.Helper()
	raw, _ := json.Marshal(args)
	tc := &executor.ToolContext{Dir: f.dir, Subject: tool.Name()}
	if p, ok := tool.(executor.Previewer); ok {
		pv, err = p.Preview(context.Background(), tc, raw)
		if err != nil {
			return "", pv, res, err
		}
		tc.Preview = &pv
	}
	var b bytes.Buffer
	tc.Output = &b
	res, err = tool.Run(context.Background(), tc, raw)
	return b.String(), pv, res, err
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestReadErrors(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "one\ntwo\nthree\n")
	f.write(".env.local", "TOKEN=canary-dotenv\n")
	f.write("sub/.envrc", "export X=canary\n")
	if err := os.Symlink(filepath.Join(f.vault, "vault.env"), filepath.Join(f.dir, "innocent.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(f.vault, filepath.Join(f.dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	f.write(filepath.Join(f.outside, "x.bin"), "\x00\x01\x02binary")
	f.write("bin.dat", "PK\x03\x04\x00\x00zipdata")
	if err := syscall.Mkfifo(filepath.Join(f.dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	vaultFile := filepath.Join(f.vault, "vault.env")
	tests := []struct {
		name string
		args any
		want string
	}{
		{"empty path", ReadParams{}, "bad arguments: path is empty"},
		{"unknown field", map[string]any{"path": "a.txt", "lines": 3}, `bad arguments: json: unknown field "lines"`},
		{"negative limit", ReadParams{Path: "a.txt", Limit: -1}, "bad arguments: limit must be at least 1"},
		{"missing", ReadParams{Path: "nope.txt"}, "nope.txt does not exist"},
		{"tilde", ReadParams{Path: "~/.ssh/id_rsa"}, `bad arguments: "~/.ssh/id_rsa": ~ is not expanded; give an absolute path`},
		{"dotenv", ReadParams{Path: ".env.local"}, MaskedDotEnv},
		{"envrc", ReadParams{Path: "sub/.envrc"}, MaskedDotEnv},
		{"vault by name", ReadParams{Path: vaultFile}, "masked: " + vaultFile + " is hush's data dir; hush's file tools never touch it"},
		{"symlink to vault", ReadParams{Path: "innocent.txt"}, "masked: " + vaultFile + " is hush's data dir (" + filepath.Join(f.dir, "innocent.txt") + " leads there through a symlink); hush's file tools never touch it"},
		{"through linked dir", ReadParams{Path: "linkdir/vault.env"}, "masked: " + vaultFile + " is hush's data dir (" + filepath.Join(f.dir, "linkdir/vault.env") + " leads there through a symlink); hush's file tools never touch it"},
		{"directory", ReadParams{Path: "."}, ". is a directory; use glob to list files"},
		{"binary", ReadParams{Path: "bin.dat"}, "refused: bin.dat is a binary file (application/zip, 13 bytes); read shows text only"},
		{"binary outside", ReadParams{Path: filepath.Join(f.outside, "x.bin")}, "refused: " + filepath.Join(f.outside, "x.bin") + " is a binary file (application/octet-stream, 9 bytes); read shows text only"},
		{"past the end", ReadParams{Path: "a.txt", Offset: 9}, "a.txt has fewer than 9 lines"},
		{"fifo", ReadParams{Path: "fifo"}, "fifo is not a regular file (p---------)"},
		{"hush's own environ", ReadParams{Path: "/proc/self/environ"}, procRefusal},
		{"another process's environ", ReadParams{Path: "/proc/1/environ"}, procRefusal},
		{"a device", ReadParams{Path: "/dev/zero"}, "/dev/zero is not a regular file (Dc---------)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, _, err := f.call(Read{Check: f.check}, tt.args)
			if got := errString(err); got != tt.want {
				t.Errorf("error = %q\nwant    %q", got, tt.want)
			}
			if strings.Contains(out, "canary") {
				t.Errorf("output leaks a canary: %q", out)
			}
		})
	}
	// No check configured: nothing is touched.
	if _, _, _, err := f.call(Read{}, ReadParams{Path: "a.txt"}); errString(err) != "refused: hush's mask check is not configured, so the file tools touch nothing" {
		t.Errorf("read without a check: %v", err)
	}
}

func TestRead(t *testing.T) {
	f := newFixture(t)
	var lines []string
	for i := 1; i <= 30; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	f.write("a.txt", strings.Join(lines, "\n")+"\n")
	f.write("crlf.txt", "a\r\nb\r\n")
	f.write("nonl.txt", "x\ny")
	f.write("empty.txt", "")
	f.write("long.txt", strings.Repeat("z", MaxLineBytes+10)+"\nshort\n")
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	img.Set(0, 0, color.White)
	var png1 bytes.Buffer
	_ = png.Encode(&png1, img)
	f.write("pic.png", png1.String())
	tests := []struct {
		name       string
		args       ReadParams
		out        string
		status     string
		defaultDec executor.Decision
	}{
		{"range", ReadParams{Path: "a.txt", Offset: 3, Limit: 2}, "     3\tline 3\n     4\tline 4\n", "lines 3–4 of a.txt (231 bytes); more follows: read on with offset=5", executor.Allow},
		{"from the end", ReadParams{Path: "a.txt", Offset: -2}, "    29\tline 29\n    30\tline 30\n", "lines 29–30 of a.txt (231 bytes)", executor.Allow},
		{"last lines exactly", ReadParams{Path: "a.txt", Offset: 28, Limit: 3}, "    28\tline 28\n    29\tline 29\n    30\tline 30\n", "lines 28–30 of a.txt (231 bytes)", executor.Allow},
		{"crlf", ReadParams{Path: "crlf.txt"}, "     1\ta\n     2\tb\n", "lines 1–2 of crlf.txt (6 bytes)", executor.Allow},
		{"no final newline", ReadParams{Path: "nonl.txt"}, "     1\tx\n     2\ty\n", "lines 1–2 of nonl.txt (3 bytes)", executor.Allow},
		{"empty", ReadParams{Path: "empty.txt"}, "", "empty.txt is empty", executor.Allow},
		{"long line", ReadParams{Path: "long.txt"}, "     1\t" + strings.Repeat("z", MaxLineBytes) + "… [line cut]\n     2\tshort\n", "lines 1–2 of long.txt (2.0 KiB); 1 long lines cut at 2000 bytes", executor.Allow},
		{"image", ReadParams{Path: "pic.png"}, "image: png, 3×2 pixels, " + size(int64(png1.Len())) + "\n", "image described, not shown", executor.Allow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, pv, res, err := f.call(Read{Check: f.check}, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if out != tt.out {
				t.Errorf("output = %q\nwant     %q", out, tt.out)
			}
			if res.Status != tt.status {
				t.Errorf("status = %q\nwant     %q", res.Status, tt.status)
			}
			if pv.Default != tt.defaultDec {
				t.Errorf("preview default = %q, want %q", pv.Default, tt.defaultDec)
			}
		})
	}
}

func TestReadCapAndOutside(t *testing.T) {
	f := newFixture(t)
	line := strings.Repeat("x", 1000)
	var b strings.Builder
	for i := 0; i < 1000; i++ {
		b.WriteString(line + "\n")
	}
	f.write("big.txt", b.String())
	out, _, res, err := f.call(Read{Check: f.check}, ReadParams{Path: "big.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) > MaxReadBytes {
		t.Errorf("output is %d bytes, over the cap %d", len(out), MaxReadBytes)
	}
	if want := "lines 1–260 of big.txt (977.5 KiB); more follows: read on with offset=261 (output is capped at 256 KiB)"; res.Status != want {
		t.Errorf("status = %q\nwant     %q", res.Status, want)
	}
	// Outside the project: the gate is asked, with the resolved path.
	p := f.write(filepath.Join(f.outside, "notes.txt"), "hello\n")
	if err := os.Symlink(p, filepath.Join(f.dir, "notes-link")); err != nil {
		t.Fatal(err)
	}
	_, pv, _, err := f.call(Read{Check: f.check}, ReadParams{Path: "notes-link"})
	if err != nil {
		t.Fatal(err)
	}
	if pv.Default != "" || pv.Path != p || pv.Detail != "read "+p+" (named "+filepath.Join(f.dir, "notes-link")+")" {
		t.Errorf("outside preview = %+v", pv)
	}
}
