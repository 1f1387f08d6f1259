package redact

import (
	"strings"
	"testing"
)

func TestFromMap(t *testing.T) {
	t.Parallel()
	r := FromMap(map[string]string{"B_TOKEN": "bbbb-secret-2", "A_TOKEN": "aaaa-secret-1"})
	got := r.String("x aaaa-secret-1 y bbbb-secret-2 z")
	if want := "x [REDACTED:A_TOKEN] y [REDACTED:B_TOKEN] z"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if got := FromMap(nil).String("aaaa-secret-1"); got != "aaaa-secret-1" {
		t.Errorf("empty redactor changed %q", got)
	}
}

// A JSON value (an MCP server's OAuth tokens) is scrubbed field by field:
// the access token alone, as it travels in a header, is a match; its URLs
// and expiry, which are not secret, are not.
func TestFromMapScrubsJSONFields(t *testing.T) {
	t.Parallel()
	access, refresh := "at-0123456789abcdef", "rt-fedcba9876543210"
	tokens := `{"v":1,"server_url":"https://mcp.example.com/mcp","access_token":"` + access + `","token_type":"Bearer",` +
		`"refresh_token":"` + refresh + `","expiry":"2026-12-01T12:00:00Z","token_url":"https://auth.example.com/token"}`
	r := FromMap(map[string]string{"HUSH_MCP_OAUTH_X": tokens})
	in := "Authorization: Bearer " + access + " then " + refresh + " at https://mcp.example.com/mcp until 2026-12-01T12:00:00Z"
	want := "Authorization: Bearer [REDACTED:HUSH_MCP_OAUTH_X] then [REDACTED:HUSH_MCP_OAUTH_X] at https://mcp.example.com/mcp until 2026-12-01T12:00:00Z"
	if got := r.String(in); got != want {
		t.Errorf("String =\n %q\nwant\n %q", got, want)
	}
	// Positive control: a plain value that merely looks like JSON's start is
	// scrubbed whole, and nothing else.
	if got := FromMap(map[string]string{"P": "{not-json-but-secret"}).String("x {not-json-but-secret y"); got != "x [REDACTED:P] y" {
		t.Errorf("plain value: %q", got)
	}
}

// TestLooksJSONIsTrimSpace: the first-byte shortcut answers as
// TrimSpace then '{' does, leading ASCII and Unicode spaces included.
func TestLooksJSONIsTrimSpace(t *testing.T) {
	parts := []string{"", "{", "}", " ", "\t", "\n", "\v", "\f", "\r", "\u00a0", "\u0085", "\u2003", "x", "é", "\"", "{\"a\":1}", "\xff"}
	n := 0
	for _, a := range parts {
		for _, b := range parts {
			for _, c := range parts {
				v := a + b + c
				if got, want := looksJSON(v), strings.HasPrefix(strings.TrimSpace(v), "{"); got != want {
					t.Fatalf("looksJSON(%q) = %v, want %v", v, got, want)
				}
				if strings.HasPrefix(strings.TrimSpace(v), "{") {
					n++
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no value looked like JSON: the test compares nothing")
	}
}
