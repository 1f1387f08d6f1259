package auditlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuditFollowsItsPath: the log keeps its file open between records, so
// a log removed or moved aside while hush runs must not swallow what
// follows: the next record goes to a new file at the same path.
func TestAuditFollowsItsPath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "data", FileName)
	log := Open(path)
	defer log.Close()
	record := func(gate string) {
		t.Helper()
		if err := log.Record(Entry{Tool: "bash", Gate: gate, Decision: Allow, Source: "rule"}); err != nil {
			t.Fatal(err)
		}
	}
	gates := func(p string) string {
		t.Helper()
		entries, err := Read(p)
		if err != nil {
			t.Fatal(err)
		}
		var g []string
		for _, e := range entries {
			g = append(g, e.Gate)
		}
		return strings.Join(g, " ")
	}
	record("one")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	record("two")
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil { // rotated: a new empty log
		t.Fatal(err)
	}
	record("three")
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	record("four") // a closed log opens again
	if got := gates(path); got != "three four" {
		t.Errorf("log holds %q, want %q", got, "three four")
	}
	if got := gates(path + ".1"); got != "two" {
		t.Errorf("rotated log holds %q, want %q", got, "two")
	}
}
