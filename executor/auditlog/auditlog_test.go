package auditlog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
		entries, _, err := Read(p)
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

func record(t *testing.T, log *Log, gate string) {
	t.Helper()
	if err := log.Record(Entry{Tool: "bash", Gate: gate, Decision: Allow, Source: "rule"}); err != nil {
		t.Fatal(err)
	}
}

func gatesOf(entries []Entry) string {
	var g []string
	for _, e := range entries {
		g = append(g, e.Gate)
	}
	return strings.Join(g, " ")
}

// TestTornLastLine: a log whose last line was torn (`truncate -s -60`, a
// crash mid-write) is closed off when opened, reported, and every record
// before and after it stays readable; the reader skips the torn line by
// number instead of failing ("line 3: not an audit entry" hid every later
// record).
func TestTornLastLine(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	log := Open(path)
	for _, g := range []string{"one", "two", "three"} {
		record(t, log, g)
	}
	log.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, fi.Size()-60); err != nil {
		t.Fatal(err)
	}
	var notices []string
	log = Open(path)
	log.Notice = func(s string) { notices = append(notices, s) }
	record(t, log, "four")
	record(t, log, "five")
	log.Close()
	if len(notices) != 1 || !strings.Contains(notices[0], "the last line of "+path+" was torn") {
		t.Errorf("notices %q, want one saying the last line was torn", notices)
	}
	entries, damage, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := gatesOf(entries); got != "one two four five" {
		t.Errorf("read %q, want every whole record: one two four five", got)
	}
	if len(damage.Lines) != 1 || damage.Lines[0] != 3 {
		t.Errorf("damage %v, want line 3", damage.Lines)
	}
	if want := path + ": skipped 1 damaged line (not an audit entry: 3); every other record is shown"; damage.Describe(path) != want {
		t.Errorf("Describe = %q\nwant %q", damage.Describe(path), want)
	}
	// Garbage in the middle is skipped the same way, by number.
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, append([]byte("not json\n{}\n"), data...), 0o600); err != nil {
		t.Fatal(err)
	}
	entries, damage, _ = Read(path)
	if gatesOf(entries) != "one two four five" || len(damage.Lines) != 3 || damage.Lines[0] != 1 || damage.Lines[1] != 2 || damage.Lines[2] != 5 {
		t.Errorf("read %q, damage %v; want the four records and lines 1, 2, 5", gatesOf(entries), damage.Lines)
	}
}

// TestDiskFull: on a full file system (a 64 KiB tmpfs) a record that does
// not fit fails — so the decision is not taken — and leaves no partial
// line; every record that was accepted stays readable, and once there is
// room again records are written again.
func TestDiskFull(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k,mode=0700"); err != nil {
		t.Skipf("cannot mount a 64 KiB tmpfs here (needs root or a mount namespace): %v", err)
	}
	defer syscall.Unmount(dir, syscall.MNT_DETACH)
	path := filepath.Join(dir, FileName)
	// Most of the space goes to a filler, so the log fills up within a
	// few hundred records.
	filler := filepath.Join(dir, "filler")
	if err := os.WriteFile(filler, make([]byte, 40<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	log := Open(path)
	defer log.Close()
	var accepted []string
	var failure error
	for i := 0; i < 10000 && failure == nil; i++ {
		g := fmt.Sprintf("vault.read:SECRET_%05d_%s", i, strings.Repeat("x", i%97))
		if err := log.Record(Entry{Tool: "bash", Gate: g, Decision: Allow, Source: "rule"}); err != nil {
			failure = err
		} else {
			accepted = append(accepted, g)
		}
	}
	if failure == nil {
		t.Fatal("the tmpfs never filled up")
	}
	if !strings.Contains(failure.Error(), "no space left on device") {
		t.Errorf("error %v, want it to say the disk is full", failure)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Errorf("the failed record left a partial line: %q", data[max(0, len(data)-80):])
	}
	entries, damage, err := Read(path)
	if err != nil || len(damage.Lines) > 0 || gatesOf(entries) != strings.Join(accepted, " ") {
		t.Errorf("after the disk filled: %d of %d records, damage %v, err %v", len(entries), len(accepted), damage.Lines, err)
	}
	// Room again: records go on, readable.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	record(t, log, "after")
	entries, damage, _ = Read(path)
	if len(entries) != len(accepted)+1 || entries[len(entries)-1].Gate != "after" || len(damage.Lines) > 0 {
		t.Errorf("after freeing space: %d entries (want %d), damage %v", len(entries), len(accepted)+1, damage.Lines)
	}
}
