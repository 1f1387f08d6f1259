package config_test

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hushcli/hush/config"
)

// canary is planted near every fault: no error may ever contain it.
const canary = "zq9CANARYvalue7x"

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func sortedEnviron() []string {
	env := os.Environ()
	slices.Sort(env)
	return env
}

// Not parallel: t.Setenv forbids it, and the before/after snapshot of the
// process environment needs no other test running alongside anyway.
func TestLoadDotEnvLeavesEnvironmentUntouched(t *testing.T) {
	t.Setenv("HUSH_TEST_EXISTING_TOKEN", "from-environment")
	path := writeFile(t, t.TempDir(), ".env", strings.Join([]string{
		"HUSH_TEST_NEW_TOKEN=dotenv-new",
		"export HUSH_TEST_NEW_EXPORTED=\"dotenv-exported\"",
		"HUSH_TEST_EXISTING_TOKEN=dotenv-loses",
		// dotenv expansion may see earlier entries of the same file, never
		// the process environment.
		"HUSH_TEST_REF=${HUSH_TEST_EXISTING_TOKEN}",
		"HUSH_TEST_AMBIENT_REF=${HUSH_TEST_ONLY_IN_ENV}",
		"",
	}, "\n"))
	t.Setenv("HUSH_TEST_ONLY_IN_ENV", "ambient")

	before := sortedEnviron()
	got, err := config.LoadDotEnv(path)
	if err != nil {
		t.Fatal(err)
	}
	after := sortedEnviron()

	if !slices.Equal(before, after) {
		t.Errorf("LoadDotEnv changed the process environment:\nbefore %q\nafter  %q", before, after)
	}
	for _, name := range []string{"HUSH_TEST_NEW_TOKEN", "HUSH_TEST_NEW_EXPORTED", "HUSH_TEST_REF", "HUSH_TEST_AMBIENT_REF"} {
		if v, ok := os.LookupEnv(name); ok {
			t.Errorf("%s appeared in the process environment as %q", name, v)
		}
	}
	if v := os.Getenv("HUSH_TEST_EXISTING_TOKEN"); v != "from-environment" {
		t.Errorf("HUSH_TEST_EXISTING_TOKEN = %q in the process environment, want %q", v, "from-environment")
	}
	want := map[string]string{
		"HUSH_TEST_NEW_TOKEN":      "dotenv-new",
		"HUSH_TEST_NEW_EXPORTED":   "dotenv-exported",
		"HUSH_TEST_EXISTING_TOKEN": "dotenv-loses", // the map is the file; precedence is the vault's job
		"HUSH_TEST_REF":            "dotenv-loses",
		"HUSH_TEST_AMBIENT_REF":    "",
	}
	if !maps.Equal(got, want) {
		t.Errorf("LoadDotEnv = %q, want %q", got, want)
	}
}

func TestLoadDotEnvMissingFile(t *testing.T) {
	t.Parallel()
	got, err := config.LoadDotEnv(filepath.Join(t.TempDir(), "no-such", ".env"))
	if err != nil {
		t.Fatalf("LoadDotEnv of a missing file: %v", err)
	}
	if got == nil || len(got) != 0 {
		t.Errorf("LoadDotEnv of a missing file = %#v, want an empty non-nil map", got)
	}
}

func TestLoadDotEnvUnreadable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir() // a directory is not a file: ReadFile fails, not ErrNotExist
	_, err := config.LoadDotEnv(dir)
	if err == nil || !strings.HasPrefix(err.Error(), "read "+dir+": ") {
		t.Errorf("LoadDotEnv(dir) error = %v, want one starting %q", err, "read "+dir+": ")
	}
}

func TestParseDotEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content string
		want          map[string]string
	}{
		{"empty", "", map[string]string{}},
		{"comments and blanks", "# c\n\n   \n# A=1\n", map[string]string{}},
		{"plain", "A=1\nB=two words\n", map[string]string{"A": "1", "B": "two words"}},
		{"leading zeros kept", "PIN=007\n", map[string]string{"PIN": "007"}},
		{"export prefix", "export A=1\n", map[string]string{"A": "1"}},
		{"trailing comment", "A=x # note\nB=x#y\n", map[string]string{"A": "x", "B": "x#y"}},
		{"single quotes are raw", `A='$B \n x'` + "\n", map[string]string{"A": `$B \n x`}},
		{"double quotes unescape", `A="a\nb \"q\" end"` + "\n", map[string]string{"A": "a\nb \"q\" end"}},
		{"multi-line double quotes", "A=\"l1\nl2\"\nB=2\n", map[string]string{"A": "l1\nl2", "B": "2"}},
		{"crlf", "A=1\r\nB=2\r\n", map[string]string{"A": "1", "B": "2"}},
		{"later wins", "A=1\nA=2\n", map[string]string{"A": "2"}},
		{"expansion of earlier entries", "A=x\nB=${A}-$A\n", map[string]string{"A": "x", "B": "x-x"}},
		{"no trailing newline", "A=1", map[string]string{"A": "1"}},
		{"byte-order mark", "\ufeffA=1\nB=2\n", map[string]string{"A": "1", "B": "2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := config.ParseDotEnv("test.env", []byte(tt.content))
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("ParseDotEnv(%q) = %q, want %q", tt.content, got, tt.want)
			}
		})
	}
}

func TestLoadDotEnvMalformed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content string
		line          int
	}{
		{"bad name char", "OK=" + canary + "\nBAD-NAME=" + canary + "\nAFTER=" + canary + "\n", 2},
		{"bad name char after comments and blanks", "# header\n\nA=1\n   \n# " + canary + "\nB@D=" + canary + "\n", 6},
		{"name without value", "A=1\n" + canary + "\n", 2},
		{"unterminated double quote, multi-line", "A=1\nB=\"" + canary + "\nstill " + canary + "\nC=" + canary + "\n", 2},
		{"unterminated single quote", "A='" + canary + "\n", 1},
		{"unterminated quote on the last line, no newline", "A=1\nB=\"" + canary, 2},
		{"fault after a valid multi-line quoted value", "A=\"l1\n" + canary + "\nl3\"\nB@D=" + canary + "\n", 4},
		{"garbage after a quoted value", "A=1\nB='" + canary + "'" + canary + "\n", 2},
		{"crlf line endings", "A=1\r\nB=2\r\nC-D=" + canary + "\r\n", 3},
		{"fault on the last line, no newline", "A=1\nB@=" + canary, 2},
		{"fault after a byte-order mark", "\ufeffA=1\nB@=" + canary + "\n", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, t.TempDir(), ".env", tt.content)
			got, err := config.LoadDotEnv(path)
			if err == nil {
				t.Fatalf("LoadDotEnv = %q, want an error", got)
			}
			want := fmt.Sprintf("%s line %d: malformed .env file (the line is not shown, it may hold a secret)", path, tt.line)
			if err.Error() != want {
				t.Errorf("error = %q\nwant    %q", err, want)
			}
			if !errors.Is(err, config.ErrMalformedDotEnv) {
				t.Errorf("error %q does not wrap ErrMalformedDotEnv", err)
			}
			if strings.Contains(err.Error(), canary) {
				t.Errorf("error %q leaks file content", err)
			}
			if got != nil {
				t.Errorf("LoadDotEnv returned %q alongside its error", got)
			}
		})
	}
}

var dotEnvErr = regexp.MustCompile(`^fuzz\.env line ([0-9]+): malformed \.env file \(the line is not shown, it may hold a secret\)$`)

// FuzzParseDotEnv: never panics, and an error is the fixed message naming the
// file and a line inside it, so it can quote nothing of the input. The canary
// is spliced in at a fuzzer-chosen place, as a value, as its own line, and
// inside quotes, to check that no parser message slips through.
func FuzzParseDotEnv(f *testing.F) {
	for _, s := range []string{
		"A=1\n", "BAD-NAME=x\n", "A=\"x\nB=1\n", "A='x", "A=\"l1\nl2\"\nB@D=x\n", "A='x'y\n",
		"export A=1\n", "A=${B}\n", "A: b\n", "=x\n", "\r\n\r\n", "A=\"\\\"\n", "#c\nA\n",
	} {
		f.Add([]byte(s), uint16(0))
		f.Add([]byte(s), uint16(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, at uint16) {
		pos := int(at) % (len(data) + 1)
		inputs := [][]byte{
			data,
			splice(data, pos, canary),
			splice(data, pos, "\nSECRET="+canary+"\n"),
			splice(data, pos, "\"'"+canary+"\n"+canary),
			append([]byte("OK=\""+canary+"\"\n"), data...),
		}
		for _, in := range inputs {
			m, err := config.ParseDotEnv("fuzz.env", in)
			if err == nil {
				if m == nil {
					t.Fatalf("ParseDotEnv(%q) = nil map, nil error", in)
				}
				continue
			}
			msg := err.Error()
			if strings.Contains(msg, canary) {
				t.Fatalf("ParseDotEnv(%q) error leaks the canary: %q", in, msg)
			}
			sub := dotEnvErr.FindStringSubmatch(msg)
			if sub == nil {
				t.Fatalf("ParseDotEnv(%q) error %q is not the fixed message", in, msg)
			}
			line, _ := strconv.Atoi(sub[1])
			if lines := strings.Count(string(in), "\n") + 1; line < 1 || line > lines {
				t.Fatalf("ParseDotEnv(%q) error names line %d of %d", in, line, lines)
			}
			if !errors.Is(err, config.ErrMalformedDotEnv) {
				t.Fatalf("ParseDotEnv(%q) error %q does not wrap ErrMalformedDotEnv", in, msg)
			}
		}
	})
}

func splice(data []byte, pos int, s string) []byte {
	out := make([]byte, 0, len(data)+len(s))
	out = append(out, data[:pos]...)
	out = append(out, s...)
	return append(out, data[pos:]...)
}
