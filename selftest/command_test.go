package selftest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestReportPrint(t *testing.T) {
	t.Parallel()
	ok := &Report{Verdict: "no secret reached a tool", Risks: []string{"a risk"}}
	var out bytes.Buffer
	if err := ok.Print(&out, true); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(out.Bytes(), &back); err != nil || back.Verdict != ok.Verdict || len(back.Risks) != 1 {
		t.Errorf("JSON does not read back: %v, %+v", err, back)
	}
	leak := &Report{Leaks: 1, Verdict: "LEAK: 1 secret reached a tool"}
	out.Reset()
	if err := leak.Print(&out, false); err == nil || err.Error() != leak.Verdict {
		t.Errorf("a leaking report printed without its verdict as the error: %v", err)
	}
	if !strings.Contains(out.String(), leak.Verdict) {
		t.Errorf("the rendered report lacks the verdict:\n%s", out.String())
	}
}
