package session

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/provider"
	"golang.org/x/net/http/httpproxy"
)

// NewProvider builds the model provider from config.toml's [model] and the
// flags. The agent's own API key is read from the vault by hush itself,
// ungated, and handed to the SDK in memory; it never enters any child's
// environment. Without an api_key reference the provider's conventional
// vault name is used — except for a server on this machine
// (provider.IsLoopback), which gets no key it was not configured with.
func NewProvider(m config.Model, f Model, v executor.SecretReader, client *http.Client) (provider.Provider, error) {
	name := firstNonEmpty(f.Provider, m.Provider)
	if name == "" {
		return nil, fmt.Errorf("no model configured: run `hush setup`, set [model] in config.toml, or pass --provider %s", strings.Join(provider.Names(), "|"))
	}
	if name == provider.Replay {
		file := firstNonEmpty(f.Replay, m.Replay)
		if file == "" {
			return provider.NewReplayBytes("embedded leak-check replay", provider.DefaultReplay)
		}
		return provider.NewReplay(file)
	}
	if f.Replay != "" {
		return nil, fmt.Errorf("--replay needs --provider replay (got %s)", name)
	}
	baseURL := firstNonEmpty(f.BaseURL, m.BaseURL)
	if baseURL != "" {
		if u, err := url.Parse(baseURL); err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("base URL %q is not a URL like https://api.example.com/v1", baseURL)
		}
	}
	key := ""
	if m.APIKey != "" {
		if v == nil {
			return nil, errors.New("model.api_key in config.toml: no vault to read it from")
		}
		var err error
		key, err = config.Substitute(m.APIKey, v.Get)
		if err != nil {
			return nil, fmt.Errorf("model.api_key in config.toml: %w", err)
		}
	} else if !provider.IsLoopback(baseURL) {
		// No reference configured: the conventional vault name.
		if conventional := provider.KeyName(name); v != nil && conventional != "" {
			key, _ = v.Get(conventional)
		}
	}
	opts := provider.Options{BaseURL: baseURL, APIKey: key, Model: firstNonEmpty(f.Name, m.Name), HTTPClient: client, MaxRetries: 2,
		ConnectTimeout: m.ConnectTimeout.Duration, FirstByteTimeout: m.FirstByteTimeout.Duration,
		IdleTimeout: m.IdleTimeout.Duration, Notice: f.Notice}
	switch name {
	case provider.OpenAI:
		return provider.NewOpenAI(opts)
	case provider.Anthropic:
		return provider.NewAnthropic(opts)
	}
	return nil, fmt.Errorf("unknown provider %q: want openai, anthropic or replay", name)
}

// HTTPClient uses the proxy settings hush was started with, from its
// in-memory snapshot, since its own environment no longer holds them.
func HTTPClient(ambient map[string]string) *http.Client {
	proxy := userProxy(ambient)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = dialOwn // ownconn.go
	tr.Proxy = func(r *http.Request) (*url.URL, error) { return proxy(r.URL) }
	return &http.Client{Transport: tr}
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// userProxy is the proxy the user started hush with (HTTP_PROXY,
// HTTPS_PROXY, NO_PROXY in either case, from the start-up snapshot), for
// hush's own connections and as the egress proxy's upstream.
func userProxy(ambient map[string]string) func(*url.URL) (*url.URL, error) {
	return (&httpproxy.Config{
		HTTPProxy:  firstNonEmpty(ambient["HTTP_PROXY"], ambient["http_proxy"]),
		HTTPSProxy: firstNonEmpty(ambient["HTTPS_PROXY"], ambient["https_proxy"]),
		NoProxy:    firstNonEmpty(ambient["NO_PROXY"], ambient["no_proxy"]),
	}).ProxyFunc()
}
