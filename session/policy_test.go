package session

import (
	"reflect"
	"testing"
	"time"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/tools"
)

// TestToolPolicyIsExhaustive: every field of config.ToolConfig either
// changes the spawn policy ToolPolicy gives bash, or is named in
// toolOwnSettings as a setting a tool reads itself — never both, never
// neither. A field added to config.ToolConfig without a decision here
// fails this test, so no setting is parsed and then silently ignored (as
// isolate_npm was). The pattern is crush's TestMCPConfigEqualExhaustive.
func TestToolPolicyIsExhaustive(t *testing.T) {
	t.Parallel()
	base, err := ToolPolicy(config.Config{}, "bash")
	if err != nil {
		t.Fatal(err)
	}
	own := toolOwnSettings()
	typ := reflect.TypeFor[config.ToolConfig]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		var tc config.ToolConfig
		setNonZero(t, reflect.ValueOf(&tc).Elem().Field(i), f.Name)
		got, err := ToolPolicy(config.Config{Tools: map[string]config.ToolConfig{"bash": tc}}, "bash")
		if err != nil {
			t.Errorf("%s: %v", f.Name, err)
			continue
		}
		changes := !reflect.DeepEqual(got, base)
		_, isOwn := own[f.Name]
		switch {
		case changes && isOwn:
			t.Errorf("config.ToolConfig.%s changes the spawn policy but is listed as a tool's own setting", f.Name)
		case !changes && !isOwn:
			t.Errorf("config.ToolConfig.%s (toml %q) has no decision: map it into tools.Policy in policyFromConfig, or name the tool that reads it in toolOwnSettings", f.Name, f.Tag.Get("toml"))
		}
	}
	for name := range own {
		if _, ok := typ.FieldByName(name); !ok {
			t.Errorf("toolOwnSettings names %s, which config.ToolConfig no longer has", name)
		}
	}
}

// setNonZero gives v a value that is not its zero value.
func setNonZero(t *testing.T, v reflect.Value, name string) {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		v.SetString("x-" + name)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(7)
	case reflect.Slice:
		v.Set(reflect.Append(reflect.MakeSlice(v.Type(), 0, 1), reflect.ValueOf("X_"+name)))
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(reflect.ValueOf("X_"+name), reflect.ValueOf("v"))
		v.Set(m)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		setNonZero(t, p.Elem(), name)
		v.Set(p)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[config.Duration]() {
			v.Set(reflect.ValueOf(config.Duration{Duration: time.Minute}))
			return
		}
		t.Fatalf("config.ToolConfig.%s: teach setNonZero the struct %s", name, v.Type())
	default:
		t.Fatalf("config.ToolConfig.%s: teach setNonZero the kind %s", name, v.Kind())
	}
}

// TestIsolateNpmApplies: isolate_npm = true points npm's user and global
// config at an empty file in the environment a bash call starts with.
// Before, the setting was parsed and never applied; the control is the
// same tool without it.
func TestIsolateNpmApplies(t *testing.T) {
	t.Parallel()
	ambient := map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/home/u", "NPM_CONFIG_USERCONFIG": "/home/u/.npmrc"}
	build := func(isolate bool) tools.Env {
		t.Helper()
		cfg := config.Config{Tools: map[string]config.ToolConfig{"bash": {IsolateNpm: isolate}}}
		p, err := ToolPolicy(cfg, "bash")
		if err != nil {
			t.Fatal(err)
		}
		env, _, err := tools.BuildEnv(tools.EnvRequest{Ambient: ambient, Policy: p})
		if err != nil {
			t.Fatal(err)
		}
		return env
	}
	on := build(true)
	for _, n := range []string{"NPM_CONFIG_USERCONFIG", "NPM_CONFIG_GLOBALCONFIG"} {
		if v, ok := on.Lookup(n); !ok || v != EmptyNpmrc {
			t.Errorf("isolate_npm: %s = %q, %v; want %q", n, v, ok, EmptyNpmrc)
		}
	}
	if v, ok := build(false).Lookup("NPM_CONFIG_GLOBALCONFIG"); ok {
		t.Errorf("control: without isolate_npm NPM_CONFIG_GLOBALCONFIG = %q", v)
	}
}

func TestToolPolicyErrors(t *testing.T) {
	t.Parallel()
	if _, err := ToolPolicy(config.Config{}, "nope"); err == nil || err.Error() != `unknown tool "nope" (known: bash, background, dockerbash)` {
		t.Errorf("unknown tool: %v", err)
	}
	p, err := ToolPolicy(config.Config{}, "mcp:github")
	if err != nil || p.Inherit != tools.InheritCore || len(p.Base) == 0 {
		t.Errorf("mcp server policy = %+v, %v; want the MCP base set", p, err)
	}
}

// The fields of config.ToolConfig that are a tool's own setting, not part
// of its spawn policy, and who reads each.
func toolOwnSettings() map[string]string {
	return map[string]string{
		"Timeout":      "bash.Tool, dockerbash.Tool and the http tool (one call's limit)",
		"Image":        "dockerbash.Tool",
		"Network":      "dockerbash.Tool",
		"Mask":         "dockerbash.Tool (extra files hidden in /app)",
		"AllowPrivate": "the http tool",
		"MaxProcesses": "the host sandbox (HostSandbox: the call's limits)",
		"MaxMemory":    "the host sandbox (HostSandbox: the call's limits)",
		"NetworkAllow": "the egress policy (a tool's own [network] lists)",
		"NetworkDeny":  "the egress policy (a tool's own [network] lists)",
	}
}
