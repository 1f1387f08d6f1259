// Package config owns how hush reads its settings: the legacy .env parser
// (LoadDotEnv, which returns a map and never writes the process
// environment), where hush's files live, and config.toml.
//
// Nothing here writes the process environment or starts a process, and no
// error built here echoes a value from a .env file.
package config

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/hushcli/hush/config/userfile"
)

// FileName is the config file in the config dir.
const FileName = "config.toml"

// Config is config.toml. Every string that may hold a secret reference
// (api_key, set values, MCP env) is a ${NAME} template resolved through the
// gated vault at use, never at load.
type Config struct {
	Model Model                 `toml:"model"`
	Vault VaultConfig           `toml:"vault"`
	Tools map[string]ToolConfig `toml:"tools"`
	Rules []Rule                `toml:"rules"`
	MCP   map[string]MCPServer  `toml:"mcp"`
	Turn  TurnConfig            `toml:"turn"`
	// Compaction is [compaction]: when a long conversation is summarized.
	Compaction Compaction `toml:"compaction"`
	// Telemetry is [telemetry]: the opt-in OpenTelemetry export.
	Telemetry Telemetry `toml:"telemetry"`
	// Sandbox is how host tools are contained (Linux).
	Sandbox SandboxConfig `toml:"sandbox"`
	// Network is [network]: the hosts host tools may reach through
	// hush's egress proxy (network.go).
	Network Network `toml:"network"`
	// Secrets is [secrets.NAME]: the hosts each granted secret may be
	// sent to, by secret name.
	Secrets map[string]SecretHosts `toml:"secrets"`
	Unsafe  Unsafe                 `toml:"unsafe"`
	// Projects holds what the user allowed "always in this project", by
	// the project's directory (symlinks resolved): [[projects."DIR".rules]]
	// entries hush writes when asked to (rules.go). Only the user's own
	// config.toml has it; a project's .hush/config.toml cannot.
	Projects map[string]ProjectRules `toml:"projects"`
}

// ProjectRules is [projects."DIR"]: rules that apply in that project only.
type ProjectRules struct {
	Rules []Rule `toml:"rules"`
}

// SandboxConfig is [sandbox]: every host tool (bash, background processes,
// MCP servers) runs in a sandbox of its own that hides hush's files, the
// keyring and Docker sockets, the project's .env files and the home
// directory's credential stores (sandbox.MaskSet owns the list).
type SandboxConfig struct {
	// Required refuses to run host tools where the kernel refuses the
	// sandbox, instead of running them without it.
	Required bool `toml:"required"`
	// Docker leaves the Docker socket reachable (a tool that runs docker).
	Docker bool `toml:"docker"`
	// Allow re-opens hidden paths at or below these ("~/.ssh", "~/.aws");
	// Hide hides more. "~/" is the home directory; a relative path is
	// relative to the project.
	Allow []string `toml:"allow"`
	Hide  []string `toml:"hide"`
	// Constructed builds each host tool's root from the allowlist view
	// (`hush sandbox show`): nothing of the machine is in a tool's world
	// but what the view lists. On unless set to false, which falls back
	// to the host's root with masks over what hush knows to hide (only
	// the user's own config can switch it off).
	Constructed *bool `toml:"constructed"`
}

// ConstructedWorld reports whether host tools get the constructed world
// (the default) rather than the host's root with masks.
func (s SandboxConfig) ConstructedWorld() bool { return s.Constructed == nil || *s.Constructed }

// Unsafe switches protections off. It exists so that `hush audit`'s own
// tests can prove each protection is load-bearing through the real code
// paths; hush warns on every start while any is set, and `hush audit`
// reports it as a risk. No user should set it.
type Unsafe struct {
	// NoCredentialFilter lets ambient credentials into a child's environment.
	NoCredentialFilter bool `toml:"no_credential_filter"`
	// SecretsInArgv makes bash pass granted values on its command line.
	SecretsInArgv bool `toml:"secrets_in_argv"`
	// NoMountMask mounts the project in a container without hiding .env.
	NoMountMask bool `toml:"no_mount_mask"`
	// NoRedaction passes tool output through unredacted.
	NoRedaction bool `toml:"no_redaction"`
	// NoSandbox runs host tools without the sandbox (`hush audit
	// --sandbox off` sets it in the audit's own config).
	NoSandbox bool `toml:"no_sandbox"`
}

// Any reports whether any protection is switched off, and which.
func (u Unsafe) Any() []string {
	var on []string
	for name, set := range map[string]bool{"no_credential_filter": u.NoCredentialFilter, "secrets_in_argv": u.SecretsInArgv,
		"no_mount_mask": u.NoMountMask, "no_redaction": u.NoRedaction, "no_sandbox": u.NoSandbox} {
		if set {
			on = append(on, name)
		}
	}
	sort.Strings(on)
	return on
}

// Model picks the provider the agent talks to.
type Model struct {
	Provider string `toml:"provider"` // openai | anthropic | replay
	BaseURL  string `toml:"base_url"`
	Name     string `toml:"model"`
	APIKey   string `toml:"api_key"` // a ${NAME} reference
	Replay   string `toml:"replay"`  // replay file, for provider = "replay"
	// ConnectTimeout and FirstByteTimeout bound connecting to the server
	// and waiting for the first byte of an answer (0: 10s and 2m).
	ConnectTimeout   Duration `toml:"connect_timeout"`
	FirstByteTimeout Duration `toml:"first_byte_timeout"`
	// IdleTimeout bounds a silence once an answer has started (0: 5m).
	IdleTimeout Duration `toml:"idle_timeout"`
}

// VaultConfig picks the vault backend.
type VaultConfig struct {
	Backend string `toml:"backend"` // envfile (default) | keyring
	// Secret names variables whose value, from the environment or a
	// legacy .env file, is secret text whatever it looks like: redacted
	// and refused in command lines (a vault value always is).
	Secret []string `toml:"secret"`
}

// ToolConfig is one tool's spawn policy (see tools.Policy).
type ToolConfig struct {
	Inherit string            `toml:"inherit"` // core | none | all
	Include []string          `toml:"include"`
	Exclude []string          `toml:"exclude"`
	Set     map[string]string `toml:"set"`
	Secrets []string          `toml:"secrets"`
	Timeout Duration          `toml:"timeout"`
	Image   string            `toml:"image"`   // dockerbash
	Network string            `toml:"network"` // "none": no network at all (bash, background, dockerbash)
	Mask    []string          `toml:"mask"`    // dockerbash: extra files hidden in /app
	// AllowPrivate lets the http tool reach loopback, private and
	// link-local addresses (http only).
	AllowPrivate bool `toml:"allow_private"`
	// NetworkAllow and NetworkDeny are this tool's own [network] allow
	// and deny: where one of them matches a host, it decides before
	// [network]'s lists.
	NetworkAllow []string `toml:"network_allow"`
	NetworkDeny  []string `toml:"network_deny"`
	// MaxProcesses and MaxMemory bound each call of a host tool (bash,
	// background, mcp): processes at once (nil: 4096, 0: off) and the
	// memory of its processes together ("8GiB", "50%" of RAM, "off"; "":
	// half of RAM). The session reads them (sandbox.Limits).
	MaxProcesses *int   `toml:"max_processes"`
	MaxMemory    string `toml:"max_memory"`
	// Seed-001 options.
	HomeDir    string  `toml:"home_dir"`
	IsolateNpm bool    `toml:"isolate_npm"`
	Proxy      *string `toml:"proxy"`
}

// Rule is one PermissionGate rule: globs on the gate id and the subject.
type Rule struct {
	Gate     string `toml:"gate"`     // e.g. "vault.read:GITHUB_TOKEN", "tool.run:*"
	Subject  string `toml:"subject"`  // e.g. "bash", "mcp:github", "*"
	Decision string `toml:"decision"` // allow | deny | ask
	// Command narrows a tool.run rule to commands: "go test:*" (every
	// simple command starting with those words) or an exact command.
	Command string `toml:"command,omitempty"`
}

// MCPServer is one MCP server, in the shape of the de-facto mcpServers
// JSON: a stdio server (command, args, env), or a remote one (url, type,
// headers).
type MCPServer struct {
	// URL is a remote server's endpoint; Type is its transport: "http"
	// (Streamable HTTP, the default) or "sse" (the older HTTP+SSE).
	URL  string `toml:"url"`
	Type string `toml:"type"`
	// Headers are sent with every request to a remote server; values may
	// hold ${NAME} references, read through the gate as mcp:<server>.
	Headers map[string]string `toml:"headers"`
	// OAuth signs in to a remote server with OAuth (authorization code
	// with PKCE, a loopback redirect); its tokens are kept in the vault as
	// OAuthTokenName(server). ClientID is a client registered with the
	// authorization server beforehand (default: dynamic registration);
	// CallbackPort fixes the loopback redirect's port (default: any).
	OAuth        bool              `toml:"oauth"`
	ClientID     string            `toml:"client_id"`
	CallbackPort int               `toml:"callback_port"`
	Command      string            `toml:"command"`
	Args         []string          `toml:"args"`
	Env          map[string]string `toml:"env"`
	Dir          string            `toml:"dir"`
	Timeout      Duration          `toml:"timeout"` // one tool call (default 2m)
	Disabled     bool              `toml:"disabled"`
	// StartTimeout bounds start-up: spawn, MCP handshake, tool listing
	// (default 30s).
	StartTimeout Duration `toml:"start_timeout"`
}

// Remote reports whether the server is reached over HTTP.
func (s MCPServer) Remote() bool { return s.URL != "" }

// Transport is a remote server's transport, "http" or "sse".
func (s MCPServer) Transport() string {
	switch strings.ToLower(s.Type) {
	case "sse":
		return "sse"
	}
	return "http"
}

// Check says what is wrong with one server's settings.
func (s MCPServer) Check() error {
	switch {
	case s.URL != "" && s.Command != "":
		return errors.New("has both a command and a url; a server is either started (command) or reached (url)")
	case s.URL == "" && s.Command == "":
		if s.Type != "" && s.Type != "stdio" {
			return fmt.Errorf("is a remote (%s) server without a url", s.Type)
		}
		return errors.New("command is empty (or give a url for a remote server)")
	case s.URL != "":
		switch strings.ToLower(s.Type) {
		case "", "http", "streamable-http", "streamablehttp", "sse":
		default:
			return fmt.Errorf("type %q: want http (Streamable HTTP) or sse", s.Type)
		}
		if len(s.Env) > 0 || len(s.Args) > 0 {
			return errors.New("a remote server takes headers, not args or env")
		}
		return s.checkOAuth()
	case s.OAuth || s.ClientID != "" || s.CallbackPort != 0:
		return errors.New("oauth is for a remote server (url); a stdio server takes env")
	case len(s.Headers) > 0:
		return errors.New("headers are for a remote server (url); a stdio server takes env")
	}
	return nil
}

// checkOAuth says what is wrong with a remote server's OAuth settings.
func (s MCPServer) checkOAuth() error {
	if !s.OAuth {
		if s.ClientID != "" || s.CallbackPort != 0 {
			return errors.New("has client_id or callback_port but not oauth = true")
		}
		return nil
	}
	if s.Transport() != "http" {
		return errors.New("oauth needs the Streamable HTTP transport (type = \"http\"); hush's MCP SDK has no OAuth for sse")
	}
	for k := range s.Headers {
		if strings.EqualFold(k, "Authorization") {
			return errors.New("has both oauth = true and an Authorization header; OAuth sets that header itself: remove one")
		}
	}
	if s.CallbackPort < 0 || s.CallbackPort > 65535 {
		return fmt.Errorf("callback_port %d: want a port from 1 to 65535 (or leave it out for any free port)", s.CallbackPort)
	}
	return nil
}

// OAuthTokenName is the vault name of an OAuth MCP server's tokens:
// HUSH_MCP_OAUTH_ and the server name in upper case, - as _.
func OAuthTokenName(server string) string {
	return "HUSH_MCP_OAUTH_" + strings.ToUpper(strings.ReplaceAll(server, "-", "_"))
}

// TurnConfig bounds one agent turn.
type TurnConfig struct {
	MaxSteps int    `toml:"max_steps"`
	System   string `toml:"system"`
}

// Compaction is [compaction]. A conversation is compacted automatically
// (unless auto = false) once it passes threshold of context_window tokens:
// the model summarizes all but the last keep_turns turns.
type Compaction struct {
	Auto          *bool   `toml:"auto"`           // default true
	ContextWindow int64   `toml:"context_window"` // tokens; default 128000
	Threshold     float64 `toml:"threshold"`      // fraction of the window; default 0.8
	KeepTurns     int     `toml:"keep_turns"`     // default 2
}

// Telemetry is [telemetry]. With an endpoint, every gate decision, tool
// call and session is exported as OTLP/HTTP traces; without one nothing
// is sent. Header values may hold ${NAME} references (an API key), read
// from the vault by hush itself like model.api_key.
type Telemetry struct {
	Endpoint string            `toml:"endpoint"`
	Headers  map[string]string `toml:"headers"`
}

// Duration is a time.Duration written as "30s" or "2m" in TOML.
type Duration struct{ time.Duration }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("not a duration (want e.g. \"30s\" or \"2m\"): %q", string(b))
	}
	d.Duration = v
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// CheckBackend reports, as an invalid config at path, a vault.backend that
// is none of known: the vault registry's names (the one list of backends,
// which config does not keep).
func CheckBackend(c Config, path string, known []string) error {
	b := c.Vault.Backend
	if b == "" || slices.Contains(known, b) || len(known) == 0 {
		return nil
	}
	want := known[0]
	if n := len(known); n > 1 {
		want = strings.Join(known[:n-1], ", ") + " or " + known[n-1]
	}
	return fmt.Errorf("%w: %s: vault.backend %q: want %s", ErrConfig, path, b, want)
}

// ErrConfig marks a config file the user must fix.
var ErrConfig = errors.New("invalid config")

// Load reads config.toml from path. A missing file is the zero Config.
// Unknown keys and values of the wrong type are errors naming the key.
func Load(path string) (Config, error) {
	data, err := userfile.Read(context.Background(), path, userfile.ConfigLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return Config{}, nil
	}
	if err != nil {
		return Config{}, fmt.Errorf("read %s: %w", path, err)
	}
	return Parse(path, data)
}

// Parse is Load of data already read from path (named in errors).
func Parse(path string, data []byte) (Config, error) {
	var c Config
	// Syntax first, into a map that takes any well-formed document: a
	// syntax error has a line but no key worth naming (the parser's "last
	// key" is whatever came before the fault).
	var syntax toml.ParseError
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); errors.As(err, &syntax) {
		return c, fmt.Errorf("%w: %s line %d: %s", ErrConfig, path, syntax.Position.Line, unquote(syntax.Message))
	}
	if err := checkCase(doc); err != nil {
		return c, fmt.Errorf("%w: %s: %v", ErrConfig, path, err)
	}
	md, err := toml.Decode(string(data), &c)
	if err != nil {
		// Now a ParseError is a value the decoder rejected (a timeout of
		// "30x"): its key is the one being decoded.
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return c, fmt.Errorf("%w: %s line %d: %s: %s", ErrConfig, path, pe.Position.Line, pe.LastKey, unquote(pe.Message))
		}
		return c, fmt.Errorf("%w: %s: %v", ErrConfig, path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, 0, len(und))
		for _, k := range und {
			keys = append(keys, k.String())
		}
		sort.Strings(keys)
		return c, fmt.Errorf("%w: %s: unknown key %s", ErrConfig, path, strings.Join(keys, ", "))
	}
	for _, name := range sortedKeys(c.Secrets) {
		if !md.IsDefined("secrets", name, "hosts") {
			return c, fmt.Errorf("%w: %s: secrets.%s has no hosts: list where the secret may be sent (hosts = [\"api.example.com\"]), or hosts = [] for nowhere", ErrConfig, path, name)
		}
	}
	if err := c.validate(); err != nil {
		return c, fmt.Errorf("%w: %s: %v", ErrConfig, path, err)
	}
	return c, nil
}

// quoted is text the TOML parser quotes from the file in a message.
var quoted = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'[^']*'`) })

// unquote drops what the parser quotes from the file: at a fault on a
// line like api_key = sk-live-…, the parser quotes the unquoted key
// itself, and an error message is printed, logged and pasted into issues.
// Short quotes (a character, "30s") and key names stay: they name the
// fault without being a value worth hiding.
func unquote(msg string) string {
	return quoted().ReplaceAllStringFunc(msg, func(q string) string {
		inner := q[1 : len(q)-1]
		if len(inner) < 8 || keyName().MatchString(inner) {
			return q
		}
		return "(text not shown)"
	})
}

var keyName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z_]+(\.[a-z_]+)*$`) })

func (c *Config) validate() error {
	if p := c.Model.Provider; p != "" && !KnownProvider(p) {
		return fmt.Errorf("model.provider %q: want %s", p, providerList())
	}
	for _, name := range sortedKeys(c.Tools) {
		t := c.Tools[name]
		switch t.Inherit {
		case "", "core", "none", "all":
		default:
			return fmt.Errorf("tools.%s.inherit %q: want core, none or all", name, t.Inherit)
		}
		for _, g := range append(append([]string{}, t.Include...), t.Exclude...) {
			if _, err := filepath.Match(g, ""); err != nil {
				return fmt.Errorf("tools.%s: bad glob %q", name, g)
			}
		}
		if t.AllowPrivate && name != "http" {
			return fmt.Errorf("tools.%s.allow_private: only the http tool has it", name)
		}
	}
	if err := checkRules("rules", c.Rules); err != nil {
		return err
	}
	for _, dir := range sortedKeys(c.Projects) {
		if !filepath.IsAbs(dir) {
			return fmt.Errorf("projects.%q: want the project's absolute directory", dir)
		}
		if err := checkRules(fmt.Sprintf("projects.%q.rules", dir), c.Projects[dir].Rules); err != nil {
			return err
		}
	}
	for _, name := range sortedKeys(c.MCP) {
		if err := c.MCP[name].Check(); err != nil {
			return fmt.Errorf("mcp.%s: %v", name, err)
		}
	}
	for _, l := range []struct {
		key   string
		paths []string
	}{{"sandbox.allow", c.Sandbox.Allow}, {"sandbox.hide", c.Sandbox.Hide}} {
		for _, p := range l.paths {
			switch {
			case strings.TrimSpace(p) == "":
				return fmt.Errorf("%s: an entry is empty", l.key)
			case strings.HasPrefix(p, "~") && p != "~" && !strings.HasPrefix(p, "~/"):
				return fmt.Errorf("%s: %q: only ~/ (your own home) is expanded", l.key, p)
			case strings.ContainsRune(p, 0):
				return fmt.Errorf("%s: %q holds a NUL byte", l.key, p)
			}
		}
	}
	if err := c.checkNetwork(); err != nil {
		return err
	}
	if c.Turn.MaxSteps < 0 {
		return errors.New("turn.max_steps must not be negative")
	}
	if p := c.Compaction; p.ContextWindow < 0 || p.KeepTurns < 0 || p.Threshold < 0 || p.Threshold > 1 {
		return errors.New("compaction: context_window and keep_turns must not be negative, threshold is a fraction from 0 to 1 (e.g. 0.8)")
	}
	return nil
}

// sortedKeys makes validation report the same first error on every run.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkRules validates [[rules]] entries; where names them in errors.
func checkRules(where string, rules []Rule) error {
	for i, r := range rules {
		switch r.Decision {
		case "allow", "deny", "ask":
		default:
			return fmt.Errorf("%s[%d].decision %q: want allow, deny or ask", where, i, r.Decision)
		}
		if r.Gate == "" {
			return fmt.Errorf("%s[%d]: gate is empty (e.g. gate = \"vault.read:GITHUB_TOKEN\")", where, i)
		}
		for _, g := range []string{r.Gate, r.Subject} {
			if _, err := filepath.Match(g, ""); err != nil {
				return fmt.Errorf("%s[%d]: bad glob %q", where, i, g)
			}
		}
		if r.Command != "" {
			if !strings.HasPrefix(r.Gate, "tool.run:") {
				return fmt.Errorf("%s[%d].command: only a tool.run rule can name a command (gate = \"tool.run:bash\")", where, i)
			}
			if p := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(r.Command), ":*")); p == "" {
				return fmt.Errorf("%s[%d].command %q: name the command, e.g. \"go test:*\"", where, i, r.Command)
			}
		}
	}
	return nil
}
