package redact

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

func TestString(t *testing.T) {
	t.Parallel()
	b64 := base64.StdEncoding.EncodeToString
	tests := []struct {
		name    string
		secrets []Secret
		in      string
		want    string
	}{
		{"empty input", []Secret{{"K", "sk-abc123def456"}}, "", ""},
		{"clean input", []Secret{{"K", "sk-abc123def456"}}, "nothing to see here", "nothing to see here"},
		{"literal", []Secret{{"API_KEY", "sk-abc123def456"}}, "token=sk-abc123def456 ok", "token=[REDACTED:API_KEY] ok"},
		{"whole input", []Secret{{"K", "sk-abc123def456"}}, "sk-abc123def456", "[REDACTED:K]"},
		{"at start", []Secret{{"K", "sk-abc123def456"}}, "sk-abc123def456 tail", "[REDACTED:K] tail"},
		{"at end", []Secret{{"K", "sk-abc123def456"}}, "head sk-abc123def456", "head [REDACTED:K]"},
		{"repeated", []Secret{{"K", "sk-abc123def456"}}, "sk-abc123def456 sk-abc123def456\nsk-abc123def456", "[REDACTED:K] [REDACTED:K]\n[REDACTED:K]"},
		{"adjacent", []Secret{{"K", "sk-abc123def456"}}, "sk-abc123def456sk-abc123def456", "[REDACTED:K][REDACTED:K]"},
		{"several secrets", []Secret{{"A", "alpha-secret-1"}, {"B", "bravo-secret-2"}}, "a=alpha-secret-1 b=bravo-secret-2", "a=[REDACTED:A] b=[REDACTED:B]"},
		{"partial value is not a match", []Secret{{"K", "sk-abc123def456"}}, "sk-abc123def45 k-abc123def456", "sk-abc123def45 k-abc123def456"},
		{"prefix secret, longer wins", []Secret{{"SHORT", "abcd1234"}, {"LONG", "abcd1234EXTRA"}}, "x abcd1234EXTRA y", "x [REDACTED:LONG] y"},
		{"prefix secret, longer wins in either order", []Secret{{"LONG", "abcd1234EXTRA"}, {"SHORT", "abcd1234"}}, "x abcd1234EXTRA y", "x [REDACTED:LONG] y"},
		{"prefix secret, shorter when longer incomplete", []Secret{{"SHORT", "abcd1234"}, {"LONG", "abcd1234EXTRA"}}, "abcd1234EXTR", "[REDACTED:SHORT]EXTR"},
		{"overlap, earliest wins", []Secret{{"B", "wxyzABCD"}, {"A", "1234wxyz"}}, "1234wxyzABCD", "[REDACTED:A]ABCD"},
		{"overlap, earliest wins over longer", []Secret{{"A", "1234wxyz"}, {"B", "34wxyzABCDEFGH"}}, "1234wxyzABCDEFGH", "[REDACTED:A]ABCDEFGH"},
		{"contained secret", []Secret{{"OUTER", "my-long-token-value"}, {"INNER", "long-token"}}, "my-long-token-value long-token", "[REDACTED:OUTER] [REDACTED:INNER]"},
		{"same value, first name", []Secret{{"FIRST", "shared-value"}, {"SECOND", "shared-value"}}, "shared-value", "[REDACTED:FIRST]"},
		{"short value excluded", []Secret{{"SHORT", "abc"}, {"OK", "abcd"}}, "abc abcd abcabc", "abc [REDACTED:OK] abcabc"},
		{"value of MinLen", []Secret{{"PIN", "1234"}}, "pin 1234!", "pin [REDACTED:PIN]!"},
		{"empty value", []Secret{{"EMPTY", ""}}, "anything", "anything"},
		{"binary value", []Secret{{"BIN", "\x00\xff\x10\x80"}}, "a\x00\xff\x10\x80b", "a[REDACTED:BIN]b"},
		{"multibyte value", []Secret{{"U", "pässwörd"}}, "pw: pässwörd.", "pw: [REDACTED:U]."},

		// base64 of the value on its own.
		{"base64 std", []Secret{{"PW", "hunter2-correct-horse"}}, "aHVudGVyMi1jb3JyZWN0LWhvcnNl", "[REDACTED:PW]"},
		{"base64 std padded", []Secret{{"K", "k>>>???-value"}}, "v=az4+Pj8/Py12YWx1ZQ==;", "v=[REDACTED:K];"},
		{"base64 std raw", []Secret{{"K", "k>>>???-value"}}, "v=az4+Pj8/Py12YWx1ZQ;", "v=[REDACTED:K];"},
		{"base64 url padded", []Secret{{"K", "k>>>???-value"}}, "v=az4-Pj8_Py12YWx1ZQ==;", "v=[REDACTED:K];"},
		{"base64 url raw", []Secret{{"K", "k>>>???-value"}}, "v=az4-Pj8_Py12YWx1ZQ;", "v=[REDACTED:K];"},
		// base64 of "<pre>"+value+"yy": the value at offset 0, 1, 2 mod 3.
		{"base64 std offset 0", []Secret{{"K", "k>>>???-value"}}, "az4+Pj8/Py12YWx1ZXl5", "[REDACTED:K]Xl5"},
		{"base64 std offset 1", []Secret{{"K", "k>>>???-value"}}, "eGs+Pj4/Pz8tdmFsdWV5eQ==", "eG[REDACTED:K]V5eQ=="},
		{"base64 std offset 2", []Secret{{"K", "k>>>???-value"}}, "eHhrPj4+Pz8/LXZhbHVleXk=", "eHh[REDACTED:K]eXk="},
		{"base64 url offset 0", []Secret{{"K", "k>>>???-value"}}, "az4-Pj8_Py12YWx1ZXl5", "[REDACTED:K]Xl5"},
		{"base64 url offset 1", []Secret{{"K", "k>>>???-value"}}, "eGs-Pj4_Pz8tdmFsdWV5eQ==", "eG[REDACTED:K]V5eQ=="},
		{"base64 url offset 2", []Secret{{"K", "k>>>???-value"}}, "eHhrPj4-Pz8_LXZhbHVleXk=", "eHh[REDACTED:K]eXk="},
		{"basic auth header", []Secret{{"PW", "hunter2-correct-horse"}}, "Authorization: Basic " + b64([]byte("user:hunter2-correct-horse")), "Authorization: Basic dXNlcjp[REDACTED:PW]U="},

		// URL encodings.
		{"query escape", []Secret{{"P", "p@ss/w0rd+&= x"}}, "?pw=p%40ss%2Fw0rd%2B%26%3D+x&a=1", "?pw=[REDACTED:P]&a=1"},
		{"path escape", []Secret{{"P", "p@ss/w0rd+&= x"}}, "/u/p@ss%2Fw0rd+&=%20x/", "/u/[REDACTED:P]/"},
		{"literal with url metachars", []Secret{{"P", "p@ss/w0rd+&= x"}}, "pw p@ss/w0rd+&= x.", "pw [REDACTED:P]."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := New(tt.secrets)
			if got := r.String(tt.in); got != tt.want {
				t.Errorf("String(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if got := string(r.Bytes([]byte(tt.in))); got != tt.want {
				t.Errorf("Bytes(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if got := streamAll(r, []byte(tt.in), 1); got != tt.want {
				t.Errorf("Writer, 1-byte writes (%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestPlaceholderExact(t *testing.T) {
	t.Parallel()
	r := New([]Secret{{Name: "GITHUB_TOKEN", Value: "ghp_0123456789abcdef"}})
	if got, want := r.String("ghp_0123456789abcdef"), "[REDACTED:GITHUB_TOKEN]"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestNilAndEmptyPassThrough(t *testing.T) {
	t.Parallel()
	const in = "some output with\x00binary\xff and text"
	for name, r := range map[string]*Redactor{
		"nil":         nil,
		"no secrets":  New(nil),
		"only short":  New([]Secret{{"S", "abc"}}),
		"empty value": New([]Secret{{"E", ""}}),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := r.String(in); got != in {
				t.Errorf("String = %q", got)
			}
			if got := string(r.Bytes([]byte(in))); got != in {
				t.Errorf("Bytes = %q", got)
			}
			if got := streamAll(r, []byte(in), 3); got != in {
				t.Errorf("Writer = %q", got)
			}
			if r.Len() != 0 {
				t.Errorf("Len = %d, want 0", r.Len())
			}
		})
	}
}

func TestBytesDoesNotModifyInput(t *testing.T) {
	t.Parallel()
	r := New([]Secret{{"K", "sk-abc123def456"}})
	in := []byte("a sk-abc123def456 b")
	orig := string(in)
	out := r.Bytes(in)
	if string(in) != orig {
		t.Fatalf("input modified: %q", in)
	}
	if string(out) != "a [REDACTED:K] b" {
		t.Fatalf("out = %q", out)
	}
}

func TestLenCountsDistinctForms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		secrets []Secret
		want    int
	}{
		// value, std padded = url padded, raw = raw url, offsets 0/1/2 in
		// one alphabet (the other alphabet gives the same text).
		// Its hex has no letter, so lower and upper case are one form.
		{"alnum value", []Secret{{"A", "abcdefgh"}}, 1 + 2 + 3 + 1},
		// "abcdefghi" is 9 bytes: padded == raw, offset 0 == raw.
		{"no padding", []Secret{{"A", "abcdefghi"}}, 1 + 1 + 2 + 1},
		{"too short", []Secret{{"A", "abc"}}, 0},
		{"duplicate", []Secret{{"A", "abcdefgh"}, {"B", "abcdefgh"}}, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := New(tt.secrets).Len(); got != tt.want {
				t.Errorf("Len = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestFormattingHidesValues(t *testing.T) {
	t.Parallel()
	const value = "sk-very-secret-value"
	s := Secret{Name: "API_KEY", Value: value}
	r := New([]Secret{s})
	w := r.Writer(&bytes.Buffer{})
	if _, err := w.Write([]byte("sk-very")); err != nil { // holds a prefix
		t.Fatal(err)
	}
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	logger.Info("x", "secret", s, "redactor", r, "writer", w)
	slog.New(slog.NewTextHandler(&logs, nil)).Info("x", "secret", s, "secrets", []Secret{s})
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		got := fmt.Sprintf(verb+" "+verb+" "+verb+" "+verb, s, []Secret{s}, r, w)
		for _, leak := range []string{value, "sk-very", fmt.Sprintf("%x", "sk-very")} {
			if strings.Contains(got, leak) {
				t.Errorf("%s leaks %q: %s", verb, leak, got)
			}
		}
	}
	if strings.Contains(logs.String(), "sk-very") {
		t.Errorf("slog leaks: %s", logs.String())
	}
	if got, want := fmt.Sprint(s), `redact.Secret{Name: "API_KEY"}`; got != want {
		t.Errorf("Secret prints %q, want %q", got, want)
	}
	if got, want := fmt.Sprint(r), "redact.Redactor{secrets: 1, patterns: 8}"; got != want {
		t.Errorf("Redactor prints %q, want %q", got, want)
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	r := New([]Secret{{"A", "alpha-secret-1"}, {"B", "bravo-secret-2"}})
	in := strings.Repeat("x alpha-secret-1 y bravo-secret-2 z ", 200)
	want := strings.Repeat("x [REDACTED:A] y [REDACTED:B] z ", 200)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if got := r.String(in); got != want {
				t.Errorf("String mismatch")
			}
			if got := streamAll(r, []byte(in), 7+i); got != want {
				t.Errorf("Writer mismatch")
			}
		})
	}
	wg.Wait()
}

// streamAll writes in through a Writer in chunks of size n.
func streamAll(r *Redactor, in []byte, n int) string {
	var out bytes.Buffer
	w := r.Writer(&out)
	for len(in) > 0 {
		k := min(n, len(in))
		if _, err := w.Write(in[:k]); err != nil {
			panic(err)
		}
		in = in[k:]
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return out.String()
}
