package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlantedGitHookRunsSandboxed: hush asks git about the project when a
// session starts (the system prompt's git line), and git status runs what
// the repository's own config names — core.fsmonitor, a clean filter. The
// project is the tool's to write, .git/config with it: a hostile call
// that planted a hook had the next session's git run it as hush's child,
// outside any sandbox, where it read the vault file. The hook must run
// where a tool does: the positive control is its marker in ctl/, which
// says git did run it.
func TestPlantedGitHookRunsSandboxed(t *testing.T) {
	t.Parallel()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git is not installed (scripts/provision installs it): %v", err)
	}
	for _, a := range attackers(t) {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			hw := newHostileWorld(t, a)
			init := exec.Command(git, "init", "-q", hw.project)
			init.Env = []string{"HOME=" + hw.home, "PATH=/usr/bin:/bin"}
			if out, err := init.CombinedOutput(); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
			// The hook reads the vault into loot/, the marker into ctl/.
			hook := "#!/bin/sh\nmkdir -p " + shq(hw.project+"/loot") + " " + shq(hw.project+"/ctl") + "\n" +
				"cat " + shq(hw.dataDir+"/vault.env") + " > " + shq(hw.project+"/loot/git-hook") + " 2>&1\n" +
				"cat " + shq(hw.project+"/notes.txt") + " > " + shq(hw.project+"/ctl/git-hook") + "\n"
			script := `printf '%s' ` + shq(hook) + ` > .git/fsm && chmod +x .git/fsm && git config core.fsmonitor "$PWD/.git/fsm" && echo planted`
			model := hostileModel(t, fakeCall{"bash", map[string]any{"script": script, "secrets": []string{}}})
			hw.configFor(model, "")
			if out, code := hw.run(t, "plant"); code != 0 || !strings.Contains(out, "planted") {
				t.Fatalf("%s: the planting run: exit %d:\n%s", a.name, code, out)
			}
			if _, err := os.Stat(filepath.Join(hw.project, "ctl", "git-hook")); err == nil {
				t.Fatalf("%s: the hook ran in the planting run already, so the next run proves nothing", a.name)
			}
			// The next session, which asks git about the project first.
			next := newFakeModel(t, step{text: "Nothing to do."})
			hw.configFor(next, "")
			if out, code := hw.run(t, "hello"); code != 0 {
				t.Fatalf("%s: the next run: exit %d:\n%s", a.name, code, out)
			}
			if hw.control(t, "git-hook") {
				hw.noSecret(t, "git-hook", nil)
			}
			if b, _ := os.ReadFile(filepath.Join(hw.project, "loot", "git-hook")); strings.Contains(string(b), hw.canaries["vault"]) {
				t.Errorf("%s: the planted hook read vault.env: % x", a.name, b)
			}
		})
	}
}
