package files

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hushcli/hush/executor"
)

func ptr(s string) *string { return &s }

func TestEditErrors(t *testing.T) {
	f := newFixture(t)
	f.write("a.go", "package a\n\nfunc A() {}\nfunc B() {}\n// A\n// A\n")
	f.write(".env", "X=canary\n")
	f.write("bin", "\x00\x01")
	tests := []struct {
		name string
		args any
		want string
	}{
		{"nothing", EditParams{Path: "a.go"}, "bad arguments: nothing to replace: give old and new, or edits"},
		{"old without new", EditParams{Path: "a.go", Old: ptr("x")}, "bad arguments: old and new go together"},
		{"both forms", EditParams{Path: "a.go", Old: ptr("x"), New: ptr("y"), Edits: []Replacement{{Old: "a", New: "b"}}}, "bad arguments: give either old/new or edits, not both"},
		{"replace_all outside edits", EditParams{Path: "a.go", ReplaceAll: true, Edits: []Replacement{{Old: "a", New: "b"}}}, "bad arguments: replace_all goes with old/new; inside edits, set it on each replacement"},
		{"missing file", EditParams{Path: "b.go", Old: ptr("x"), New: ptr("y")}, "b.go does not exist; use write to create it"},
		{"absent", EditParams{Path: "a.go", Old: ptr("func C()"), New: ptr("func D()")}, "old text not found in a.go; nothing was changed"},
		{"case", EditParams{Path: "a.go", Old: ptr("FUNC A()"), New: ptr("x")}, "old text not found in a.go (it does appear with different upper/lower case); nothing was changed"},
		{"whitespace", EditParams{Path: "a.go", Old: ptr("func  A() {}"), New: ptr("x")}, "old text not found in a.go (it does appear with different whitespace or indentation); nothing was changed"},
		{"not unique", EditParams{Path: "a.go", Old: ptr("// A\n"), New: ptr("")}, "old text appears 2 times in a.go (lines 5, 6); add surrounding lines to make it unique, or set replace_all; nothing was changed"},
		{"empty old", EditParams{Path: "a.go", Old: ptr(""), New: ptr("x")}, "old is empty; to create a file use write, to add text include the lines around it in old"},
		{"same", EditParams{Path: "a.go", Old: ptr("A"), New: ptr("A")}, "old and new are the same; nothing would change"},
		{"second of three fails", EditParams{Path: "a.go", Edits: []Replacement{{Old: "func A()", New: "func A2()"}, {Old: "func A()", New: "x"}, {Old: "B", New: "C"}}},
			"edit 2 of 3: old text not found in a.go after the edits before it; nothing was changed"},
		{"dotenv", EditParams{Path: ".env", Old: ptr("X"), New: ptr("Y")}, MaskedDotEnv},
		{"binary", EditParams{Path: "bin", Old: ptr("\x00"), New: ptr("y")}, "refused: bin is a binary file (application/octet-stream); write and edit change text files only"},
		{"a redacted secret written back", EditParams{Path: "a.go", Old: ptr("func B() {}"), New: ptr("const key = \"[REDACTED:API_KEY]\"")},
			"refused: the new content of a.go holds [REDACTED:API_KEY], the placeholder the model is shown instead of a secret; writing it would replace the real value in the file. Leave the lines holding secrets out of the change"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := os.ReadFile(filepath.Join(f.dir, "a.go"))
			_, _, _, err := f.call(Edit{Check: f.check}, tt.args)
			if got := errString(err); got != tt.want {
				t.Errorf("error = %q\nwant    %q", got, tt.want)
			}
			after, _ := os.ReadFile(filepath.Join(f.dir, "a.go"))
			if string(before) != string(after) {
				t.Errorf("a refused edit changed the file:\n%s", after)
			}
		})
	}
}

func TestEdit(t *testing.T) {
	f := newFixture(t)
	p := f.write("a.go", "package a\n\nfunc A() {}\nfunc B() {}\n// A\n// A\n")
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	out, pv, res, err := f.call(Edit{Check: f.check}, EditParams{Path: "a.go", Edits: []Replacement{
		{Old: "func A() {}", New: "func A() int { return 1 }"},
		{Old: "// A\n", New: "// Z\n", ReplaceAll: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := "package a\n\nfunc A() int { return 1 }\nfunc B() {}\n// Z\n// Z\n"
	if got, _ := os.ReadFile(p); string(got) != want {
		t.Errorf("file = %q\nwant   %q", got, want)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want 0640 kept", fi.Mode().Perm())
	}
	wantDiff := "--- a/a.go\n+++ b/a.go\n@@ -1,6 +1,6 @@\n package a\n \n-func A() {}\n+func A() int { return 1 }\n func B() {}\n-// A\n-// A\n+// Z\n+// Z\n"
	if pv.Diff != wantDiff {
		t.Errorf("diff = %q\nwant   %q", pv.Diff, wantDiff)
	}
	if pv.Detail != "edit "+p+" (+3 −3 lines)" || pv.Path != p || pv.Default != "" {
		t.Errorf("preview = %+v", pv)
	}
	if out != "" || res.Status != "edited a.go (+3 −3 lines)" {
		t.Errorf("out %q status %q", out, res.Status)
	}
	entries, _ := os.ReadDir(f.dir)
	if len(entries) != 1 {
		t.Errorf("a temporary file was left behind: %v", entries)
	}
}

// An edit is applied to the file as it was when the diff was shown: a
// change in between fails the call and leaves the other change alone.
func TestEditChangedAfterApproval(t *testing.T) {
	f := newFixture(t)
	p := f.write("a.txt", "alpha\nbeta\n")
	for _, tool := range []executor.Tool{Edit{Check: f.check}, Write{Check: f.check}} {
		raw, _ := json.Marshal(map[string]any{"path": "a.txt", "old": "alpha", "new": "ALPHA"})
		if tool.Name() == WriteName {
			raw, _ = json.Marshal(WriteParams{Path: "a.txt", Content: "replaced\n"})
		}
		tc := &executor.ToolContext{Dir: f.dir}
		pv, err := tool.(executor.Previewer).Preview(context.Background(), tc, raw)
		if err != nil {
			t.Fatal(err)
		}
		// Someone else changes the file while the user reads the diff.
		f.write("a.txt", "alpha\nbeta\ngamma\n")
		tc.Preview = &pv
		tc.Output = &strings.Builder{}
		_, err = tool.Run(context.Background(), tc, raw)
		if !errors.Is(err, ErrChanged) || err.Error() != "a.txt changed since the diff was shown; nothing was written: read it again and redo the change" {
			t.Errorf("%s: err = %v", tool.Name(), err)
		}
		if got, _ := os.ReadFile(p); string(got) != "alpha\nbeta\ngamma\n" {
			t.Errorf("%s overwrote the other change: %q", tool.Name(), got)
		}
		f.write("a.txt", "alpha\nbeta\n")
	}
}

func TestWrite(t *testing.T) {
	f := newFixture(t)
	out, pv, res, err := f.call(Write{Check: f.check}, WriteParams{Path: "new/dir/b.txt", Content: "hello\nworld\n"})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(f.dir, "new/dir/b.txt")
	if got, _ := os.ReadFile(p); string(got) != "hello\nworld\n" {
		t.Errorf("file = %q", got)
	}
	if pv.Diff != "--- /dev/null\n+++ b/new/dir/b.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n" {
		t.Errorf("diff = %q", pv.Diff)
	}
	if out != "" || res.Status != "created new/dir/b.txt (12 bytes, 2 lines)" {
		t.Errorf("out %q status %q", out, res.Status)
	}
	_, _, res, err = f.call(Write{Check: f.check}, WriteParams{Path: "new/dir/b.txt", Content: "bye\n"})
	if err != nil || res.Status != "wrote new/dir/b.txt (4 bytes, 1 lines)" {
		t.Errorf("replace: %v %q", err, res.Status)
	}
}

func TestWriteErrors(t *testing.T) {
	f := newFixture(t)
	if err := os.Symlink(filepath.Join(f.vault, "vault.env"), filepath.Join(f.dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(f.vault, "new.env"), filepath.Join(f.dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(f.outside, "x.txt")
	tests := []struct {
		name string
		args any
		want string
	}{
		{"empty path", WriteParams{Content: "x"}, "bad arguments: path is empty"},
		{"missing content", map[string]any{"path": "a", "text": "x"}, `bad arguments: json: unknown field "text"`},
		{"dotenv", WriteParams{Path: ".env.production", Content: "x"}, MaskedDotEnv},
		{"symlink to vault", WriteParams{Path: "link", Content: "x"}, "masked: " + filepath.Join(f.vault, "vault.env") + " is hush's data dir (" + filepath.Join(f.dir, "link") + " leads there through a symlink); hush's file tools never touch it"},
		{"dangling symlink into vault", WriteParams{Path: "dangling", Content: "x"}, "masked: " + filepath.Join(f.vault, "new.env") + " is hush's data dir (" + filepath.Join(f.dir, "dangling") + " leads there through a symlink); hush's file tools never touch it"},
		{"directory", WriteParams{Path: ".", Content: "x"}, ". is a directory"},
		{"too big", WriteParams{Path: "big", Content: strings.Repeat("x", MaxWriteBytes+1)}, "content is 16.0 MiB; write handles files up to 16.0 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := f.call(Write{Check: f.check}, tt.args)
			if got := errString(err); got != tt.want {
				t.Errorf("error = %q\nwant    %q", got, tt.want)
			}
		})
	}
	// Outside the project: the preview says only a rule may allow it.
	raw, _ := json.Marshal(WriteParams{Path: outside, Content: "x"})
	pv, err := Write{Check: f.check}.Preview(context.Background(), &executor.ToolContext{Dir: f.dir}, raw)
	if err != nil {
		t.Fatal(err)
	}
	if pv.Default != executor.Deny || pv.DefaultReason != outside+" is outside the project directory, where write may not write" {
		t.Errorf("outside preview = %+v", pv)
	}
	// And the gate refuses it, even with --yes, naming the rule to add.
	g := &executor.RuleGate{AutoApproveTools: true}
	v, err := g.Decide(context.Background(), executor.Request{GateID: "tool.run:write", Subject: "write", Path: pv.Path, Default: pv.Default, DefaultReason: pv.DefaultReason})
	if err != nil || v.Decision != executor.Deny || !strings.HasPrefix(v.Message, outside+" is outside the project directory, where write may not write. tool.run:write for write is denied: no rule allows it") {
		t.Errorf("gate: %v %+v", err, v)
	}
	// Run without an approved preview writes nothing.
	if _, err := (Write{Check: f.check}).Run(context.Background(), &executor.ToolContext{Dir: f.dir}, raw); errString(err) != "no approved preview for this call; nothing was written" {
		t.Errorf("run without preview: %v", err)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("the outside file was written")
	}
}

// A directory swapped for a symlink between the diff and the write does not
// carry the write elsewhere; a symlink swapped in for a file named to read
// is not followed.
func TestSwappedAfterCheck(t *testing.T) {
	f := newFixture(t)
	f.write("sub/x.txt", "old\n")
	raw, _ := json.Marshal(WriteParams{Path: "sub/x.txt", Content: "new\n"})
	tc := &executor.ToolContext{Dir: f.dir, Output: &strings.Builder{}}
	pv, err := Write{Check: f.check}.Preview(context.Background(), tc, raw)
	if err != nil {
		t.Fatal(err)
	}
	// Meanwhile sub/ becomes a link to a directory holding the same file.
	elsewhere := filepath.Join(f.outside, "sub")
	f.write(filepath.Join(elsewhere, "x.txt"), "old\n")
	if err := os.RemoveAll(filepath.Join(f.dir, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(f.dir, "sub")); err != nil {
		t.Fatal(err)
	}
	tc.Preview = &pv
	_, err = Write{Check: f.check}.Run(context.Background(), tc, raw)
	want := "refused: sub/x.txt no longer leads to " + filepath.Join(f.dir, "sub/x.txt") + " (a directory on its way changed after the diff was shown); nothing was written"
	if errString(err) != want {
		t.Errorf("err = %v\nwant  %s", err, want)
	}
	if data, _ := os.ReadFile(filepath.Join(elsewhere, "x.txt")); string(data) != "old\n" {
		t.Errorf("the write went through the swapped directory: %q", data)
	}
	// openChecked does not follow a link in the last component.
	if err := os.Symlink(filepath.Join(f.vault, "vault.env"), filepath.Join(f.dir, "swapped")); err != nil {
		t.Fatal(err)
	}
	if _, err := openChecked(filepath.Join(f.dir, "swapped"), "swapped"); err == nil || !strings.Contains(err.Error(), "open swapped: too many levels of symbolic links") {
		t.Errorf("openChecked followed a symlink: %v", err)
	}
}
