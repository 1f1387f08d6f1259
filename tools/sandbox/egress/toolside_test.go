package egress

import (
	"context"
	"io"
	"maps"
	"net"
	"slices"
	"strings"
	"testing"
)

func TestCheckProxyURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"http://127.0.0.1:3128":      "",
		"http://[::1]:3128":          "",
		"http://127.0.0.1:3128/":     "",
		"https://127.0.0.1:3128":     "the tool's proxy https://127.0.0.1:3128: want an http:// URL",
		"http://localhost:3128":      "the tool's proxy http://localhost:3128: want a loopback address (127.0.0.1 or [::1]), not a name",
		"http://10.0.0.1:3128":       "the tool's proxy http://10.0.0.1:3128: want a loopback address (127.0.0.1 or [::1]), not a name",
		"http://127.0.0.1":           "the tool's proxy http://127.0.0.1: want an explicit port",
		"http://u:p@127.0.0.1:3128":  "the tool's proxy http://u:p@127.0.0.1:3128: want only scheme, address and port",
		"http://127.0.0.1:3128/path": "the tool's proxy http://127.0.0.1:3128/path: want only scheme, address and port",
		"http://127.0.0.1:0":         "the tool's proxy http://127.0.0.1:0: want a port from 1 to 65535",
	} {
		err := CheckProxyURL(in)
		if got := ""; err != nil {
			got = err.Error()
			if got != want {
				t.Errorf("CheckProxyURL(%q) = %q, want %q", in, got, want)
			}
		} else if want != "" {
			t.Errorf("CheckProxyURL(%q) = nil, want %q", in, want)
		}
	}
}

func TestToolEnv(t *testing.T) {
	t.Parallel()
	env, err := ToolEnv(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 3128})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"HTTP_PROXY": "http://127.0.0.1:3128", "http_proxy": "http://127.0.0.1:3128",
		"HTTPS_PROXY": "http://127.0.0.1:3128", "https_proxy": "http://127.0.0.1:3128",
		"ALL_PROXY": "http://127.0.0.1:3128", "all_proxy": "http://127.0.0.1:3128",
		"NO_PROXY": "localhost,127.0.0.1,::1", "no_proxy": "localhost,127.0.0.1,::1",
	}
	if !maps.Equal(env, want) {
		t.Errorf("ToolEnv = %v, want %v", env, want)
	}
	if _, err := ToolEnv(&net.TCPAddr{IP: net.IPv4(192, 168, 1, 2), Port: 3128}); err == nil {
		t.Error("ToolEnv accepted a proxy off loopback")
	}
}

// Dial is the tool's side of a tunnel (a ProxyCommand): it carries bytes
// to an allowed host and returns the proxy's sentence for a refused one,
// which never sees a byte.
func TestDial(t *testing.T) {
	t.Parallel()
	in := newInternet(t)
	p, _ := newProxy(t, internetTOML, in, Options{})
	proxy := serve(t, p, Call{Tool: "bash", Secrets: []string{"GITHUB_TOKEN"}}).Host
	c, err := Dial(context.Background(), proxy, "github.com", 80)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "POST /x HTTP/1.1\r\nHost: github.com\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
	b, _ := io.ReadAll(c)
	c.Close()
	if !strings.HasSuffix(string(b), "ok from github") || !slices.Equal(in.github.received(), []string{"hello"}) {
		t.Errorf("through Dial: %q, github received %q", b, in.github.received())
	}
	_, err = Dial(context.Background(), proxy, "evil.example", 22)
	if err == nil || err.Error() != `hush refused CONNECT evil.example:22: bash holds GITHUB_TOKEN, which may be sent only to github.com: to allow evil.example:22, add "evil.example:22" to hosts under [secrets.GITHUB_TOKEN] in config.toml` {
		t.Errorf("Dial to a refused host: %v", err)
	}
	noByte(t, in.evil)
}
