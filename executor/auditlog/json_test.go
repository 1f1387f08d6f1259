package auditlog

import (
	"encoding/json"
	"testing"
	"time"
)

// TestAuditEntryJSONIsEncodingJSON holds the hand-written encoder to
// encoding/json, byte for byte: names a tool or a rule could carry
// (quotes, HTML characters, control bytes, invalid UTF-8, U+2028) and the
// omitted empty fields.
func TestAuditEntryJSONIsEncodingJSON(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 2, 3, 4, 5006000, time.UTC)
	for _, e := range []Entry{
		{Time: at, Turn: 1, Tool: "bash", Gate: "tool.run:bash", Decision: Allow, Source: "rule", Rule: "allow tool.run:bash for bash"},
		{Time: at.Truncate(time.Second), Session: "20261130T020304Z-42", Turn: 12, Tool: "mcp:github", Gate: "vault.read:GITHUB_TOKEN", Decision: Deny, Source: "default"},
		{Time: at, Tool: `we"ird\\<tool>&`, Gate: "tool.run:\x01\n\t\u2028", Decision: Ask, Source: "prompt", Rule: "caf\xe9 \xff"},
		{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Tool: "x"},
		{},
	} {
		want, wantErr := json.Marshal(e)
		got, err := e.appendJSON(nil)
		if string(got) != string(want) || (err == nil) != (wantErr == nil) {
			t.Errorf("appendJSON = %s, %v\njson.Marshal = %s, %v", got, err, want, wantErr)
		}
	}
}

func FuzzAuditEntryJSON(f *testing.F) {
	f.Add("bash", "tool.run:bash", "allow tool.run:bash for bash", "s-1", 3, int64(1780000000123456789))
	f.Add("<&>", "\x00\u2028", "\xff", "", -1, int64(0))
	f.Fuzz(func(t *testing.T, tool, gate, rule, session string, turn int, nanos int64) {
		e := Entry{Time: time.Unix(0, nanos).UTC(), Session: session, Turn: turn, Tool: tool, Gate: gate, Decision: Decision(rule), Source: tool, Rule: rule}
		want, wantErr := json.Marshal(e)
		got, err := e.appendJSON(nil)
		if string(got) != string(want) || (err == nil) != (wantErr == nil) {
			t.Fatalf("appendJSON = %s, %v\njson.Marshal = %s, %v", got, err, want, wantErr)
		}
	})
}
