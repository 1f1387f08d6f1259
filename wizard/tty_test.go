package wizard

import (
	"bytes"
	"strings"
	"testing"
)

type rw struct {
	*strings.Reader
	*bytes.Buffer
}

func (r rw) Read(p []byte) (int, error) { return r.Reader.Read(p) }

func TestAskTTY(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{"y\n": true, " YES \n": true, "Yes": true, "n\n": false, "\n": false, "yep\n": false, "": false} {
		out := &bytes.Buffer{}
		if got := AskTTY(rw{strings.NewReader(in), out}, "Go? "); got != want || out.String() != "Go? " {
			t.Errorf("AskTTY(%q) = %v (asked %q), want %v", in, got, out, want)
		}
	}
	if Terminal(strings.NewReader("")) != nil {
		t.Error("a strings.Reader is a terminal")
	}
}
