package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestForProgramBringsInOnlyTheProgramsTree: an MCP server configured as
// a script under the home gets its package's tree read-only, a command in
// a node_modules the directory holding it; a file straight in the home
// brings nothing (never the whole home), hush's dirs stay hidden even when
// a program sits in one, and the session's own policy is not changed.
func TestForProgramBringsInOnlyTheProgramsTree(t *testing.T) {
	t.Parallel()
	w := newPolicyWorld(t)
	mk := func(path string) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("x"), 0o700); err != nil {
			t.Fatal(err)
		}
		return path
	}
	mk(w.home + "/mcp/weather/package.json")
	script := mk(w.home + "/mcp/weather/build/index.js")
	mk(w.home + "/tools/npm/node_modules/srv/package.json")
	bin := mk(w.home + "/tools/npm/node_modules/srv/bin/srv.js")
	if err := os.MkdirAll(w.home+"/tools/npm/node_modules/.bin", 0o700); err != nil {
		t.Fatal(err)
	}
	link := w.home + "/tools/npm/node_modules/.bin/srv"
	if err := os.Symlink("../srv/bin/srv.js", link); err != nil {
		t.Fatal(err)
	}
	loose := mk(w.home + "/loose.py")
	inHush := mk(w.data + "/srv.js")
	base := &Config{Policy: w.policy(t, nil), Constructed: true}

	cfg := base.ForProgram("node", script, link, loose, inHush, "relative/x.js")
	view := cfg.Policy.View()
	for path, want := range map[string]string{
		script:                        "read-only",
		w.home + "/mcp/weather/other": "read-only", // the package's tree
		link:                          "read-only",
		bin:                           "read-only",
		w.home + "/mcp/secret.txt":    "absent", // beside the package, not in it
		loose:                         "absent",
		w.home + "/.aws/credentials":  "absent",
		inHush:                        "absent",
		w.data + "/vault.env":         "absent",
	} {
		if got := modeOf(view, path); got != want {
			t.Errorf("%s: %s, want %s", path, got, want)
		}
	}
	if got := modeOf(base.Policy.View(), script); got != "absent" {
		t.Errorf("the session's own policy changed: %s is %s", script, got)
	}
	// Nothing outside the world: the same Config back.
	if got := base.ForProgram("/usr/bin/env", w.project+"/main.go"); got != base {
		t.Errorf("a program already in the world made a new Config")
	}
	var none *Config
	if none.ForProgram(script) != nil {
		t.Errorf("nil sandbox grew one")
	}
}
