package tools

import "testing"

func TestLooksLikeSecret(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v    string
		want bool
	}{
		// Not secrets: what AWS_*, *_AUTH* and friends commonly hold.
		{"/etc/ssl/certs/ca-certificates.crt", false}, // an existing path
		{"default", false},
		{"us-east-1", false},
		{"eu-central-1", false},
		{"true", false},
		{"production", false},
		{"json", false},
		{"1", false},
		{"3000", false},
		{"https://sso.example.com/start", false}, // a URL without a password
		{"https://user@example.com/repo.git", false},
		{"Bearer", false},
		{"AWS_SDK", false},
		// Secrets.
		{"ghp_9fK2mQ7xW4tZ8vB1nR6yC3", true},
		{"sk-live-0123456789abcdef", true},
		{"AKIAIOSFODNN7EXAMPLE", true},
		{"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", true},
		{"postgres://app:pw@db/app", true}, // a URL with a password, short or not
		{"https://u:tok@h", true},
		{"hunter2hunter2", true},            // letters and digits mixed in a segment
		{"correcthorsebatterystaple", true}, // one long word
		{"/no/such/path/k3y", true},         // a path that does not exist
		{"0123456789abcdef0123", true},      // a long number
		{"p@ss w0rd!", true},
	} {
		if got := LooksLikeSecret(tc.v); got != tc.want {
			t.Errorf("LooksLikeSecret(%q) = %t, want %t", tc.v, got, tc.want)
		}
	}
}
