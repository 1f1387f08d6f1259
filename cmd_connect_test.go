package main

import "testing"

// TestConnectProxyAddr: `hush __connect` dials the proxy where the tool's
// HTTP_PROXY says when it is a loopback http URL with a port (the Landlock
// fallback's per-call port), and the namespace's fixed address otherwise.
func TestConnectProxyAddr(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"HTTP_PROXY": "http://127.0.0.1:41234"}, "127.0.0.1:41234"},
		{map[string]string{}, "127.0.0.1:1023"},
		{map[string]string{"HTTP_PROXY": "http://proxy.corp.example:3128"}, "127.0.0.1:1023"},
		{map[string]string{"HTTP_PROXY": "http://127.0.0.1"}, "127.0.0.1:1023"},
	} {
		if got := connectProxyAddr(tt.env); got != tt.want {
			t.Errorf("connectProxyAddr(%v) = %q, want %q", tt.env, got, tt.want)
		}
	}
}
