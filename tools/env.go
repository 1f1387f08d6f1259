package tools

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hushcli/hush/config"
)

// Inherit says which ambient variables a child starts from.
type Inherit string

const (
	// InheritCore copies the core allowlist (CoreNames). The default.
	InheritCore Inherit = "core"
	// InheritNone copies nothing: the child gets only set, scope and extras.
	InheritNone Inherit = "none"
	// InheritAll copies every ambient variable that is not a credential.
	// Credentials still enter only through the scope.
	InheritAll Inherit = "all"
)

// ProxyOption is the seed-001 proxy setting: nil leaves proxy variables to the
// policy; a non-nil value sets every proxy variable to URL, or clears them all
// when URL is "".
type ProxyOption struct{ URL string }

// Policy is how one tool's child environment is built. The zero value is the
// default: core allowlist, no extras, the tool's configured secrets.
type Policy struct {
	Inherit Inherit
	// Base replaces the core allowlist as the starting set (MCP servers use
	// MCPBaseNames). Empty means CoreNames.
	Base []string
	// Include adds ambient names matching these globs; Exclude removes names
	// matching these globs from whatever was copied. Neither can bring in a
	// credential.
	Include []string
	Exclude []string
	// Set adds literal values. A value may hold ${NAME}, resolved through
	// the grant (so through the gate).
	Set map[string]string
	// Secrets are the names the tool is configured to receive.
	Secrets []string
	// Scope is the declared secret scope of this call. nil: Secrets apply.
	// Non-nil and empty: no secret at all, not even Secrets. Otherwise
	// exactly these names, each through the grant (seed 002).
	Scope []string

	// UnsafeNoCredentialFilter copies credential-named and credential-valued
	// ambient variables like any other. Only for `hush audit`'s fault
	// injection ([unsafe] in config.toml); loader variables stay out.
	UnsafeNoCredentialFilter bool

	// Seed-001 hygiene options, all off by default.
	HomeDir    string       // HOME points here; the real home goes in HUSH_REAL_HOME
	EmptyNpmrc string       // NPM_CONFIG_USERCONFIG and _GLOBALCONFIG point at this empty file
	Proxy      *ProxyOption // set or clear every proxy variable
}

// Secrets is what the env builder knows about the vault for classification:
// which names it holds and whether a value is one of its values. It never
// reads a value for a child; that is the grant's job.
type Secrets interface {
	HasName(name string) bool
	HasValue(value string) bool
}

// Grant reads one secret for a child, through the permission gate.
type Grant func(name string) (string, error)

// EnvRequest is everything BuildEnv needs; each field is required unless
// marked otherwise, and there is no fallback to the process environment.
type EnvRequest struct {
	// Ambient is hush's snapshot of the environment it was started with.
	Ambient map[string]string
	Policy  Policy
	// Secrets classifies names and values; nil means an empty vault.
	Secrets Secrets
	// Grant resolves the scope and ${NAME} references. Required when the
	// policy or Extra reference any secret.
	Grant Grant
	// Extra is the caller's env for this call (a tool argument); values may
	// hold ${NAME}. Optional.
	Extra map[string]string
	// AmbientNames, if set, is SortedNames(Ambient), made once by a caller
	// that builds many environments from one snapshot (the agent): a
	// pattern like LC_* then finds its names by binary search instead of a
	// pass over every ambient name, which took a third of a build.
	AmbientNames []string
}

// SortedNames returns the names of env, sorted, for EnvRequest.AmbientNames.
func SortedNames(env map[string]string) []string { return sortedNames(env) }

// Source says why a variable is in a child's environment.
type Source string

const (
	FromCore    Source = "core"
	FromAll     Source = "inherit-all"
	FromInclude Source = "include"
	FromOption  Source = "option"
	FromSet     Source = "set"
	FromScope   Source = "secret"
	FromExtra   Source = "call"
)

// Var is one variable of a built environment.
type Var struct {
	Name, Value string
	Source      Source
	// Secret is true when the value came from the vault (scope or ${NAME}).
	Secret bool
}

// Env is a built child environment, sorted by name.
type Env []Var

// Environ returns the NAME=value list for exec. It is never nil, because a
// nil exec.Cmd.Env means "inherit everything".
func (e Env) Environ() []string {
	out := make([]string, 0, len(e))
	for _, v := range e {
		out = append(out, v.Name+"="+v.Value)
	}
	return out
}

// Lookup returns the value of name in e.
func (e Env) Lookup(name string) (string, bool) {
	for _, v := range e {
		if v.Name == name {
			return v.Value, true
		}
	}
	return "", false
}

// ErrNoGrant means a secret was needed but the request had no Grant.
var ErrNoGrant = errors.New("secret requested but no vault access was given")

// Dropped explains an ambient variable a policy named but BuildEnv refused.
type Dropped struct{ Name, Reason string }

// BuildEnv builds a child's environment. It starts empty and adds, in order:
// the base allowlist (or every ambient name under inherit = "all"), include
// matches, minus exclude matches, the seed-001 options, set values, the
// secret scope, and the call's extras. Credential-named variables, loader
// variables, and any ambient value equal to a vault value or carrying a URL
// password are never copied from the ambient environment: secrets enter only
// through the scope or a ${NAME} reference, and a granted name gets the
// vault's value, never the ambient one.
func BuildEnv(req EnvRequest) (Env, []Dropped, error) {
	if req.Ambient == nil {
		return nil, nil, errors.New("env: no ambient snapshot given")
	}
	p := req.Policy
	// Sized for a typical child (the core allowlist, a few extras) so the
	// map does not grow on every tool call.
	env := make(map[string]Var, 32)
	var dropped []Dropped
	refused := map[string]bool{}

	ambientOK := func(name, value string) (bool, string) {
		switch {
		case IsLoaderName(name):
			return false, "loader injection variable"
		case p.UnsafeNoCredentialFilter:
			return true, ""
		case IsCredentialName(name):
			return false, "credential-named; grant it as a secret instead"
		case IsCredentialValue(value):
			return false, "value is a URL with a password"
		case req.Secrets != nil && req.Secrets.HasName(name):
			return false, "a secret of this name is in the vault or a project .env file; grant it as a secret instead"
		case req.Secrets != nil && req.Secrets.HasValue(value):
			return false, "value equals the value of a secret"
		}
		return true, ""
	}
	copyOne := func(name, value string, src Source) {
		if _, done := env[name]; done || refused[name] {
			return
		}
		if ok, why := ambientOK(name, value); !ok {
			// Recorded once, though inherit and include may both name it.
			refused[name] = true
			dropped = append(dropped, Dropped{name, why})
			return
		}
		env[name] = Var{Name: name, Value: value, Source: src}
	}
	// copyAmbient copies the ambient variables matching patterns (nil: all
	// of them). A plain name is looked up rather than matched against every
	// ambient name: this runs on every tool call, and testing 200 names
	// against each entry of the allowlist cost more than the rest of the
	// build together.
	copyAmbient := func(patterns []string, src Source) {
		var globs, names []string
		for _, pat := range patterns {
			switch {
			case isGlob(pat):
				globs = append(globs, pat)
			case !slices.Contains(names, pat):
				names = append(names, pat)
			}
		}
		for _, name := range names {
			if value, ok := req.Ambient[name]; ok {
				copyOne(name, value, src)
			}
		}
		if patterns != nil && len(globs) == 0 {
			return
		}
		if patterns != nil && req.AmbientNames != nil {
			for _, g := range globs {
				// Only names starting with the glob's literal part can
				// match it, and in sorted names they sit together.
				prefix := g[:strings.IndexAny(g, "*?[\\")]
				for i := sort.SearchStrings(req.AmbientNames, prefix); i < len(req.AmbientNames); i++ {
					name := req.AmbientNames[i]
					if !strings.HasPrefix(name, prefix) {
						break
					}
					if value, ok := req.Ambient[name]; ok && matchGlob(g, name) && !slices.Contains(names, name) {
						copyOne(name, value, src)
					}
				}
			}
			return
		}
		// Most names cannot match a glob that starts with a literal byte
		// ("LC_*"): one byte decides, before any matching.
		var first [256]bool
		anyFirst := patterns == nil
		for _, g := range globs {
			if isGlob(g[:1]) {
				anyFirst = true
			}
			first[g[0]] = true
		}
		for name := range req.Ambient { // keys only: most names do not match
			if !anyFirst && (name == "" || !first[name[0]]) {
				continue
			}
			if (patterns == nil || MatchAny(globs, name)) && !slices.Contains(names, name) {
				copyOne(name, req.Ambient[name], src)
			}
		}
	}

	switch p.Inherit {
	case "", InheritCore:
		base := p.Base
		if len(base) == 0 {
			base = coreNames
		}
		copyAmbient(base, FromCore)
	case InheritNone:
	case InheritAll:
		copyAmbient(nil, FromAll)
	default:
		return nil, nil, fmt.Errorf("env: unknown inherit %q (want core, none or all)", p.Inherit)
	}
	if len(p.Include) > 0 {
		copyAmbient(p.Include, FromInclude)
	}
	if len(p.Exclude) > 0 {
		for name := range env {
			if MatchAny(p.Exclude, name) {
				delete(env, name)
			}
		}
	}

	if p.HomeDir != "" {
		if real := req.Ambient["HOME"]; real != "" {
			env["HUSH_REAL_HOME"] = Var{Name: "HUSH_REAL_HOME", Value: real, Source: FromOption}
		}
		env["HOME"] = Var{Name: "HOME", Value: p.HomeDir, Source: FromOption}
	}
	if p.EmptyNpmrc != "" {
		for _, n := range []string{"NPM_CONFIG_USERCONFIG", "NPM_CONFIG_GLOBALCONFIG"} {
			env[n] = Var{Name: n, Value: p.EmptyNpmrc, Source: FromOption}
		}
	}
	if p.Proxy != nil {
		for _, n := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"} {
			if p.Proxy.URL == "" {
				delete(env, n)
				continue
			}
			env[n] = Var{Name: n, Value: p.Proxy.URL, Source: FromOption}
		}
		for _, n := range []string{"NO_PROXY", "no_proxy"} {
			delete(env, n)
		}
	}

	// From here on values come from config, the vault or the call, so a
	// ${NAME} in them is resolved through the grant.
	resolve := func(v string) (string, bool, error) {
		refs, err := config.References(v)
		if err != nil {
			return "", false, err
		}
		if len(refs) == 0 {
			s, err := config.Substitute(v, nil) // unescapes $${
			return s, false, err
		}
		if req.Grant == nil {
			return "", false, ErrNoGrant
		}
		s, err := config.Substitute(v, config.Lookup(req.Grant))
		return s, true, err
	}
	for _, name := range sortedNames(p.Set) {
		if err := settable(name); err != nil {
			return nil, nil, fmt.Errorf("env: set %s: %w", name, err)
		}
		v, secret, err := resolve(p.Set[name])
		if err != nil {
			return nil, nil, fmt.Errorf("env: set %s: %w", name, err)
		}
		env[name] = Var{Name: name, Value: v, Source: FromSet, Secret: secret}
	}

	scope := p.Secrets
	if p.Scope != nil {
		scope = p.Scope
	}
	for _, name := range scope {
		if err := settable(name); err != nil {
			return nil, nil, fmt.Errorf("env: secret %s: %w", name, err)
		}
		if req.Grant == nil {
			return nil, nil, fmt.Errorf("env: secret %s: %w", name, ErrNoGrant)
		}
		v, err := req.Grant(name)
		if err != nil {
			return nil, nil, err
		}
		env[name] = Var{Name: name, Value: v, Source: FromScope, Secret: true}
	}

	for _, name := range sortedNames(req.Extra) {
		if err := settable(name); err != nil {
			return nil, nil, fmt.Errorf("env: %s: %w", name, err)
		}
		v, secret, err := resolve(req.Extra[name])
		if err != nil {
			return nil, nil, fmt.Errorf("env: %s: %w", name, err)
		}
		env[name] = Var{Name: name, Value: v, Source: FromExtra, Secret: secret}
	}

	out := make(Env, 0, len(env))
	for _, v := range env {
		out = append(out, v)
	}
	byName := func(a, b Var) int { return strings.Compare(a.Name, b.Name) }
	slices.SortFunc(out, byName)
	slices.SortFunc(dropped, func(a, b Dropped) int { return strings.Compare(a.Name, b.Name) })
	return out, dropped, nil
}

// settable refuses names a child must not be handed explicitly either.
func settable(name string) error {
	if name == "" || strings.ContainsAny(name, "=\x00") {
		return fmt.Errorf("invalid variable name %q", name)
	}
	if IsLoaderName(name) {
		return errors.New("loader injection variables are never passed to a child")
	}
	return nil
}

func sortedNames(m map[string]string) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// SecretSet is the usual Secrets: a snapshot of the vault's names and values.
type SecretSet struct {
	names  map[string]bool
	values map[string]bool
	// byLen is the distinct values, longest first, for ContainsValue: a
	// slice walks faster than a map on every spawn, and a length bound
	// ends the walk.
	byLen []string
}

// NewSecretSet snapshots all (name → value) for classification. Empty values
// are not treated as secrets: an empty ambient variable hides nothing.
func NewSecretSet(all map[string]string) *SecretSet {
	s := &SecretSet{names: make(map[string]bool, len(all)), values: make(map[string]bool, len(all)), byLen: make([]string, 0, len(all))}
	for n, v := range all {
		s.names[n] = true
		if v != "" {
			k := len(s.values) // one hash of v, not a lookup and a store
			if s.values[v] = true; len(s.values) > k {
				s.byLen = append(s.byLen, v)
			}
		}
	}
	slices.SortFunc(s.byLen, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return s
}

// HasName implements Secrets.
func (s *SecretSet) HasName(name string) bool { return s != nil && s.names[name] }

// HasValue implements Secrets.
func (s *SecretSet) HasValue(v string) bool { return s != nil && v != "" && s.values[v] }

// ContainsValue reports whether any argument holds a vault value of at least
// min bytes, for the argv check.
func (s *SecretSet) ContainsValue(text string, min int) bool {
	if s == nil {
		return false
	}
	for _, v := range s.byLen {
		if len(v) < min {
			break
		}
		if len(v) <= len(text) && strings.Contains(text, v) {
			return true
		}
	}
	return false
}
