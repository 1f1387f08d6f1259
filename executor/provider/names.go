package provider

import "github.com/hushcli/hush/executor/provider/names"

// The providers hush knows: names (executor/provider/names) owns the list.
const (
	OpenAI    = names.OpenAI
	Anthropic = names.Anthropic
	Replay    = names.Replay
)

// Names lists the providers (names.Names).
func Names() []string { return names.Names() }

// KeyName is the vault name of a provider's API key (names.KeyName).
func KeyName(provider string) string { return names.KeyName(provider) }

// IsLoopback reports whether rawURL points at this machine (names.IsLoopback).
func IsLoopback(rawURL string) bool { return names.IsLoopback(rawURL) }

func isLoopback(host string) bool { return names.IsLoopbackHost(host) }
