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
