// Package names is the one list of model providers hush knows, the vault
// name of each one's API key, and the one loopback check. It is a leaf:
// config validation imports it without pulling in the model SDKs.
package names

import (
	"net"
	"net/url"
	"strings"
)

// The providers hush knows, as config.toml's model.provider and --provider
// spell them. This is the one list; config validation, `hush setup` and
// session assembly ask it.
const (
	OpenAI    = "openai"
	Anthropic = "anthropic"
	Replay    = "replay"
)

// Names lists the providers, in the order help texts show them.
func Names() []string { return []string{OpenAI, Anthropic, Replay} }

// List is Names for a message: "openai, anthropic or replay".
func List() string {
	n := Names()
	return strings.Join(n[:len(n)-1], ", ") + " or " + n[len(n)-1]
}

// Known reports whether name is a provider hush knows.
func Known(name string) bool {
	for _, n := range Names() {
		if n == name {
			return true
		}
	}
	return false
}

// KeyName is the vault name a provider's API key is stored under unless
// config.toml's api_key refers to another; "" for a provider without a key.
func KeyName(provider string) string {
	switch provider {
	case OpenAI:
		return "OPENAI_API_KEY"
	case Anthropic:
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
