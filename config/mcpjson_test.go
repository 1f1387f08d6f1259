package config_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hushcli/hush/config"
)

func TestParseMCPServers(t *testing.T) {
	t.Parallel()
	github := config.MCPServer{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-github"},
		Env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_example"}}
	cases := []struct {
		name  string
		in    string
		want  map[string]config.MCPServer
		notes []string
		err   string
	}{
		{
			name: "claude desktop",
			in: `{"mcpServers": {"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
				"env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_example"}}}, "globalShortcut": "Ctrl+Space"}`,
			want: map[string]config.MCPServer{"github": github},
		},
		{
			name: "the fragment, with comments and trailing commas",
			in: `"mcpServers": {
				// my servers
				"github": {"command": "npx", /* pinned */ "args": ["-y", "@modelcontextprotocol/server-github",],
					"env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_example",},},
			}`,
			want: map[string]config.MCPServer{"github": github},
		},
		{
			name: "vs code",
			in: `{"inputs": [{"type": "promptString", "id": "token"}],
				"servers": {"fs": {"type": "stdio", "command": "mcp-fs", "cwd": "/srv", "env": {"DEBUG": 1, "VERBOSE": true, "URL": "http://a//b"}},
				"remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${GH_TOKEN}"}}}}`,
			want: map[string]config.MCPServer{"fs": {Command: "mcp-fs", Dir: "/srv",
				Env: map[string]string{"DEBUG": "1", "VERBOSE": "true", "URL": "http://a//b"}},
				"remote": {URL: "https://example.com/mcp", Type: "http", Headers: map[string]string{"Authorization": "Bearer ${GH_TOKEN}"}}},
		},
		{
			name:  "bare servers object, unknown keys",
			in:    `{"everything": {"command": "mcp-server-everything", "args": ["stdio"], "alwaysAllow": ["echo"], "disabled": true}}`,
			want:  map[string]config.MCPServer{"everything": {Command: "mcp-server-everything", Args: []string{"stdio"}, Env: map[string]string{}, Disabled: true}},
			notes: []string{`server "everything": ignored key "alwaysAllow" (hush does not use it)`},
		},
		{name: "one server's settings", in: `{"command": "npx"}`, err: `this is one server's settings; give it a name: {"mcpServers": {"NAME": {...}}}`},
		{name: "no command", in: `{"mcpServers": {"x": {"args": ["a"]}}}`, err: `mcp server "x" has no command`},
		{name: "not json", in: `{"mcpServers": {"x": }`, err: "not an mcpServers JSON object: invalid character '}' looking for beginning of value at byte 22"},
		{name: "wrong type", in: `{"mcpServers": {"x": {"command": ["npx"]}}}`, err: `mcp server "x": command has the wrong type (array)`},
		{name: "env object", in: `{"mcpServers": {"x": {"command": "a", "env": {"A": {"b": 1}}}}}`, err: `mcp server "x": env A is not a string`},
		{name: "empty", in: `{"mcpServers": {}}`, err: `no MCP servers found (expected {"mcpServers": {"NAME": {"command": ...}}})`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, notes, err := config.ParseMCPServers([]byte(c.in))
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for name, s := range c.want {
				if s.Env == nil {
					s.Env = map[string]string{}
					c.want[name] = s
				}
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
			if strings.Join(notes, "\n") != strings.Join(c.notes, "\n") {
				t.Errorf("notes %q, want %q", notes, c.notes)
			}
		})
	}
}

func TestMCPJSONFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, config.MCPFileName)
	if got, err := config.LoadMCPJSON(path); err != nil || got != nil {
		t.Fatalf("missing file: %v %v", got, err)
	}
	// Someone else's keys and servers survive an import.
	if err := os.WriteFile(path, []byte(`{"theme": "dark", "mcpServers": {"old": {"command": "old-server", "custom": 1}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	add := map[string]config.MCPServer{"github": {Command: "npx", Args: []string{"-y", "gh"}, Env: map[string]string{"TOKEN": "${GITHUB_TOKEN}"}}}
	if err := config.AddMCPServers(path, add); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	want := `{
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": [
        "-y",
        "gh"
      ],
      "env": {
        "TOKEN": "${GITHUB_TOKEN}"
      }
    },
    "old": {
      "command": "old-server",
      "custom": 1
    }
  },
  "theme": "dark"
}
`
	if string(data) != want {
		t.Errorf("mcp.json =\n%s\nwant\n%s", data, want)
	}
	if fi, _ := os.Stat(path); fi.Mode() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode())
	}
	got, err := config.LoadMCPJSON(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["github"].Env["TOKEN"] != "${GITHUB_TOKEN}" || got["old"].Command != "old-server" {
		t.Errorf("loaded %+v", got)
	}
	if err := os.WriteFile(path, []byte(`{"mcpServers": {"r": {"url": "https://x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	remote, err := config.LoadMCPJSON(path)
	if err != nil || remote["r"].URL != "https://x" || !remote["r"].Remote() || remote["r"].Transport() != "http" {
		t.Errorf("remote server in mcp.json: %+v, %v", remote, err)
	}
	if err := os.WriteFile(path, []byte(`{"mcpServers": {"r": {"url": "https://x", "command": "x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err = config.LoadMCPJSON(path); err == nil || !strings.Contains(err.Error(), "has both a command and a url") {
		t.Errorf("a server with a command and a url: %v", err)
	}
}

func TestMCPServersMerge(t *testing.T) {
	t.Parallel()
	a := map[string]config.MCPServer{"a": {Command: "a"}, "b": {Command: "b"}}
	j := map[string]config.MCPServer{"c": {Command: "c"}}
	got, err := config.MCPServers(a, j)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range got {
		names = append(names, s.Name+"@"+s.Source)
	}
	if strings.Join(names, " ") != "a@config.toml b@config.toml c@mcp.json" {
		t.Errorf("merged %v", names)
	}
	cases := []struct {
		toml, json map[string]config.MCPServer
		err        string
	}{
		{a, map[string]config.MCPServer{"b": {Command: "x"}}, `invalid config: mcp server "b" is configured in both config.toml and mcp.json; remove one`},
		{nil, map[string]config.MCPServer{"my server": {Command: "x"}}, `invalid config: mcp.json: mcp server name "my server": use 1 to 40 letters, digits, _ or -`},
		{map[string]config.MCPServer{"a.b": {Command: "x"}}, nil, `invalid config: config.toml: mcp server name "a.b": use 1 to 40 letters, digits, _ or -`},
	}
	for _, c := range cases {
		if _, err := config.MCPServers(c.toml, c.json); err == nil || err.Error() != c.err {
			t.Errorf("err = %v, want %q", err, c.err)
		}
	}
}

func TestValidMCPName(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{
		"github": true, "my-server_2": true, "A": true, strings.Repeat("x", 40): true,
		"": false, strings.Repeat("x", 41): false, "has space": false, "dot.name": false, "slash/x": false, "ünï": false, "a*": false,
	}
	for name, ok := range cases {
		err := config.ValidMCPName(name)
		if (err == nil) != ok {
			t.Errorf("ValidMCPName(%q) = %v, want ok=%v", name, err, ok)
		}
	}
}

// OAuth for a remote server: config.toml's oauth = true (with client_id,
// callback_port), mcp.json's "oauth" object as Claude Code and VS Code
// write it, and the settings that cannot work refused with a reason.
func TestMCPOAuthSettings(t *testing.T) {
	t.Parallel()
	cfg, err := config.Parse("config.toml", []byte("[mcp.linear]\nurl = \"https://mcp.linear.app/mcp\"\noauth = true\nclient_id = \"abc\"\ncallback_port = 33418\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.MCP["linear"]; !s.OAuth || s.ClientID != "abc" || s.CallbackPort != 33418 || s.Check() != nil {
		t.Fatalf("config.toml: %+v (%v)", s, s.Check())
	}
	servers, _, err := config.ParseMCPServers([]byte(`{"mcpServers": {
		"a": {"type": "http", "url": "https://a.example/mcp", "oauth": {"clientId": "cid", "callbackPort": 8080, "scopes": "x"}},
		"b": {"url": "https://b.example/mcp", "oauth": true},
		"c": {"url": "https://c.example/mcp"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if a := servers["a"]; !a.OAuth || a.ClientID != "cid" || a.CallbackPort != 8080 {
		t.Errorf("a: %+v", a)
	}
	if !servers["b"].OAuth || servers["c"].OAuth {
		t.Errorf("b %+v, c %+v", servers["b"], servers["c"])
	}
	for _, tc := range []struct {
		s    config.MCPServer
		want string
	}{
		{config.MCPServer{URL: "https://x/mcp", Type: "sse", OAuth: true}, "Streamable HTTP"},
		{config.MCPServer{URL: "https://x/mcp", OAuth: true, Headers: map[string]string{"authorization": "Bearer ${T}"}}, "both oauth = true and an Authorization header"},
		{config.MCPServer{URL: "https://x/mcp", ClientID: "abc"}, "not oauth = true"},
		{config.MCPServer{Command: "srv", OAuth: true}, "oauth is for a remote server"},
	} {
		if err := tc.s.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.s, err, tc.want)
		}
	}
	if _, _, err := config.ParseMCPServers([]byte(`{"mcpServers": {"a": {"url": "https://a/mcp", "oauth": "yes"}}}`)); err == nil || !strings.Contains(err.Error(), `"oauth" is not an object`) {
		t.Errorf("oauth string: %v", err)
	}
	// Written back as the peers write it.
	path := filepath.Join(t.TempDir(), config.MCPFileName)
	if err := config.AddMCPServers(path, map[string]config.MCPServer{"a": servers["a"]}); err != nil {
		t.Fatal(err)
	}
	back, err := config.LoadMCPJSON(path)
	if err != nil || !back["a"].OAuth || back["a"].ClientID != "cid" {
		t.Errorf("round trip: %+v %v", back["a"], err)
	}
	if config.OAuthTokenName("my-server") != "HUSH_MCP_OAUTH_MY_SERVER" {
		t.Errorf("token name %q", config.OAuthTokenName("my-server"))
	}
}
