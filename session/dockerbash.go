package session

import (
	"fmt"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/toolset/dockerbash"
)

// dockerbashTool returns the docker-bash tool configured by
// [tools.dockerbash] in config.toml, or nil when that section is absent.
// The tool is opt-in because it needs two things hush cannot assume: a
// reachable engine and an image on it (hush never pulls). Its settings are
// checked here, at session start, so a mistake is one sentence before the
// first turn rather than a failure on the model's first call.
func dockerbashTool(cfg config.Config, dataDir string) (executor.Tool, error) {
	c, ok := cfg.Tools[dockerbash.Name]
	if !ok {
		return nil, nil
	}
	if err := checkDockerbashConfig(c); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", config.ErrConfig, config.FileName, err)
	}
	return dockerbash.Tool{
		Image:   c.Image,
		Network: c.Network,
		Mask:    c.Mask,
		DataDir: dataDir,
		Timeout: c.Timeout.Duration,

		UnsafeNoMountMask: cfg.Unsafe.NoMountMask,
	}, nil
}

// checkDockerbashConfig refuses settings that cannot apply to a container.
// Inheritance and include/exclude copy hush's own environment, and home_dir
// and isolate_npm point at host paths; a container's environment holds only
// set values and secrets (dockerbash.ContainerPolicy), so accepting them
// would promise the user something that silently does not happen.
func checkDockerbashConfig(c config.ToolConfig) error {
	const section = "tools." + dockerbash.Name
	if c.Image == "" {
		return fmt.Errorf("%s.image is empty: set it to an image your Docker engine has (`docker images`), e.g. image = \"debian:stable-slim\" after `docker pull debian:stable-slim`", section)
	}
	switch c.Inherit {
	case "", "none":
	default:
		return fmt.Errorf("%s.inherit = %q does not apply to a container, which starts with an empty environment; remove it and name what the script needs in set or secrets", section, c.Inherit)
	}
	for _, o := range []struct {
		key string
		set bool
	}{
		{"include", len(c.Include) > 0}, {"exclude", len(c.Exclude) > 0},
		{"home_dir", c.HomeDir != ""}, {"isolate_npm", c.IsolateNpm},
	} {
		if o.set {
			return fmt.Errorf("%s.%s does not apply to a container, which starts with an empty environment and sees no host path but /app; remove it", section, o.key)
		}
	}
	if err := dockerbash.ValidMasks(c.Mask); err != nil {
		return fmt.Errorf("%s.mask: %w", section, err)
	}
	return nil
}
