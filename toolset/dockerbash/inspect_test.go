package dockerbash_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hushcli/hush/tools"
)

var hostnameLine = regexp.MustCompile(`(?m)^host=([0-9a-f]{12})$`)

// TestInspectShowsNoGrantedSecret: while a call runs, the engine's own view
// of the container — the official client's inspect, raw bytes as the API
// sends them, which is what `docker inspect` prints — holds neither the
// granted secret nor a set value that references one, in Config.Env or
// anywhere else. The positive control: the script sees the granted secret,
// a ${NAME} set value and a literal value full of shell metacharacters,
// each byte for byte.
func TestInspectShowsNoGrantedSecret(t *testing.T) {
	t.Parallel()
	ambient := engineAmbient(t)
	granted, configured := canary("granted"), canary("configured")
	// Quotes, a newline, $, a backslash, a backtick and a trailing newline:
	// each would break a naive way of passing the value.
	odd := "it's \"quoted\"\n$HOME \\ `id` 'x'\n"
	vault := mapVault{"GRANTED": granted, "CONFIGURED": configured}
	tc, out := newToolContext(t, ambient, vault, vault)
	tc.Policy = tools.Policy{Inherit: tools.InheritNone, Set: map[string]string{"FROM_SET": "${CONFIGURED}", "MODE": "ci"}}
	release := filepath.Join(tc.Dir, "release")
	script := `echo "host=$(hostname)"; while [ ! -e /app/release ]; do sleep 0.05; done; ` +
		`printf %s "$POS" | sha256sum; printf %s "$FROM_SET" | sha256sum; printf %s "$ODD" | od -An -tx1 -v | tr -d ' \n'; echo; echo "mode=$MODE"`
	type result struct {
		err    error
		status string
	}
	done := make(chan result, 1)
	go func() {
		res, err := call(t, context.Background(), newTool(t), tc,
			map[string]any{"script": script, "env": map[string]string{"POS": "${GRANTED}", "ODD": odd}})
		done <- result{err, res.Status}
	}()
	var id string
	deadline := time.Now().Add(60 * time.Second)
	for id == "" && time.Now().Before(deadline) {
		if m := hostnameLine.FindStringSubmatch(out.String()); m != nil {
			id = m[1]
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if id == "" {
		_ = os.WriteFile(release, nil, 0o644)
		t.Fatalf("the container never reported its id; output %q", out.String())
	}
	cli, err := officialClient(ambient)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	info, raw, err := cli.ContainerInspectWithRaw(context.Background(), id, true)
	if err != nil {
		_ = os.WriteFile(release, nil, 0o644)
		t.Fatalf("inspect the running container: %v", err)
	}
	if !info.State.Running {
		t.Errorf("the container was not running when inspected (%s): the check proves nothing", info.State.Status)
	}
	for name, v := range map[string]string{"granted": granted, "configured": configured} {
		if bytes.Contains(raw, []byte(v)) {
			t.Errorf("the engine's inspect answer holds the %s secret", name)
		}
		for _, e := range info.Config.Env {
			if strings.Contains(e, v) {
				t.Errorf("Config.Env holds the %s secret in %s=…", name, strings.SplitN(e, "=", 2)[0])
			}
		}
	}
	for _, e := range info.Config.Env {
		if name, _, _ := strings.Cut(e, "="); name == "POS" || name == "FROM_SET" || name == "ODD" || name == "MODE" {
			t.Errorf("Config.Env carries the call's variable %s", name)
		}
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.status != "exit code 0" {
		t.Fatalf("call: %v, status %q; output %q", r.err, r.status, out.String())
	}
	want := "host=" + id + "\n" + sha(granted) + "  -\n" + sha(configured) + "  -\n" + hex.EncodeToString([]byte(odd)) + "\nmode=ci\n"
	if out.String() != want {
		t.Fatalf("the script saw\n%q\nwant\n%q", out.String(), want)
	}
}

// TestEnvironmentNameAContainerCannotHoldIsRefused: a name sh cannot
// export is refused in one sentence before any container exists.
func TestEnvironmentNameAContainerCannotHoldIsRefused(t *testing.T) {
	t.Parallel()
	ambient := engineAmbient(t)
	for _, name := range []string{"A-B", "1X", "__hush_s"} {
		tc, out := newToolContext(t, ambient, mapVault{}, nil)
		_, err := call(t, context.Background(), newTool(t), tc, map[string]any{"script": "echo ran", "env": map[string]string{name: "v"}})
		if err == nil || !strings.Contains(err.Error(), "cannot be set in a container") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err %v", name, err)
		}
		if out.String() != "" {
			t.Errorf("%s: the script ran: %q", name, out.String())
		}
	}
}

// TestScriptStdinIsAtItsEnd: the script's stdin is empty, as it was before
// the environment travelled on it: a read gets nothing and does not hang.
func TestScriptStdinIsAtItsEnd(t *testing.T) {
	t.Parallel()
	ambient := engineAmbient(t)
	tc, out := newToolContext(t, ambient, mapVault{"S": canary("s")}, nil)
	res, err := call(t, context.Background(), newTool(t), tc, map[string]any{"script": `if read -r x; then echo "read=[$x]"; else echo "eof=[$x]"; fi; wc -c`, "env": map[string]string{"A": "${S}"}})
	if err != nil || res.Status != "exit code 0" {
		t.Fatalf("%v %+v", err, res)
	}
	if got := strings.Join(strings.Fields(out.String()), " "); got != "eof=[] 0" {
		t.Fatalf("stdin held %q", out.String())
	}
}
