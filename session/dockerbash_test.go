package session

import (
	"testing"

	"github.com/hushcli/hush/config"
)

func TestCheckDockerbashConfig(t *testing.T) {
	t.Parallel()
	img := "hush-test/busybox:latest"
	cases := []struct {
		name string
		c    config.ToolConfig
		want string
	}{
		{"image, set, secrets, network, mask", config.ToolConfig{Image: img, Inherit: "none", Set: map[string]string{"A": "${B}"}, Secrets: []string{"B"}, Network: "bridge", Mask: []string{"*.pem", "secrets/"}}, ""},
		{"no image", config.ToolConfig{}, "tools.dockerbash.image is empty: set it to an image your Docker engine has (`docker images`), e.g. image = \"debian:stable-slim\" after `docker pull debian:stable-slim`"},
		{"inherit core", config.ToolConfig{Image: img, Inherit: "core"}, `tools.dockerbash.inherit = "core" does not apply to a container, which starts with an empty environment; remove it and name what the script needs in set or secrets`},
		{"include", config.ToolConfig{Image: img, Include: []string{"GO*"}}, "tools.dockerbash.include does not apply to a container, which starts with an empty environment and sees no host path but /app; remove it"},
		{"home_dir", config.ToolConfig{Image: img, HomeDir: "/tmp/h"}, "tools.dockerbash.home_dir does not apply to a container, which starts with an empty environment and sees no host path but /app; remove it"},
		{"bad mask", config.ToolConfig{Image: img, Mask: []string{"[oops"}}, `tools.dockerbash.mask: mask pattern "[oops" is not a valid glob`},
	}
	for _, c := range cases {
		got := ""
		if err := checkDockerbashConfig(c.c); err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
