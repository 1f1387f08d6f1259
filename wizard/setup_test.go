package wizard_test

import (
	"bytes"
	"context"
	"errors"
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
		{name: "OpenAI with a key", script: "1\n1\n" + key + "\n\n1\n",
			want: wizard.Answers{Provider: "openai", BaseURL: "https://api.openai.com/v1", Model: "gpt-4.1-mini", Backend: "envfile", KeyName: "OPENAI_API_KEY", Key: key}},
		{name: "Ollama needs no key", script: "1\n2\n\n\n2\n",
			want: wizard.Answers{Provider: "openai", BaseURL: "http://127.0.0.1:11434/v1", Model: "llama3.2", Backend: "keyring"}},
		{name: "llama.cpp with a model name", script: "1\n3\n\nqwen2.5-coder\n1\n",
			want: wizard.Answers{Provider: "openai", BaseURL: "http://127.0.0.1:8080/v1", Model: "qwen2.5-coder", Backend: "envfile"}},
		{name: "Anthropic into the keyring", script: "2\n1\n" + key + "\nclaude-x\n2\n",
			want: wizard.Answers{Provider: "anthropic", BaseURL: "https://api.anthropic.com", Model: "claude-x", Backend: "keyring", KeyName: "ANTHROPIC_API_KEY", Key: key}},
		{name: "another URL, re-asked until it is one", script: "1\n4\nnot a url\nhttps://u:p@models.example.com/v1\nhttps://models.example.com/v1\n" + key + "\nm1\n\n",
			want: wizard.Answers{Provider: "openai", BaseURL: "https://models.example.com/v1", Model: "m1", Backend: "envfile", KeyName: "OPENAI_API_KEY", Key: key}},
		{name: "the key from the environment", script: "1\n1\n\n\n\n", source: map[string]string{"OPENAI_API_KEY": "environment"},
			want: wizard.Answers{Provider: "openai", BaseURL: "https://api.openai.com/v1", Model: "gpt-4.1-mini", Backend: "envfile", KeyName: "OPENAI_API_KEY"}},
		{name: "a remote server without a key", script: "1\n1\n\n\n\n",
			wantErr: "an API key is needed for https://api.openai.com/v1: run `hush setup` again and enter it"},
		{name: "input ends before a URL is given", script: "1\n4\n",
			wantErr: `setup input ended early or was invalid: the input ended before "(2/5) Base URL" was answered; pipe one answer per line, or run hush setup at a terminal`},
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
		{"a new model", "\n\n\nqwen-2\n\n", wizard.Answers{Provider: "openai", BaseURL: cur.BaseURL, Model: "qwen-2", Backend: "keyring", KeyName: "MY_MODEL_KEY"}},
		{"another backend", "\n\n\n\n1\n", wizard.Answers{Provider: "openai", BaseURL: cur.BaseURL, Model: "qwen", Backend: "envfile", KeyName: "MY_MODEL_KEY"}},
		{"a new key", "\n\n" + key + "\n\n\n", wizard.Answers{Provider: "openai", BaseURL: cur.BaseURL, Model: "qwen", Backend: "keyring", KeyName: "MY_MODEL_KEY", Key: key}},
		{"a preset URL", "\n1\n\n\n\n", wizard.Answers{Provider: "openai", BaseURL: "https://api.openai.com/v1", Model: "qwen", Backend: "keyring", KeyName: "MY_MODEL_KEY"}},
		// Another provider starts from that provider's defaults.
		{"another provider", "2\n\n" + key + "\n\n\n", wizard.Answers{Provider: "anthropic", BaseURL: "https://api.anthropic.com", Model: "claude-sonnet-4-5", Backend: "keyring", KeyName: "ANTHROPIC_API_KEY", Key: key}},
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

// TestSetupPipedInputThatEndsOrDoesNotFit: an answer that is no choice, or
// input that stops, ends setup with ErrInput and one sentence — not huh's
// index-out-of-range panic.
func TestSetupPipedInputThatEndsOrDoesNotFit(t *testing.T) {
	t.Parallel()
	for _, script := range []string{"x\n", "", "1\n", "1\n1\n"} {
		_, out, err := runSetup(t, wizard.Answers{}, nil, script)
		if !errors.Is(err, wizard.ErrInput) {
			t.Errorf("script %q: error %v, want ErrInput\n%s", script, err, out)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("script %q: error is more than one line: %q", script, err)
		}
	}
}

// TestSetupPicksTheModelFromTheServersList: line by line, the list is shown
// and a name not in it needs a yes.
func TestSetupPicksTheModelFromTheServersList(t *testing.T) {
	t.Parallel()
	list := wizard.Check{OK: true, Message: "the key works", Models: []string{"alpha", "beta-model"}}
	for _, tt := range []struct{ script, want string }{
		{"1\n3\n\nbeta-model\n1\n", "beta-model"},
		{"1\n3\n\n\n1\n", "alpha"},                         // the default: the list's first
		{"1\n3\n\nzeta\nn\nbeta-model\n1\n", "beta-model"}, // not in the list: refused, asked again
		{"1\n3\n\nzeta\ny\n1\n", "zeta"},                   // confirmed
	} {
		var out strings.Builder
		s := &wizard.Setup{In: strings.NewReader(tt.script), Out: &out, Accessible: true,
			Backends: []wizard.Backend{{Name: "envfile", Description: "envfile"}},
			Check:    func(context.Context, string, string, string) wizard.Check { return list }}
		got, err := s.Run(context.Background())
		if err != nil {
			t.Fatalf("script %q: %v\n%s", tt.script, err, out.String())
		}
		if got.Model != tt.want {
			t.Errorf("script %q: model %q, want %q\n%s", tt.script, got.Model, tt.want, out.String())
		}
		if !strings.Contains(out.String(), "The server offers 2 model(s): alpha, beta-model") || !strings.Contains(out.String(), "✓ the key works") {
			t.Errorf("the list was not shown:\n%s", out.String())
		}
	}
}
