package tests

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSecretOnAServersCommandLineIsRefused: a user pasted a token into an
// MCP server's args in config.toml, and the same value is in the vault.
// (A ${NAME} reference in args is refused earlier, by name, when the config
// is read; a literal value is caught only where the command line is built.)
// The server would carry the value in argv, which every process of the user
// reads in /proc/PID/cmdline. hush refuses to start it and says why without
// the value; a scan of every process's raw cmdline
// while the turn runs never finds the value. The control, a second server
// whose args hold a plain marker, does start and hangs in its handshake
// long enough for the same scan to find the marker: the channel works.
func TestSecretOnAServersCommandLineIsRefused(t *testing.T) {
	t.Parallel()
	fs := faultServerBin(t)
	w := newWorld(t)
	marker := canary("argv-control")
	model := newFakeModel(t, step{text: "Nothing to do."})
	w.config(fmt.Sprintf(`
[model]
provider = "openai"
base_url = %q
model = "fake"

[mcp.leaky]
command = %q
args = ["-start=hang", %q]
start_timeout = "3s"

[mcp.control]
command = %q
args = ["-start=hang", %q]
start_timeout = "3s"
`, model.URL(), fs, w.granted, fs, marker))
	cmd := exec.Command(hushBin, "run", "--yes", "hello")
	cmd.Env, cmd.Dir = w.env, w.project
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	secret, control := []byte(w.granted), []byte(marker)
	var sawSecret, sawControl []string
	scan := func() {
		dirs, _ := filepath.Glob("/proc/[0-9]*")
		for _, d := range dirs {
			cmdline, _ := os.ReadFile(filepath.Join(d, "cmdline"))
			if bytes.Contains(cmdline, secret) {
				sawSecret = append(sawSecret, filepath.Base(d))
			}
			if bytes.Contains(cmdline, control) {
				sawControl = append(sawControl, filepath.Base(d))
			}
		}
	}
	timeout := time.After(60 * time.Second)
wait:
	for {
		scan()
		select {
		case <-done:
			break wait
		case <-timeout:
			_ = cmd.Process.Kill()
			t.Fatalf("hush run did not end in 60 s:\n%s", out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if len(sawSecret) > 0 {
		t.Errorf("processes %v held the granted secret in their command line", sawSecret)
	}
	if len(sawControl) == 0 {
		t.Errorf("control: no process held the control server's marker in its command line; the scan sees nothing:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "a secret value would appear on the command line") {
		t.Errorf("the output does not say why the server was refused:\n%s", out.String())
	}
	w.assertNoCanary("run output", out.String())
}
