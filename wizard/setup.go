package wizard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/charmbracelet/huh"
	"github.com/hushcli/hush/executor/provider"
)

// Answers are what setup asks for. Nothing here is written anywhere by the
// forms; the caller stores Key in the vault and the rest in config.toml.
type Answers struct {
	Provider string // "openai" (any OpenAI-compatible server) or "anthropic"
	BaseURL  string // "" means the provider's public endpoint
	Model    string
	Backend  string // vault backend name: "envfile", "keyring", …
	// KeyName is the vault name config.toml refers to as ${KeyName}; ""
	// when no key is used (a local server).
	KeyName string
	// Key is the key typed in this run; "" keeps the stored one.
	Key string
}

// Backend is one vault backend the user can pick.
type Backend struct {
	Name        string
	Description string
}

// Setup is the first-run (and re-run) setup: a short sequence of forms whose
// defaults are the current answers, so running it again to change one
// answer is Enter, Enter, a new value, Enter.
type Setup struct {
	In  io.Reader
	Out io.Writer
	// Accessible asks line by line (screen readers, dumb terminals, and
	// input that is not a terminal, such as a script piping answers).
	Accessible bool
	// Terminal says In is a terminal, so the key can be read without echo.
	// When it is not (a pipe), there is no echo to hide and the key is one
	// line of input.
	Terminal bool
	Current  Answers
	Backends []Backend
	// KeySource says where the key under name already is: "vault",
	// "environment", ".env", or "" when hush has none.
	KeySource func(name string) string
}

// ErrAborted means the person left the form (Ctrl-C, Esc).
var ErrAborted = errors.New("setup cancelled; nothing was changed")

// Preset is a base URL offered in the form.
type Preset struct {
	Label    string
	Provider string
	BaseURL  string
	Model    string // suggested model name
}

// Presets are the base URLs setup offers, per provider.
func Presets() []Preset {
	return []Preset{
		{"OpenAI (https://api.openai.com/v1)", "openai", "https://api.openai.com/v1", "gpt-4.1-mini"},
		{"Ollama on this machine (http://127.0.0.1:11434/v1)", "openai", "http://127.0.0.1:11434/v1", "llama3.2"},
		{"llama.cpp server on this machine (http://127.0.0.1:8080/v1)", "openai", "http://127.0.0.1:8080/v1", "local"},
		{"Anthropic (https://api.anthropic.com)", "anthropic", "https://api.anthropic.com", "claude-sonnet-4-5"},
	}
}

// ConventionalKeyName is the vault name a provider's key is stored under
// unless config.toml already refers to another.
func ConventionalKeyName(name string) string {
	if k := provider.KeyName(name); k != "" {
		return k
	}
	return provider.KeyName(provider.OpenAI) // any OpenAI-compatible server
}

// IsLocalURL reports whether raw points at this machine, where a model
// server usually needs no key.
func IsLocalURL(raw string) bool { return provider.IsLoopback(raw) }

// other is the select value for "type a URL".
const other = "\x00other"

// Run asks the questions and returns the answers. It changes nothing.
func (s *Setup) Run(ctx context.Context) (Answers, error) {
	in := s.In
	if s.Accessible && !s.Terminal {
		// huh's line prompts each wrap the reader in a fresh bufio.Scanner;
		// from a pipe the first would swallow the answers meant for the rest.
		in = &lineReader{r: s.In}
	}
	cur := s.Current
	ans := Answers{Backend: cur.Backend}

	ans.Provider = cur.Provider
	if ans.Provider != "anthropic" {
		ans.Provider = "openai"
	}
	err := s.run(ctx, in, huh.NewSelect[string]().
		Title("Which kind of model server?").
		Options(
			huh.NewOption("OpenAI-compatible (OpenAI, Ollama, llama.cpp, vLLM, LM Studio, …)", "openai"),
			huh.NewOption("Anthropic", "anthropic"),
		).
		Value(&ans.Provider))
	if err != nil {
		return Answers{}, err
	}

	// Base URL: the presets for this provider, the current URL when it is
	// none of them, or another URL typed in.
	var opts []huh.Option[string]
	suggested := map[string]string{}
	known := false
	for _, p := range Presets() {
		if p.Provider != ans.Provider {
			continue
		}
		opts = append(opts, huh.NewOption(p.Label, p.BaseURL))
		suggested[p.BaseURL] = p.Model
		known = known || p.BaseURL == cur.BaseURL
	}
	choice := opts[0].Value
	if cur.Provider == ans.Provider && cur.BaseURL != "" {
		choice = cur.BaseURL
		if !known {
			opts = append(opts, huh.NewOption("Keep "+cur.BaseURL, cur.BaseURL))
		}
	}
	opts = append(opts, huh.NewOption("Another URL…", other))
	if err := s.run(ctx, in, huh.NewSelect[string]().Title("Where is it?").Options(opts...).Value(&choice)); err != nil {
		return Answers{}, err
	}
	if choice == other {
		typed := ""
		if cur.Provider == ans.Provider && !known {
			typed = cur.BaseURL
		}
		s.explain("e.g. http://127.0.0.1:1234/v1 or https://models.example.com/v1")
		err := s.run(ctx, in, huh.NewInput().
			Title("Base URL").
			Description("e.g. http://127.0.0.1:1234/v1 or https://models.example.com/v1").
			Value(&typed).
			Validate(func(v string) error {
				if strings.TrimSpace(v) == "" && typed != "" {
					return nil // a line prompt keeps the shown value on an empty line
				}
				return checkURL(v)
			}))
		if err != nil {
			return Answers{}, err
		}
		choice = strings.TrimSpace(typed)
		// Accessible prompts keep the old value on an empty line without
		// validating; an empty answer with no old value is not a URL.
		if err := checkURL(choice); err != nil {
			return Answers{}, fmt.Errorf("base URL: %w", err)
		}
	}
	ans.BaseURL = choice

	ans.Model = suggested[ans.BaseURL]
	if cur.Provider == ans.Provider && cur.Model != "" {
		ans.Model = cur.Model
	}
	s.explain("The model's name as the server knows it, e.g. gpt-4.1-mini, claude-sonnet-4-5, llama3.2.")
	err = s.run(ctx, in, huh.NewInput().
		Title("Model name").
		Description("as the server names it, e.g. gpt-4.1-mini, claude-sonnet-4-5, llama3.2").
		Value(&ans.Model).
		Validate(func(v string) error {
			if strings.TrimSpace(v) == "" && ans.Model == "" {
				return errors.New("enter a model name")
			}
			return nil
		}))
	if err != nil {
		return Answers{}, err
	}
	ans.Model = strings.TrimSpace(ans.Model)
	if ans.Model == "" {
		return Answers{}, errors.New("model name: enter a model name")
	}

	if len(s.Backends) > 0 {
		if ans.Backend == "" {
			ans.Backend = s.Backends[0].Name
		}
		var bopts []huh.Option[string]
		for _, b := range s.Backends {
			bopts = append(bopts, huh.NewOption(b.Description, b.Name))
		}
		if err := s.run(ctx, in, huh.NewSelect[string]().Title("Where should hush keep secrets?").Options(bopts...).Value(&ans.Backend)); err != nil {
			return Answers{}, err
		}
	}

	// The key: stored under the name config.toml already uses for this
	// provider, else the conventional one.
	ans.KeyName = ConventionalKeyName(ans.Provider)
	if cur.Provider == ans.Provider && cur.KeyName != "" {
		ans.KeyName = cur.KeyName
	}
	source := ""
	if s.KeySource != nil {
		source = s.KeySource(ans.KeyName)
	}
	local := IsLocalURL(ans.BaseURL)
	desc := "Typed without echo and stored only in the vault, as " + ans.KeyName + "; config.toml gets ${" + ans.KeyName + "}."
	switch {
	case source == "vault":
		desc += " Leave empty to keep the stored key."
	case source != "":
		desc += " Leave empty to use " + ans.KeyName + " from your " + source + "."
	case local:
		desc += " Leave empty: a server on this machine usually needs none."
	}
	key := ""
	field := huh.NewInput().
		Title("API key").
		Description(desc).
		Value(&key).
		Validate(func(v string) error {
			if strings.ContainsAny(v, "\r\n") {
				return errors.New("the key must be one line")
			}
			return nil
		})
	if !s.Accessible || s.Terminal {
		field = field.EchoMode(huh.EchoModePassword)
	}
	s.explain(desc)
	if err := s.run(ctx, in, field); err != nil {
		return Answers{}, err
	}
	ans.Key = strings.TrimSpace(key)
	switch {
	case ans.Key != "" || source != "":
	case local:
		ans.KeyName = ""
	default:
		return Answers{}, fmt.Errorf("an API key is needed for %s: run `hush setup` again and enter it", displayURL(ans.BaseURL))
	}
	return ans, nil
}

// Confirm asks a yes/no question with the form's streams.
func (s *Setup) Confirm(ctx context.Context, title string, def bool) (bool, error) {
	in := s.In
	if s.Accessible && !s.Terminal {
		in = &lineReader{r: s.In}
	}
	v := def
	err := s.run(ctx, in, huh.NewConfirm().Title(title).Value(&v))
	return v, err
}

// explain prints an input's description before its line prompt, which
// shows only the title; the full-screen form shows the description itself.
func (s *Setup) explain(desc string) {
	if s.Accessible {
		fmt.Fprintln(s.Out, desc)
	}
}

func (s *Setup) run(ctx context.Context, in io.Reader, field huh.Field) error {
	form := huh.NewForm(huh.NewGroup(field)).
		WithInput(in).WithOutput(s.Out).WithAccessible(s.Accessible).WithShowHelp(!s.Accessible)
	if err := form.RunWithContext(ctx); err != nil {
		if errors.Is(err, huh.ErrUserAborted) {
			return ErrAborted
		}
		return fmt.Errorf("setup form: %w", err)
	}
	return nil
}

func checkURL(v string) error {
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("enter a URL like https://api.example.com/v1")
	}
	if u.User != nil {
		return errors.New("put no credentials in the URL; the key is asked for next")
	}
	return nil
}

// lineReader hands out at most one line per Read, so each of huh's line
// prompts consumes exactly its own answer.
type lineReader struct {
	r io.Reader
}

func (l *lineReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := l.r.Read(p[n : n+1])
		n += m
		if m == 1 && p[n-1] == '\n' {
			return n, nil
		}
		if err != nil {
			if n > 0 {
				return n, nil
			}
			return 0, err
		}
	}
	return n, nil
}
