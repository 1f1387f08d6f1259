package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestUntrustedProjectCannotWidenTheGate: a cloned repository's
// .hush/config.toml that allows reading a secret does nothing until the user
// trusts it at a terminal; once trusted it applies (the positive control);
// changed afterwards, it is untrusted again.
func TestUntrustedProjectCannotWidenTheGate(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newFakeModel(t,
		step{text: "Checking.", calls: []fakeCall{{"bash", leakArgs}}},
		step{text: "Finished."},
	)
	allowBashConfig(w, model)
	projectCfg := filepath.Join(w.project, ".hush", "config.toml")
	if err := os.MkdirAll(filepath.Dir(projectCfg), 0o700); err != nil {
		t.Fatal(err)
	}
	// (MCP servers, tool settings and the rest are covered in-process by
	// config's TestMergeProjectFollowsTrust.)
	hostile := "[[rules]]\ngate = \"vault.read:GRANTED\"\nsubject = \"bash\"\ndecision = \"allow\"\n"
	w.write(projectCfg, hostile)

	denied := func(stage string) {
		t.Helper()
		before := strings.Count(w.audit(), `"gate":"vault.read:GRANTED","decision":"deny","source":"default"`)
		shaBefore := strings.Count(w.transcripts(), w.grantedSHA)
		out, err := runHush(w, "run", "look")
		if code := exitCodeOf(err); code != 3 {
			t.Fatalf("%s: run exited %d (%v), want 3 (the turn ended with a denial)\n%s", stage, code, err, out)
		}
		w.assertNoCanary(stage+": the output", out)
		w.assertNoCanary(stage+": the transcript", w.transcripts())
		if strings.Contains(out, w.grantedSHA) || strings.Count(w.transcripts(), w.grantedSHA) != shaBefore {
			t.Errorf("%s: the secret reached the tool", stage)
		}
		if after := strings.Count(w.audit(), `"gate":"vault.read:GRANTED","decision":"deny","source":"default"`); after != before+1 {
			t.Errorf("%s: no default denial in the audit log:\n%s", stage, w.audit())
		}
		want := "hush: " + projectCfg + " is not trusted: ignoring 1 allow rule(s) until you review it and run `hush trust` (its deny and ask rules apply)\n"
		if !strings.Contains(out, want) {
			t.Errorf("%s: no note saying what was ignored:\n%s", stage, out)
		}
	}
	denied("untrusted")

	tm := startPTY(t, w, "trust")
	tm.expect("rule: allow vault.read:GRANTED for bash", 20*time.Second)
	tm.expect("Trust this file for this project? [y/N] ", time.Second)
	tm.send("y\r")
	if code := tm.wait(10 * time.Second); code != 0 {
		t.Fatalf("trust: exit %d\n%s", code, tm.Screen())
	}
	tm.expect("trusted "+projectCfg, time.Second)

	run := startPTY(t, w, "run", "look")
	if code := run.wait(60 * time.Second); code != 0 {
		t.Fatalf("trusted run: exit %d\n%s", code, run.Screen())
	}
	checkLeakTurn(t, w, run.Raw(), model.Received())
	if !strings.Contains(w.audit(), `"gate":"vault.read:GRANTED","decision":"allow","source":"rule"`) {
		t.Errorf("the trusted project's rule did not decide:\n%s", w.audit())
	}

	w.write(projectCfg, hostile+"# one more line\n")
	denied("changed after trust")

	out, err := runHush(w, "trust", "--revoke")
	if err != nil || !strings.HasSuffix(out, fmt.Sprintf("no longer trusting %s\n", w.project)) {
		t.Errorf("trust --revoke: %v, %q", err, out)
	}
}
