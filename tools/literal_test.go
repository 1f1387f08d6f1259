package tools

import (
	"strings"
	"testing"

	"github.com/hushcli/hush/config"
)

func TestLiteralAPIKeyInConfig(t *testing.T) {
	t.Parallel()
	c := config.Config{}
	c.Model.APIKey = "sk-proj-0123456789abcdefghij"
	got := strings.Join(LiteralSecrets(c, nil), "\n")
	if !strings.Contains(got, "config.toml has a literal key in model.api_key") || strings.Contains(got, c.Model.APIKey) {
		t.Fatalf("LiteralSecrets = %q", got)
	}
	c.Model.APIKey = "${OPENAI_API_KEY}"
	if got := LiteralSecrets(c, nil); len(got) != 0 {
		t.Fatalf("a reference is flagged: %q", got)
	}
}
