package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// An encoder is one way a tool prints a value: pre and post are bytes the
// tool encodes together with the value (base64 and hex of a larger buffer),
// so the value sits at any offset of the encoded stream.
type encoder struct {
	name string
	enc  func(pre, v, post string) string
	// whole: the value is encoded on its own (escaping forms); pre and
	// post are plain text around it.
	whole bool
	hex   bool // a hex encoding (else base64, unless whole)
}

// core returns the characters of encoded (enc(pre, v, post)) that come from
// v's bits alone, line breaks removed: what must not survive.
func (e encoder) core(encoded, pre, v string) string {
	s := stripBreaks(encoded)
	switch {
	case e.whole:
		return s
	case e.hex:
		return s[2*len(pre) : 2*(len(pre)+len(v))]
	}
	return s[(8*len(pre)+5)/6 : 8*(len(pre)+len(v))/6]
}

func wrap(s string, w int) string {
	var b strings.Builder
	for len(s) > w {
		b.WriteString(s[:w] + "\n")
		s = s[w:]
	}
	b.WriteString(s)
	return b.String()
}

func wrapCRLF(s string, w int) string { return strings.ReplaceAll(wrap(s, w), "\n", "\r\n") }

// pctAll percent-encodes every byte outside RFC 3986's unreserved set.
func pctAll(v string, upper bool) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		h := fmt.Sprintf("%%%02X", c)
		if !upper {
			h = strings.ToLower(h)
		}
		b.WriteString(h)
	}
	return b.String()
}

// printfQ is bash's printf %q for printable ASCII: a backslash before every
// byte the shell would read specially.
func printfQ(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_./:=@%+,^", c) >= 0) {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// jqArg is what jq --arg prints: only " \ and control bytes escaped.
func jqArg(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`)
	return `"` + r.Replace(v) + `"`
}

func goJSON(v string) string {
	b, _ := json.Marshal(v) // also escapes < > & as \u003c …
	return string(b)
}

var encoders = []encoder{
	{name: "base64 (76 columns)", enc: func(p, v, q string) string { return wrap(base64.StdEncoding.EncodeToString([]byte(p+v+q)), 76) }},
	{name: "base64 (64 columns, PEM)", enc: func(p, v, q string) string { return wrap(base64.StdEncoding.EncodeToString([]byte(p+v+q)), 64) }},
	{name: "base64 -w 16", enc: func(p, v, q string) string { return wrap(base64.StdEncoding.EncodeToString([]byte(p+v+q)), 16) }},
	{name: "base64 -w 40 CRLF", enc: func(p, v, q string) string { return wrapCRLF(base64.StdEncoding.EncodeToString([]byte(p+v+q)), 40) }},
	{name: "base64 -w 12 own lines", enc: func(p, v, q string) string {
		return "\n" + wrap(base64.StdEncoding.EncodeToString([]byte(p+v+q)), 12) + "\n"
	}},
	{name: "base64 -w 0", enc: func(p, v, q string) string { return base64.StdEncoding.EncodeToString([]byte(p + v + q)) }},
	{name: "base64url unpadded", enc: func(p, v, q string) string { return base64.RawURLEncoding.EncodeToString([]byte(p + v + q)) }},
	{name: "percent, every reserved byte, upper hex", whole: true, enc: func(_, v, _ string) string { return pctAll(v, true) }},
	{name: "percent, every reserved byte, lower hex", whole: true, enc: func(_, v, _ string) string { return pctAll(v, false) }},
	{name: "JSON string (jq --arg)", whole: true, enc: func(_, v, _ string) string { return jqArg(v) }},
	{name: "JSON string (\\u escapes)", whole: true, enc: func(_, v, _ string) string { return goJSON(v) }},
	{name: "printf %q", whole: true, enc: func(_, v, _ string) string { return printfQ(v) }},
	{name: "single quotes, '\\''", whole: true, enc: func(_, v, _ string) string { return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'" }},
	{name: "single quotes, '\"'\"' (shlex.quote)", whole: true, enc: func(_, v, _ string) string { return "'" + strings.ReplaceAll(v, "'", `'"'"'`) + "'" }},
	{name: "xxd -p (60 columns)", hex: true, enc: func(p, v, q string) string { return wrap(hex.EncodeToString([]byte(p+v+q)), 60) }},
	{name: "xxd -u -p", hex: true, enc: func(p, v, q string) string { return wrap(strings.ToUpper(hex.EncodeToString([]byte(p+v+q))), 60) }},
	{name: "od -An -tx1, joined", hex: true, enc: func(p, v, q string) string { return hex.EncodeToString([]byte(p + v + q)) }},
}

// formSecrets: one value with every byte escaping cares about, tokens
// that only base64 and hex change.
var formSecrets = []Secret{
	{"PW", `p@ss w/"q'\<&>%7e$x!Zr7Lm2`},
	{"GH_TOKEN", "ghp_9fK2mQ7xW4tZ8vB1nR6yC3"},
	// Over 57 bytes: its base64 crosses base64's 76-column line break.
	{"SLACK_TOKEN", "xoxb-20250101-5471028374651-Zr7Lm2Xq8Vn4Tk9Wp3Hs6Jd1Fg0Bc5Qy8Re2Lu7Mi4"},
}

// stripBreaks removes line breaks, so that a check sees an encoded value
// whole whatever the wrap width.
func stripBreaks(s string) string { return strings.NewReplacer("\r", "", "\n", "").Replace(s) }

// survives reports an 8-byte stretch of core left in out.
func survives(core, out string) (string, bool) {
	o := stripBreaks(out)
	for i := 0; i+8 <= len(core); i++ {
		if strings.Contains(o, core[i:i+8]) {
			return core[i : i+8], true
		}
	}
	return "", false
}

// TestEncodedFormsAtEveryOffsetAndSplit is the table of forms: each encoder
// applied to each secret at stream offsets 0–3, the output split into two
// writes at every byte boundary. Nothing of the encoded value may survive,
// the placeholder must appear, and the stream must equal the one-shot
// result.
func TestEncodedFormsAtEveryOffsetAndSplit(t *testing.T) {
	t.Parallel()
	r := New(formSecrets)
	for _, e := range encoders {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			for _, s := range formSecrets {
				for off := range 4 {
					pre := strings.Repeat("z", off)
					var in, core string
					if e.whole {
						encoded := e.enc("", s.Value, "")
						in = "out: " + pre + encoded + " done\n"
						core = e.core(encoded, "", s.Value)
					} else {
						encoded := e.enc(pre, s.Value, "!!")
						in = "out: " + encoded + "\ndone\n"
						core = e.core(encoded, pre, s.Value)
					}
					want := r.String(in)
					if !strings.Contains(want, "[REDACTED:"+s.Name+"]") {
						t.Fatalf("%s at offset %d: no placeholder in %q", s.Name, off, want)
					}
					if left, bad := survives(core, want); bad {
						t.Fatalf("%s at offset %d: %q survives in %q", s.Name, off, left, want)
					}
					for k := 0; k <= len(in); k++ {
						var out bytes.Buffer
						w := r.Writer(&out)
						mustWrite(t, w, []byte(in[:k]))
						mustWrite(t, w, []byte(in[k:]))
						if err := w.Close(); err != nil {
							t.Fatal(err)
						}
						if out.String() != want {
							t.Fatalf("%s at offset %d, split at %d:\n got %q\nwant %q", s.Name, off, k, out.String(), want)
						}
					}
				}
			}
		})
	}
}

// TestFormsLeaveCleanTextAlone: line-wrapped prose, URLs with escapes,
// JSON and shell text that hold no secret pass unchanged.
func TestFormsLeaveCleanTextAlone(t *testing.T) {
	t.Parallel()
	r := New(formSecrets)
	for _, in := range []string{
		"hello world\nsecond line\n",
		"GET /a%20b?q=%2Fx%2f HTTP/1.1\n",
		`{"msg":"a \"quoted\" word\\n","path":"C:\\dir"}` + "\n",
		"echo 'it'\\''s' && printf %q a\\ b\n",
		wrap(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("harmless"), 40)), 76) + "\n",
		wrap(hex.EncodeToString(bytes.Repeat([]byte("harmless"), 40)), 60) + "\n",
	} {
		if got := r.String(in); got != in {
			t.Errorf("clean text changed:\n got %q\nwant %q", got, in)
		}
	}
}
