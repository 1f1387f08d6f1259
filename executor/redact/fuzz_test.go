package redact

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzWriterSplits checks that any chunking of any input through a Writer
// gives exactly String of the whole input, and that no pattern — value or
// encoded form — survives in the output. The secrets contain no '[' or ']'
// and no pattern is part of a placeholder, so any surviving pattern would be
// a real miss rather than an artefact of the placeholder text.
func FuzzWriterSplits(f *testing.F) {
	text := []byte(straddleText())
	f.Add(text, []byte{1, 2, 3, 5, 8, 13, 21, 34})
	f.Add(text, []byte{0, 63, 17})
	f.Add([]byte("sk-abc123def456-and-mor"), []byte{7})
	f.Add([]byte("4242424242"), []byte{1})
	f.Add([]byte{}, []byte{})

	r := New(straddleSecrets)
	var patterns []string
	for _, s := range straddleSecrets {
		for _, p := range forms(s.Value) {
			if len(p) >= MinLen {
				patterns = append(patterns, p)
			}
		}
	}

	f.Fuzz(func(t *testing.T, text, cuts []byte) {
		want := r.String(string(text))
		if got := string(r.Bytes(text)); got != want {
			t.Fatalf("Bytes %q != String %q", got, want)
		}
		for _, p := range patterns {
			if bytes.Contains([]byte(want), []byte(p)) {
				t.Fatalf("pattern %q survives in %q", p, want)
			}
		}

		var out bytes.Buffer
		w := r.Writer(&out)
		rest := text
		for _, c := range cuts {
			k := min(int(c%64), len(rest))
			mustWrite(t, w, rest[:k])
			rest = rest[k:]
			if w.Buffered() > r.rmax+tailLook {
				t.Fatalf("holding %d bytes, bound %d", w.Buffered(), r.rmax+tailLook)
			}
		}
		mustWrite(t, w, rest)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("chunks %v of %q:\n got %q\nwant %q", cuts, text, out.String(), want)
		}
	})
}

// FuzzMatchesReference compares String with a brute-force leftmost-longest
// replacement over the same patterns, for fuzzed secrets as well as text.
func FuzzMatchesReference(f *testing.F) {
	f.Add("sk-abc123def456", "sk-abc123def456-and-more", "x sk-abc123def456-and-more sk-abc123def456 y")
	f.Add("abcd", "bcdefgh", "abcdefgh bcdefgh abcd")
	f.Add("k>>>???-value", "p@ss/w0rd+&= x", "eHhrPj4+Pz8/LXZhbHVleXk= p%40ss%2Fw0rd%2B%26%3D+x")
	f.Fuzz(func(t *testing.T, a, b, text string) {
		secrets := []Secret{{"A", a}, {"B", b}}
		r := build(secrets, false) // the reference knows the literal forms only
		if got, want := r.String(text), referenceRedact(secrets, text); got != want {
			t.Fatalf("secrets %q %q text %q:\n got %q\nwant %q", a, b, text, got, want)
		}
		if got, want := streamAll(r, []byte(text), 1+len(text)%7), r.String(text); got != want {
			t.Fatalf("stream %q != String %q", got, want)
		}
	})
}

// referenceRedact is the specification written as plainly as possible:
// at each position take the longest pattern, literals before encodings and
// earlier secrets first among equal patterns.
func referenceRedact(secrets []Secret, text string) string {
	type pat struct{ p, name string }
	var pats []pat
	seen := map[string]bool{}
	add := func(p, name string) {
		if len(p) >= MinLen && !seen[p] {
			seen[p] = true
			pats = append(pats, pat{p, name})
		}
	}
	for _, s := range secrets {
		add(s.Value, s.Name)
	}
	for _, s := range secrets {
		if len(s.Value) >= MinLen {
			for _, f := range forms(s.Value) {
				add(f, s.Name)
			}
		}
	}
	var out []byte
	for i := 0; i < len(text); {
		best := -1
		for j, p := range pats {
			if len(text)-i >= len(p.p) && text[i:i+len(p.p)] == p.p && (best < 0 || len(p.p) > len(pats[best].p)) {
				best = j
			}
		}
		if best < 0 {
			out = append(out, text[i])
			i++
			continue
		}
		out = append(out, "[REDACTED:"+pats[best].name+"]"...)
		i += len(pats[best].p)
	}
	return string(out)
}

// FuzzEncodedSecretNeverSurvives encodes a fuzzed secret with one of the
// forms in the table (forms_test.go), at a fuzzed offset, between fuzzed
// plain text, streams it through a Writer in three fuzzed pieces, and
// checks that nothing of the encoded value survives and that the stream
// equals the one-shot result. One secret per run keeps New cheap, so the
// target gets many runs in the seconds CI gives it.
func FuzzEncodedSecretNeverSurvives(f *testing.F) {
	f.Add([]byte(`p@ss w/"q'\<&>%7e$x!`), uint8(0), uint8(1), []byte("out: "), []byte(" done\n"), uint16(7), uint16(30))
	f.Add([]byte("ghp_9fK2mQ7xW4tZ8vB1nR6yC3"), uint8(3), uint8(2), []byte(""), []byte("\n"), uint16(40), uint16(41))
	f.Add([]byte("sk-live-0123456789abcdef"), uint8(14), uint8(3), []byte("x"), []byte("y"), uint16(0), uint16(200))
	f.Fuzz(func(t *testing.T, secret []byte, form, off uint8, pre, post []byte, cut1, cut2 uint16) {
		// A secret of printable ASCII without the placeholder's brackets,
		// long enough that an 8-byte stretch of it is telling.
		v := make([]byte, 0, len(secret))
		for _, c := range secret {
			if c >= 0x20 && c < 0x7f && c != '[' && c != ']' {
				v = append(v, c)
			}
		}
		if len(v) < 12 || len(v) > 64 {
			return
		}
		// Text around the form is plain: a backslash or % just before an
		// escaped form would change what the form means to any decoder.
		plain := func(b []byte) string {
			out := make([]byte, 0, len(b))
			for _, c := range b {
				out = append(out, "abc xyz:.\n"[int(c)%10])
			}
			return string(out)
		}
		e := encoders[int(form)%len(encoders)]
		p := strings.Repeat("z", int(off)%4)
		var encoded, core string
		if e.whole {
			encoded = p + e.enc("", string(v), "")
			core = e.core(e.enc("", string(v), ""), "", string(v))
		} else {
			encoded = e.enc(p, string(v), "!!")
			core = e.core(encoded, p, string(v))
		}
		in := plain(pre) + " " + encoded + " " + plain(post)
		r := New([]Secret{{"S", string(v)}})
		want := r.String(in)
		if left, bad := survives(core, want); bad {
			t.Fatalf("%s: %q of %q survives in %q", e.name, left, v, want)
		}
		var out bytes.Buffer
		w := r.Writer(&out)
		a := min(int(cut1), len(in))
		b := min(max(a, int(cut2)), len(in))
		mustWrite(t, w, []byte(in[:a]))
		mustWrite(t, w, []byte(in[a:b]))
		mustWrite(t, w, []byte(in[b:]))
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("%s: pieces at %d, %d:\n got %q\nwant %q", e.name, a, b, out.String(), want)
		}
	})
}
