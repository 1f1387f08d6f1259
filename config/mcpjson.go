package config

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hushcli/hush/config/atomicfile"
	"github.com/hushcli/hush/config/userfile"
)

// MCPFileName is the file beside config.toml holding MCP servers in the
// de-facto mcpServers JSON format (Claude Desktop, Cursor, VS Code):
//
//	{"mcpServers": {"github": {"command": "npx", "args": [...], "env": {...}}}}
//
// Servers may be configured there, in config.toml's [mcp.NAME], or both
// (under different names).
const MCPFileName = "mcp.json"

// mcpEntry is one server as the JSON formats write it: a stdio server
// (command, args, env, cwd) or a remote one (url, type, headers).
type mcpEntry struct {
	Headers  map[string]string          `json:"headers,omitempty"`
	Type     string                     `json:"type,omitempty"`
	Command  string                     `json:"command,omitempty"`
	Args     []string                   `json:"args,omitempty"`
	Env      map[string]json.RawMessage `json:"env,omitempty"`
	Cwd      string                     `json:"cwd,omitempty"`
	Disabled bool                       `json:"disabled,omitempty"`
	URL      string                     `json:"url,omitempty"`
	// OAuth is Claude Code's and VS Code's "oauth": {"clientId": ...,
	// "callbackPort": ...}; hush also takes "oauth": true.
	OAuth json.RawMessage `json:"oauth,omitempty"`
}

// mcpOAuth is the "oauth" object of a remote server in mcp.json.
type mcpOAuth struct {
	ClientID     string `json:"clientId,omitempty"`
	CallbackPort int    `json:"callbackPort,omitempty"`
}

var mcpEntryKeys = map[string]bool{"type": true, "command": true, "args": true, "env": true, "cwd": true, "disabled": true, "url": true, "headers": true, "oauth": true}

// mcpNameOK is what a server name may be, ^[A-Za-z0-9_-]{1,40}$: it becomes
// the gate subject mcp:<name>, matched by glob rules, and part of the tool
// names the model sees, which providers restrict to [a-zA-Z0-9_-]. A loop,
// not a regexp: a package-level regexp is compiled on every start of hush.
func mcpNameOK(name string) bool {
	if len(name) == 0 || len(name) > 40 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// ValidMCPName reports a server name hush cannot use.
func ValidMCPName(name string) error {
	if !mcpNameOK(name) {
		return fmt.Errorf("mcp server name %q: use 1 to 40 letters, digits, _ or -", name)
	}
	return nil
}

// ParseMCPServers reads servers from what a user pastes: a whole mcp.json
// or claude_desktop_config.json ({"mcpServers": {...}}), a VS Code
// .vscode/mcp.json ({"servers": {...}}), the servers object alone, or the
// `"mcpServers": {...}` fragment; // and /* */ comments and trailing
// commas (JSONC) are allowed. Notes say what was skipped or ignored.
func ParseMCPServers(data []byte) (map[string]MCPServer, []string, error) {
	clean := stripJSONC(data)
	var top map[string]json.RawMessage
	err := json.Unmarshal(clean, &top)
	if err != nil && bytes.HasPrefix(bytes.TrimSpace(clean), []byte(`"`)) {
		// The "mcpServers": {...} fragment, copied out of a bigger file.
		err = json.Unmarshal(append(append([]byte("{"), clean...), '}'), &top)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("not an mcpServers JSON object: %w", jsonErr(err))
	}
	raw, ok := top["mcpServers"]
	if !ok {
		raw, ok = top["servers"]
	}
	if !ok {
		if _, one := top["command"]; one {
			return nil, nil, errors.New(`this is one server's settings; give it a name: {"mcpServers": {"NAME": {...}}}`)
		}
		raw = clean // the servers object alone
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, nil, fmt.Errorf("mcpServers is not an object of servers: %w", jsonErr(err))
	}
	if len(entries) == 0 {
		return nil, nil, errors.New("no MCP servers found (expected {\"mcpServers\": {\"NAME\": {\"command\": ...}}})")
	}
	servers := map[string]MCPServer{}
	var notes []string
	for _, name := range sortedKeys(entries) {
		s, skip, warn, err := decodeEntry(name, entries[name])
		if err != nil {
			return nil, nil, err
		}
		notes = append(notes, warn...)
		if skip != "" {
			notes = append(notes, skip)
			continue
		}
		servers[name] = s
	}
	return servers, notes, nil
}

// decodeEntry turns one JSON server into an MCPServer. skip is set for a
// server hush cannot run; warn lists keys it ignores.
func decodeEntry(name string, raw json.RawMessage) (s MCPServer, skip string, warn []string, err error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return s, "", nil, fmt.Errorf("mcp server %q is not an object", name)
	}
	var e mcpEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		return s, "", nil, fmt.Errorf("mcp server %q: %w", name, jsonErr(err))
	}
	for _, k := range sortedKeys(keys) {
		if !mcpEntryKeys[k] {
			warn = append(warn, fmt.Sprintf("server %q: ignored key %q (hush does not use it)", name, k))
		}
	}
	if e.URL != "" || (e.Type != "" && e.Type != "stdio") {
		r := MCPServer{URL: e.URL, Type: e.Type, Headers: e.Headers, Command: e.Command, Env: map[string]string{}, Disabled: e.Disabled}
		if err := decodeOAuth(e.OAuth, &r); err != nil {
			return s, "", nil, fmt.Errorf("mcp server %q: %v", name, err)
		}
		if err := r.Check(); err != nil {
			return s, "", nil, fmt.Errorf("mcp server %q %v", name, err)
		}
		return r, "", warn, nil
	}
	if e.Command == "" {
		return s, "", nil, fmt.Errorf("mcp server %q has no command", name)
	}
	env := map[string]string{}
	for _, k := range sortedKeys(e.Env) {
		var str string
		if json.Unmarshal(e.Env[k], &str) != nil {
			// A number or a boolean, as some configs write them.
			v := strings.TrimSpace(string(e.Env[k]))
			if strings.HasPrefix(v, "{") || strings.HasPrefix(v, "[") || v == "null" {
				return s, "", nil, fmt.Errorf("mcp server %q: env %s is not a string", name, k)
			}
			str = v
		}
		env[k] = str
	}
	return MCPServer{Command: e.Command, Args: e.Args, Env: env, Dir: e.Cwd, Disabled: e.Disabled}, "", warn, nil
}

// decodeOAuth reads a remote server's "oauth": an object (clientId,
// callbackPort; other keys are the peers' and ignored), true or false.
func decodeOAuth(raw json.RawMessage, s *MCPServer) error {
	v := strings.TrimSpace(string(raw))
	switch v {
	case "", "null", "false":
		return nil
	case "true":
		s.OAuth = true
		return nil
	}
	var o mcpOAuth
	if !strings.HasPrefix(v, "{") || json.Unmarshal(raw, &o) != nil {
		return errors.New(`"oauth" is not an object like {"clientId": "..."} (or true)`)
	}
	s.OAuth, s.ClientID, s.CallbackPort = true, o.ClientID, o.CallbackPort
	return nil
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// jsonErr drops encoding/json's Go type names from an error, which mean
// nothing to someone who pasted a config.
func jsonErr(err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Errorf("%s at byte %d", syn.Error(), syn.Offset)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return fmt.Errorf("%s has the wrong type (%s)", firstOf(typ.Field, "a value"), typ.Value)
	}
	return err
}

// LoadMCPJSON reads hush's mcp.json; a missing file holds no servers.
// Unlike a paste, the file must be well-formed and every server runnable.
func LoadMCPJSON(path string) (map[string]MCPServer, error) {
	data, err := userfile.Read(context.Background(), path, userfile.ConfigLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(stripJSONC(data), &top); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrConfig, path, jsonErr(err))
	}
	raw, ok := top["mcpServers"]
	if !ok {
		return nil, nil
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("%w: %s: mcpServers: %v", ErrConfig, path, jsonErr(err))
	}
	servers := map[string]MCPServer{}
	for _, name := range sortedKeys(entries) {
		s, skip, _, err := decodeEntry(name, entries[name])
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrConfig, path, err)
		}
		if skip != "" {
			return nil, fmt.Errorf("%w: %s: %s", ErrConfig, path, skip)
		}
		servers[name] = s
	}
	return servers, nil
}

// AddMCPServers writes servers into the mcp.json at path, creating it, and
// keeping every other key and server already there. The file is written
// atomically, mode 0600.
func AddMCPServers(path string, servers map[string]MCPServer) error {
	top := map[string]json.RawMessage{}
	entries := map[string]json.RawMessage{}
	data, err := userfile.Read(context.Background(), path, userfile.ConfigLimit)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("read %s: %w", path, err)
	default:
		if err := json.Unmarshal(stripJSONC(data), &top); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrConfig, path, jsonErr(err))
		}
		if raw, ok := top["mcpServers"]; ok {
			if err := json.Unmarshal(raw, &entries); err != nil {
				return fmt.Errorf("%w: %s: mcpServers: %v", ErrConfig, path, jsonErr(err))
			}
		}
	}
	for name, s := range servers {
		env := map[string]json.RawMessage{}
		for k, v := range s.Env {
			b, _ := json.Marshal(v)
			env[k] = b
		}
		e := mcpEntry{Command: s.Command, Args: s.Args, Env: env, Cwd: s.Dir, Disabled: s.Disabled, URL: s.URL, Type: s.Type, Headers: s.Headers}
		if len(env) == 0 {
			e.Env = nil
		}
		if s.Remote() && e.Type == "" {
			e.Type = s.Transport()
		}
		if s.OAuth {
			e.OAuth, _ = json.Marshal(mcpOAuth{ClientID: s.ClientID, CallbackPort: s.CallbackPort})
		}
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		entries[name] = b
	}
	b, err := json.Marshal(entries)
	if err != nil {
		return err
	}
	top["mcpServers"] = b
	out, err := json.MarshalIndent(top, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(out, '\n'))
}

func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := atomicfile.WriteFile(path, data, nil); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// NamedMCPServer is a configured server with its name and the file that
// configures it.
type NamedMCPServer struct {
	Name   string
	Source string // FileName or MCPFileName
	MCPServer
}

// MCPServers merges the servers of config.toml and mcp.json, sorted by
// name. A name in both files, or one hush cannot use, is an error.
func MCPServers(fromTOML, fromJSON map[string]MCPServer) ([]NamedMCPServer, error) {
	var out []NamedMCPServer
	for _, name := range sortedKeys(fromTOML) {
		if _, dup := fromJSON[name]; dup {
			return nil, fmt.Errorf("%w: mcp server %q is configured in both %s and %s; remove one", ErrConfig, name, FileName, MCPFileName)
		}
		out = append(out, NamedMCPServer{Name: name, Source: FileName, MCPServer: fromTOML[name]})
	}
	for _, name := range sortedKeys(fromJSON) {
		out = append(out, NamedMCPServer{Name: name, Source: MCPFileName, MCPServer: fromJSON[name]})
	}
	for _, s := range out {
		if err := ValidMCPName(s.Name); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrConfig, s.Source, err)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// stripJSONC removes // and /* */ comments outside strings and commas
// that precede a closing bracket, so JSONC (VS Code's mcp.json) parses.
func stripJSONC(in []byte) []byte {
	out := make([]byte, 0, len(in))
	inString, escaped := false, false
	for i := 0; i < len(in); i++ {
		c := in[i]
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			inString = true
			out = append(out, c)
		case c == '/' && i+1 < len(in) && in[i+1] == '/':
			for i < len(in) && in[i] != '\n' {
				i++
			}
			if i < len(in) {
				out = append(out, '\n')
			}
		case c == '/' && i+1 < len(in) && in[i+1] == '*':
			end := bytes.Index(in[i+2:], []byte("*/"))
			if end < 0 {
				i = len(in)
			} else {
				i += end + 3
			}
			out = append(out, ' ')
		case c == '}' || c == ']':
			// Drop a trailing comma (and the space after it) before the bracket.
			j := len(out) - 1
			for j >= 0 && (out[j] == ' ' || out[j] == '\t' || out[j] == '\n' || out[j] == '\r') {
				j--
			}
			if j >= 0 && out[j] == ',' {
				out = append(out[:j], out[j+1:]...)
			}
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return out
}
