package sandbox

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maskWorld is a home, hush's dirs, a runtime dir and a project, all under
// one temporary root.
type maskWorld struct {
	root, home, data, config, run, project string
}

func newMaskWorld(t *testing.T) maskWorld {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := maskWorld{root: root, home: root + "/home", data: root + "/home/.local/share/hush",
		config: root + "/home/.config/hush", run: root + "/run", project: root + "/home/proj"}
	files := map[string]string{
		w.data + "/vault.env":               "CANARY=1",
		w.config + "/config.toml":           "",
		w.home + "/.aws/credentials":        "[default]",
		w.home + "/.netrc":                  "machine x",
		w.home + "/.cargo/credentials.toml": "t",
		w.home + "/.ssh/id_ed25519":         "PRIVATE",
		w.home + "/.ssh/id_ed25519.pub":     "PUBLIC",
		w.home + "/.ssh/known_hosts":        "hosts",
		w.home + "/.ssh/work_key":           "PRIVATE",
		w.home + "/notes.txt":               "plain",
		w.run + "/keyring/control":          "",
		w.project + "/.env":                 "A=1",
		w.project + "/.envrc":               "export B=2",
		w.project + "/sub/.env.local":       "C=3",
		w.project + "/sub/app.env":          "not masked",
		w.project + "/README":               "readme",
	}
	for p, v := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A real socket for the bus, and a link from the project into the vault.
	l, err := net.Listen("unix", w.run+"/bus")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	if err := os.Symlink(w.data+"/vault.env", w.project+"/vault-link"); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w maskWorld) opts() MaskOptions {
	return MaskOptions{Home: w.home, ConfigDir: w.config, DataDir: w.data, RuntimeDir: w.run,
		BusAddress: "unix:path=" + w.run + "/bus,guid=x", DockerHost: "unix://" + w.root + "/docker.sock", Project: w.project}
}

func planString(w maskWorld, masks []Mask) string {
	var b []string
	for _, m := range masks {
		if !strings.HasPrefix(m.Path, w.root+"/") {
			continue // the machine's own Docker socket
		}
		kind := "file"
		if m.Dir {
			kind = "dir"
		}
		if m.ReadOnly {
			kind = "ro " + kind
		}
		b = append(b, kind+" "+strings.Replace(m.Path, w.root, "$R", 1))
	}
	return strings.Join(b, "\n")
}

func TestMaskPlan(t *testing.T) {
	t.Parallel()
	w := newMaskWorld(t)
	s, err := NewMaskSet(w.opts())
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Masks()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"dir $R/home/.aws",
		"file $R/home/.cargo/credentials.toml",
		"dir $R/home/.config/hush",
		"dir $R/home/.local/share/hush",
		"file $R/home/.netrc",
		"ro dir $R/home/.ssh",
		"file $R/home/.ssh/id_ed25519",
		"file $R/home/.ssh/work_key",
		"file $R/home/proj/.env",
		"file $R/home/proj/.envrc",
		"file $R/home/proj/sub/.env.local",
		"file $R/run/bus",
		"dir $R/run/keyring",
	}, "\n")
	if g := planString(w, got); g != want {
		t.Errorf("plan:\n%s\nwant:\n%s", g, want)
	}
	for _, m := range got {
		if m.Reason == "" {
			t.Errorf("%s has no reason", m.Path)
		}
	}

	// A .env made after the walk is in the next plan.
	if err := os.WriteFile(w.project+"/sub/.env.new", []byte("D=4"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err = s.Masks()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(planString(w, got), "file $R/home/proj/sub/.env.new") {
		t.Errorf("a new .env is not in the next plan:\n%s", planString(w, got))
	}
}

func TestMaskPlanDockerSocketUnlessAllowed(t *testing.T) {
	t.Parallel()
	w := newMaskWorld(t)
	l, err := net.Listen("unix", w.root+"/docker.sock")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, docker := range []bool{false, true} {
		o := w.opts()
		o.Docker = docker
		s, err := NewMaskSet(o)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := s.Masks()
		has := strings.Contains(planString(w, got), "file $R/docker.sock")
		if has == docker {
			t.Errorf("docker = %v: socket masked = %v", docker, has)
		}
		if r, ok := s.Masked(w.root + "/docker.sock"); ok == docker {
			t.Errorf("docker = %v: Masked = %v (%s)", docker, ok, r)
		}
	}
}

func TestMasked(t *testing.T) {
	t.Parallel()
	w := newMaskWorld(t)
	o := w.opts()
	o.Hide = []string{"~/notes.txt"}
	s, err := NewMaskSet(o)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path, reason string
	}{
		{w.data + "/vault.env", ReasonDataDir},
		{w.data + "/not-yet-made/x", ReasonDataDir},
		{w.config + "/config.toml", ReasonConfigDir},
		{w.config + "/trusted-projects.json", ReasonConfigDir},
		{w.project + "/vault-link", ReasonDataDir}, // the symlink is resolved
		{w.project + "/.env", ReasonDotEnv},
		{w.project + "/sub/.env.local", ReasonDotEnv},
		{w.project + "/new/.env.later", ReasonDotEnv}, // by name, never walked
		{w.project + "/.env.d/x", ReasonDotEnv},
		{w.home + "/.aws/credentials", ReasonCredential},
		{w.home + "/.kube/config", ReasonCredential}, // does not exist yet
		{w.home + "/.cargo/credentials", ReasonCredential},
		{w.home + "/.ssh/id_ed25519", ReasonSSHKey},
		{w.home + "/.ssh/id_rsa", ReasonSSHKey},
		{w.run + "/bus", ReasonBus},
		{w.run + "/keyring/control", ReasonKeyring},
		{w.home + "/notes.txt", ReasonHide},
		{w.root + "/docker.sock", ReasonDocker},
		// Positive controls: these stay readable.
		{w.project + "/README", ""},
		{w.project + "/sub/app.env", ""},
		{w.home + "/.ssh/id_ed25519.pub", ""},
		{w.home + "/.ssh/known_hosts", ""},
		{w.home + "/.config/other/x", ""},
	}
	for _, c := range cases {
		r, ok := s.Masked(c.path)
		if ok != (c.reason != "") || r != c.reason {
			t.Errorf("Masked(%s) = %q, %v; want %q", strings.Replace(c.path, w.root, "$R", 1), r, ok, c.reason)
		}
	}
}

func TestMaskAllow(t *testing.T) {
	t.Parallel()
	w := newMaskWorld(t)
	o := w.opts()
	o.Allow = []string{"~/.ssh", w.home + "/.aws"}
	s, err := NewMaskSet(o)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := s.Masks()
	plan := planString(w, got)
	for _, gone := range []string{".ssh/id_ed25519", ".ssh/work_key", ".aws"} {
		if strings.Contains(plan, gone) {
			t.Errorf("%s is still masked after allow:\n%s", gone, plan)
		}
	}
	if !strings.Contains(plan, ".netrc") {
		t.Errorf("allow re-opened more than it names:\n%s", plan)
	}
	var reopened []Mask
	for _, m := range s.Reopened() {
		if strings.HasPrefix(m.Path, w.root+"/") {
			reopened = append(reopened, m) // not the machine's own ssh agents
		}
	}
	if len(reopened) != 3 {
		t.Errorf("reopened = %v, want the two keys and ~/.aws", reopened)
	}
	if _, ok := s.Masked(w.home + "/.ssh/id_ed25519"); ok {
		t.Error("an allowed key is still Masked")
	}

	for _, bad := range []string{"~/.local/share/hush", "~/.local", "~/.config/hush/config.toml", "/"} {
		o := w.opts()
		o.Allow = []string{bad}
		if _, err := NewMaskSet(o); !errors.Is(err, ErrAllowHushDir) {
			t.Errorf("allow %q: err = %v, want ErrAllowHushDir", bad, err)
		}
	}
	o = w.opts()
	o.Allow = []string{"~other/x"}
	if _, err := NewMaskSet(o); err == nil {
		t.Error("allow ~other/x was accepted")
	}
}

// TestMaskReadOnly: hush's executable and ~/.ssh are read-only masks —
// in the plan as such, with the directories above them pinned; refused to
// the file tools' writes (even a file not made yet) but not their reads;
// kept by [sandbox] allow (which re-opens the private keys only) and
// replaced by a hide of the same path.
func TestMaskReadOnly(t *testing.T) {
	t.Parallel()
	w := newMaskWorld(t)
	exe := w.home + "/.local/bin/hush"
	if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, []byte("ELF"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Through a symlink, as a PATH entry often is: the mask is the target.
	if err := os.Symlink(exe, w.root+"/hush-link"); err != nil {
		t.Fatal(err)
	}
	opts := w.opts()
	opts.Executable = w.root + "/hush-link"
	s, got := maskPlan(t, opts)
	plan := planString(w, got)
	for _, want := range []string{"ro file $R/home/.local/bin/hush", "ro dir $R/home/.ssh\nfile $R/home/.ssh/id_ed25519"} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan lacks %q:\n%s", want, plan)
		}
	}
	pb := string(planBytes("", got))
	for _, want := range []string{"\x00P" + w.home + "/.local/bin\x00", "\x00P" + w.home + "\x00", "\x00R" + exe + "\x00", "\x00R" + w.home + "/.ssh\x00"} {
		if !strings.Contains(pb, want) {
			t.Errorf("the init's plan lacks %q: %q", want, pb)
		}
	}
	for _, p := range []string{exe, w.root + "/hush-link", w.home + "/.ssh/authorized_keys", w.home + "/.ssh/authorized_keys2"} {
		if r, masked := s.Masked(p); masked {
			t.Errorf("Masked(%s): read refused (%s); it must stay readable", p, r)
		}
		if r, masked := s.WriteMasked(p); !masked || (r != ReasonHushExe && r != ReasonSSHLogin) {
			t.Errorf("WriteMasked(%s) = %q, %v; want refused as read-only", p, r, masked)
		}
	}
	// rc, environment: named like a key, so hidden (and so unwritable too).
	for _, p := range []string{w.home + "/.ssh/id_ed25519", w.home + "/.ssh/rc", w.home + "/.ssh/environment"} {
		if r, masked := s.WriteMasked(p); !masked || r != ReasonSSHKey {
			t.Errorf("WriteMasked(%s) = %q, %v; want it hidden", p, r, masked)
		}
	}
	if _, masked := s.WriteMasked(w.home + "/.local/bin/other"); masked {
		t.Error("WriteMasked refuses a file beside hush's executable: only the executable is read-only")
	}

	// allow = ["~/.ssh"] re-opens the keys, not writing.
	opts.Allow = []string{"~/.ssh"}
	s, got = maskPlan(t, opts)
	if plan := planString(w, got); !strings.Contains(plan, "ro dir $R/home/.ssh\n") || strings.Contains(plan, "id_ed25519") {
		t.Errorf("with allow = [\"~/.ssh\"], want ~/.ssh read-only and its keys open:\n%s", plan)
	}
	if _, masked := s.WriteMasked(w.home + "/.ssh/authorized_keys"); !masked {
		t.Error("allow = [\"~/.ssh\"] made authorized_keys writable to the file tools")
	}
	// hide = ["~/.ssh"] hides it whole instead.
	opts.Allow, opts.Hide = nil, []string{"~/.ssh"}
	_, got = maskPlan(t, opts)
	if plan := planString(w, got); !strings.Contains(plan, "\ndir $R/home/.ssh\n") || strings.Contains(plan, "ro dir $R/home/.ssh") || strings.Contains(plan, "id_ed25519") {
		t.Errorf("with hide = [\"~/.ssh\"], want ~/.ssh hidden whole:\n%s", plan)
	}
}

// TestMaskExecutableLinks: each symlink by which $PATH leads to hush's
// executable, every hop of a chain, is a read-only link mask ("S" in the
// init's plan); a link elsewhere, or in a relative PATH entry, is not.
func TestMaskExecutableLinks(t *testing.T) {
	t.Parallel()
	w := newMaskWorld(t)
	exe := w.root + "/opt/hush/hush"
	for _, d := range []string{filepath.Dir(exe), w.home + "/bin", w.home + "/.local/bin", w.root + "/other"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(exe, []byte("ELF"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		w.home + "/.local/bin/hush": "../../bin/hush", // a chain: ~/.local/bin/hush -> ~/bin/hush -> exe
		w.home + "/bin/hush":        exe,
		w.root + "/other/hush":      w.home + "/notes.txt", // not hush
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	opts := w.opts()
	opts.Executable, opts.PathEnv = exe, "relative/bin:"+w.root+"/other:"+w.home+"/.local/bin:/usr/bin"
	s, got := maskPlan(t, opts)
	var links []string
	for _, m := range got {
		if m.Link {
			links = append(links, strings.Replace(m.Path, w.root, "$R", 1))
		}
	}
	if g := strings.Join(links, " "); g != "$R/home/.local/bin/hush $R/home/bin/hush" {
		t.Errorf("link masks: %s", g)
	}
	pb := string(planBytes("", got))
	for _, want := range []string{"\x00S" + w.home + "/.local/bin/hush\x00", "\x00S" + w.home + "/bin/hush\x00", "\x00R" + exe + "\x00", "\x00P" + w.home + "/.local/bin\x00"} {
		if !strings.Contains(pb, want) {
			t.Errorf("the init's plan lacks %q: %q", want, pb)
		}
	}
	if _, masked := s.WriteMasked(w.home + "/.local/bin/hush"); !masked {
		t.Error("the write tool may replace a PATH link to hush")
	}
	if _, masked := s.Masked(w.home + "/.local/bin/hush"); masked {
		t.Error("a PATH link to hush is not readable")
	}
}

// TestMaskKeyAgents: the ssh and gpg agents' sockets (at $SSH_AUTH_SOCK,
// in the runtime dir, in ~/.gnupg, and OpenSSH's /tmp/ssh-* directory made
// after the mask set), GnuPG's private keys and ~/.vault-token are in the
// plan and Masked; `allow = ["~/.ssh"]` re-opens the ssh agents and
// `allow = ["~/.gnupg"]` gpg-agent, wherever they listen, and nothing else.
func TestMaskKeyAgents(t *testing.T) {
	t.Parallel()
	w := newMaskWorld(t)
	authSock := w.root + "/agent/agent.sock"
	sshPaths := []string{authSock, w.run + "/ssh-agent.socket", w.run + "/openssh_agent", w.run + "/gcr/ssh"}
	gpgHome := w.root + "/gpghome" // $GNUPGHOME
	gpgPaths := []string{w.run + "/gnupg", w.home + "/.gnupg/S.gpg-agent", w.home + "/.gnupg/S.gpg-agent.ssh",
		gpgHome + "/S.gpg-agent", w.home + "/.gnupg/private-keys-v1.d", w.home + "/.gnupg/secring.gpg", gpgHome + "/private-keys-v1.d"}
	for _, p := range append(append([]string{}, sshPaths...), gpgPaths[1:]...) {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{w.home + "/.gnupg/private-keys-v1.d", w.run + "/gnupg/d.abc", gpgHome + "/private-keys-v1.d"} {
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{w.home + "/.gnupg/secring.gpg", w.home + "/.vault-token", w.home + "/.pgpass", w.home + "/.gnupg/pubring.kbx"} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range append([]string{w.run + "/gnupg/S.gpg-agent"}, append(append([]string{}, sshPaths...), gpgPaths[1:4]...)...) {
		l, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
	}
	plan := func(allow ...string) (*MaskSet, map[string]string) {
		o := w.opts()
		o.SSHAuthSock, o.GnuPGHome, o.Allow = authSock, gpgHome, allow
		s, err := NewMaskSet(o)
		if err != nil {
			t.Fatal(err)
		}
		masks, err := s.Masks()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, m := range masks {
			got[m.Path] = m.Reason
		}
		return s, got
	}
	tmpAgent, err := os.MkdirTemp("/tmp", "ssh-hushmask")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmpAgent) })
	s, got := plan()
	for _, p := range append(append([]string{tmpAgent}, sshPaths...), gpgPaths...) {
		if got[p] == "" {
			t.Errorf("%s is not in the plan", p)
		}
		if _, ok := s.Masked(p); !ok && p != tmpAgent {
			t.Errorf("%s is not Masked", p)
		}
	}
	if got[tmpAgent] != ReasonSSHAgent || got[authSock] != ReasonSSHAgent || got[w.run+"/gnupg"] != ReasonGPGAgent ||
		got[w.home+"/.gnupg/private-keys-v1.d"] != ReasonGPGKey {
		t.Errorf("reasons: %q %q %q", got[tmpAgent], got[authSock], got[w.run+"/gnupg"])
	}
	for _, p := range []string{w.home + "/.vault-token", w.home + "/.pgpass"} {
		if got[p] != ReasonCredential {
			t.Errorf("%s: reason %q, want a credential store", p, got[p])
		}
	}
	// Positive control: what holds no key stays visible.
	if _, ok := s.Masked(w.home + "/.gnupg/pubring.kbx"); ok || got[w.home+"/.gnupg"] != "" {
		t.Error("~/.gnupg's public keyring is masked")
	}

	s, got = plan("~/.ssh")
	for _, p := range append([]string{tmpAgent}, sshPaths...) {
		if got[p] != "" {
			t.Errorf("allow ~/.ssh did not re-open %s", p)
		}
		if _, ok := s.Masked(p); ok {
			t.Errorf("allow ~/.ssh: %s is still Masked", p)
		}
	}
	for _, p := range gpgPaths {
		if got[p] == "" {
			t.Errorf("allow ~/.ssh re-opened %s", p)
		}
	}
	s, got = plan("~/.gnupg")
	for _, p := range gpgPaths {
		if got[p] != "" {
			t.Errorf("allow ~/.gnupg did not re-open %s", p)
		}
		if _, ok := s.Masked(p); ok {
			t.Errorf("allow ~/.gnupg: %s is still Masked", p)
		}
	}
	if got[authSock] == "" || got[tmpAgent] == "" {
		t.Error("allow ~/.gnupg re-opened an ssh agent")
	}
}

// maskPlan builds opts' mask set and the masks of its plan.
func maskPlan(t *testing.T, opts MaskOptions) (*MaskSet, []Mask) {
	t.Helper()
	s, err := NewMaskSet(opts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Masks()
	if err != nil {
		t.Fatal(err)
	}
	return s, got
}
