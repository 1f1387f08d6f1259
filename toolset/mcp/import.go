package mcp

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/vault"
)

// `hush mcp import`: turning pasted mcpServers settings into mcp.json
// entries that hold no secret. A literal credential in a server's env moves
// into the vault and the entry refers to it as ${NAME}; a credential on a
// command line refuses the server, since hush never puts a secret there.

// ImportRequest is what PlanImport decides from.
type ImportRequest struct {
	Servers      map[string]config.MCPServer // as pasted (config.ParseMCPServers)
	InConfigTOML map[string]config.MCPServer // config.toml's [mcp.NAME]: never replaced
	InMCPJSON    map[string]config.MCPServer // mcp.json now: replaced only with Replace
	Replace      bool
	Held         *tools.SecretSet // the vault, to recognise a value it holds
	Ambient      map[string]string
	// Store puts a literal credential into the vault and returns the name
	// it is stored under (StoreImportedSecret).
	Store func(server, name, value string) (string, error)
}

// ImportPlan is what to add to mcp.json, what to tell the user, and the
// rules that would allow each server's secrets without asking.
type ImportPlan struct {
	Add    map[string]config.MCPServer
	Report []string
	Rules  []string
}

// PlanImport decides, server by server, what `hush mcp import` adds.
func PlanImport(req ImportRequest) (ImportPlan, error) {
	held := req.Held
	servers := req.Servers
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	sort.Strings(names)
	add := map[string]config.MCPServer{}
	var report []string
	var rules []string
	for _, orig := range names {
		s := servers[orig]
		name := SafeName(orig)
		if name != orig {
			report = append(report, fmt.Sprintf("server %q: imported as %q (names are letters, digits, _ and -)", orig, name))
		}
		if _, ok := req.InConfigTOML[name]; ok {
			report = append(report, fmt.Sprintf("server %q: skipped: config.toml already has [mcp.%s]", name, name))
			continue
		}
		if _, ok := req.InMCPJSON[name]; ok && !req.Replace {
			report = append(report, fmt.Sprintf("server %q: skipped: mcp.json already has it (--replace to overwrite)", name))
			continue
		}
		if _, ok := add[name]; ok {
			report = append(report, fmt.Sprintf("server %q: skipped: two servers are named %q after renaming", orig, name))
			continue
		}
		if i := credentialArg(s.Args, held); i > 0 {
			report = append(report, fmt.Sprintf("server %q: not imported: argument %d holds a credential, and hush never puts a secret on a command line (any process can read it there); if the server can read it from an environment variable, paste it again with that variable in env", name, i))
			continue
		}
		env, lines, refs, err := importEnv(req, name, s.Env)
		if err != nil {
			return ImportPlan{}, fmt.Errorf("server %q: %w", name, err)
		}
		report = append(report, lines...)
		s.Env = env
		if len(s.Headers) > 0 {
			headers, lines, hrefs, err := importHeaders(req, name, s.Headers)
			if err != nil {
				return ImportPlan{}, fmt.Errorf("server %q: %w", name, err)
			}
			report = append(report, lines...)
			s.Headers = headers
			refs = append(refs, hrefs...)
		}
		add[name] = s
		for _, r := range refs {
			rules = append(rules, fmt.Sprintf("[[rules]]\ngate = \"vault.read:%s\"\nsubject = %q\ndecision = \"allow\"", r, Subject(name)))
		}
	}
	return ImportPlan{Add: add, Report: report, Rules: rules}, nil
}

// importHeaders is importEnv for a remote server's headers: a literal
// credential (Authorization: Bearer …) moves into the vault under the
// header's name in capitals (AUTHORIZATION, X_API_KEY).
func importHeaders(req ImportRequest, server string, in map[string]string) (map[string]string, []string, []string, error) {
	byName := map[string]string{}
	header := map[string]string{}
	for k, v := range in {
		n := strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(k))
		byName[n], header[n] = v, k
	}
	conv, lines, refs, err := importEnv(req, server, byName)
	if err != nil {
		return nil, nil, nil, err
	}
	out := map[string]string{}
	for n, v := range conv {
		out[header[n]] = v
	}
	return out, lines, refs, nil
}

// importRef matches VS Code's ${env:NAME} and ${input:NAME}.
var importRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{(env|input):([A-Za-z_][A-Za-z0-9_]*)\}`) })

// credentialArg returns the 1-based position of the first argument that
// holds a credential (a URL with a password, or a value the vault holds),
// or 0.
func credentialArg(args []string, held *tools.SecretSet) int {
	for i, arg := range args {
		if tools.IsCredentialValue(arg) || held.HasValue(arg) {
			return i + 1
		}
	}
	return 0
}

// SafeName makes a pasted server name one hush can use.
func SafeName(name string) string {
	out := strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return '-'
	}, name)
	out = strings.Trim(out, "-")
	if len(out) > 40 {
		out = out[:40]
	}
	if out == "" {
		out = "server"
	}
	return out
}

// mcpImportEnv turns a pasted env into one that holds no secret: literal
// credentials move into the vault and become ${NAME}; VS Code references
// become ${NAME}; other literal values stay, with "${" escaped. It returns
// the secret names the server will ask for.
func importEnv(req ImportRequest, server string, in map[string]string) (map[string]string, []string, []string, error) {
	held := req.Held
	out := map[string]string{}
	var lines, refs []string
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := in[k]
		if importRef().MatchString(v) {
			v = importRef().ReplaceAllStringFunc(v, func(m string) string {
				sub := importRef().FindStringSubmatch(m)
				if sub[1] == "input" {
					lines = append(lines, fmt.Sprintf("server %q: %s was a VS Code prompt (${input:%s}); store its value with `hush vault set %s`", server, k, sub[2], sub[2]))
				}
				return "${" + sub[2] + "}"
			})
		}
		r, err := config.References(v)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("env %s holds a reference hush cannot convert (%v); write it as ${NAME} for a secret NAME in the vault", k, err)
		}
		if len(r) > 0 {
			out[k] = v
			refs = append(refs, r...)
			continue
		}
		if v == "" || !(tools.IsCredentialName(k) || tools.IsCredentialValue(v) || held.HasValue(v)) {
			out[k] = strings.ReplaceAll(v, "${", "$${")
			continue
		}
		name, err := req.Store(server, k, v)
		if err != nil {
			return nil, nil, nil, err
		}
		out[k] = "${" + name + "}"
		refs = append(refs, name)
		lines = append(lines, fmt.Sprintf("server %q: %s: the value was moved into the vault as %s; mcp.json refers to it as ${%s}", server, k, name, name))
		if amb := req.Ambient[name]; amb != "" && amb != v {
			lines = append(lines, fmt.Sprintf("server %q: note: your environment also sets %s, and a set environment variable wins over the vault; unset it to use the imported value", server, name))
		}
	}
	return out, lines, dedupe(refs), nil
}

// StoreImportedSecret stores value under name in the vault's backend, or
// under SERVER_NAME when name already holds a different value, and returns
// the name used.
func StoreImportedSecret(lv *vault.Layered, server, name, value string) (string, error) {
	candidates := []string{name, strings.ToUpper(strings.ReplaceAll(server, "-", "_")) + "_" + name}
	for _, n := range candidates {
		if vault.CheckName(n) != nil {
			continue
		}
		cur, err := lv.Backend.Get(n)
		switch {
		case err == nil && cur == value:
			return n, nil
		case err == nil:
			continue // taken by another value
		case !errors.Is(err, vault.ErrNotFound):
			return "", fmt.Errorf("read the vault: %w", err)
		}
		if err := lv.Set(n, value); err != nil {
			return "", fmt.Errorf("store %s in the vault: %w", n, err)
		}
		return n, nil
	}
	return "", fmt.Errorf("cannot store %s: the vault already holds other values under %s; rename one with `hush vault`", name, strings.Join(candidates, " and "))
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
