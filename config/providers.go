package config

// The one list of model providers hush knows, the vault name of each one's
// API key, and the one loopback check. They live in config, the leaf:
// validation asks them without pulling in the model SDKs.

import (
	"net"
	"net/url"
	"strings"
)

// The providers hush knows, as config.toml's model.provider and --provider
// spell them. This is the one list; config validation, `hush setup` and
// session assembly ask it.
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
	ProviderReplay    = "replay"
)

// ProviderNames lists the providers, in the order help texts show them.
func ProviderNames() []string { return []string{ProviderOpenAI, ProviderAnthropic, ProviderReplay} }

// providerList is ProviderNames for a message: "openai, anthropic or replay".
func providerList() string {
	n := ProviderNames()
	return strings.Join(n[:len(n)-1], ", ") + " or " + n[len(n)-1]
}

// KnownProvider reports whether name is a provider hush knows.
func KnownProvider(name string) bool {
	for _, n := range ProviderNames() {
		if n == name {
			return true
		}
	}
	return false
}

// ProviderKeyName is the vault name a provider's API key is stored under unless
// config.toml's api_key refers to another; "" for a provider without a key.
func ProviderKeyName(provider string) string {
	switch provider {
	case ProviderOpenAI:
		return "OPENAI_API_KEY"
	case ProviderAnthropic:
		return "ANTHROPIC_API_KEY"
	}
	return ""
}

// IsLoopback reports whether rawURL points at this machine (localhost in
// any case, 127.0.0.0/8, ::1), where a model server usually needs no key
// and hush sends none unless one is configured. It is the one loopback
// check: the provider, the session and the setup wizard all ask it.
func IsLoopback(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil || rawURL == "" || u.Host == "" {
		return false
	}
	return IsLoopbackHost(u.Hostname())
}

// IsLoopbackHost reports whether host names this machine.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
