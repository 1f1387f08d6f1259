package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// configHas fails unless config.toml sets each key = value.
func configHas(t *testing.T, w *world, pairs ...string) {
	t.Helper()
	cfg := readFile(t, filepath.Join(w.configDir, "config.toml"))
	for i := 0; i+1 < len(pairs); i += 2 {
		if want := pairs[i] + " = \"" + pairs[i+1] + "\""; !strings.Contains(cfg, want) {
			t.Errorf("config.toml lacks %s:\n%s", want, cfg)
		}
	}
}

// TestSetupEscGoesBackAndCtrlCExits130: in the full-screen setup Esc goes
// back one step with the answers kept; Ctrl-C leaves with 130 and saves
// nothing. Each step shows its number.
func TestSetupEscGoesBackAndCtrlCExits130(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tm := startPTY(t, w, "setup")
	tm.expect("(1/5) Which kind of model server?", 20*time.Second)
	tm.send("\x1b[B\r") // Anthropic
	tm.expect("(2/5) Where is it?", 10*time.Second)
	tm.expect("Anthropic (https://api.anthropic.com)", 5*time.Second)
	tm.send("\x1b") // Esc: back to the provider
	deadline := time.Now().Add(10 * time.Second)
	for !tm.after("(2/5) Where is it?", "(1/5) Which kind of model server?") {
		if time.Now().After(deadline) {
			t.Fatalf("Esc did not go back to step 1:\n%s", tm.Screen())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	tm.send("\x1b[A\r") // back up to OpenAI-compatible
	deadline = time.Now().Add(10 * time.Second)
	for !strings.Contains(tm.Screen()[strings.LastIndex(tm.Screen(), "(1/5)"):], "Ollama on this machine") {
		if time.Now().After(deadline) {
			t.Fatalf("step 2 does not offer the OpenAI-compatible presets after going back:\n%s", tm.Screen())
		}
		time.Sleep(20 * time.Millisecond)
	}
	tm.send("\x03")
	if code := tm.wait(10 * time.Second); code != 130 {
		t.Fatalf("Ctrl-C: exit %d, want 130\n%s", code, tm.Screen())
	}
	if _, err := os.Stat(filepath.Join(w.configDir, "config.toml")); err == nil {
		t.Error("Ctrl-C saved a config.toml")
	}
}

// TestSetupEscAtTheFirstStepLeaves: Esc at the first question leaves
// setup, nothing saved, instead of showing the same question again.
func TestSetupEscAtTheFirstStepLeaves(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tm := startPTY(t, w, "setup")
	tm.expect("(1/5) Which kind of model server?", 20*time.Second)
	time.Sleep(200 * time.Millisecond)
	tm.send("\x1b")
	tm.expect("setup cancelled; nothing was changed", 10*time.Second)
	if code := tm.wait(10 * time.Second); code != 130 {
		t.Fatalf("Esc at step 1: exit %d, want 130 (as Ctrl-C)\n%s", code, tm.Screen())
	}
	if _, err := os.Stat(filepath.Join(w.configDir, "config.toml")); err == nil {
		t.Error("Esc saved a config.toml")
	}
}

// TestSetupAnotherURLStartsEmptyAndModelFromTheList: re-running setup with
// a custom URL, "Another URL…" opens an empty field (what is typed is the
// whole URL), and the model is picked from the server's list by typing to
// filter it.
func TestSetupAnotherURLStartsEmptyAndModelFromTheList(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.unsetEnv("OPENAI_API_KEY")
	old := newFakeModel(t)
	model := newFakeModel(t)
	model.models = []string{"alpha-7b", "beta-coder-32b", "gamma-1b"}
	w.config("[model]\nprovider = \"openai\"\nbase_url = \"" + old.URL() + "\"\nmodel = \"old\"\n")
	tm := startPTY(t, w, "setup")
	tm.expect("(1/5) Which kind of model server?", 20*time.Second)
	tm.send("\r")
	tm.expect("(2/5) Where is it?", 10*time.Second)
	tm.expect("Keep "+old.URL(), 5*time.Second)
	tm.send("\x1b[B\r") // from "Keep …", the default, to Another URL…
	tm.expect("(2/5) Base URL", 10*time.Second)
	tm.send(model.URL() + "\r")
	tm.expect("(3/5) API key", 10*time.Second)
	tm.send("\r") // a local server: no key
	tm.expect(model.URL()+"/models answered with 3 model(s) (no key sent)", 10*time.Second)
	tm.expect("gamma-1b", 10*time.Second) // the list, with its filter open
	tm.expect("(4/5) Model (3 offered by the server; type to filter)", time.Second)
	tm.send("coder")
	time.Sleep(300 * time.Millisecond)
	tm.send("\r")
	tm.expect("(5/5) Where should hush keep secrets?", 10*time.Second)
	tm.send("\r")
	if code := tm.wait(20 * time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, tm.Screen())
	}
	configHas(t, w, "base_url", model.URL(), "model", "beta-coder-32b")
}

// TestSetupRefusedURLGoesBackKeepingAnswers: a URL where nothing listens
// sends setup back to the URL step; the provider chosen before is kept.
func TestSetupRefusedURLGoesBackKeepingAnswers(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.unsetEnv("OPENAI_API_KEY")
	model := newFakeModel(t)
	tm := startPTY(t, w, "setup")
	tm.expect("(1/5) Which kind of model server?", 20*time.Second)
	tm.send("\r")
	tm.expect("(2/5) Where is it?", 10*time.Second)
	tm.send("\x1b[B\x1b[B\x1b[B\r") // Another URL…
	tm.expect("(2/5) Base URL", 10*time.Second)
	tm.send("http://127.0.0.1:1/v1\r")
	tm.expect("(3/5) API key", 10*time.Second)
	tm.send("\r")
	tm.expect("cannot reach http://127.0.0.1:1/v1/models: connection refused", 10*time.Second)
	tm.expect("Back to the server's URL; your other answers are kept.", 5*time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for !tm.after("Back to the server's URL", "(2/5) Where is it?") {
		if time.Now().After(deadline) {
			t.Fatalf("not back at the URL step:\n%s", tm.Screen())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	tm.send("\x1b[B\r") // from "Keep" of the refused URL, the default, to Another URL…
	tm.expectAfter("Back to the server's URL", "(2/5) Base URL", 10*time.Second)
	time.Sleep(200 * time.Millisecond)
	tm.send(model.URL() + "\r")
	tm.expectAfter("Back to the server's URL", "(3/5) API key", 10*time.Second)
	time.Sleep(200 * time.Millisecond)
	tm.send("\r")
	tm.expect("(4/5) Model name", 10*time.Second)
	tm.send("fake\r")
	tm.expect("(5/5) Where should hush keep secrets?", 10*time.Second)
	tm.send("\r")
	if code := tm.wait(20 * time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, tm.Screen())
	}
	configHas(t, w, "provider", "openai", "base_url", model.URL(), "model", "fake")
}

// TestSetupPipedInputThatEndsEarlyExits2: `printf 'x\n' | hush setup`
// ended in huh's index-out-of-range panic (exit 70); now one sentence and
// exit 2, for an invalid answer and for input that stops.
func TestSetupPipedInputThatEndsEarlyExits2(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for _, in := range []string{"x\n", "1\n"} {
		out, err := runHushStdin(w, in, "setup")
		code := -1
		if ee, ok := err.(interface{ ExitCode() int }); ok {
			code = ee.ExitCode()
		}
		if code != 2 {
			t.Errorf("input %q: exit %d, want 2\n%s", in, code, out)
		}
		if strings.Contains(out, "internal error") || strings.Contains(out, "goroutine") || !strings.Contains(out, "hush: setup input ended early or was invalid: ") {
			t.Errorf("input %q: output\n%s", in, out)
		}
	}
}

// after reports whether the screen shows later after the last first.
func (tm *term) after(first, later string) bool {
	s := tm.Screen()
	i := strings.LastIndex(s, first)
	return i >= 0 && strings.LastIndex(s, later) > i
}

// expectAfter waits until the screen shows later after the last first.
func (tm *term) expectAfter(first, later string, timeout time.Duration) {
	tm.t.Helper()
	deadline := time.Now().Add(timeout)
	for !tm.after(first, later) {
		if time.Now().After(deadline) {
			tm.t.Fatalf("timed out waiting for %q after %q; screen:\n%s", later, first, tm.Screen())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
