package session

import (
	"fmt"
	"strings"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/redact"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/vault"
	"github.com/hushcli/hush/vault/keyring"
)

// DefaultBackend is the vault backend used when config.toml names none.
const DefaultBackend = "envfile"

// Vault is the vault a session reads: the configured backend behind a
// forwarding proxy (so a backend swap reaches everything holding it), the
// project's legacy .env family, and the real environment.
type Vault struct {
	*vault.Layered
	Proxy *vault.Proxy
	// Warnings are one-line notes for the user (a .env in the project).
	Warnings []string
	// DotEnvFault is set when the project root's .env is malformed: the
	// error a session that runs tools refuses to start with.
	DotEnvFault error
}

// OpenVault opens the backend cfg names from reg and layers the legacy
// .env sources of the project at dir and the start-up environment over it.
func OpenVault(cfg config.Config, reg *vault.Registry, dataDir string, ambient map[string]string, dir string) (*Vault, error) {
	backend := cfg.Vault.Backend
	if backend == "" {
		backend = DefaultBackend
	}
	v, err := reg.Open(backend, dataDir)
	if err != nil {
		return nil, err
	}
	proxy := vault.NewProxy(v)
	// Every .env, .env.* and .envrc in the project is a legacy source.
	fam, err := config.LoadDotEnvFamily(dir)
	if err != nil {
		return nil, err
	}
	warnings := config.DotEnvWarnings(fam)
	var fault error
	if fam.RootFault != nil {
		// What is on the broken line, and so which value to keep from
		// tools, cannot be known: a session that runs tools refuses to
		// start (DotEnvFault); managing the vault, MCP servers and the
		// environment works, with the file's readable values scrubbed.
		fault = fmt.Errorf("%w; fix that line, or move the file out of the project (hush reads it to keep its values from tools)", fam.RootFault)
		warnings = append(warnings, fmt.Sprintf("%v; hush uses the file's other values, and starts no chat or run until that line is fixed", fam.RootFault))
	}
	// A process variable is a secret when its name or its value says so
	// (DATABASE_URL=postgres://u:pw@h/db), so it can be granted by name;
	// its value is also scrubbed and refused in command lines when it
	// looks like a credential (tools.LooksLikeSecret).
	isCred := func(name string) bool {
		return tools.IsCredentialName(name) || tools.IsCredentialValue(ambient[name])
	}
	marked := map[string]bool{}
	for _, n := range cfg.Vault.Secret {
		marked[n] = true
	}
	isSecretValue := func(name, value string) bool {
		return marked[strings.SplitN(name, "@", 2)[0]] || tools.LooksLikeSecret(value)
	}
	return &Vault{
		Layered: &vault.Layered{Backend: proxy, DotEnv: fam.Merged, DotEnvFrom: fam.From, DotEnvShadowed: fam.Shadowed, Process: ambient,
			IsCredential: isCred, IsSecretValue: isSecretValue},
		Proxy:       proxy,
		Warnings:    warnings,
		DotEnvFault: fault,
	}, nil
}

// VaultRegistry is every vault backend hush can open: the built-in envfile
// backend and the OS keyring. Opening the vault, `hush setup`, `hush vault
// backend` and config validation all ask it, so they agree on what exists.
func VaultRegistry(ambient map[string]string) *vault.Registry {
	reg := vault.NewRegistry()
	reg.Register("keyring", keyring.Factory(ambient))
	return reg
}

// Backend is the configured backend's name.
func Backend(cfg config.Config) string {
	if cfg.Vault.Backend == "" {
		return DefaultBackend
	}
	return cfg.Vault.Backend
}

// Redact scrubs every secret hush knows of from s: the vault's (with the
// credential-looking values of the start-up environment it includes), by
// scrub's snapshot, when the vault was opened (scrub non-nil); else those
// of the start-up environment ambient alone.
func Redact(scrub *executor.SecretCache, ambient map[string]string, s string) string {
	if scrub != nil {
		if snap, err := scrub.Current(); err == nil {
			return snap.Redactor.String(s)
		}
	}
	creds := map[string]string{}
	for k, v := range ambient {
		if tools.IsCredentialName(k) || tools.IsCredentialValue(v) {
			creds[k] = v
		}
	}
	return redact.FromMap(creds).String(s)
}
