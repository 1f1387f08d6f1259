package tools

import (
	"testing"
)

// TestAmbientNeverReturnsACredential: a tool's ambient lookups see plain
// variables (the positive control) but never a credential-named variable
// or a value carrying a password; the proxy settings, an authenticated
// proxy URL included, come only through Proxy, the engine address through
// DockerHost.
func TestAmbientNeverReturnsACredential(t *testing.T) {
	t.Parallel()
	const proxyURL = "http://user:proxy-pw-canary@proxy.example:3128"
	a := NewAmbient(map[string]string{
		"PATH":           "/usr/bin",
		"GITHUB_TOKEN":   "ghp_ambientcanary",
		"AWS_SECRET_KEY": "aws-canary",
		"DATABASE_URL":   "postgres://u:db-pw-canary@h/db",
		"PLAIN_URL":      "https://example.com/x",
		"HTTPS_PROXY":    proxyURL,
		"no_proxy":       "localhost",
		"DOCKER_HOST":    "tcp://u:docker-pw-canary@engine:2376",
	})
	if v, ok := a.Lookup("PATH"); !ok || v != "/usr/bin" || a.Get("PLAIN_URL") != "https://example.com/x" {
		t.Errorf("a plain variable is not readable: %q, %v", v, ok)
	}
	for _, n := range []string{"GITHUB_TOKEN", "AWS_SECRET_KEY", "DATABASE_URL", "HTTPS_PROXY", "DOCKER_HOST", "UNSET"} {
		if v, ok := a.Lookup(n); ok || v != "" || a.Get(n) != "" {
			t.Errorf("Lookup(%s) = %q, %v: a credential (or nothing) was returned", n, v, ok)
		}
	}
	if p := a.Proxy(); p.HTTPSProxy != proxyURL || p.NoProxy != "localhost" || p.HTTPProxy != "" {
		t.Errorf("Proxy = %+v", p)
	}
	if h := a.DockerHost(); h != "tcp://u:docker-pw-canary@engine:2376" {
		t.Errorf("DockerHost = %q", h)
	}
	env, _, err := a.BuildEnv(EnvRequest{Policy: Policy{Include: []string{"*"}}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range env {
		got[e.Name] = e.Value
	}
	if got["PATH"] != "/usr/bin" {
		t.Errorf("BuildEnv lost PATH: %v", got)
	}
	for _, n := range []string{"GITHUB_TOKEN", "AWS_SECRET_KEY", "DATABASE_URL", "HTTPS_PROXY", "DOCKER_HOST"} {
		if _, ok := got[n]; ok {
			t.Errorf("BuildEnv copied %s", n)
		}
	}
	if _, _, err := (Ambient{}).BuildEnv(EnvRequest{}); err == nil {
		t.Error("the zero Ambient built an environment")
	}
}
