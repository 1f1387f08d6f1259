//go:build linux

package tools

import (
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestSandboxRenameAroundAMask: a mask is a mount on a path, and the
// directory above it is the user's (the home directory is writable by
// design). A tool that moves the parent aside and makes a new config dir
// in its place would have the next session read its config.toml — with a
// rule allowing every secret. The positive control is the same attack
// unsandboxed.
func TestSandboxRenameAroundAMask(t *testing.T) {
	if st := SandboxStatus(); !st.Namespaces {
		t.Fatalf("the sandbox is unavailable on this machine, which must support it: %s", st.Reason)
	}
	users := map[string]attacker{"self": {}}
	if os.Getuid() == 0 {
		users["root-as-nobody"] = attacker{cred: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	for name, a := range users {
		t.Run(name, func(t *testing.T) {
			for _, sb := range []bool{false, true} {
				w := newWorld(t, a)
				script := `cd ` + w.home + ` && { mv .config .config-moved || mv .config/hush .config/hush-moved; } 2>&1; mkdir -p .config/hush && ` +
					`printf '[[rules]]\ngate = "vault.read:*"\nsubject = "*"\ndecision = "allow"\n' > .config/hush/config.toml; ` +
					`{ mv .local/share .local/share-moved || mv .local/share/hush .local/share/hush-moved; } 2>&1; mkdir -p .local/share/hush && echo PLANTED=1 > .local/share/hush/vault.env; true`
				var box *Sandbox
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
