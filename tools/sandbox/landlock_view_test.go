package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLandlockView: the view holds the system, PATH and toolchains
// read-only, the project (its git work tree) and caches read-write, and
// nothing that holds hush's dirs or the home itself — a PATH entry of "/"
// or of the home is dropped.
func TestLandlockView(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	home := root + "/home"
	for _, d := range []string{home + "/.local/share/hush", home + "/.config/hush", home + "/src/repo/.git", home + "/src/repo/sub",
		home + "/go/pkg/mod", home + "/.local/bin", home + "/bin"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	masks, err := NewMaskSet(MaskOptions{Home: home, DataDir: home + "/.local/share/hush", ConfigDir: home + "/.config/hush", Project: home + "/src/repo/sub"})
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + home + "/bin:/:" + home + ":/usr/bin", "HOME=" + home}
	v, err := landlockViewFor(home+"/src/repo/sub", env, &Config{Masks: masks, NoNetwork: true}, "/p/home", "/p/tmp")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/usr", "/etc", "/proc", home + "/bin", home + "/.local/bin"} {
		if !slices.Contains(v.Read, want) {
			t.Errorf("read-only lacks %s: %q", want, v.Read)
		}
	}
	for _, want := range []string{home + "/src/repo/sub", home + "/go/pkg/mod", "/p/home", "/p/tmp"} {
		if !slices.ContainsFunc(v.Write, func(p string) bool { return within(want, p) }) {
			t.Errorf("read-write lacks %s: %q", want, v.Write)
		}
	}
	if !slices.Contains(v.Write, home+"/src/repo") {
		t.Errorf("the git work tree holding the project is not read-write: %q", v.Write)
	}
	for _, p := range append(append([]string{}, v.Read...), v.Write...) {
		if within(home, p) || within(home+"/.local/share/hush", p) {
			t.Errorf("the view holds %s, which holds the home or hush's data dir", p)
		}
	}
	if !v.NoNetwork || len(v.Sockets) != 0 {
		t.Errorf("network off and no sockets expected: %+v", v)
	}

	var out bytes.Buffer
	// hush's data dir inside the project: Landlock cannot hide it, so no
	// tool starts.
	inside, err := NewMaskSet(MaskOptions{Home: home, DataDir: home + "/src/repo/.hush", Project: home + "/src/repo"})
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(home+"/src/repo/.hush", 0o700)
	if _, err := landlockViewFor(home+"/src/repo", env, &Config{Masks: inside}, "/p/home", "/p/tmp"); err == nil || !strings.Contains(err.Error(), "cannot hide") {
		t.Errorf("hush's data dir inside the project: err = %v, want a refusal", err)
	}

	if err := Render(&out, "bash", &Config{Masks: masks}, State{LandlockOnly: true, Reason: "host tools run in the Landlock sandbox, not in namespaces: test"}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"# sandbox for bash: Landlock only: host tools run in the Landlock sandbox", "# Landlock rules: read-only", home + "/src/repo\n",
		"# unix sockets: none", "# NOT given here", ".env, .env.*, .envrc at any depth below " + home + "/src/repo  [hidden, not enforced]"} {
		if !strings.Contains(got, want) {
			t.Errorf("sandbox show lacks %q:\n%s", want, got)
		}
	}
}
