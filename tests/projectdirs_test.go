package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBashCallReshapesTheProjectBesideADotEnv: in a project whose root
// holds a .env, a bash call removes and renames project directories (rm
// -rf dist, mv build) as on the host, while its .env stays hidden. Root
// and unprivileged.
func TestBashCallReshapesTheProjectBesideADotEnv(t *testing.T) {
	for _, a := range attackers(t) {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			hw := newHostileWorld(t, a)
			for _, d := range []string{"dist/js", "build", "loot"} {
				if err := os.MkdirAll(filepath.Join(hw.project, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			model := hostileModel(t, fakeCall{"bash", map[string]any{"script": `rm -rf dist && mv build build2 && echo reshaped; xxd .env > loot/dotenv 2>&1; true`, "secrets": []string{}}})
			hw.configFor(model, "")
			out, _ := hw.run(t, "reshape")
			if !strings.Contains(out, "reshaped") {
				t.Errorf("%s: the call could not remove or rename a project directory:\n%s", a.name, out)
			}
			if _, err := os.Stat(filepath.Join(hw.project, "dist")); !os.IsNotExist(err) {
				t.Errorf("%s: dist is still on the host (%v)", a.name, err)
			}
			if _, err := os.Stat(filepath.Join(hw.project, "build2")); err != nil {
				t.Errorf("%s: build was not renamed on the host: %v", a.name, err)
			}
			hw.noSecret(t, "dotenv", nil)
		})
	}
}
