//go:build linux

package tools

import (
	"bytes"
	"github.com/hushcli/hush/tools/sandbox"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSandboxReadOnlyMasks attacks the two files that would let a tool out
// of the sandbox for good: hush's own executable (the user's next hush,
// run outside any sandbox, with the vault) and ~/.ssh (a key added to
// authorized_keys is an ssh login outside the sandbox). Each attack — an
// append, cp over, mv over, truncate, unlink and re-create, moving the
// directory aside, a hard link, and undoing the mount from a namespace the
// tool makes itself — runs unsandboxed first as the control that must
// change the files, then in the sandbox, where the raw bytes of every file
// (and the listing of every directory) must be as they were. The positive
// controls: in the sandbox the files read as they are, hush's executable
// still runs, and the directories around them stay writable.
func TestSandboxReadOnlyMasks(t *testing.T) {
	users := sandboxAttackers(t)
	if os.Getuid() == 0 && os.Getenv(unprivEnv) == "" {
		t.Run("unprivileged-hush", func(t *testing.T) { rerunAsNobody(t, "TestSandboxReadOnlyMasks") })
	}
	const exeScript = "#!/bin/sh\necho RAN-OK\n"
	const keys = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOriginalKey user@host\n"
	type target struct{ name, path string }
	attacks := map[string]string{
		"append":    `printf '\nevil\n' >> "$T"`,
		"cp-over":   `printf evil > evil; cp evil "$T"`,
		"mv-over":   `printf evil > evil; mv -f evil "$T"`,
		"truncate":  `truncate -s 0 "$T"`,
		"unlink":    `rm -f "$T"; printf evil > "$T"`,
		"move-dir":  `d=$(dirname "$T"); mv "$d" "$d.moved" && mkdir "$d" && printf evil > "$T"`,
		"hard-link": `ln "$T" hl && printf evil >> hl`,
		"nested-ns": `printf evil > evil; mkdir -p nx; unshare -Urm sh -c 'mount --bind "$(dirname "$T")" nx || exit; b=$(basename "$T"); ` +
			`printf evil >> "nx/$b" 2>/dev/null; ln -sf "$PWD/evil" nx/.x && mv -f nx/.x "nx/$b"'`,
		"remount-rw":   `unshare -Urm sh -c 'mount -o remount,bind,rw "$T" 2>/dev/null; printf evil >> "$T"'`,
		"umount":       `unshare -Urm sh -c 'umount "$T" 2>/dev/null; printf evil >> "$T"'`,
		"link-over":    `printf evil > evil; ln -sf "$PWD/evil" "$T"`,
		"new-key-file": `printf 'ssh-ed25519 AAAAevil\n' > "$H/.ssh/authorized_keys2"; printf 'evil\n' > "$H/.ssh/rc"`,
	}
	for name, a := range users {
		t.Run(name, func(t *testing.T) {
			setup := func(t *testing.T) (world, []target) {
				w := newWorld(t, a)
				files := map[string]string{
					w.home + "/.local/bin/hush":        exeScript,
					w.project + "/hush":                exeScript, // a developer's ./hush
					w.home + "/.ssh/authorized_keys":   keys,
					w.home + "/.local/bin/other-tool":  "x",
					w.home + "/.ssh/known_hosts":       "host ssh-ed25519 AAAA\n",
					w.home + "/.local/share/readme.md": "x",
					w.home + "/opt/hush/hush":          exeScript, // installed by a link in PATH
				}
				for p, v := range files {
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, []byte(v), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				if err := os.MkdirAll(w.home+"/bin", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("../opt/hush/hush", w.home+"/bin/hush"); err != nil {
					t.Fatal(err)
				}
				if a.cred != nil {
					filepath.Walk(w.root, func(p string, _ os.FileInfo, _ error) error {
						return os.Lchown(p, int(a.cred.Uid), int(a.cred.Gid))
					})
				}
				return w, []target{{"exe", w.home + "/.local/bin/hush"}, {"exe-in-project", w.project + "/hush"},
					{"authorized_keys", w.home + "/.ssh/authorized_keys"}, {"exe-link", w.home + "/bin/hush"}}
			}
			boxed := func(t *testing.T, w world, exe string) *sandbox.Config {
				m, err := sandbox.NewMaskSet(sandbox.MaskOptions{Home: w.home, DataDir: w.data, ConfigDir: w.config, RuntimeDir: w.root + "/run",
					BusAddress: "unix:path=" + w.bus, Project: w.project, Executable: exe, PathEnv: "/usr/bin:" + w.home + "/bin:/bin"})
				if err != nil {
					t.Fatal(err)
				}
				return &sandbox.Config{Masks: m, Required: true}
			}
			for _, tg := range []string{"exe", "exe-in-project", "authorized_keys", "exe-link"} {
				for an, script := range attacks {
					if an == "new-key-file" && tg != "authorized_keys" {
						continue
					}
					t.Run(tg+"/"+an, func(t *testing.T) {
						for _, sandboxed := range []bool{false, true} {
							w, targets := setup(t)
							var path, exe string
							for _, x := range targets {
								if x.name == tg {
									path = x.path
								}
							}
							exe = w.home + "/.local/bin/hush"
							switch tg {
							case "exe-in-project":
								exe = w.project + "/hush"
							case "exe-link":
								exe = w.home + "/opt/hush/hush"
							}
							before := readOnlySnapshot(t, w)
							var sb *sandbox.Config
							if sandboxed {
								sb = boxed(t, w, exe)
							}
							out := a.run(t, w.project, Env{{Name: "T", Value: path}, {Name: "H", Value: w.home}}, script+"; true", sb)
							after := readOnlySnapshot(t, w)
							changed := snapshotDiff(before, after)
							if !sandboxed && changed == "" {
								t.Fatalf("control: unsandboxed, %s changed nothing, so it proves nothing:\n%s", an, out)
							}
							if sandboxed && changed != "" {
								t.Errorf("a sandboxed tool changed a read-only file (%s):\n%s\ntool output:\n%s", an, changed, out)
							}
						}
					})
				}
			}
			t.Run("still-readable", func(t *testing.T) {
				w, _ := setup(t)
				exe := w.home + "/.local/bin/hush"
				out := a.run(t, w.project, Env{{Name: "H", Value: w.home}}, `cat "$H/.ssh/authorized_keys"; "`+exe+`"; ./hush; cat "$H/.ssh/id_ed25519" 2>&1; `+
					`echo w > "$H/.local/bin/new-tool" && echo BIN-WRITABLE; echo w > "$H/.local/share/new" && echo HOME-WRITABLE`, boxed(t, w, exe))
				for _, want := range []string{keys, "RAN-OK\nRAN-OK\n", "BIN-WRITABLE", "HOME-WRITABLE"} {
					if !strings.Contains(out, want) {
						t.Errorf("positive control: the sandboxed tool's output lacks %q:\n%s", want, out)
					}
				}
				if leaks(out, w.canary) {
					t.Errorf("a private key in the read-only ~/.ssh is readable in the sandbox:\n%s", out)
				}
			})
			// hush's executable in the project: the project is then pinned
			// (bound onto itself) before its .env masks, which must hold.
			t.Run("exe-in-project-keeps-dotenv-masks", func(t *testing.T) {
				w, _ := setup(t)
				script := `cat .env sub/.env "$PWD/.env.local" 2>&1; ./hush; echo w > ok && echo PROJECT-WRITABLE`
				if out := a.run(t, w.project, nil, script, nil); !leaks(out, w.canary) {
					t.Fatalf("control: unsandboxed, the .env reads found nothing:\n%s", out)
				}
				out := a.run(t, w.project, nil, script, boxed(t, w, w.project+"/hush"))
				if leaks(out, w.canary) {
					t.Errorf("with hush's executable in the project, a .env is readable in the sandbox:\n%s", out)
				}
				if !strings.Contains(out, "RAN-OK") || !strings.Contains(out, "PROJECT-WRITABLE") {
					t.Errorf("positive control: ./hush did not run or the project is not writable:\n%s", out)
				}
			})
		})
	}
}

// readOnlySnapshot is every file's raw bytes (and every directory's
// existence) under the home and the project, the ones a test attacks
// included: what a tool did, whatever its path.
func readOnlySnapshot(t *testing.T, w world) map[string]string {
	t.Helper()
	snap := map[string]string{}
	for _, root := range []string{w.home + "/.ssh", w.home + "/.local/bin", w.project + "/hush", w.home + "/bin", w.home + "/opt"} {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				snap[p] = "error: " + err.Error()
				return nil
			}
			if d.IsDir() {
				snap[p] = "dir"
				return nil
			}
			if d.Type()&fs.ModeSymlink != 0 {
				l, _ := os.Readlink(p)
				b, _ := os.ReadFile(p)
				snap[p] = "link to " + l + ": " + string(b)
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				snap[p] = "error: " + err.Error()
				return nil
			}
			snap[p] = string(b)
			return nil
		})
	}
	return snap
}

func snapshotDiff(before, after map[string]string) string {
	var b strings.Builder
	for p, v := range before {
		if w, ok := after[p]; !ok {
			b.WriteString("removed: " + p + "\n")
		} else if w != v {
			b.WriteString("changed: " + p + ": now " + strings.ReplaceAll(w, "\n", `\n`) + "\n")
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			b.WriteString("added: " + p + "\n")
		}
	}
	return b.String()
}

// rerunAsNobody re-runs this test binary's test as nobody, which then
// starts its sandboxes as an unprivileged hush would.
func rerunAsNobody(t *testing.T, test string) {
	var out bytes.Buffer
	cmd := exec.Command("/proc/self/exe", "-test.run=^"+test+"$", "-test.v", "-test.count=1")
	cmd.Env = []string{unprivEnv + "=1", "PATH=/usr/bin:/bin", "TMPDIR=/tmp", "HOME=/tmp"}
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	err := cmd.Run()
	if err != nil || !strings.Contains(out.String(), "--- PASS: "+test) || strings.Contains(out.String(), "--- SKIP") {
		t.Fatalf("as nobody: %v\n%s", err, out.String())
	}
}
