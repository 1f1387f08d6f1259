package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestVaultSetFromStdin: the value goes from a pipe into the backend; it is
// in no process's command line or environment while hush runs, in no output
// or log, and in no file but the envfile backend's own. A granted read then
// delivers it exactly (the positive control).
func TestVaultSetFromStdin(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"envfile", "keyring"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			if backend == "keyring" {
				useKeyring(t, w)
				w.config("[vault]\nbackend = \"keyring\"\n")
			}
			value := canary("piped")
			w.canaries["piped value"] = value
			cmd := exec.Command(hushBin, "vault", "set", "PIPED_TOKEN")
			cmd.Env, cmd.Dir = w.env, w.project
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no terminal: stdin is the only source
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			var out, errOut strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if _, err := fmt.Fprint(stdin, value+"\n"); err != nil {
				t.Fatal(err)
			}
			// hush now holds the value and waits for the end of its input.
			for range 20 {
				if hits := scanProcesses(value); len(hits) > 0 {
					t.Errorf("the value is visible in %q", hits)
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			stdin.Close()
			if err := cmd.Wait(); err != nil {
				t.Fatalf("vault set: %v\n%s%s", err, out.String(), errOut.String())
			}
			if !strings.HasPrefix(out.String(), "stored PIPED_TOKEN in the vault ("+backend+": ") {
				t.Errorf("output: %q", out.String())
			}
			w.assertNoCanary("vault set's output", out.String()+errOut.String())
			want := map[string][]string{"envfile": {"data/vault.env"}, "keyring": nil}[backend]
			if got := w.filesHolding(value); !slices.Equal(got, want) {
				t.Errorf("files holding the value: %q, want %q", got, want)
			}

			model := newFakeModel(t,
				step{calls: []fakeCall{{"bash", map[string]any{"script": `echo "got=$T"; printf %s "$T" | sha256sum`, "env": map[string]string{"T": "${PIPED_TOKEN}"}}}}},
				step{text: "done"},
			)
			w.config(fmt.Sprintf("[model]\nprovider = \"openai\"\nbase_url = %q\nmodel = \"fake\"\n\n[vault]\nbackend = %q\n\n"+
				"[[rules]]\ngate = \"vault.read:PIPED_TOKEN\"\nsubject = \"bash\"\ndecision = \"allow\"\n", model.URL(), backend))
			if out, err := runHush(w, "run", "--yes", "use it"); err != nil {
				t.Fatalf("run: %v\n%s", err, out)
			}
			if !strings.Contains(model.Received(), sha(value)) || !strings.Contains(model.Received(), "got=[REDACTED:PIPED_TOKEN]") {
				t.Errorf("the stored value did not reach the granted tool exactly, redacted:\n%s", model.Received())
			}
			w.assertNoCanary("what the model received", model.Received())
			w.assertNoCanary("the transcript", w.transcripts())
			w.assertNoCanary("the audit log", w.audit())
		})
	}
}

func TestVaultSetRefusesArgv(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	value := canary("argv")
	out, err := runHushStdin(w, "", "vault", "set", "ARGV_TOKEN", value)
	if err == nil {
		t.Fatal("vault set took a value from the command line")
	}
	want := "hush: usage: hush vault set NAME (the value is read from stdin or a hidden prompt, never from the command line, where ps and shell history would show it)\n"
	if out != want {
		t.Errorf("output = %q\nwant %q", out, want)
	}
	if got := w.filesHolding(value); len(got) != 0 {
		t.Errorf("the value was stored in %q", got)
	}
}

// TestVaultImportThenTurnRecoversNothing: after `hush vault import` of the
// legacy project .env (deleted, or renamed aside), a turn running env and
// cat .env recovers none of its values, and a granted one still arrives.
func TestVaultImportThenTurnRecoversNothing(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"--delete-source", "--rename-source"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			legacy := canary("legacy")
			w.canaries["legacy token"] = legacy
			w.write(filepath.Join(w.project, ".env"), fmt.Sprintf("DOTENV_CANARY=%s\nLEGACY_TOKEN=%q\n", w.canaries["dotenv"], legacy))
			out, err := runHushStdin(w, "", "vault", "import", ".env", mode)
			if err != nil {
				t.Fatalf("import: %v\n%s", err, out)
			}
			w.assertNoCanary("import's output", out)
			if !strings.Contains(out, "): DOTENV_CANARY, LEGACY_TOKEN\n") {
				t.Errorf("import did not report the names:\n%s", out)
			}
			if _, err := os.Stat(filepath.Join(w.project, ".env")); !os.IsNotExist(err) {
				t.Fatalf(".env is still there: %v", err)
			}

			script := `env; echo ---; cat .env; echo ---; cat .env.imported; echo ---; cat /proc/$PPID/environ | tr '\0' '\n'; echo ---; ` +
				`echo "positive=$POS"; printf %s "$POS" | sha256sum`
			model := newFakeModel(t,
				step{calls: []fakeCall{{"bash", map[string]any{"script": script, "env": map[string]string{"POS": "${LEGACY_TOKEN}"}}}}},
				step{text: "done"},
			)
			w.config(fmt.Sprintf("[model]\nprovider = \"openai\"\nbase_url = %q\nmodel = \"fake\"\n\n"+
				"[[rules]]\ngate = \"vault.read:LEGACY_TOKEN\"\nsubject = \"bash\"\ndecision = \"allow\"\n", model.URL()))
			tm := startPTY(t, w, "run", "--yes", "look")
			if code := tm.wait(60 * time.Second); code != 0 {
				t.Fatalf("run: exit %d\n%s", code, tm.Screen())
			}
			received := model.Received()
			w.assertNoCanary("the screen", tm.Raw())
			w.assertNoCanary("what the model received", received)
			w.assertNoCanary("the transcript", w.transcripts())
			w.assertNoCanary("the audit log", w.audit())
			if strings.Contains(tm.Screen(), "hush: warning:") {
				t.Errorf("hush still warns about a project .env:\n%s", tm.Screen())
			}
			wants := []string{"PATH=", "cat: .env: No such file or directory", "positive=[REDACTED:LEGACY_TOKEN]", sha(legacy)}
			// With --rename-source the renamed file (.env.imported) is a
			// .env-family file: the sandbox shows it empty.
			for _, want := range wants {
				if !strings.Contains(received, want) {
					t.Errorf("the tool result lacks %q", want)
				}
			}
		})
	}
}

// TestVaultRevealOnlyAtATerminal: run through the spawn layer, as a tool
// would run it, `hush vault reveal` refuses (and so do the other commands
// that need a person: moving secrets, trusting a project); at a terminal,
// after a yes, it shows the value.
func TestVaultRevealOnlyAtATerminal(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	if err := os.MkdirAll(filepath.Join(w.project, ".hush"), 0o700); err != nil {
		t.Fatal(err)
	}
	w.write(filepath.Join(w.project, ".hush", "config.toml"), "[[rules]]\ngate = \"vault.read:*\"\nsubject = \"*\"\ndecision = \"allow\"\n")
	script := `"$HUSH" vault reveal VAULT_CANARY; echo "reveal-exit=$?"; ` +
		`echo y | "$HUSH" vault reveal GRANTED; echo "piped-exit=$?"; ` +
		`"$HUSH" vault backend keyring --yes; echo "backend-exit=$?"; ` +
		`echo y | "$HUSH" trust; echo "trust-exit=$?"`
	model := newFakeModel(t, step{calls: []fakeCall{{"bash", map[string]any{"script": script, "env": w.hushEnv()}}}}, step{text: "done"})
	w.config(fmt.Sprintf("[model]\nprovider = \"openai\"\nbase_url = %q\nmodel = \"fake\"\n", model.URL()))
	out, err := runHush(w, "run", "--yes", "read the vault")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	received := model.Received()
	w.assertNoCanary("the run's output", out)
	w.assertNoCanary("what the model received", received)
	w.assertNoCanary("the transcript", w.transcripts())
	for _, want := range []string{
		"hush: vault reveal needs a controlling terminal and a person to confirm, and there is none here; tools run without one, so a tool cannot read the vault through hush",
		"reveal-exit=1", "piped-exit=1",
		// In the sandbox the tool's hush finds no vault (the data dir is
		// hidden) and no session bus: nothing to move, nowhere to move it.
		"hush: open vault backend keyring: no OS keyring service is available",
		"backend-exit=1",
		"trusting a project needs you at a terminal to confirm, and there is none here; nothing was changed",
		"trust-exit=1",
	} {
		if !strings.Contains(received, want) {
			t.Errorf("the tool result lacks %q:\n%s", want, received)
		}
	}
	// The tool's own hush runs in the sandbox, where the data dir (and
	// the audit log in it) is hidden: it records nothing, and the session's
	// log holds no decision it did not make.
	if strings.Contains(w.audit(), `"tool":"hush vault reveal"`) {
		t.Errorf("a sandboxed tool's hush wrote to the session's audit log:\n%s", w.audit())
	}
	if vf := readFile(t, filepath.Join(w.dataDir, "vault.env")); !strings.Contains(vf, w.canaries["vault"]) || !strings.Contains(vf, w.granted) {
		t.Error("the vault file lost secrets")
	}
	if _, err := os.Stat(filepath.Join(w.configDir, "trusted-projects.json")); err == nil {
		t.Error("a tool trusted the project")
	}

	// The positive control: a person at a terminal.
	tm := startPTY(t, w, "vault", "reveal", "VAULT_CANARY")
	tm.expect("Show the value of VAULT_CANARY (from the vault) on this terminal? [y/N] ", 20*time.Second)
	tm.send("y\r")
	if code := tm.wait(10 * time.Second); code != 0 {
		t.Fatalf("reveal at a terminal: exit %d\n%s", code, tm.Screen())
	}
	if !strings.Contains(tm.Screen(), w.canaries["vault"]) {
		t.Errorf("reveal at a terminal did not show the value:\n%s", tm.Screen())
	}
	no := startPTY(t, w, "vault", "reveal", "GRANTED")
	no.expect("[y/N] ", 20*time.Second)
	no.send("\r")
	if code := no.wait(10 * time.Second); code != 0 || strings.Contains(no.Screen(), w.granted) || !strings.Contains(no.Screen(), "not shown") {
		t.Errorf("declined reveal: exit %d\n%s", code, no.Screen())
	}
	if !strings.Contains(w.audit(), `"tool":"hush vault reveal","gate":"vault.read:VAULT_CANARY","decision":"allow","source":"prompt"`) {
		t.Errorf("the audit log lacks the reveal:\n%s", w.audit())
	}
}

// TestVaultBackendSwitchAtATerminal: every secret moves to the keyring and
// back, nothing is left in the file, and a granted read works from the new
// backend.
func TestVaultBackendSwitchAtATerminal(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	kb := useKeyring(t, w)
	tm := startPTY(t, w, "vault", "backend", "keyring")
	tm.expect("Move 2 secret(s) from envfile to keyring? [y/N] ", 20*time.Second)
	tm.send("y\r")
	if code := tm.wait(20 * time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, tm.Screen())
	}
	tm.expect(`config.toml now says [vault] backend = "keyring"`, time.Second)
	for _, s := range []string{w.canaries["vault"], w.granted} {
		if got := w.filesHolding(s); len(got) != 0 {
			t.Errorf("a moved secret is still in %q", got)
		}
	}
	if names, _ := kb.Names(); !slices.Equal(names, []string{"GRANTED", "VAULT_CANARY"}) {
		t.Errorf("keyring names = %q", names)
	}
	out, err := runHush(w, "vault", "list")
	if err != nil {
		t.Fatal(err)
	}
	w.assertNoCanary("vault list", out)
	for _, want := range []string{"GRANTED", "VAULT_CANARY", "DOTENV_CANARY", "backend: keyring (Secret Service (D-Bus), service \"hush-e2e-"} {
		if !strings.Contains(out, want) {
			t.Errorf("vault list lacks %q:\n%s", want, out)
		}
	}

	model := newFakeModel(t,
		step{text: "Checking.", calls: []fakeCall{{"bash", leakArgs}}},
		step{text: "Finished."},
	)
	w.config(readFile(t, filepath.Join(w.configDir, "config.toml")) + fmt.Sprintf("\n[model]\nprovider = \"openai\"\nbase_url = %q\nmodel = \"fake\"\n\n"+
		"[[rules]]\ngate = \"vault.read:GRANTED\"\nsubject = \"bash\"\ndecision = \"allow\"\n", model.URL()))
	run := startPTY(t, w, "run", "--yes", "check")
	if code := run.wait(60 * time.Second); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, run.Screen())
	}
	checkLeakTurn(t, w, run.Raw(), model.Received())

	back := startPTY(t, w, "vault", "backend", "envfile", "--yes")
	if code := back.wait(20 * time.Second); code != 0 {
		t.Fatalf("switch back: exit %d\n%s", code, back.Screen())
	}
	vf := readFile(t, filepath.Join(w.dataDir, "vault.env"))
	if !strings.Contains(vf, w.canaries["vault"]) || !strings.Contains(vf, w.granted) {
		t.Error("switching back lost secrets")
	}
	if names, _ := kb.Names(); len(names) != 0 {
		t.Errorf("the keyring still holds %q", names)
	}
}

func TestVaultListAndRm(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	out, err := runHush(w, "vault", "list")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	w.assertNoCanary("vault list", out)
	for _, want := range []string{
		"NAME              FROM\n",
		"DATABASE_URL      environment\n",
		"DOTENV_CANARY     .env (" + w.project + "/.env; move it with `hush vault import`)\n",
		"GRANTED           vault\n",
		"MY_SERVICE_TOKEN  environment\n",
		"OPENAI_API_KEY    environment\n",
		"VAULT_CANARY      vault\n",
		"backend: envfile (" + w.dataDir + "/vault.env)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("vault list lacks %q:\n%s", want, out)
		}
	}
	tests := []struct {
		name, want string
		ok         bool
	}{
		{"GRANTED", "removed GRANTED from the vault (envfile: " + w.dataDir + "/vault.env)\n", true},
		{"GRANTED", "hush: no secret GRANTED in the vault\n", false},
		{"OPENAI_API_KEY", "hush: OPENAI_API_KEY is not in the vault: it comes from the environment hush was started with; unset it in your shell\n", false},
		{"DOTENV_CANARY", "hush: DOTENV_CANARY is not in the vault: it comes from " + filepath.Join(w.project, ".env") + "; remove it there (or import the file and delete it)\n", false},
	}
	for _, tt := range tests {
		out, err := runHush(w, "vault", "rm", tt.name)
		out = strings.ReplaceAll(out, "hush: warning: legacy secret files in the project, values hush treats as secrets: .env (1); move each into the vault with `hush vault import FILE`, then delete it\n", "")
		if (err == nil) != tt.ok || out != tt.want {
			t.Errorf("vault rm %s: %v, %q\nwant %q", tt.name, err, out, tt.want)
		}
	}
	if strings.Contains(readFile(t, filepath.Join(w.dataDir, "vault.env")), w.granted) {
		t.Error("rm left the value in vault.env")
	}
}

// TestVaultImportAsksAtATerminal: at a terminal, import offers to delete
// the source — only when every entry is in the vault — or to rename it.
func TestVaultImportAsksAtATerminal(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	src := filepath.Join(w.project, ".env")
	tm := startPTY(t, w, "vault", "import", ".env")
	tm.expect("Delete "+src+" (every entry is in the vault)", 20*time.Second)
	tm.send("\r")
	if code := tm.wait(10 * time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, tm.Screen())
	}
	tm.expect("deleted "+src, time.Second)
	w.assertNoCanary("import's terminal", tm.Raw())
	if _, err := os.Stat(src); !os.IsNotExist(err) {
		t.Errorf(".env is still there: %v", err)
	}
	if !strings.Contains(readFile(t, filepath.Join(w.dataDir, "vault.env")), w.canaries["dotenv"]) {
		t.Error("the imported value is not in the vault")
	}

	// An entry the vault cannot store: no offer to delete.
	w.write(src, "GOOD=1\nBAD.NAME=x\n")
	tm = startPTY(t, w, "vault", "import", ".env")
	tm.expect(`refused: secret name "BAD.NAME" cannot be stored`, 20*time.Second)
	tm.expect("Rename it to .env.imported (hush stops reading it)", 10*time.Second)
	if strings.Contains(tm.Screen(), "Delete "+src) {
		t.Error("offered to delete a file whose entries are not all in the vault")
	}
	tm.send("\r")
	if code := tm.wait(10 * time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, tm.Screen())
	}
	if got := readFile(t, src+".imported"); got != "GOOD=1\nBAD.NAME=x\n" {
		t.Errorf("renamed file = %q", got)
	}
}

// TestVaultSetHiddenPrompt: at a terminal the value is typed without echo.
func TestVaultSetHiddenPrompt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	value := canary("typed")
	w.canaries["typed value"] = value
	tm := startPTY(t, w, "vault", "set", "TYPED_TOKEN")
	tm.expect("Value for TYPED_TOKEN (typing is not shown): ", 20*time.Second)
	tm.send(value + "\r")
	if code := tm.wait(10 * time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, tm.Screen())
	}
	tm.expect("stored TYPED_TOKEN in the vault", time.Second)
	w.assertNoCanary("the terminal", tm.Raw())
	if got := w.filesHolding(value); !slices.Equal(got, []string{"data/vault.env"}) {
		t.Errorf("files holding the value: %q", got)
	}
}
