package dockerbash_test

import (
	"maps"
	"testing"

	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/toolset/dockerbash"
)

// TestEngineEnv: the engine connection keeps DOCKER_HOST and the proxy
// settings even with a password in them, and the TLS settings; a
// credential the tool has no business with is not in it.
func TestEngineEnv(t *testing.T) {
	t.Parallel()
	got := dockerbash.EngineEnv(tools.NewAmbient(map[string]string{
		"DOCKER_HOST": "tcp://u:pw@engine:2376", "DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": "/c", "HOME": "/h",
		"https_proxy": "http://u:pw@proxy:3128", "GITHUB_TOKEN": "ghp_x", "PATH": "/bin",
	}))
	want := map[string]string{"DOCKER_HOST": "tcp://u:pw@engine:2376", "DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": "/c", "HOME": "/h",
		"HTTPS_PROXY": "http://u:pw@proxy:3128"}
	if !maps.Equal(got, want) {
		t.Errorf("EngineEnv = %v, want %v", got, want)
	}
}
