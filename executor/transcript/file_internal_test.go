package transcript

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// After one failed write the file takes no further entry, however small,
// and the user is told once.
func TestWriteFailureEndsWriting(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	var notices []string
	w := &File{f: full, Notice: func(err error) { notices = append(notices, err.Error()) }}
	if _, err := w.Write([]byte(strings.Repeat("x", 5000) + "\n")); !errors.Is(err, ErrStorage) {
		t.Fatalf("first write: %v", err)
	}
	// A later, smaller entry would fit on a real disk once space frees; it
	// must not be written after the hole.
	ok, _ := os.CreateTemp(t.TempDir(), "t")
	w.f = ok
	if _, err := w.Write([]byte("{}\n")); !errors.Is(err, ErrStorage) {
		t.Fatalf("a write after the failure: %v", err)
	}
	if st, _ := ok.Stat(); st.Size() != 0 {
		t.Errorf("%d bytes were written after the failure", st.Size())
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "/dev/full") {
		t.Errorf("notices %q, want one naming the file", notices)
	}
	full.Close()
	ok.Close()
}
