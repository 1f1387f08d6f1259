package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorldHoldsOnlyTheView starts a real tool in a root built from a
// policy and attacks what is left out of it, reading raw bytes; the
// positive controls show the same reads work for what is in it, and that
// the canaries are there on the host.
func TestWorldHoldsOnlyTheView(t *testing.T) {
	if !Status().Namespaces {
		t.Skip(Status().Reason)
	}
	w := newPolicyWorld(t)
	c := canary(t)
	for _, f := range []string{w.home + "/.aws/credentials", w.data + "/vault.env", w.project + "/.env", w.project + "/sub/.env.local", w.home + "/.netrc"} {
		if err := os.WriteFile(f, []byte(c+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ok := canary(t)
	if err := os.WriteFile(w.home+"/.gitconfig", []byte("[user]\n\tname = "+ok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := w.policy(t, nil)
	m, err := NewMaskSet(MaskOptions{Home: w.home, DataDir: w.data, ConfigDir: w.config, Project: w.project})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Policy: p, Masks: m, Constructed: true}
	script := `cd ` + w.project + `/sub
for f in ` + w.home + `/.aws/credentials ` + w.data + `/vault.env ` + w.project + `/.env ` + w.project + `/sub/.env.local ` + w.home + `/.netrc ../.env .env.local; do xxd -p "$f" 2>&1 | tr -d '\n'; echo; done
ls -a ` + w.home + ` ` + w.home + `/.config | tr '\n' ' '; echo
echo "home:"; cat ` + w.home + `/.gitconfig
echo written > ` + w.project + `/out.txt && echo write:ok
echo x > ` + w.home + `/.local/bin/planted 2>&1 || echo plant:refused
echo x > /usr/planted 2>&1 || echo usr:refused
ls /proc | grep -c '^[0-9]'; ls /dev | tr '\n' ' '; echo
pwd`
	out := runDirect(t, cfg, w.project, script)
	if strings.Contains(out, c) || strings.Contains(out, hexOf(c)) {
		t.Errorf("the tool read a canary outside its world:\n%s", out)
	}
	for _, want := range []string{ok, "write:ok", "plant:refused", "usr:refused", w.project + "/sub\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("positive control %q missing:\n%s", want, out)
		}
	}
	if b, err := os.ReadFile(w.project + "/out.txt"); err != nil || string(b) != "written\n" {
		t.Errorf("the project write did not reach the host: %q %v", b, err)
	}
	for _, bad := range []string{".aws", ".netrc", ".ssh", "sda", "nvme"} {
		if strings.Contains(out, " "+bad+" ") {
			t.Errorf("%s is in the tool's world:\n%s", bad, out)
		}
	}
	// The control: the same script without the sandbox reads every canary.
	if out := runDirect(t, nil, w.project, script); !strings.Contains(out, hexOf(c)) {
		t.Fatalf("control: the canaries are not readable outside:\n%s", out)
	}
	_ = filepath.Join
}

func hexOf(s string) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 0, 2*len(s))
	for i := 0; i < len(s); i++ {
		b = append(b, digits[s[i]>>4], digits[s[i]&15])
	}
	return string(b)
}

// TestWorldPlanNeedsOnlyTheProjectMasks: a constructed world's plan is the
// same from the project's masks alone (projectMasks, what Prepare reads)
// as from every mask — hush's dirs, credential stores, a bus socket — with
// and without [sandbox] allow re-opening a .env, and it still hides the
// project's .env family one by one.
func TestWorldPlanNeedsOnlyTheProjectMasks(t *testing.T) {
	t.Parallel()
	w := newMaskWorld(t)
	policy, err := NewPolicy(PolicyOptions{Dir: w.project, Home: w.home, PathEnv: "/usr/bin", HushDirs: []string{w.data, w.config}})
	if err != nil {
		t.Fatal(err)
	}
	view := policy.View()
	for _, allow := range [][]string{nil, {w.project + "/.envrc"}} {
		o := w.opts()
		o.Allow = allow
		s, err := NewMaskSet(o)
		if err != nil {
			t.Fatal(err)
		}
		all, err := s.Masks()
		if err != nil {
			t.Fatal(err)
		}
		project, err := s.projectMasks()
		if err != nil {
			t.Fatal(err)
		}
		if len(project) >= len(all) {
			t.Fatalf("the project's masks (%d) are not fewer than all (%d)", len(project), len(all))
		}
		want, got := planWorld("W", view, all, nil), planWorld("W", view, project, nil)
		if string(got) != string(want) {
			t.Errorf("allow %v: the plan from the project's masks differs:\n%q\nwant:\n%q", allow, got, want)
		}
		for _, f := range []string{"/.env", "/sub/.env.local"} {
			if !strings.Contains(string(got), "h"+w.project+f+"\x00") {
				t.Errorf("allow %v: %s is not hidden in the plan %q", allow, f, got)
			}
		}
		if hidden := strings.Contains(string(got), "h"+w.project+"/.envrc\x00"); hidden != (allow == nil) {
			t.Errorf("allow %v: .envrc hidden = %v", allow, hidden)
		}
		if (planEnvLayer(view, project) == nil) != (planEnvLayer(view, all) == nil) {
			t.Errorf("allow %v: the .env layer's plan differs", allow)
		}
	}
}

// TestWorldTemplateFollowsTheHost: bash calls start in copies of one
// world template (template_linux.go). A .env saved by rename on the host
// between two calls, and a .env made since, stay hidden from the next
// call (raw bytes); what one call tries to leave in the shared root or
// /dev for the next is refused, and what it writes in its private home
// the next does not see; the project and the home still take writes. The
// control reads the new values outside the sandbox.
func TestWorldTemplateFollowsTheHost(t *testing.T) {
	if !Status().Namespaces {
		t.Skip(Status().Reason)
	}
	w := newPolicyWorld(t)
	c1, c2, c3 := canary(t), canary(t), canary(t)
	if err := os.WriteFile(w.project+"/.env", []byte(c1+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := NewMaskSet(MaskOptions{Home: w.home, DataDir: w.data, ConfigDir: w.config, Project: w.project})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Policy: w.policy(t, nil), Masks: m, Constructed: true}
	read := `cd ` + w.project + `; for f in .env sub2/.env; do xxd -p "$f" 2>/dev/null | tr -d '\n'; echo; done; echo local-bytes:$(cat sub/.env.local | wc -c)`
	out := runDirect(t, cfg, w.project, read+`
echo x > /planted 2>/dev/null || echo root:refused
rm -f /dev/stdout 2>/dev/null; ln -s /tmp/x /dev/stdout2 2>/dev/null || echo dev:refused
echo kept > `+w.home+`/note && echo home:ok
echo kept > `+w.project+`/note && echo project:ok`)
	for _, want := range []string{"root:refused", "dev:refused", "home:ok", "project:ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("first call: %q missing:\n%s", want, out)
		}
	}
	if strings.Contains(out, hexOf(c1)) {
		t.Fatalf("first call read the .env:\n%s", out)
	}
	spawnLock.Lock()
	templated := len(worldTemplates.m) > 0 && !worldTemplates.off
	spawnLock.Unlock()
	if !templated {
		t.Fatal("the call did not start from a world template")
	}

	// An editor's save: a new file renamed over the old one (the kernel
	// detaches the mounts on the old one, the template's mask too); then
	// a .env in a directory made since.
	if err := os.WriteFile(w.project+"/.env.swp", []byte(c2+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(w.project+"/.env.swp", w.project+"/.env"); err != nil {
		t.Fatal(err)
	}
	out = runDirect(t, cfg, w.project, read+`; ls -l /dev/stdout; ls / | tr '\n' ' '; cat `+w.home+`/note 2>/dev/null || echo home:fresh`)
	if !strings.Contains(out, "home:fresh") {
		t.Errorf("the next call read what the first wrote in its private home:\n%s", out)
	}
	if !strings.Contains(out, "/dev/stdout -> /proc/self/fd/1") || strings.Contains(out, "planted") {
		t.Errorf("the first call left something in / or /dev:\n%s", out)
	}
	if err := os.MkdirAll(w.project+"/sub2", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w.project+"/sub2/.env", []byte(c3+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out += runDirect(t, cfg, w.project, read)
	for _, c := range []string{c1, c2, c3} {
		if strings.Contains(out, hexOf(c)) || strings.Contains(out, c) {
			t.Errorf("a later call read a .env saved or made on the host since:\n%s", out)
		}
	}
	if out := runDirect(t, nil, w.project, read); !strings.Contains(out, hexOf(c2)) || !strings.Contains(out, hexOf(c3)) {
		t.Fatalf("control: the new values are not readable outside:\n%s", out)
	}
}

// TestWorldTemplateNetworkIsTheCallsOwn: a proxied call through a world
// template still gets a network of its own: its only listener is the
// egress proxy's, whatever the call before listened on; and a root tool
// binds a port below 1024 there.
func TestWorldTemplateNetworkIsTheCallsOwn(t *testing.T) {
	if !Status().Namespaces {
		t.Skip(Status().Reason)
	}
	w := newPolicyWorld(t)
	m, err := NewMaskSet(MaskOptions{Home: w.home, DataDir: w.data, ConfigDir: w.config, Project: w.project})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Policy: w.policy(t, nil), Masks: m, Constructed: true, Proxy: true}
	script := `echo ns:$(readlink /proc/self/ns/net)
echo listening:$(tail -n +2 /proc/net/tcp | awk '$4 == "0A" {print $2}' | tr '\n' ' ')
python3 -c 'import socket,os
s=socket.socket(); s.bind(("127.0.0.1",4401)); s.listen(); print("bind:ok")
if os.getuid() == 0:
    r=socket.socket(); r.bind(("127.0.0.1",80)); print("bind80:ok")' 2>&1`
	for i := 0; i < 4; i++ {
		out := runDirect(t, cfg, w.project, script)
		if !strings.Contains(out, "listening:0100007F:03FF\n") {
			t.Errorf("call %d: listeners other than the proxy's (127.0.0.1:1023):\n%s", i, out)
		}
		if !strings.Contains(out, "bind:ok") || os.Getuid() == 0 && !strings.Contains(out, "bind80:ok") {
			t.Errorf("call %d: the tool could not bind in its network:\n%s", i, out)
		}
		if !strings.HasPrefix(out, "ns:net:[") {
			t.Errorf("call %d: no network of its own:\n%s", i, out)
		}
	}
}
