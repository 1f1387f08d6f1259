package auditlog

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestRender(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	entries := []Entry{
		{Time: at, Turn: 1, Tool: "bash", Gate: "tool.run:bash", Decision: Allow, Source: "rule", Rule: "allow tool.run:bash"},
		{Time: at, Turn: 2, Tool: "bash", Gate: "vault.read:K", Decision: Deny, Source: "prompt"},
	}
	if got := Last(entries, 1); len(got) != 1 || got[0].Turn != 2 {
		t.Errorf("Last(1) = %v", got)
	}
	if got := Last(entries, 0); len(got) != 2 {
		t.Errorf("Last(0) = %v", got)
	}
	var out bytes.Buffer
	if err := WriteTable(&out, entries, "/d/audit.jsonl"); err != nil {
		t.Fatal(err)
	}
	want := "TIME                 TURN  TOOL  GATE           DECISION  BY\n" +
		"2026-01-02 03:04:05  1     bash  tool.run:bash  allow     rule: allow tool.run:bash\n" +
		"2026-01-02 03:04:05  2     bash  vault.read:K   deny      prompt\n"
	if out.String() != want {
		t.Errorf("table =\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	if err := WriteTable(&out, nil, "/d/audit.jsonl"); err != nil || out.String() != "no decisions recorded yet (/d/audit.jsonl)\n" {
		t.Errorf("empty table %q, %v", out.String(), err)
	}
	out.Reset()
	if err := WriteJSON(&out, entries); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], `"gate":"vault.read:K"`) {
		t.Errorf("JSON lines:\n%s", out.String())
	}
	back, _, err := decode(strings.NewReader(out.String()))
	if err != nil || len(back) != 2 || back[0].Rule != "allow tool.run:bash" {
		t.Errorf("the JSON does not read back: %v, %v", back, err)
	}
}
