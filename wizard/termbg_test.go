package wizard

import "testing"

func TestParseBackground(t *testing.T) {
	for _, c := range []struct {
		in       string
		dark, ok bool
	}{
		{"\x1b]11;rgb:1c1c/1c1c/1c1c\x1b\\\x1b[12;1R", true, true},
		{"\x1b]11;rgb:ffff/ffff/f0f0\x07\x1b[1;1R", false, true},
		{"\x1b]11;rgb:ff/ff/ff\x07", false, true},
		{"\x1b[3;4R", false, false},
		{"\x1b]11;rgb:zz/00/00\x07", false, false},
	} {
		dark, ok := parseBackground([]byte(c.in))
		if dark != c.dark || ok != c.ok {
			t.Errorf("parseBackground(%q) = %v, %v; want %v, %v", c.in, dark, ok, c.dark, c.ok)
		}
	}
	if !cursorReport([]byte("\x1b]11;rgb:0/0/0\x07\x1b[24;80R")) || cursorReport([]byte("\x1b[24;80")) || cursorReport([]byte("\x1b[R")) {
		t.Error("cursorReport misreads a report")
	}
}
