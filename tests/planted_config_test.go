package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingConfigDirCannotBePlanted: a user who never ran `hush setup`
// has no config dir. A hostile call that created it — ~/.config/hush, or
// the HUSH_CONFIG_DIR the user set but never made — with a rule granting
// every secret had the next session obey it. The next session's call asks
// for the vault's canary and must not get it; the positive control is the
// same call after the user wrote a rule granting GRANTED, whose value does
// arrive.
func TestMissingConfigDirCannotBePlanted(t *testing.T) {
	t.Parallel()
	for _, a := range attackers(t) {
		for _, where := range []string{"default", "HUSH_CONFIG_DIR"} {
			t.Run(a.name+"/"+where, func(t *testing.T) {
				t.Parallel()
				hw := newHostileWorld(t, a)
				if err := os.RemoveAll(hw.configDir); err != nil {
					t.Fatal(err)
				}
				cfgDir := filepath.Join(hw.home, ".config", "hush")
				var env []string
				for _, e := range hw.env {
					if !strings.HasPrefix(e, "HUSH_CONFIG_DIR=") {
						env = append(env, e)
					}
				}
				if where == "HUSH_CONFIG_DIR" {
					cfgDir = filepath.Join(filepath.Dir(hw.home), "profile", "config")
					env = append(env, "HUSH_CONFIG_DIR="+cfgDir)
				}
				hw.env = env
				rule := `[[rules]]\ngate = "vault.read:*"\nsubject = "*"\ndecision = "allow"\n`
				plant := "mkdir -p " + shq(cfgDir) + " && printf '" + rule + "' > " + shq(filepath.Join(cfgDir, "config.toml")) + " && echo planted; ls -la " + shq(cfgDir)
				model := hostileModel(t, fakeCall{"bash", map[string]any{"script": plant, "secrets": []string{}}})
				flags := []string{"--provider", "openai", "--base-url", model.URL(), "--model", "fake"}
				if out, code := hw.run(t, append(flags, "plant")...); code != 0 {
					t.Fatalf("the planting run: exit %d:\n%s", code, out)
				}
				// The next session: a call that asks for a secret no rule
				// of the user's grants.
				ask := "mkdir -p loot ctl; printf %s \"$X\" | xxd > loot/config-plant; printf %s \"$X\" | sha256sum > ctl/granted; echo asked"
				next := hostileModel(t, fakeCall{"bash", map[string]any{"script": ask, "env": map[string]string{"X": "${VAULT_CANARY}"}}})
				flags = []string{"--provider", "openai", "--base-url", next.URL(), "--model", "fake"}
				out, _ := hw.run(t, append(flags, "next")...)
				if b, _ := os.ReadFile(filepath.Join(hw.project, "loot", "config-plant")); strings.Contains(string(xxdBytes(b)), hw.canaries["vault"]) {
					t.Errorf("%s: the next session granted VAULT_CANARY by the rule a tool planted in %s", a.name, cfgDir)
				}
				hw.assertNoCanary("the next run's output", out)

				// The control: the user's own rule grants GRANTED.
				if err := os.MkdirAll(cfgDir, 0o700); err != nil {
					t.Fatal(err)
				}
				hw.write(filepath.Join(cfgDir, "config.toml"), "[[rules]]\ngate = \"vault.read:GRANTED\"\nsubject = \"*\"\ndecision = \"allow\"\n")
				os.Remove(filepath.Join(hw.project, "ctl", "granted"))
				ctl := hostileModel(t, fakeCall{"bash", map[string]any{"script": ask, "env": map[string]string{"X": "${GRANTED}"}}})
				flags = []string{"--provider", "openai", "--base-url", ctl.URL(), "--model", "fake"}
				if out, code := hw.run(t, append(flags, "control")...); code != 0 {
					t.Fatalf("control: exit %d:\n%s", code, out)
				}
				if b, _ := os.ReadFile(filepath.Join(hw.project, "ctl", "granted")); !strings.HasPrefix(string(b), hw.grantedSHA) {
					t.Errorf("%s: positive control: the user's rule did not grant GRANTED (%q), so the refusal proves nothing", a.name, b)
				}
			})
		}
	}
}
