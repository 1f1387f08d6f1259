package tools

import (
	"bytes"
	"context"
	"testing"
)

func TestSandboxSmoke(t *testing.T) {
	st := SandboxStatus()
	t.Logf("%+v", st)
	var out bytes.Buffer
	cmd, err := Command(context.Background(), Spec{Path: "bash", Args: []string{"-c", "id; echo pid=$$ ppid=$PPID; ls /proc | head -5; cat /proc/mounts | tail -3; cat /etc/hostname; ip a 2>&1 | head -3"}, Dir: "/tmp", Env: Env{{Name: "PATH", Value: "/usr/bin:/bin:/usr/sbin:/sbin"}}, Stdout: &out, Stderr: &out, Sandbox: &Sandbox{NoNetwork: true}})
	if err != nil {
		t.Fatal(err)
	}
	err = cmd.Run()
	t.Logf("err=%v\n%s", err, out.String())
}
