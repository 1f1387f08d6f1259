package config

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/joho/godotenv"
)

// faultLineByPrefixes is the way hush found the bad line before
// walkDotEnv: the longest prefix of whole lines that parses ends just
// before it. It is quadratic in the file's length; it stays here as the
// reference the one-pass walk must agree with, and as the benchmark's
// "before".
func faultLineByPrefixes(data []byte) int {
	lines := bytes.SplitAfter(data, []byte("\n"))
	good := 0
	for k := 1; k <= len(lines); k++ {
		if _, err := godotenv.UnmarshalBytes(bytes.Join(lines[:k], nil)); err == nil {
			good = k
		}
	}
	if good >= len(lines) {
		return len(lines)
	}
	return good + 1
}

// bigDotEnv is a .env of about size bytes, multi-line quoted values among
// plain ones, with one bad line near the end (its 1-based number returned).
func bigDotEnv(size int) ([]byte, int) {
	var b bytes.Buffer
	line := 0
	for i := 0; b.Len() < size; i++ {
		switch i % 50 {
		case 7:
			fmt.Fprintf(&b, "KEY_%d=\"-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC%06d\n-----END KEY-----\"\n", i, i)
			line += 3
		case 21:
			fmt.Fprintf(&b, "JSON_%d='{\n  \"a\": \"b%d\"\n}'\n", i, i)
			line += 3
		default:
			fmt.Fprintf(&b, "TOKEN_%d=ghp_value%08dabcdefghij # note\n", i, i)
			line++
		}
	}
	b.WriteString("this line is bad\nAFTER=1\nLAST=2\n")
	return b.Bytes(), line + 1
}

// TestFaultLineStartMiddleEnd: the line named is the bad one at the start,
// in the middle and at the end of a file, after multi-line quoted values
// (double, single, a PEM key, one closing on a line that opens another)
// too, and it agrees with the old prefix search.
func TestFaultLineStartMiddleEnd(t *testing.T) {
	t.Parallel()
	pem := "P=\"-----BEGIN KEY-----\nAAAA\nBBBB\n-----END KEY-----\"\n" // lines 1-4
	json := "J='{\n  \"a\": \"b\",\n  \"c\": 1\n}'\n"                   // 4 lines
	chain := "A=\"x\ny\" B=\"p\nq\"\n"                                  // 3 lines
	big, bigLine := bigDotEnv(16 << 10)
	tests := []struct {
		name, content string
		line          int
	}{
		{"start", "bad line\nA=1\n" + pem, 1},
		{"start, unterminated quote before many quoted lines", "A=\"open\n" + strings.Repeat("K=\"v\"\n", 50), 1},
		{"middle after a PEM value", "A=1\n" + pem + "bad line\n" + json + "Z=1\n", 6},
		{"middle after a JSON value", json + "B-C=1\n" + pem, 5},
		{"after a value closing on a line that opens another", chain + "bad\nZ=1\n", 4},
		{"end after multi-line values", pem + json + chain + "Z=1\nB@D=1", 13},
		{"end, unterminated quote on the last line", pem + "Z=\"open", 5},
		{"escaped quote inside a multi-line value", "A=\"x \\\"\ny\"\nbad\n", 3},
		{"crlf", "A=\"x\r\ny\"\r\nbad\r\n", 3},
		{"large file, near the end", string(big), bigLine},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data := []byte(tt.content)
			if _, err := godotenv.UnmarshalBytes(data); err == nil {
				t.Fatal("the test file parses")
			}
			if got := faultLine(data); got != tt.line {
				t.Errorf("faultLine = %d, want %d", got, tt.line)
			}
			if old := faultLineByPrefixes(data); old != tt.line {
				t.Errorf("the prefix search says %d, want %d", old, tt.line)
			}
			_, err := ParseDotEnv("x/.env", data)
			if want := fmt.Sprintf("x/.env line %d: malformed .env file (the line is not shown, it may hold a secret)", tt.line); err == nil || err.Error() != want {
				t.Errorf("ParseDotEnv error %v, want %q", err, want)
			}
		})
	}
}

// TestFaultLineAgreesWithPrefixSearch: on many small files built from
// plain, quoted, multi-line, commented and broken lines, the one-pass walk
// names the line the prefix search did.
func TestFaultLineAgreesWithPrefixSearch(t *testing.T) {
	t.Parallel()
	parts := []string{"A=1\n", "B=two words # c\n", "# comment\n", "\n", "C=\"l1\nl2\"\n", "D='x\n\"y\"\nz'\n",
		"E=\"q \\\" r\"\n", "F=\"x\" G='y\nz'\n", "bad\n", "H-I=1\n", "J=\"open\n", "K='open\n", "L='v'junk\n",
		"export M=3\n", "N: yaml\n", "O=\"a\nb\" # c\n", "P=\"\"\n", "Q\n", "R=\"x\r\ny\"\r\n"}
	rng := rand.New(rand.NewSource(1))
	checked := 0
	for n := 0; n < 3000; n++ {
		var b strings.Builder
		for k := rng.Intn(8) + 1; k > 0; k-- {
			b.WriteString(parts[rng.Intn(len(parts))])
		}
		if rng.Intn(3) == 0 {
			b.WriteString("S=end") // no trailing newline
		}
		data := []byte(b.String())
		if _, err := godotenv.UnmarshalBytes(data); err == nil {
			continue
		}
		checked++
		if got, want := faultLine(data), faultLineByPrefixes(data); got != want {
			t.Errorf("%q: faultLine = %d, the prefix search %d", data, got, want)
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d malformed files checked", checked)
	}
}

// BenchmarkFaultLine: finding the bad line near the end of a 5,000-line
// and a ~1 MiB .env, by the old prefix search and by the one-pass walk,
// interleaved in one run. The prefix search on 1 MiB takes many seconds:
// run with -benchtime=1x.
func BenchmarkFaultLine(b *testing.B) {
	lines5k, _ := bigDotEnv(0)
	for n := 0; bytes.Count(lines5k, []byte("\n")) < 5000; n += 4 << 10 {
		lines5k, _ = bigDotEnv(n)
	}
	mib, _ := bigDotEnv(1 << 20)
	for _, f := range []struct {
		name string
		data []byte
	}{{"5000lines", lines5k}, {"1MiB", mib}} {
		for _, way := range []struct {
			name string
			find func([]byte) int
		}{{"prefixes", faultLineByPrefixes}, {"onepass", faultLine}} {
			b.Run(f.name+"/"+way.name, func(b *testing.B) {
				b.SetBytes(int64(len(f.data)))
				for i := 0; i < b.N; i++ {
					way.find(f.data)
				}
			})
		}
	}
}
