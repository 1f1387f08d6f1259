package redact

import (
	"bytes"
	"testing"
)

// TestBuildWaitsForText: a redactor builds its matcher only for a text at
// least as long as its shortest secret (a shorter one cannot hold one);
// a HoldingWriter's first bytes wait for that length, unscanned, and a
// secret written to it a byte at a time across the build is still caught;
// a Writer holds back no short line. The control: a long enough text
// builds it and is redacted.
func TestBuildWaitsForText(t *testing.T) {
	t.Parallel()
	r := FromMap(map[string]string{"A": "abcdefgh-secret-1", "B": "0123456789ab", "C": "x"})
	built := func() bool { return r.lazy.secrets == nil }
	if got := r.String("abcdefgh-se"); got != "abcdefgh-se" || built() {
		t.Fatalf("an 11-byte text: %q, built %v", got, built())
	}
	var short bytes.Buffer
	w := r.HoldingWriter(&short)
	mustWrite(t, w, []byte("done"))
	if short.Len() != 0 || w.Buffered() != 4 {
		t.Errorf("4 bytes of a stream: %d written, %d held", short.Len(), w.Buffered())
	}
	if err := w.Close(); err != nil || short.String() != "done" || built() {
		t.Fatalf("a 4-byte stream: %q %v, built %v", short.String(), err, built())
	}

	var out bytes.Buffer
	w = r.HoldingWriter(&out)
	for _, c := range []byte("pre abcdefgh-secret-1 post") {
		mustWrite(t, w, []byte{c})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if out.String() != "pre [REDACTED:A] post" || !built() {
		t.Errorf("a secret written a byte at a time: %q, built %v", out.String(), built())
	}
	// A Writer (a process's live output) holds nothing back for that:
	// a short line is written at once.
	var live bytes.Buffer
	w = FromMap(map[string]string{"A": "abcdefgh-secret-1"}).Writer(&live)
	mustWrite(t, w, []byte("ready\n"))
	if live.String() != "ready\n" {
		t.Errorf("a Writer held a short line: %q written", live.String())
	}

	if got := r.String("key 0123456789ab"); got != "key [REDACTED:B]" {
		t.Errorf("control: %q", got)
	}
}

// TestFromMapIsACopy: FromMap builds from the map as it was given, even
// when it builds later and the map has changed since.
func TestFromMapIsACopy(t *testing.T) {
	t.Parallel()
	m := map[string]string{"A": "first-secret-value"}
	r := FromMap(m)
	m["A"] = "second-secret-value"
	if got := r.String("first-secret-value second-secret-value"); got != "[REDACTED:A] second-secret-value" {
		t.Errorf("%q", got)
	}
}
