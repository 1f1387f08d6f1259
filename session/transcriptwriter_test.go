package session

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestTranscriptWriteFailureIsReported: on a full disk (a 64 KiB tmpfs) a
// transcript write fails, the user is told once, and the file keeps whole
// lines only.
func TestTranscriptWriteFailureIsReported(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k,mode=0700"); err != nil {
		t.Skipf("cannot mount a 64 KiB tmpfs here (needs root or a mount namespace): %v", err)
	}
	defer syscall.Unmount(dir, syscall.MNT_DETACH)
	f, err := os.OpenFile(filepath.Join(dir, "s.jsonl"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var notices []string
	w := &reportingWriter{f: f, notice: func(s string) { notices = append(notices, s) }}
	line := []byte(`{"type":"message","text":"` + strings.Repeat("x", 1000) + `"}` + "\n")
	failed := 0
	for i := 0; i < 200; i++ {
		if _, err := w.Write(line); err != nil {
			failed++
		}
	}
	if failed == 0 {
		t.Fatal("the tmpfs never filled up")
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "could not be written") || !strings.Contains(notices[0], "no space left on device") {
		t.Errorf("notices %q, want one saying the transcript could not be written", notices)
	}
	data, _ := os.ReadFile(f.Name())
	if len(data)%len(line) != 0 || !bytes.HasSuffix(data, []byte("\n")) {
		t.Errorf("the transcript holds a partial line (%d bytes, lines of %d)", len(data), len(line))
	}
}
