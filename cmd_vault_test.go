package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor/auditlog"
	"github.com/hushcli/hush/vault"
	"github.com/hushcli/hush/wizard"
)

// vaultCanary is a value no test output may show.
const vaultCanary = "zq9MOVEcanary"

// storedValue reads name from ta's envfile directly, as bytes on disk.
func (ta *testApp) storedValue(name string) (string, error) {
	return vault.NewEnvFile(filepath.Join(ta.dir, vault.EnvFileName)).Get(name)
}

func vaultSetOpts(a *app, name string) *vaultSetOptions {
	return &vaultSetOptions{In: a.Stdin, Err: a.Stderr, Commands: a.vaultCommands, Name: name}
}

func switchBackend(a *app, name string, confirm func(int, string) (bool, error)) error {
	return runVaultBackend(vaultBackendOpts(a, name, confirm))
}

func TestImportLegacyFileDisposesOfTheSource(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file string
		opts       vaultImportOptions
		wantOut    string
		wantErr    string
		after      string // what is left: "gone", "kept", "renamed"
	}{
		{"delete", "A=1\nB_TOKEN=" + vaultCanary + "\n", vaultImportOptions{DeleteSource: true},
			"copied into the vault (envfile: DATA/vault.env): A, B_TOKEN\ndeleted PROJECT/.env\n", "", "gone"},
		{"rename", "A=1\n", vaultImportOptions{RenameSource: true},
			"copied into the vault (envfile: DATA/vault.env): A\nrenamed PROJECT/.env to PROJECT/.env.imported (hush no longer reads it; delete it when you no longer need it)\n", "", "renamed"},
		{"neither, without a terminal", "A=1\n", vaultImportOptions{},
			"copied into the vault (envfile: DATA/vault.env): A\nPROJECT/.env is still there (import copies, it does not move): hush still reads it; delete it, or use --delete-source or --rename-source\n", "", "kept"},
		{"the person chooses rename", "A=1\n", vaultImportOptions{Choose: func(_, _ string, safe bool) string {
			if !safe {
				return vault.KeepSource
			}
			return vault.RenameSource
		}},
			"copied into the vault (envfile: DATA/vault.env): A\nrenamed PROJECT/.env to PROJECT/.env.imported (hush no longer reads it; delete it when you no longer need it)\n", "", "renamed"},
		{"delete refused when an entry is not stored", "A=1\nBAD.NAME=" + vaultCanary + "\n", vaultImportOptions{DeleteSource: true},
			"copied into the vault (envfile: DATA/vault.env): A\nrefused: secret name \"BAD.NAME\" cannot be stored: use letters, digits and _, not starting with a digit\n",
			"not deleting PROJECT/.env: 1 entr(ies) are not in the vault (listed above); fix them, or keep the file aside with --rename-source", "kept"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ta := newTestApp(t, "")
			src := filepath.Join(ta.project, ".env")
			if err := os.WriteFile(src, []byte(tt.file), 0o644); err != nil {
				t.Fatal(err)
			}
			opts := tt.opts
			opts.Commands, opts.Path = ta.vaultCommands, src
			err := runVaultImport(&opts)
			fix := strings.NewReplacer(ta.project, "PROJECT", ta.dir, "DATA")
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || fix.Replace(err.Error()) != tt.wantErr) {
				t.Errorf("error = %v, want %q", err, tt.wantErr)
			}
			if got := fix.Replace(ta.out.String()); got != tt.wantOut {
				t.Errorf("output =\n%s\nwant\n%s", got, tt.wantOut)
			}
			if strings.Contains(ta.out.String()+ta.errOut.String(), vaultCanary) {
				t.Error("the output shows a value")
			}
			_, srcErr := os.Stat(src)
			_, renErr := os.Stat(src + ".imported")
			got := map[bool]map[bool]string{true: {true: "kept", false: "kept"}, false: {true: "renamed", false: "gone"}}[srcErr == nil][renErr == nil]
			if got != tt.after {
				t.Errorf("the source is %s, want %s", got, tt.after)
			}
			if v, err := vault.NewEnvFile(filepath.Join(ta.dir, vault.EnvFileName)).Get("A"); err != nil || v != "1" {
				t.Errorf("A in the vault = %q, %v", v, err)
			}
		})
	}
}

func TestImportLegacyFileRefusesWhatIsNotAFile(t *testing.T) {
	t.Parallel()
	ta := newTestApp(t, "")
	opened := false
	open := func() (vaultCmds, error) { opened = true; return ta.vaultCommands() }
	if err := runVaultImport(&vaultImportOptions{Commands: open, Path: ta.project}); err == nil || !strings.HasSuffix(err.Error(), "is not a file") {
		t.Errorf("a directory: %v", err)
	}
	if err := runVaultImport(&vaultImportOptions{Commands: open, Path: filepath.Join(ta.project, "missing.env")}); err == nil || !strings.HasPrefix(err.Error(), "import: ") {
		t.Errorf("a missing file: %v", err)
	}
	if opened {
		t.Error("the vault was opened for a file that cannot be imported")
	}
}

// TestVaultSet: the value comes from stdin without its last line ending;
// an ambient variable of the same name is warned about; a bad name is a
// usage error and an empty value stores nothing.
func TestVaultSet(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"v": "v", "v\n": "v", "v\r\n": "v", "v\n\n": "v\n", " v \n": " v "} {
		ta := newTestApp(t, "")
		if err := runVaultSet(vaultSetOpts(ta.again(in), "X")); err != nil {
			t.Fatalf("VaultSet with stdin %q: %v", in, err)
		}
		if got, err := ta.storedValue("X"); err != nil || got != want {
			t.Errorf("stdin %q stored %q, %v; want %q", in, got, err, want)
		}
	}

	ta := newTestApp(t, "")
	e := ta.again(vaultCanary + "\n")
	e.Ambient["MY_SERVICE_TOKEN"] = "from-the-environment"
	if err := runVaultSet(vaultSetOpts(e, "MY_SERVICE_TOKEN")); err != nil {
		t.Fatal(err)
	}
	if got, _ := ta.storedValue("MY_SERVICE_TOKEN"); got != vaultCanary {
		t.Errorf("stored %q", got)
	}
	wantOut := "stored MY_SERVICE_TOKEN in the vault (envfile: " + filepath.Join(ta.dir, vault.EnvFileName) + ")\n"
	wantErr := "hush: warning: MY_SERVICE_TOKEN is also set in the environment hush was started with, and that value wins over the vault; unset it in your shell to use the stored one\n"
	if ta.out.String() != wantOut || ta.errOut.String() != wantErr {
		t.Errorf("stdout %q\nstderr %q", ta.out.String(), ta.errOut.String())
	}

	ta = newTestApp(t, "")
	err := runVaultSet(vaultSetOpts(ta.again("v"), "1BAD"))
	if asExit(err).code != exitUsage || err.Error() != `secret name "1BAD" cannot be stored: use letters, digits and _, not starting with a digit` {
		t.Errorf("VaultSet(1BAD) = %v, want a usage error", err)
	}
	if _, statErr := os.Stat(filepath.Join(ta.dir, vault.EnvFileName)); statErr == nil {
		t.Error("a bad name created the vault file")
	}
	err = runVaultSet(vaultSetOpts(ta.again("\n"), "EMPTY"))
	if err == nil || asExit(err).code == exitUsage || err.Error() != "no value given; nothing was stored (to remove a secret: hush vault rm EMPTY)" {
		t.Errorf("VaultSet(EMPTY) = %v", err)
	}
}

// TestVaultListAndRm: list shows names and where each comes from, never a
// value; rm removes the name from the backend.
func TestVaultListAndRm(t *testing.T) {
	t.Parallel()
	ta := newTestApp(t, "")
	if err := runVaultSet(vaultSetOpts(ta.again(vaultCanary), "API_TOKEN")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ta.project, ".env"), []byte("DOTENV_ONLY=x1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A legacy file in a subdirectory: its values are labelled with it.
	if err := os.MkdirAll(filepath.Join(ta.project, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ta.project, "sub", ".env"), []byte("SUB_ONLY=x2\nDOTENV_ONLY=x3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ta.out.Reset()
	if err := runVaultList(&vaultListOptions{Commands: ta.again("").vaultCommands}); err != nil {
		t.Fatal(err)
	}
	list := ta.out.String()
	if !strings.Contains(list, "API_TOKEN") || strings.Contains(list, vaultCanary) {
		t.Errorf("vault list:\n%s", list)
	}
	for name, file := range map[string]string{"DOTENV_ONLY": filepath.Join(ta.project, ".env"), "SUB_ONLY": filepath.Join(ta.project, "sub", ".env")} {
		line := ""
		for _, l := range strings.Split(list, "\n") {
			if strings.HasPrefix(l, name+" ") {
				line = l
			}
		}
		if want := ".env (" + file + "; move it with"; !strings.Contains(line, want) {
			t.Errorf("vault list labels %s with the wrong file, want %q:\n%s", name, want, list)
		}
	}
	if err := runVaultRm(&vaultRmOptions{Commands: ta.again("").vaultCommands, Name: "SUB_ONLY"}); err == nil || !strings.Contains(err.Error(), filepath.Join("sub", ".env")) {
		t.Errorf("rm of a sub/.env value = %v, want it to name sub/.env", err)
	}
	ta.out.Reset()
	if err := runVaultRm(&vaultRmOptions{Commands: ta.again("").vaultCommands, Name: "API_TOKEN"}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ta.out.String(), "removed API_TOKEN from the vault") {
		t.Errorf("rm said %q", ta.out.String())
	}
	if v, err := ta.storedValue("API_TOKEN"); err == nil || v != "" {
		t.Errorf("API_TOKEN is still stored: %q, %v", v, err)
	}
	if err := runVaultRm(&vaultRmOptions{Commands: ta.again("").vaultCommands, Name: "API_TOKEN"}); err == nil {
		t.Error("removing a name the vault does not hold succeeded")
	}
}

// TestVaultImport: `hush vault import` stores a legacy file's entries;
// without a terminal it keeps the file unless told otherwise.
func TestVaultImport(t *testing.T) {
	t.Parallel()
	ta := newTestApp(t, "")
	src := filepath.Join(ta.project, ".env.local")
	if err := os.WriteFile(src, []byte("IMPORTED_KEY="+vaultCanary+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := runVaultImport(&vaultImportOptions{Commands: ta.again("").vaultCommands, Path: src}); err != nil {
		t.Fatal(err)
	}
	if got, _ := ta.storedValue("IMPORTED_KEY"); got != vaultCanary {
		t.Errorf("imported %q", got)
	}
	if _, err := os.Stat(src); err != nil {
		t.Errorf("without a terminal or a flag the source is gone: %v", err)
	}
	if err := runVaultImport(&vaultImportOptions{Commands: ta.again("").vaultCommands, Path: src, DeleteSource: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(src); err == nil {
		t.Error("--delete-source kept the file")
	}
}

// TestVaultBackendShowAndSwitch: show names the backend in use; a switch
// asks confirm with the count and the current backend, changes nothing
// when refused, and moves every secret and config.toml (and the Env's
// config in memory) when accepted.
func TestVaultBackendShowAndSwitch(t *testing.T) {
	t.Parallel()
	ta := newTestApp(t, "")
	if err := runVaultBackend(&vaultBackendOptions{Commands: ta.again("").vaultCommands, Registry: ta.Registry()}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ta.out.String(), "backend: envfile (") || !strings.Contains(ta.out.String(), "keyring") {
		t.Errorf("backend show:\n%s", ta.out)
	}
	if err := runVaultSet(vaultSetOpts(ta.again(vaultCanary), "SWITCH_TOKEN")); err != nil {
		t.Fatal(err)
	}
	e := ta.again("")
	if err := switchBackend(e, "nosuch", nil); err == nil || !strings.Contains(err.Error(), `unknown vault backend "nosuch"`) {
		t.Errorf("switch to an unknown backend = %v", err)
	}
	ta.out.Reset()
	if err := switchBackend(e, "envfile", nil); err != nil || ta.out.String() != "already using the envfile backend\n" {
		t.Errorf("switch to the same backend = %v, %q", err, ta.out)
	}
	var asked []string
	refuse := func(n int, from string) (bool, error) {
		asked = append(asked, fmt.Sprint(n, " ", from))
		return false, nil
	}
	if err := switchBackend(e, "keyring", refuse); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(asked, []string{"1 envfile"}) || e.Backend() != "envfile" {
		t.Errorf("asked %q; backend now %s", asked, e.Backend())
	}
	if got, _ := ta.storedValue("SWITCH_TOKEN"); got != vaultCanary {
		t.Errorf("a refused switch moved the secret: %q", got)
	}
	noTTY := errors.New("no terminal here")
	if err := switchBackend(e, "keyring", func(int, string) (bool, error) { return false, noTTY }); !errors.Is(err, noTTY) {
		t.Errorf("the confirm error is lost: %v", err)
	}

	requireKeyring(t, ta)
	if err := switchBackend(e, "keyring", func(int, string) (bool, error) { return true, nil }); err != nil {
		t.Fatal(err)
	}
	if e.Backend() != "keyring" || e.Config().Vault.Backend != "keyring" {
		t.Errorf("in memory the backend is %q", e.Backend())
	}
	if got, _ := os.ReadFile(filepath.Join(ta.configDir, config.FileName)); !strings.Contains(string(got), `backend = "keyring"`) {
		t.Errorf("config.toml =\n%s", got)
	}
	if got, _ := ta.storedValue("SWITCH_TOKEN"); got != "" {
		t.Errorf("the secret stayed in vault.env: %q", got)
	}
	if v, err := ta.again("").vaultCommands(); err != nil || v.Backend != "keyring" {
		t.Errorf("a new Env opens backend %q, %v", v.Backend, err)
	} else if got, err := v.Layered.Get("SWITCH_TOKEN"); err != nil || got != vaultCanary {
		t.Errorf("the keyring holds %q, %v", got, err)
	}
}

// TestVaultBackendSwitchNeedsATerminal: without a controlling terminal,
// moving secrets is refused and nothing moves.
func TestVaultBackendSwitchNeedsATerminal(t *testing.T) {
	t.Parallel()
	if tty, err := wizard.ControllingTerminal(); err == nil {
		tty.Close()
		t.Skip("this test process has a controlling terminal")
	}
	ta := newTestApp(t, "")
	if err := runVaultSet(vaultSetOpts(ta.again(vaultCanary), "SWITCH_TOKEN")); err != nil {
		t.Fatal(err)
	}
	err := runVaultBackend(vaultBackendOpts(ta.again(""), "keyring", confirmMove("keyring", true)))
	if err == nil || !strings.HasPrefix(err.Error(), "moving 1 secret(s) to another backend needs you at a terminal") {
		t.Errorf("switch without a terminal = %v", err)
	}
	if got, _ := ta.storedValue("SWITCH_TOKEN"); got != vaultCanary {
		t.Errorf("the secret moved: %q", got)
	}
}

// TestVaultRevealWithoutATerminal: the refusal is recorded in the data
// dir's audit log; with a config.toml that cannot be read it is still
// refused.
func TestVaultRevealWithoutATerminal(t *testing.T) {
	t.Parallel()
	if tty, err := wizard.ControllingTerminal(); err == nil {
		tty.Close()
		t.Skip("this test process has a controlling terminal")
	}
	ta := newTestApp(t, "")
	if err := runVaultReveal(vaultRevealOpts(ta.again(""), "API_TOKEN")); !errors.Is(err, errRevealNeedsTerminal) {
		t.Errorf("reveal = %v", err)
	}
	log, err := os.ReadFile(filepath.Join(ta.dir, auditlog.FileName))
	if err != nil || !strings.Contains(string(log), "vault.read:API_TOKEN") {
		t.Errorf("the refusal is not in the audit log (%v):\n%s", err, log)
	}
	if err := os.MkdirAll(filepath.Join(ta.configDir, config.FileName), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := runVaultReveal(vaultRevealOpts(ta.again(""), "API_TOKEN")); !errors.Is(err, errRevealNeedsTerminal) {
		t.Errorf("reveal with a broken config = %v", err)
	}
}

// TestVaultCmdWiring: each vault command hands its arguments and flags
// (also a flag after the argument) to runF, and refuses a wrong count.
func TestVaultCmdWiring(t *testing.T) {
	t.Parallel()
	ta := newTestApp(t, "")
	var set *vaultSetOptions
	var imp *vaultImportOptions
	var be *vaultBackendOptions
	var rev *vaultRevealOptions
	cmd := under("vault",
		newVaultSetCmd(ta.app, func(o *vaultSetOptions) error { set = o; return nil }),
		newVaultImportCmd(ta.app, func(o *vaultImportOptions) error { imp = o; return nil }),
		newVaultBackendCmd(ta.app, func(o *vaultBackendOptions) error { be = o; return nil }),
		newVaultRevealCmd(ta.app, func(o *vaultRevealOptions) error { rev = o; return nil }))
	if err := runCommand(ta.app, cmd, "vault", "set", "API_TOKEN"); err != nil || set == nil || set.Name != "API_TOKEN" {
		t.Errorf("set: %v, %+v", err, set)
	}
	if err := runCommand(ta.app, cmd, "vault", "set", "API_TOKEN", "the-value"); asExit(err).code != exitUsage {
		t.Errorf("set with a value on the command line = %v, want a usage error", err)
	}
	if err := runCommand(ta.app, cmd, "vault", "import", ".env", "--delete-source"); err != nil || imp == nil || imp.Path != ".env" || !imp.DeleteSource || imp.Choose != nil {
		t.Errorf("import .env --delete-source: %v, %+v", err, imp)
	}
	imp = nil
	if err := runCommand(ta.app, cmd, "vault", "import", "--delete-source", "--rename-source", ".env"); asExit(err).code != exitUsage || imp != nil {
		t.Errorf("import with both dispositions = %v", err)
	}
	if err := runCommand(ta.app, cmd, "vault", "backend"); err != nil || be == nil || be.Name != "" {
		t.Errorf("backend: %v, %+v", err, be)
	}
	if err := runCommand(ta.app, cmd, "vault", "backend", "keyring", "-y"); err != nil || be.Name != "keyring" || be.MoveTo == nil || be.Confirm == nil {
		t.Errorf("backend keyring -y: %v, %+v", err, be)
	}
	if err := runCommand(ta.app, cmd, "vault", "reveal", "API_TOKEN"); err != nil || rev == nil || rev.Name != "API_TOKEN" || rev.DataDir != ta.dir {
		t.Errorf("reveal: %v, %+v", err, rev)
	}
}
