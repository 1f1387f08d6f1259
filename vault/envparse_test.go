package vault

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/joho/godotenv"
)

// FuzzParseSimple: wherever parseSimple reads a file, godotenv reads the
// same entries from it.
func FuzzParseSimple(f *testing.F) {
	for _, s := range []string{
		"A=1\nB=\"two words\"\nC='it\"s'\n# c\n\nD=\nE=x#y\n",
		"A=\"$B\"\n", "A=x # c\n", "A= x\n", "export A=1\n", "A=\"x\" \n", "A='x\\'\n",
		"A=\"\"\n", "A=''\n", "A=#x\n", "A.b_9=v\n", "9=a", "A=a\nA=b\n", "A=\"a\nb\"\n",
		"A:1\n", " A=1\n", "A=\\x\n", "A=\"a\\nb\"\n", "A='$B'\nB=1\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, ok := parseSimple([]byte(s))
		if !ok {
			return
		}
		want, err := godotenv.UnmarshalBytes([]byte(s))
		if err != nil {
			t.Fatalf("%q: parseSimple read %v, godotenv failed: %v", s, m, err)
		}
		if !maps.Equal(m, want) {
			t.Fatalf("%q: parseSimple %q, godotenv %q", s, m, want)
		}
	})
}

// TestParseSimpleTakesHushsOwnFile: what marshal writes is read without
// godotenv, and a file with a line it does not read goes to godotenv (the
// control: ${VAR} is expanded there).
func TestParseSimpleTakesHushsOwnFile(t *testing.T) {
	t.Parallel()
	in := map[string]string{}
	for i := range 100 {
		in[fmt.Sprintf("KEY_%d", i)] = fmt.Sprintf("v-%d/with spaces+and=signs", i)
	}
	data, err := marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := parseSimple(data)
	if !ok || !maps.Equal(m, in) {
		t.Fatalf("hush's own file: ok %v, %d entries", ok, len(m))
	}
	expanded := "A=1\nB=\"x${A}\"\n"
	if _, ok := parseSimple([]byte(expanded)); ok {
		t.Fatal("parseSimple took a value with ${VAR}")
	}
	if m, err := parseEnv([]byte(expanded)); err != nil || m["B"] != "x1" {
		t.Errorf("parseEnv: %q %v", m, err)
	}
	if _, ok := parseSimple([]byte(strings.Repeat("A=1\n", 3) + "B=x # note\n")); ok {
		t.Error("parseSimple took a value with a comment after it")
	}
}
