package config

import "testing"

func TestProviderNames(t *testing.T) {
	t.Parallel()
	for _, n := range ProviderNames() {
		if !KnownProvider(n) {
			t.Errorf("KnownProvider(%q) = false", n)
		}
	}
	if KnownProvider("gpt") || KnownProvider("") || KnownProvider("OpenAI") {
		t.Error("an unknown provider is known")
	}
	if got := providerList(); got != "openai, anthropic or replay" {
		t.Errorf("providerList = %q", got)
	}
	for p, want := range map[string]string{ProviderOpenAI: "OPENAI_API_KEY", ProviderAnthropic: "ANTHROPIC_API_KEY", ProviderReplay: "", "other": ""} {
		if got := ProviderKeyName(p); got != want {
			t.Errorf("ProviderKeyName(%q) = %q, want %q", p, got, want)
		}
	}
}

// TestIsLoopback: the one loopback check — localhost in any case, the
// whole of 127.0.0.0/8, ::1 — and nothing that only looks like one.
func TestIsLoopback(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]bool{
		"http://localhost:11434/v1": true, "http://LOCALHOST:8080": true, "http://LocalHost/v1": true,
		"http://127.0.0.1:8080/v1": true, "http://127.8.9.10/": true, "http://[::1]:8080/v1": true,
		"https://api.openai.com/v1": false, "http://localhost.evil.example/": false, "http://10.0.0.1/": false,
		"": false, "localhost": false, "://bad": false,
	} {
		if got := IsLoopback(raw); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", raw, got, want)
		}
	}
}
