package tools

// Ambient is a tool's view of the environment hush was started with. Its
// lookups never return a credential — a credential-named variable, or a
// value that carries one (a URL with a password) — so a tool cannot read a
// secret around vault.read:<NAME>: a secret reaches a tool only through the
// gated vault. The proxy settings and the Docker engine address, which may
// legitimately carry a password and which hush itself (not a child) uses to
// connect, are read through their own accessors, Proxy and DockerHost.
// BuildEnv applies the spawn policy to the whole snapshot, which filters
// credentials itself. The zero Ambient holds no snapshot: BuildEnv refuses it.
type Ambient struct {
	env   map[string]string
	names []string // SortedNames(env), for BuildEnv's pattern lookups
}

// NewAmbient wraps hush's start-up snapshot env, which must not change
// afterwards.
func NewAmbient(env map[string]string) Ambient {
	return Ambient{env: env, names: SortedNames(env)}
}

// Lookup returns name's value, and whether it is set and not a credential.
func (a Ambient) Lookup(name string) (string, bool) {
	v, ok := a.env[name]
	if !ok || IsCredentialName(name) || IsCredentialValue(v) {
		return "", false
	}
	return v, true
}

// Get is Lookup's value: "" for an unset name or a credential.
func (a Ambient) Get(name string) string {
	v, _ := a.Lookup(name)
	return v
}

// ProxyConfig is the proxy settings of the environment, as
// golang.org/x/net/http/httpproxy.Config takes them.
type ProxyConfig struct {
	HTTPProxy, HTTPSProxy, NoProxy string
}

// Proxy is the proxy settings hush was started with (HTTP_PROXY,
// HTTPS_PROXY, NO_PROXY, upper case first), an authenticated proxy URL
// included: hush's own HTTP clients connect through them. They are never
// handed to a child.
func (a Ambient) Proxy() ProxyConfig {
	return ProxyFrom(a.env)
}

// ProxyFrom is Ambient.Proxy of a snapshot.
func ProxyFrom(env map[string]string) ProxyConfig {
	get := func(names ...string) string {
		for _, n := range names {
			if v := env[n]; v != "" {
				return v
			}
		}
		return ""
	}
	return ProxyConfig{
		HTTPProxy:  get("HTTP_PROXY", "http_proxy"),
		HTTPSProxy: get("HTTPS_PROXY", "https_proxy"),
		NoProxy:    get("NO_PROXY", "no_proxy"),
	}
}

// DockerHost is DOCKER_HOST as hush was started with it, a password in
// it included: the docker-bash tool's engine connection (hush's, not the
// container's).
func (a Ambient) DockerHost() string { return a.env["DOCKER_HOST"] }

// BuildEnv builds a child's environment from the whole snapshot under
// req's policy (req.Ambient and req.AmbientNames are set from a).
func (a Ambient) BuildEnv(req EnvRequest) (Env, []Dropped, error) {
	req.Ambient, req.AmbientNames = a.env, a.names
	return BuildEnv(req)
}
