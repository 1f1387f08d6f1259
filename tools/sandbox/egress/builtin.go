package egress

// builtinHosts gives well-known secret names the hosts they are made for,
// so a user who grants GITHUB_TOKEN need not write where it may go.
// [secrets.NAME] hosts replaces an entry. A built-in binding reaches public
// addresses only. docs/network.md prints this table: keep the two alike.
//
// A name is listed only where its hosts are the service's own: no
// wildcard under which anyone can receive data (AWS keys are absent
// because *.amazonaws.com holds buckets anyone creates and hands out
// upload links for).
var builtinHosts = map[string][]string{
	"GITHUB_TOKEN": githubHosts,
	"GH_TOKEN":     githubHosts,
	"GITHUB_PAT":   githubHosts,

	"OPENAI_API_KEY":     {"api.openai.com"},
	"ANTHROPIC_API_KEY":  {"api.anthropic.com"},
	"GEMINI_API_KEY":     {"generativelanguage.googleapis.com"},
	"GOOGLE_API_KEY":     {"generativelanguage.googleapis.com"},
	"MISTRAL_API_KEY":    {"api.mistral.ai"},
	"GROQ_API_KEY":       {"api.groq.com"},
	"OPENROUTER_API_KEY": {"openrouter.ai"},
	"DEEPSEEK_API_KEY":   {"api.deepseek.com"},

	"NPM_TOKEN":            {"registry.npmjs.org"},
	"NODE_AUTH_TOKEN":      {"registry.npmjs.org"},
	"CARGO_REGISTRY_TOKEN": {"crates.io"},
	"PYPI_API_TOKEN":       {"upload.pypi.org"},

	"GITLAB_TOKEN": {"gitlab.com", "registry.gitlab.com"},
	"GL_TOKEN":     {"gitlab.com", "registry.gitlab.com"},

	"HF_TOKEN":               huggingFaceHosts,
	"HUGGING_FACE_HUB_TOKEN": huggingFaceHosts,

	"SENTRY_AUTH_TOKEN":    {"sentry.io", "*.sentry.io"},
	"STRIPE_API_KEY":       {"api.stripe.com"},
	"STRIPE_SECRET_KEY":    {"api.stripe.com"},
	"SLACK_BOT_TOKEN":      {"slack.com", "*.slack.com"},
	"SLACK_TOKEN":          {"slack.com", "*.slack.com"},
	"CLOUDFLARE_API_TOKEN": {"api.cloudflare.com"},
}

var (
	githubHosts      = []string{"github.com", "api.github.com", "uploads.github.com", "codeload.github.com", "*.githubusercontent.com", "ghcr.io"}
	huggingFaceHosts = []string{"huggingface.co", "*.huggingface.co", "*.hf.co"}
)
