package provider

import "github.com/hushcli/hush/config"

// The providers hush knows: config owns the list.
const (
	OpenAI    = config.ProviderOpenAI
	Anthropic = config.ProviderAnthropic
	Replay    = config.ProviderReplay
)

// Names lists the providers (config.ProviderNames).
func Names() []string { return config.ProviderNames() }

// KeyName is the vault name of a provider's API key (config.ProviderKeyName).
func KeyName(provider string) string { return config.ProviderKeyName(provider) }

// IsLoopback reports whether rawURL points at this machine (config.IsLoopback).
func IsLoopback(rawURL string) bool { return config.IsLoopback(rawURL) }

func isLoopback(host string) bool { return config.IsLoopbackHost(host) }
