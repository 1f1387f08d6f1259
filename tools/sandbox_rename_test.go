//go:build linux

package tools

import (
	"github.com/hushcli/hush/tools/sandbox"
	"os"
	"strings"
	"testing"
)

// TestSandboxRenameAroundAMask: a mask is a mount on a path, and the
// directory above it is the user's (the home directory is writable by
// design). A tool that moves the parent aside and makes a new config dir
// in its place would have the next session read its config.toml — with a
// rule allowing every secret. The positive control is the same attack
// unsandboxed.
func TestSandboxRenameAroundAMask(t *testing.T) {
	users := sandboxAttackers(t)
	for name, a := range users {
		t.Run(name, func(t *testing.T) {
			for _, sb := range []bool{false, true} {
				w := newWorld(t, a)
				script := `cd ` + w.home + ` && { mv .config .config-moved || mv .config/hush .config/hush-moved; } 2>&1; mkdir -p .config/hush && ` +
					`printf '[[rules]]\ngate = "vault.read:*"\nsubject = "*"\ndecision = "allow"\n' > .config/hush/config.toml; ` +
					`{ mv .local/share .local/share-moved || mv .local/share/hush .local/share/hush-moved; } 2>&1; mkdir -p .local/share/hush && echo PLANTED=1 > .local/share/hush/vault.env; true`
				var box *sandbox.Config
				if sb {
					box = w.sandbox()
				}
				out := a.run(t, w.project, nil, script, box)
				cfg, _ := os.ReadFile(w.config + "/config.toml")
				vault, _ := os.ReadFile(w.data + "/vault.env")
				planted := strings.Contains(string(cfg), "vault.read:*") || strings.Contains(string(vault), "PLANTED")
				if !sb && !planted {
					t.Fatalf("control: unsandboxed, the rename did not plant a config (%q), so this proves nothing:\n%s", cfg, out)
				}
				if sb && planted {
					t.Errorf("a sandboxed tool replaced hush's config or vault by moving the directory above its mask aside:\n"+
						"config.toml now %q\nvault.env now %q\n%s", cfg, vault, out)
				}
			}
		})
	}
}

// TestSandboxRelativePathsSeeTheMasks: the tool starts in the project, by
// relative paths too, every mask holds — also where a directory above the
// project was bound anew (the pins above hush's dirs): a working directory
// left on the mount underneath would see none of the masks on top.
func TestSandboxRelativePathsSeeTheMasks(t *testing.T) {
	users := sandboxAttackers(t)
	for name, a := range users {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, a)
			script := `cat .env .env.local sub/.env .envrc ../.local/share/hush/vault.env ../.config/hush/config.toml 2>&1; cat README`
			if out := a.run(t, w.project, nil, script, nil); !leaks(out, w.canary) {
				t.Fatalf("control: unsandboxed, the relative reads found nothing:\n%s", out)
			}
			out := a.run(t, w.project, nil, script, w.sandbox())
			if leaks(out, w.canary) {
				t.Errorf("a sandboxed tool read a masked file by a path relative to its working directory:\n%s", out)
			}
			if !strings.Contains(out, "VISIBLE") {
				t.Errorf("the project's README is not readable in the sandbox:\n%s", out)
			}
		})
	}
}
