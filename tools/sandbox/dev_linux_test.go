package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// runDirect runs bash -c script in a sandbox of cfg, started as tools.Command
// starts one (Prepare, then Direct), and returns its combined output.
func runDirect(t *testing.T, cfg *Config, dir, script string) string {
	t.Helper()
	return runEnv(t, cfg, dir, script, nil)
}

// runEnv is runDirect with env (nil: a PATH and HOME=dir).
func runEnv(t *testing.T, cfg *Config, dir, script string, env []string) string {
	t.Helper()
	cmd := exec.Command("/bin/bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = env
	if env == nil {
		cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + dir}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	var d *Direct
	if cfg != nil {
		var err error
		if d, err = Prepare(context.Background(), cmd, "/bin/bash", cfg); err != nil {
			t.Fatal(err)
		}
	}
	if d == nil {
		if err := cmd.Run(); err != nil {
			t.Logf("run: %v", err)
		}
		return out.String()
	}
	if err := d.Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := d.Wait(cmd); err != nil {
		t.Logf("run: %v", err)
	}
	return out.String()
}

// TestRootDevBuiltInTheSandbox: where the kernel refuses hush's template,
// root's sandbox builds its /dev itself, and that /dev holds no disk either
// (a loop device over a file holding a canary), while null, zero and a
// pty work (the positive control); unsandboxed root reads the disk.
func TestRootDevBuiltInTheSandbox(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("root's /dev only")
	}
	if !Status().Namespaces {
		t.Skip(Status().Reason)
	}
	dir := t.TempDir()
	canary := canary(t)
	img := filepath.Join(dir, "disk.img")
	if err := os.WriteFile(img, bytes.Repeat([]byte(canary+"\n"), 1024), 0o600); err != nil {
		t.Fatal(err)
	}
	losetup, err := exec.Command("losetup", "-f", "--show", img).CombinedOutput()
	if err != nil {
		t.Skipf("losetup: %v %s", err, losetup)
	}
	disk := strings.TrimSpace(string(losetup))
	defer exec.Command("losetup", "-d", disk).Run()
	script := `head -c 64 ` + disk + ` 2>&1; echo
printf 'null:'; echo x > /dev/null && echo ok; printf 'zero:'; head -c 4 /dev/zero | xxd -p; python3 -c 'import os; m, s = os.openpty(); print("pty:ok")'`
	sandboxNoTemplate.Store(true)
	out := runDirect(t, &Config{}, dir, script)
	sandboxNoTemplate.Store(false)
	if strings.Contains(out, canary) {
		t.Errorf("root in the sandbox (/dev built there) read the disk %s raw:\n%s", disk, out)
	}
	for _, want := range []string{"null:ok", "zero:00000000", "pty:ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("positive control: %q missing from the sandbox's /dev:\n%s", want, out)
		}
	}
	if out := runDirect(t, nil, dir, `head -c 64 `+disk); !strings.Contains(out, canary) {
		t.Fatalf("control: unsandboxed root did not read %s:\n%s", disk, out)
	}
}

// canary is a fresh value no test plants twice.
func canary(t testing.TB) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "CANARY" + hex.EncodeToString(b)
}
