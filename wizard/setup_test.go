package wizard_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/hushcli/hush/wizard"
)

var backends = []wizard.Backend{{Name: "envfile", Description: "a file"}, {Name: "keyring", Description: "the OS keyring"}}

const key = "sk-live-wizardCANARY42"

// runSetup drives the setup forms in accessible mode from a script of
// answers, one per line, as a pipe would.
func runSetup(t *testing.T, cur wizard.Answers, source map[string]string, script string) (wizard.Answers, string, error) {
	t.Helper()
	var out bytes.Buffer
	s := &wizard.Setup{
		In: strings.NewReader(script), Out: &out, Accessible: true,
		Current: cur, Backends: backends,
		KeySource: func(name string) string { return source[name] },
	}
	got, err := s.Run(context.Background())
	if strings.Contains(out.String(), key) {
		t.Errorf("the form's output shows the key:\n%s", out.String())
	}
	return got, out.String(), err
}

func TestSetupFirstRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, script string
		source       map[string]string
		want         wizard.Answers
		wantErr      string
	}{
		{name: "OpenAI with a key", script: "1\n1\n\n1\n" + key + "\n",
			want: wizard.Answers{Provider: "openai", BaseURL: "https://api.openai.com/v1", Model: "gpt-4.1-mini", Backend: "envfile", KeyName: "OPENAI_API_KEY", Key: key}},
		{name: "Ollama needs no key", script: "1\n2\n\n2\n\n",
			want: wizard.Answers{Provider: "openai", BaseURL: "http://127.0.0.1:11434/v1", Model: "llama3.2", Backend: "keyring"}},
		{name: "llama.cpp with a model name", script: "1\n3\nqwen2.5-coder\n1\n\n",
			want: wizard.Answers{Provider: "openai", BaseURL: "http://127.0.0.1:8080/v1", Model: "qwen2.5-coder", Backend: "envfile"}},
		{name: "Anthropic into the keyring", script: "2\n1\nclaude-x\n2\n" + key + "\n",
			want: wizard.Answers{Provider: "anthropic", BaseURL: "https://api.anthropic.com", Model: "claude-x", Backend: "keyring", KeyName: "ANTHROPIC_API_KEY", Key: key}},
		{name: "another URL, re-asked until it is one", script: "1\n4\nnot a url\nhttps://u:p@models.example.com/v1\nhttps://models.example.com/v1\nm1\n\n" + key + "\n",
			want: wizard.Answers{Provider: "openai", BaseURL: "https://models.example.com/v1", Model: "m1", Backend: "envfile", KeyName: "OPENAI_API_KEY", Key: key}},
		{name: "the key from the environment", script: "1\n1\n\n\n\n", source: map[string]string{"OPENAI_API_KEY": "environment"},
			want: wizard.Answers{Provider: "openai", BaseURL: "https://api.openai.com/v1", Model: "gpt-4.1-mini", Backend: "envfile", KeyName: "OPENAI_API_KEY"}},
		{name: "a remote server without a key", script: "1\n1\n\n\n\n",
			wantErr: "an API key is needed for https://api.openai.com/v1: run `hush setup` again and enter it"},
		{name: "input ends before a URL is given", script: "1\n4\n",
			wantErr: "base URL: enter a URL like https://api.example.com/v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, out, err := runSetup(t, wizard.Answers{}, tt.source, tt.script)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if got != tt.want {
				t.Errorf("answers = %+v\nwant      %+v\n%s", got, tt.want, out)
			}
		})
	}
}

// TestSetupRerunKeepsAnswers: the defaults are the current settings, so an
// empty line keeps each answer and one new line changes one.
func TestSetupRerunKeepsAnswers(t *testing.T) {
	t.Parallel()
	cur := wizard.Answers{Provider: "openai", BaseURL: "http://10.1.2.3:8000/v1", Model: "qwen", Backend: "keyring", KeyName: "MY_MODEL_KEY"}
	stored := map[string]string{"MY_MODEL_KEY": "vault"}
	tests := []struct {
		name, script string
		want         wizard.Answers
	}{
		{"nothing changed", "\n\n\n\n\n", cur},
		{"a new model", "\n\nqwen-2\n\n\n", wizard.Answers{Provider: "openai", BaseURL: cur.BaseURL, Model: "qwen-2", Backend: "keyring", KeyName: "MY_MODEL_KEY"}},
		{"another backend", "\n\n\n1\n\n", wizard.Answers{Provider: "openai", BaseURL: cur.BaseURL, Model: "qwen", Backend: "envfile", KeyName: "MY_MODEL_KEY"}},
		{"a new key", "\n\n\n\n" + key + "\n", wizard.Answers{Provider: "openai", BaseURL: cur.BaseURL, Model: "qwen", Backend: "keyring", KeyName: "MY_MODEL_KEY", Key: key}},
		{"a preset URL", "\n1\n\n\n\n", wizard.Answers{Provider: "openai", BaseURL: "https://api.openai.com/v1", Model: "qwen", Backend: "keyring", KeyName: "MY_MODEL_KEY"}},
		// Another provider starts from that provider's defaults.
		{"another provider", "2\n\n\n\n" + key + "\n", wizard.Answers{Provider: "anthropic", BaseURL: "https://api.anthropic.com", Model: "claude-sonnet-4-5", Backend: "keyring", KeyName: "ANTHROPIC_API_KEY", Key: key}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, out, err := runSetup(t, cur, stored, tt.script)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if got != tt.want {
				t.Errorf("answers = %+v\nwant      %+v\n%s", got, tt.want, out)
			}
		})
	}
}

// TestSetupShowsWhatItKeeps: the line prompts say what an empty answer
// means, and offer the current custom URL.
func TestSetupShowsWhatItKeeps(t *testing.T) {
	t.Parallel()
	cur := wizard.Answers{Provider: "openai", BaseURL: "http://10.1.2.3:8000/v1", Model: "qwen", Backend: "envfile", KeyName: "OPENAI_API_KEY"}
	_, out, err := runSetup(t, cur, map[string]string{"OPENAI_API_KEY": "vault"}, "\n\n\n\n\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"4. Keep http://10.1.2.3:8000/v1\n5. Another URL…\n",
		"Typed without echo and stored only in the vault, as OPENAI_API_KEY; config.toml gets ${OPENAI_API_KEY}. Leave empty to keep the stored key.\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestSetupConfirm(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		def  bool
		want bool
	}{{"y\n", false, true}, {"\n", false, false}, {"no\n", true, false}, {"\n", true, true}} {
		var out bytes.Buffer
		s := &wizard.Setup{In: strings.NewReader(tt.in), Out: &out, Accessible: true}
		got, err := s.Confirm(context.Background(), "Save?", tt.def)
		if err != nil || got != tt.want {
			t.Errorf("Confirm(%q, default %v) = %v, %v; want %v", tt.in, tt.def, got, err, tt.want)
		}
	}
}

func TestIsLocalURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{
		"http://127.0.0.1:11434/v1": true, "http://localhost:8080/v1": true, "http://[::1]:8080": true,
		"http://127.1.2.3/v1": true, "https://api.openai.com/v1": false, "http://localhost.example.com/v1": false, "": false,
	} {
		if got := wizard.IsLocalURL(in); got != want {
			t.Errorf("IsLocalURL(%q) = %v, want %v", in, got, want)
		}
	}
}
