package tools

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// What `hush env` and `hush sandbox show` print: package main loads the
// policy and calls these.

// EnvShow is a dry run of the environment a tool would start with.
type EnvShow struct {
	Tool    string
	Ambient map[string]string
	Policy  Policy
	Extra   map[string]string
	Secrets *SecretSet // every secret's name and value, to mark and withhold them
	// Dropped also lists ambient variables kept out, with the reason.
	Dropped bool
}

// Render prints the environment: plain values shown, secrets and
// credential-looking variables masked. Nothing is read from the vault: a
// scoped name is shown as granted at run time.
func (s EnvShow) Render(w io.Writer) error {
	grant := func(name string) (string, error) { return "<granted at run time: vault.read:" + name + ">", nil }
	env, dropped, err := BuildEnv(EnvRequest{Ambient: s.Ambient, Policy: s.Policy, Secrets: s.Secrets, Grant: grant, Extra: s.Extra})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "# environment for tool %s (%d variables)\n", s.Tool, len(env))
	for _, e := range env {
		val := e.Value
		switch {
		case e.Secret:
			if strings.HasPrefix(val, "<granted") {
				break
			}
			val = "<secret>"
		case IsCredentialName(e.Name) || IsCredentialValue(val):
			val = "<masked>"
		}
		fmt.Fprintf(w, "%s=%s\n", e.Name, val)
	}
	if !s.Dropped {
		return nil
	}
	dropped, others := KeptOut(s.Ambient, env, dropped, s.Secrets)
	sort.Slice(dropped, func(i, j int) bool { return dropped[i].Name < dropped[j].Name })
	if len(dropped) > 0 || others > 0 {
		fmt.Fprintf(w, "# kept out:\n")
	}
	for _, d := range dropped {
		fmt.Fprintf(w, "#   %s: %s\n", d.Name, d.Reason)
	}
	if others > 0 {
		fmt.Fprintf(w, "#   and %d other variable(s) the policy does not name (add them to include to pass them)\n", others)
	}
	return nil
}

// KeptOut adds to what BuildEnv refused the ambient variables the policy
// never named but a person should know are kept out — credential-named,
// loader, secret-valued — each with its true reason, and counts the rest.
func KeptOut(ambient map[string]string, env Env, dropped []Dropped, secrets *SecretSet) ([]Dropped, int) {
	seen := map[string]bool{}
	for _, e := range env {
		seen[e.Name] = true
	}
	for _, d := range dropped {
		seen[d.Name] = true
	}
	others := 0
	for n, v := range ambient {
		if seen[n] || v == "" {
			continue
		}
		why := ""
		switch {
		case IsLoaderName(n):
			why = "loader injection variable"
		case IsCredentialName(n):
			why = "credential-named; grant it as a secret instead"
		case IsCredentialValue(v):
			why = "value is a URL with a password"
		case secrets.HasName(n):
			why = "a secret of this name is in the vault or a project .env file; grant it as a secret instead"
		case secrets.HasValue(v):
			why = "value equals the value of a secret"
		default:
			others++
			continue
		}
		dropped = append(dropped, Dropped{Name: n, Reason: why})
	}
	return dropped, others
}
