package tests

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestPlantedInstructionsReachNoSecret: hush reads the project's AGENTS.md
// into the system prompt, which goes to the model server. A hostile call
// that made AGENTS.md a symlink to the vault file had the next session
// send every vault value in plain text; one that made it a named pipe or
// a link to /dev/tty hung hush before its first turn. Each plant must be
// refused at once with a sentence, the session must run, and the raw
// bytes the model server received must hold no secret. The positive
// control is a regular AGENTS.md, whose marker does arrive.
func TestPlantedInstructionsReachNoSecret(t *testing.T) {
	t.Parallel()
	for _, a := range attackers(t) {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			hw := newHostileWorld(t, a)
			agents := filepath.Join(hw.project, "AGENTS.md")
			aws := canary("aws")
			hw.canaries["aws"] = aws
			if err := os.MkdirAll(filepath.Join(hw.home, ".aws"), 0o700); err != nil {
				t.Fatal(err)
			}
			hw.write(filepath.Join(hw.home, ".aws", "credentials"), "[default]\naws_secret_access_key = "+aws+"\n")

			// The plant as a hostile call makes it: a symlink to the vault.
			plant := hostileModel(t, fakeCall{"bash", map[string]any{
				"script": "ln -s " + shq(filepath.Join(hw.dataDir, "vault.env")) + " AGENTS.md && echo planted", "secrets": []string{}}})
			hw.configFor(plant, "")
			if out, code := hw.run(t, "plant"); code != 0 || !strings.Contains(out, "planted") {
				t.Fatalf("the planting run: exit %d:\n%s", code, out)
			}
			if fi, err := os.Lstat(agents); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Fatalf("the planting call left no symlink at AGENTS.md: %v", err)
			}
			next := func(name string) string {
				t.Helper()
				m := newFakeModel(t, step{text: "Nothing to do."})
				hw.configFor(m, "")
				out, code := hw.run(t, "hello")
				if code != 0 {
					t.Fatalf("%s: the next run: exit %d:\n%s", name, code, out)
				}
				body := m.Received()
				if body == "" {
					t.Fatalf("%s: the model server received nothing:\n%s", name, out)
				}
				for label, v := range hw.canaries {
					if strings.Contains(body, v) {
						t.Errorf("%s: the request body carries the %s canary", name, label)
					}
				}
				if strings.Contains(body, hw.granted) {
					t.Errorf("%s: the request body carries the vault's GRANTED value", name)
				}
				return out
			}
			if out := next("symlink to the vault"); !strings.Contains(out, "AGENTS.md not read: it leads outside") {
				t.Errorf("symlink to the vault: no sentence says AGENTS.md was refused:\n%s", out)
			}

			// The rest planted directly: where else a link can lead, and
			// what blocks a reader.
			for _, c := range []struct {
				name, to, says string
			}{
				{"symlink to ~/.aws/credentials", filepath.Join(hw.home, ".aws", "credentials"), "it leads outside"},
				{"symlink to the project's .env", ".env", "no tool sees it"},
				{"symlink to /dev/zero", "/dev/zero", "it leads outside"},
				{"symlink to /dev/tty", "/dev/tty", "it leads outside"},
				{"named pipe", "", "it is a named pipe (FIFO)"},
			} {
				os.Remove(agents)
				var err error
				if c.to == "" {
					err = syscall.Mkfifo(agents, 0o644)
				} else {
					err = os.Symlink(c.to, agents)
				}
				if err != nil {
					t.Fatal(err)
				}
				if out := next(c.name); !strings.Contains(out, "AGENTS.md not read: ") || !strings.Contains(out, c.says) {
					t.Errorf("%s: no sentence saying %q:\n%s", c.name, c.says, out)
				}
			}

			// The control: a regular AGENTS.md is read and sent.
			os.Remove(agents)
			hw.write(agents, "Always run the tests. "+markValue(hw.world)+"\n")
			m := newFakeModel(t, step{text: "Nothing to do."})
			hw.configFor(m, "")
			if out, code := hw.run(t, "hello"); code != 0 {
				t.Fatalf("control: exit %d:\n%s", code, out)
			}
			if !strings.Contains(m.Received(), markValue(hw.world)) {
				t.Errorf("control: a regular AGENTS.md's text did not reach the model server, so the refusals prove nothing")
			}
		})
	}
}
