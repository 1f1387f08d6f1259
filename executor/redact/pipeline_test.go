package redact

import (
	"bytes"
	"testing"

	"github.com/hushcli/hush/executor/outbuf"
)

// TestSanitizeThenRedact pins down the order the executor must use: a value
// coloured by grep --color is invisible to the redactor until the
// sanitiser has removed the escape sequences inside it.
func TestSanitizeThenRedact(t *testing.T) {
	t.Parallel()
	r := New([]Secret{{"API_KEY", "sk-abc123def456"}})
	const coloured = "KEY=sk-\x1b[01;31m\x1b[Kabc\x1b[m\x1b[K123def456\n"

	if got, want := r.String(coloured), coloured; got != want {
		t.Fatalf("redactor alone changed the input: %q", got)
	}
	if got, want := r.String(outbuf.Sanitize(coloured)), "KEY=[REDACTED:API_KEY]\n"; got != want {
		t.Fatalf("sanitise then redact = %q, want %q", got, want)
	}

	// The same through the streaming forms, one byte at a time.
	var out bytes.Buffer
	rw := r.Writer(&out)
	sw := outbuf.NewSanitizeWriter(rw)
	for i := range len(coloured) {
		if _, err := sw.Write([]byte{coloured[i]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "KEY=[REDACTED:API_KEY]\n"; got != want {
		t.Fatalf("streaming = %q, want %q", got, want)
	}
}
