package config_test

import (
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/vault"
)

// isCredential stands in for the tools package's classifier.
func isCredential(name string) bool {
	return strings.Contains(name, "TOKEN") || strings.Contains(name, "KEY")
}

// TestSecretPrecedence is the seed's {...dotEnv, ...definedProcessEnv} with
// hush's backend between them: environment > vault backend > legacy .env.
// The process environment overrides a secret's value but does not make a
// plain variable such as PATH a secret.
func TestSecretPrecedence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dotEnv, err := config.LoadDotEnv(writeFile(t, dir, ".env", strings.Join([]string{
		"SHARED_TOKEN=dotenv-loses-to-env",
		"ONLY_DOTENV=from-dotenv",
		"BACKEND_AND_DOTENV=dotenv-loses-to-backend",
		"PLAIN_IN_BOTH=dotenv-loses-to-env",
		"",
	}, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	backend := vault.NewEnvFile(filepath.Join(dir, "data", vault.EnvFileName))
	for name, value := range map[string]string{
		"BACKEND_AND_DOTENV": "from-backend",
		"BACKEND_ONLY":       "from-backend-only",
		"ENV_BEATS_BACKEND":  "backend-loses-to-env",
	} {
		if err := backend.Set(name, value); err != nil {
			t.Fatal(err)
		}
	}
	l := &vault.Layered{
		Backend: backend,
		DotEnv:  dotEnv,
		Process: map[string]string{
			"SHARED_TOKEN":      "from-env",
			"GITHUB_TOKEN":      "ghp-from-env",
			"ENV_BEATS_BACKEND": "from-env-over-backend",
			"PLAIN_IN_BOTH":     "from-env-plain",
			"EMPTY_TOKEN":       "",
			"PATH":              "/usr/bin:/bin",
			"HOME":              "/home/u",
		},
		IsCredential: isCredential,
	}

	tests := []struct {
		name, want, origin string
	}{
		{"SHARED_TOKEN", "from-env", "environment"},                   // a real env var beats .env
		{"GITHUB_TOKEN", "ghp-from-env", "environment"},               // credential-named process var is a secret
		{"PLAIN_IN_BOTH", "from-env-plain", "environment"},            // a .env name, overridden by the env
		{"ONLY_DOTENV", "from-dotenv", ".env"},                        // only in .env
		{"BACKEND_AND_DOTENV", "from-backend", "vault"},               // backend beats .env
		{"BACKEND_ONLY", "from-backend-only", "vault"},                // only in the backend
		{"ENV_BEATS_BACKEND", "from-env-over-backend", "environment"}, // env beats backend
	}
	for _, tt := range tests {
		got, err := l.Get(tt.name)
		if err != nil || got != tt.want {
			t.Errorf("Get(%s) = %q, %v; want %q", tt.name, got, err, tt.want)
		}
		if o := l.Origin(tt.name); o != tt.origin {
			t.Errorf("Origin(%s) = %q, want %q", tt.name, o, tt.origin)
		}
	}
	for _, name := range []string{"PATH", "HOME", "EMPTY_TOKEN", "NOWHERE"} {
		if got, err := l.Get(name); !errors.Is(err, vault.ErrNotFound) {
			t.Errorf("Get(%s) = %q, %v; want ErrNotFound", name, got, err)
		}
		if o := l.Origin(name); o != "" {
			t.Errorf("Origin(%s) = %q, want \"\"", name, o)
		}
	}

	names, err := l.Names()
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{"BACKEND_AND_DOTENV", "BACKEND_ONLY", "ENV_BEATS_BACKEND", "GITHUB_TOKEN", "ONLY_DOTENV", "PLAIN_IN_BOTH", "SHARED_TOKEN"}
	if !slices.Equal(names, wantNames) {
		t.Errorf("Names = %q, want %q", names, wantNames)
	}

	all, err := l.All()
	if err != nil {
		t.Fatal(err)
	}
	wantAll := map[string]string{}
	for _, tt := range tests {
		wantAll[tt.name] = tt.want
	}
	if !maps.Equal(all, wantAll) {
		t.Errorf("All = %q, want %q", all, wantAll)
	}
}
