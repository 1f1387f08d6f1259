package selftest

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// The decoders turn what the hostile tools printed back into the bytes they
// read; each is checked against the real tool's output, so a format the
// audit misreads fails here rather than passing an attack unseen.
func TestDecodersReadTheRealToolsOutput(t *testing.T) {
	secret := canaryPrefix + "decode-0123456789abcdef"
	content := []byte("A=1\nAUDIT_X=" + secret + "\n\x00\xff tail")
	for _, tc := range []struct {
		name   string
		args   []string
		decode func([]byte) []byte
	}{
		{"od -c", []string{"od", "-c"}, decodeOdC},
		{"xxd", []string{"xxd"}, decodeXxd},
	} {
		cmd := exec.Command(tc.args[0], tc.args[1:]...)
		cmd.Stdin = bytes.NewReader(content)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if bytes.Contains(out, []byte(secret)) {
			t.Fatalf("%s printed the value whole; the decoder is not what is tested", tc.name)
		}
		if got := tc.decode(out); !bytes.Contains(got, []byte(secret)) {
			t.Errorf("%s: decoded %q, which lacks the value", tc.name, got)
		}
	}
	if got := decodeXxd([]byte("00000000: 4142 4344                                ABCD\n")); string(got) != "ABCD" {
		t.Errorf("xxd: %q", got)
	}
}

// TestShellEncodeIsEncodeRaw: the shell filter the hostile scripts use and
// the Go encoder agree byte for byte, and decodeRaw reverses both.
func TestShellEncodeIsEncodeRaw(t *testing.T) {
	raw := []byte("hushcanary-x\x00\xff\n'\"$ end")
	cmd := exec.Command("sh", "-c", shellEncode)
	cmd.Stdin = bytes.NewReader(raw)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != encodeRaw(raw) {
		t.Fatalf("shell %q, Go %q", out, encodeRaw(raw))
	}
	back, err := decodeRaw(string(out))
	if err != nil || !bytes.Equal(back, raw) {
		t.Fatalf("decodeRaw: %q %v", back, err)
	}
	if strings.Contains(string(out), "6875736863616e617279") {
		t.Fatal("the encoding holds the plain hex of the value, which the redactor scrubs")
	}
}

func TestParseAttackLines(t *testing.T) {
	text := "noise\nHUSH-ATTACK a " + encodeRaw([]byte("one")) + "\n[exit code 0]\nHUSH-ATTACK b !permission denied\n" +
		"HUSH-ATTACK a " + encodeRaw([]byte("two")) + "\nHUSH-ATTACK e \n"
	got := parseAttackLines(text)
	r := &attackResult{lines: got}
	if raw, _, ok := r.field("a"); !ok || string(raw) != "one\ntwo" {
		t.Errorf("a = %q", raw)
	}
	if _, why, ok := r.field("b"); !ok || why != "permission denied" {
		t.Errorf("b = %q", why)
	}
	if raw, why, ok := r.field("e"); !ok || len(raw) != 0 || why != "" {
		t.Errorf("e = %q %q", raw, why)
	}
	if _, _, ok := r.field("missing"); ok {
		t.Error("a key never reported is present")
	}
}

// TestReadAttackNeedsItsControl: an attack whose control did not find its
// marker is FAIL, one whose control could not run is not checked, and
// only a looked-at, empty result passes.
func TestReadAttackNeedsItsControl(t *testing.T) {
	c := newAttackCanaries()
	mark := newMark()
	w := &attackWorld{world: &world{}, c: c, mark: mark}
	r := func(lines string) *attackResult {
		return &attackResult{w: w, lines: parseAttackLines(lines)}
	}
	enc := func(s string) string { return encodeRaw([]byte(s)) }
	cases := []struct {
		lines, want string
	}{
		{"HUSH-ATTACK k " + enc("x="+c[aVault]) + "\nHUSH-ATTACK ctl " + enc(mark), "LEAK"},
		{"HUSH-ATTACK k " + enc("nothing") + "\nHUSH-ATTACK ctl " + enc(mark), "pass"},
		{"HUSH-ATTACK k !permission denied\nHUSH-ATTACK ctl " + enc(mark), "pass"},
		{"HUSH-ATTACK k " + enc("nothing") + "\nHUSH-ATTACK ctl " + enc("no marker"), "FAIL"},
		{"HUSH-ATTACK k " + enc("nothing") + "\nHUSH-ATTACK ctl !script is not installed", "not checked"},
		{"HUSH-ATTACK ctl " + enc(mark), "not checked"},
	}
	for _, tc := range cases {
		if got := r(tc.lines).readAttack([]string{"k"}, []string{"ctl"}, identity); got.Status != tc.want {
			t.Errorf("%q: %s (%s), want %s", tc.lines, got.Status, got.Detail, tc.want)
		}
	}
}

// TestSiblingRowsSayWhyAnMCPServerDidNotStart: when an MCP server of the
// attack turn did not start, the rows that needed it carry what hush said
// of it — the spy's rows as not checked, the target's as a failed
// control — so a recurrence in CI says why.
func TestSiblingRowsSayWhyAnMCPServerDidNotStart(t *testing.T) {
	c := newAttackCanaries()
	mark := newMark()
	w := &attackWorld{world: &world{project: t.TempDir()}, c: c, mark: mark}
	warning := `hush: mcp server "audittarget" failed to start: exited during the MCP handshake (exit status 125); its stderr ends: hush sandbox: write gid_map: Permission denied`
	enc := func(s string) string { return encodeRaw([]byte(s)) }
	r := &attackResult{w: w, mcpWarnings: []string{warning},
		lines: parseAttackLines("HUSH-ATTACK sib-proc " + enc(mark) + "\nHUSH-ATTACK scan-proc " + enc(mark))}
	cells := r.cells()
	if got := cells[AtkSibProcBash]; got.Status != "FAIL" || !strings.Contains(got.Detail, "write gid_map: Permission denied") {
		t.Errorf("%s = %s (%s): want FAIL saying why the MCP target did not start", AtkSibProcBash, got.Status, got.Detail)
	}
	if got := cells[AtkSibProcMCP]; got.Status != "not checked" || !strings.Contains(got.Detail, "write gid_map: Permission denied") {
		t.Errorf("%s = %s (%s): want not checked saying why", AtkSibProcMCP, got.Status, got.Detail)
	}
	// Without a warning the FAIL stays as it was: no reason is invented.
	r.mcpWarnings = nil
	if got := r.cells()[AtkSibProcBash]; got.Status != "FAIL" || strings.Contains(got.Detail, "(") {
		t.Errorf("without a warning: %s (%s)", got.Status, got.Detail)
	}
}

// TestSessionKeyAttack: against the real kernel, the hostile tool's side
// of the session keyring row reads a key planted in the session keyring
// it runs in, raw, and its control keeps a key of its own; a key that is
// not there is reported as refused, with the control still arriving.
func TestSessionKeyAttack(t *testing.T) {
	canary, mark := canaryPrefix+"sesskey-0123456789ab", newMark()
	var planted error
	var got, absent map[string]string
	onFreshSessionKeyring(func() {
		id, err := plantSessionKey("hush-audit-test-key", canary)
		if planted = err; err != nil {
			return
		}
		got = parseAttackLines(strings.Join(attackSessionKey("hush-audit-test-key", mark), "\n"))
		removeSessionKey(id)
		absent = parseAttackLines(strings.Join(attackSessionKey("hush-audit-test-key", mark), "\n"))
	})
	if planted != nil {
		t.Fatalf("plant a key in a fresh session keyring: %v", planted)
	}
	for name, lines := range map[string]map[string]string{"planted": got, "removed": absent} {
		raw, err := decodeRaw(lines["session-key-control"])
		if err != nil || string(raw) != mark {
			t.Errorf("%s: the control read %q (%v), want its own key %q", name, raw, err, mark)
		}
	}
	if raw, err := decodeRaw(got["session-key"]); err != nil || !strings.Contains(string(raw), canary) {
		t.Errorf("the planted key: read %q (%v), want the canary", got["session-key"], err)
	}
	if f := absent["session-key"]; !strings.HasPrefix(f, "!") {
		t.Errorf("a removed key: got %q, want a refusal", f)
	}
}
