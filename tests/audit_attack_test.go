package tests

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// attackReport is the attack half of `hush audit --json`.
type attackReport struct {
	Attacks []struct {
		Attack string `json:"attack"`
		Cells  map[string]struct {
			Status string `json:"status"`
			Detail string `json:"detail"`
		} `json:"cells"`
	} `json:"attacks"`
	Rows []struct {
		Path  string `json:"path"`
		Cells map[string]struct {
			Status string `json:"status"`
		} `json:"cells"`
	} `json:"rows"`
	Leaks      int    `json:"leaks"`
	NotChecked int    `json:"not_checked"`
	Verdict    string `json:"verdict"`
}

// cells lists "attack/column=status" for every attack cell whose status is
// not pass.
func (r attackReport) notPass() []string {
	var out []string
	for _, row := range r.Attacks {
		for col, c := range row.Cells {
			if c.Status != "pass" {
				out = append(out, row.Attack+"/"+col+"="+c.Status)
			}
		}
	}
	sort.Strings(out)
	return out
}

// runAuditAs runs `hush audit --json --no-docker ARGS` as cred (nil: root).
func runAuditAs(t *testing.T, cred *syscall.Credential, args ...string) (attackReport, int, string) {
	t.Helper()
	w := newWorld(t)
	bin := hushBin
	if cred != nil {
		hw := newHostileWorld(t, attacker{"unprivileged", cred})
		w, bin = hw.world, hw.bin
		hw.handOver()
	}
	cmd := exec.Command(bin, append([]string{"audit", "--json", "--no-docker"}, args...)...)
	cmd.Env, cmd.Dir = w.env, w.project
	if cred != nil {
		cmd.Env = append(cmd.Env, "TMPDIR="+filepath.Dir(w.home))
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var rep attackReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("audit --json printed %q (stderr %q): %v", out, stderr.String(), err)
	}
	if len(rep.Attacks) != len(auditAttacks) {
		t.Fatalf("the audit has %d attack rows, want %d: %s", len(rep.Attacks), len(auditAttacks), out)
	}
	w.assertNoCanary("hush audit's output", string(out)+stderr.String())
	return rep, code, string(out)
}

var auditAttacks = []string{
	"siblings: /proc/*/environ from bash", "siblings: ps eww from bash", "siblings: /proc/*/environ from an MCP server",
	"siblings: ps eww from an MCP server", "storage: read vault.env", "storage: the keyring over the bus", "storage: the ssh agent",
	"storage: a key in hush's session keyring", "storage: write config.toml", "storage: write the trust file",
	"storage: rewrite hush's executable", "storage: add a login key to ~/.ssh", "storage: hush vault reveal in a pty",
	"dotenv: .env", "dotenv: .env.local", "dotenv: sub/.env", "dotenv: .envrc", renameRow,
	"memory: /proc/<hush>/mem", "memory: process_vm_readv", "linger: a detached child after the call",
	"world: the X server socket and ~/.Xauthority", "world: ssh ControlMaster sockets", "world: ~/.ssh/agent.sock, no SSH_AUTH_SOCK",
	"world: a root daemon's socket under /run", "world: another profile's data dir", "world: a kernel key read by serial",
	"world: plant ~/.local/bin/<MCP command>",
	"network: a granted secret posted to an unbound host", "network: the user's loopback service, ungranted",
	"network: a program that ignores the proxy", "network: a squatter on a down collector's port gets hush's header",
}

// redCells lists every attack cell of the columns with the memory rows
// left out where memOnlyRoot says an unprivileged tool cannot read a
// non-dumpable hush's memory even without the sandbox.
func redCells(cols []string, memRed map[string]bool) []string {
	var out []string
	for _, a := range auditAttacks {
		for _, col := range cols {
			if strings.HasPrefix(a, "memory:") && !memRed[col] {
				continue
			}
			out = append(out, a+"/"+col+"=LEAK")
		}
	}
	sort.Strings(out)
	return out
}

const renameRow = "dotenv: .env replaced by rename under a running background process"

// renameLeaksFor is what the rename row must say for an unprivileged hush
// here: where nobody may not open the FUSE device (a /dev/fuse of mode
// 0600, as on this machine class), its .env files are bind masks, which
// the audit's rename saves detach — a LEAK the audit must report, naming
// the device; where nobody may, nothing.
func renameLeaksFor(t *testing.T, col string) []string {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat("/dev/fuse", &st); err == nil && st.Mode&0o006 == 0o006 {
		return nil
	}
	return []string{renameRow + "/" + col + "=LEAK"}
}

// TestAuditAttacksPassWithTheSandbox: as root, every attack of the hostile
// turn — as root and unprivileged — finds nothing, and each positive
// control found its marker (a failed control is FAIL, not pass); but for
// the rename row of an unprivileged hush that may open no FUSE device.
func TestAuditAttacksPassWithTheSandbox(t *testing.T) {
	t.Parallel()
	rep, code, out := runAuditAs(t, nil)
	want := renameLeaksFor(t, "unprivileged")
	wantCode := 0
	if len(want) > 0 {
		wantCode = 1
	}
	if got := rep.notPass(); code != wantCode || strings.Join(got, "\n") != strings.Join(want, "\n") || rep.NotChecked != 0 {
		t.Fatalf("exit %d, cells not passing:\n  %s\nwant:\n  %s\nverdict %q\n%s", code, strings.Join(got, "\n  "), strings.Join(want, "\n  "), rep.Verdict, out)
	}
	if len(want) > 0 && !strings.Contains(out, "FUSE device") {
		t.Errorf("the rename row's LEAK does not name the FUSE device:\n%s", out)
	}
}

// TestAuditSandboxOffTurnsTheAttackRowsRed: `--sandbox off` writes
// [unsafe] no_sandbox into the audit's own config, and exactly these cells
// go red: every attack as root and unprivileged, except reading a
// non-dumpable hush's memory as an unprivileged user, which the kernel
// refuses without a sandbox. The first matrix does not change.
func TestAuditSandboxOffTurnsTheAttackRowsRed(t *testing.T) {
	t.Parallel()
	rep, code, out := runAuditAs(t, nil, "--sandbox", "off")
	want := redCells([]string{"as root", "unprivileged"}, map[string]bool{"as root": true})
	if got := rep.notPass(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("cells not passing:\n  %s\nwant:\n  %s\n%s", strings.Join(got, "\n  "), strings.Join(want, "\n  "), out)
	}
	if code != 1 || !strings.HasPrefix(rep.Verdict, "LEAK") || rep.Leaks != len(want) {
		t.Errorf("exit %d, %d leaks (want %d), verdict %q", code, rep.Leaks, len(want), rep.Verdict)
	}
	for _, row := range rep.Rows {
		for v, c := range row.Cells {
			if c.Status == "LEAK" || c.Status == "FAIL" {
				t.Errorf("--sandbox off turned %s/%s %s: only the attack rows may change\n%s", row.Path, v, c.Status, out)
			}
		}
	}
}

// TestAuditAttacksAsAnUnprivilegedAuditor: `hush audit` run by an ordinary
// user checks the unprivileged column and says the root column was not
// checked, in the cells and in the verdict, never as a pass; with
// --sandbox off that column goes red.
func TestAuditAttacksAsAnUnprivilegedAuditor(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Fatal("this test drops to nobody itself and needs root")
	}
	cred := &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}}
	t.Run("sandbox on", func(t *testing.T) {
		t.Parallel()
		rep, code, _ := runAuditAs(t, cred)
		for _, row := range rep.Attacks {
			if c := row.Cells["as root"]; c.Status != "not checked" || !strings.Contains(c.Detail, "runs as uid 65534") {
				t.Errorf("%s / as root: %s %q, want not checked", row.Attack, c.Status, c.Detail)
			}
			want := "pass"
			if row.Attack == renameRow && len(renameLeaksFor(t, "unprivileged")) > 0 {
				want = "LEAK"
			}
			if c := row.Cells["unprivileged"]; c.Status != want {
				t.Errorf("%s / unprivileged: %s %q, want %s", row.Attack, c.Status, c.Detail, want)
			}
		}
		wantCode := 0
		if len(renameLeaksFor(t, "unprivileged")) > 0 {
			wantCode = 1
		}
		verdict := "not checked"
		if wantCode == 1 {
			verdict = "LEAK"
		}
		if code != wantCode || !strings.Contains(rep.Verdict, verdict) || rep.NotChecked != len(auditAttacks) {
			t.Errorf("exit %d, %d not checked, verdict %q", code, rep.NotChecked, rep.Verdict)
		}
	})
	t.Run("sandbox off", func(t *testing.T) {
		t.Parallel()
		rep, code, _ := runAuditAs(t, cred, "--sandbox", "off")
		var want []string
		for _, a := range auditAttacks {
			want = append(want, a+"/as root=not checked")
		}
		want = append(want, redCells([]string{"unprivileged"}, nil)...)
		sort.Strings(want)
		if got := rep.notPass(); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("cells not passing:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
		if code != 1 {
			t.Errorf("exit %d", code)
		}
	})
}
