package wizard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/huh"
	"github.com/hushcli/hush/executor/provider"
	"github.com/hushcli/hush/vault"
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
	// Check, if set, is asked right after the key (key "" = the stored
	// one, if the caller will send it): it proves the URL answers and
	// brings the server's model list to pick from.
	Check func(ctx context.Context, provider, baseURL, key string) Check
	// Checked is what Check said in the last Run.
	Checked Check
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
		{"OpenAI (https://api.openai.com/v1)", provider.OpenAI, "https://api.openai.com/v1", "gpt-4.1-mini"},
		{"Ollama on this machine (http://127.0.0.1:11434/v1)", provider.OpenAI, "http://127.0.0.1:11434/v1", "llama3.2"},
		{"llama.cpp server on this machine (http://127.0.0.1:8080/v1)", provider.OpenAI, "http://127.0.0.1:8080/v1", "local"},
		{"Anthropic (https://api.anthropic.com)", provider.Anthropic, "https://api.anthropic.com", "claude-sonnet-4-5"},
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

// ErrInput means answers piped to setup ended early or were not valid for
// a question (a word where a choice's number was asked).
var ErrInput = errors.New("setup input ended early or was invalid")

// errBack is an answer of Esc: go back one step.
var errBack = errors.New("back")

// Run asks the questions and returns the answers. It changes nothing but
// what Check does (one request for the server's model list). Esc goes back
// one step, keeping every answer; a server that cannot be reached (asked
// at a terminal) goes back to the URL.
func (s *Setup) Run(ctx context.Context) (Answers, error) {
	if !s.Accessible && s.Terminal {
		// Out of line mode from the first question to the last, also
		// while an answer is checked between two forms: what is typed
		// then is the next form's, neither echoed nor its Enter lost.
		defer keysToForm(s.In)()
	}
	in := s.In
	if s.Accessible && !s.Terminal {
		// huh's line prompts each wrap the reader in a fresh bufio.Scanner;
		// from a pipe the first would swallow the answers meant for the rest.
		in = &lineReader{r: s.In}
	}
	cur := s.Current
	ans := Answers{Backend: cur.Backend}
	ans.Provider = cur.Provider
	if ans.Provider != provider.Anthropic {
		ans.Provider = provider.OpenAI
	}
	st := &setupState{s: s, in: in, cur: cur, ans: &ans}
	steps := []func(ctx context.Context) error{st.askProvider, st.askURL, st.askKey, st.askModel}
	if len(s.Backends) > 0 {
		steps = append(steps, st.askBackend)
	}
	st.total = len(steps)
	for i := 0; i < len(steps); {
		st.step = i + 1
		err := steps[i](ctx)
		switch {
		case errors.Is(err, errBack) && i == 0:
			// Esc at the first question: there is no step to go back
			// to, so it leaves setup (it redrew the same question).
			return Answers{}, ErrAborted
		case errors.Is(err, errBack):
			i--
		case errors.Is(err, errToURL):
			i = 1
		case errors.Is(err, errAgain):
		case err != nil:
			return Answers{}, err
		default:
			i++
		}
	}
	ans.Model = strings.TrimSpace(ans.Model)
	return ans, nil
}

// errToURL sends the steps back to the base URL.
var errToURL = errors.New("back to the URL")

// errAgain asks the same step again (a key the server rejected).
var errAgain = errors.New("ask again")

// setupState is one run's answers and what the steps learnt.
type setupState struct {
	s           *Setup
	in          io.Reader
	cur         Answers
	ans         *Answers
	step, total int
	suggested   map[string]string // base URL → a model name to suggest
	keySource   string
	models      []string // the server's model list, once checked
	modelFor    string   // provider+URL the model answer was given for
	// rejected is the key the server last refused, for this URL; typed
	// again as it was, it is kept anyway (the last question still asks
	// whether to save it).
	rejected *string
	rejectAt string
}

func (st *setupState) title(t string) string {
	return fmt.Sprintf("(%d/%d) %s", st.step, st.total, t)
}

func (st *setupState) askProvider(ctx context.Context) error {
	return st.s.ask(ctx, st.in, huh.NewSelect[string]().
		Title(st.title("Which kind of model server?")).
		Options(
			huh.NewOption("OpenAI-compatible (OpenAI, Ollama, llama.cpp, vLLM, LM Studio, …)", provider.OpenAI),
			huh.NewOption("Anthropic", provider.Anthropic),
		).
		Value(&st.ans.Provider), "Which kind of model server?")
}

// askURL offers the presets for the provider, the current URL when it is
// none of them, or another URL typed in (which starts empty).
func (st *setupState) askURL(ctx context.Context) error {
	ans, cur := st.ans, st.cur
	var opts []huh.Option[string]
	st.suggested = map[string]string{}
	known := false
	for _, p := range Presets() {
		if p.Provider != ans.Provider {
			continue
		}
		opts = append(opts, huh.NewOption(p.Label, p.BaseURL))
		st.suggested[p.BaseURL] = p.Model
		known = known || p.BaseURL == cur.BaseURL
	}
	choice := opts[0].Value
	if cur.Provider == ans.Provider && cur.BaseURL != "" {
		choice = cur.BaseURL
		if !known {
			opts = append(opts, huh.NewOption("Keep "+cur.BaseURL, cur.BaseURL))
		}
	}
	if ans.BaseURL != "" {
		choice = ans.BaseURL // back here: the answer given before
		found := false
		for _, o := range opts {
			found = found || o.Value == choice
		}
		if !found {
			opts = append(opts, huh.NewOption("Keep "+choice, choice))
		}
	}
	opts = append(opts, huh.NewOption("Another URL…", other))
	for {
		if err := st.s.ask(ctx, st.in, huh.NewSelect[string]().Title(st.title("Where is it?")).Options(opts...).Value(&choice), "Where is it?"); err != nil {
			return err
		}
		if choice != other {
			break
		}
		typed := ""
		st.s.explain("e.g. http://127.0.0.1:1234/v1 or https://models.example.com/v1")
		err := st.s.ask(ctx, st.in, huh.NewInput().
			Title(st.title("Base URL")).
			Description("e.g. http://127.0.0.1:1234/v1 or https://models.example.com/v1").
			Value(&typed).
			Validate(checkURL), st.title("Base URL"))
		if errors.Is(err, errBack) {
			choice = opts[0].Value
			continue // Esc in the field: back to the list
		}
		if err != nil {
			return err
		}
		choice = strings.TrimSpace(typed)
		// A line prompt at the end of input answers "" without validating.
		if err := checkURL(choice); err != nil {
			return fmt.Errorf("base URL: %w", err)
		}
		break
	}
	ans.BaseURL = choice
	return nil
}

// askKey asks for the key, stored under the name config.toml already uses
// for this provider, else the conventional one; then Check asks the server
// for its model list.
func (st *setupState) askKey(ctx context.Context) error {
	s, ans, cur := st.s, st.ans, st.cur
	ans.KeyName = ConventionalKeyName(ans.Provider)
	if cur.Provider == ans.Provider && cur.KeyName != "" {
		ans.KeyName = cur.KeyName
	}
	st.keySource = ""
	if s.KeySource != nil {
		st.keySource = s.KeySource(ans.KeyName)
	}
	local := IsLocalURL(ans.BaseURL)
	desc := "Typed without echo and stored only in the vault, as " + ans.KeyName + "; config.toml gets ${" + ans.KeyName + "}."
	switch {
	case st.keySource == "vault":
		desc += " Leave empty to keep the stored key."
	case st.keySource != "":
		desc += " Leave empty to use " + ans.KeyName + " from your " + st.keySource + "."
	case local:
		desc += " Leave empty: a server on this machine usually needs none."
	}
	key := ans.Key
	field := huh.NewInput().
		Title(st.title("API key")).
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
	if err := s.askHidden(ctx, st.in, field, "API key"); err != nil {
		return err
	}
	ans.Key = strings.TrimSpace(key)
	switch {
	case ans.Key != "" || st.keySource != "":
	case local:
		ans.KeyName = ""
	default:
		return fmt.Errorf("an API key is needed for %s: run `hush setup` again and enter it", displayURL(ans.BaseURL))
	}
	st.models = nil
	s.Checked = Check{OK: true}
	if s.Check == nil {
		return nil
	}
	c := s.Check(ctx, ans.Provider, ans.BaseURL, ans.Key)
	s.Checked = c
	mark := "✓"
	switch {
	case c.Skipped:
		mark = "–"
	case !c.OK:
		mark = "✗"
	}
	fmt.Fprintf(s.Out, "%s %s\n", mark, c.Message)
	if c.Unreachable && s.Terminal {
		fmt.Fprintln(s.Out, "Back to the server's URL; your other answers are kept.")
		return errToURL
	}
	if c.Rejected && s.Terminal {
		at := ans.Provider + " " + ans.BaseURL
		if st.rejected == nil || *st.rejected != ans.Key || st.rejectAt != at {
			k := ans.Key
			st.rejected, st.rejectAt, ans.Key = &k, at, ""
			fmt.Fprintln(s.Out, "Type the key again (the same key once more keeps it anyway; Esc goes back to the URL).")
			return errAgain
		}
	}
	st.models = c.Models
	return nil
}

// askModel picks the model from the server's list when it sent one
// (typing filters it; a name not in it needs a confirm), else asks for a
// name.
func (st *setupState) askModel(ctx context.Context) error {
	s, ans, cur := st.s, st.ans, st.cur
	if for_ := ans.Provider + " " + ans.BaseURL; st.modelFor != for_ || ans.Model == "" {
		ans.Model = st.suggested[ans.BaseURL]
		if cur.Provider == ans.Provider && cur.Model != "" {
			ans.Model = cur.Model
		}
		st.modelFor = for_
	}
	listed := func(name string) bool {
		for _, m := range st.models {
			if m == name {
				return true
			}
		}
		return false
	}
	if len(st.models) > 0 && !listed(ans.Model) {
		ans.Model = st.models[0]
	}
	for {
		name := ans.Model
		if len(st.models) > 0 && !s.Accessible {
			opts := make([]huh.Option[string], 0, len(st.models)+1)
			for _, m := range st.models {
				opts = append(opts, huh.NewOption(m, m))
			}
			opts = append(opts, huh.NewOption("Another name…", other))
			// The filter is open from the start, and huh draws it in the
			// title's place: the question goes in the description too,
			// or the step shows only "/".
			q := st.title(fmt.Sprintf("Model (%d offered by the server; type to filter)", len(st.models)))
			err := s.ask(ctx, st.in, huh.NewSelect[string]().
				Title(q).Description(q).
				Options(opts...).Value(&name).Height(min(len(opts)+2, 14)).Filtering(true), "Model")
			if err != nil {
				return err
			}
			if name == other {
				name = ""
				if err := st.typeModel(ctx, &name, ""); errors.Is(err, errBack) {
					continue
				} else if err != nil {
					return err
				}
			}
		} else {
			if len(st.models) > 0 {
				shown := st.models
				more := ""
				if len(shown) > 30 {
					shown, more = shown[:30], fmt.Sprintf(" … and %d more", len(st.models)-30)
				}
				fmt.Fprintf(s.Out, "The server offers %d model(s): %s%s\n", len(st.models), strings.Join(shown, ", "), more)
			}
			if err := st.typeModel(ctx, &name, ans.Model); err != nil {
				return err
			}
		}
		name = strings.TrimSpace(name)
		if name == "" {
			return errors.New("model name: enter a model name")
		}
		if len(st.models) > 0 && !listed(name) {
			ok, err := s.confirm(ctx, st.in, fmt.Sprintf("%s is not in the server's list; use it anyway?", name), false)
			if err != nil && !errors.Is(err, errBack) {
				return err
			}
			if !ok {
				continue
			}
		}
		ans.Model = name
		return nil
	}
}

func (st *setupState) typeModel(ctx context.Context, name *string, def string) error {
	st.s.explain("The model's name as the server knows it, e.g. gpt-4.1-mini, claude-sonnet-4-5, llama3.2.")
	*name = def
	return st.s.ask(ctx, st.in, huh.NewInput().
		Title(st.title("Model name")).
		Description("as the server names it, e.g. gpt-4.1-mini, claude-sonnet-4-5, llama3.2").
		Value(name).
		Validate(func(v string) error {
			if strings.TrimSpace(v) == "" && def == "" {
				return errors.New("enter a model name")
			}
			return nil
		}), "Model name")
}

func (st *setupState) askBackend(ctx context.Context) error {
	ans := st.ans
	if ans.Backend == "" {
		ans.Backend = st.s.Backends[0].Name
	}
	var bopts []huh.Option[string]
	for _, b := range st.s.Backends {
		bopts = append(bopts, huh.NewOption(b.Description, b.Name))
	}
	return st.s.ask(ctx, st.in, huh.NewSelect[string]().Title(st.title("Where should hush keep secrets?")).Options(bopts...).Value(&ans.Backend), "Where should hush keep secrets?")
}

// Confirm asks a yes/no question with the form's streams.
func (s *Setup) Confirm(ctx context.Context, title string, def bool) (bool, error) {
	in := s.In
	if s.Accessible && !s.Terminal {
		in = &lineReader{r: s.In}
	}
	v, err := s.confirm(ctx, in, title, def)
	if errors.Is(err, errBack) {
		return false, nil // Esc at a yes/no question is no
	}
	return v, err
}

func (s *Setup) confirm(ctx context.Context, in io.Reader, title string, def bool) (bool, error) {
	v := def
	err := s.ask(ctx, in, huh.NewConfirm().Title(title).Value(&v), title)
	return v, err
}

// explain prints an input's description before its line prompt, which
// shows only the title; the full-screen form shows the description itself.
func (s *Setup) explain(desc string) {
	if s.Accessible {
		fmt.Fprintln(s.Out, desc)
	}
}

// ask runs one field. At a terminal Esc returns errBack and Ctrl-C
// ErrAborted; line by line, input that ends or never fits ends the run
// with ErrInput (huh's accessible Select panics at the end of input: the
// panic is caught here and said in one sentence).
// askHidden is ask for a secret at a terminal. Line by line, huh prints
// the prompt and only then reads with the echo off, so a key typed or
// pasted the moment the prompt showed was echoed in clear: the echo goes
// off before huh prints anything. (The full-screen form reads in raw mode,
// set before it draws.)
func (s *Setup) askHidden(ctx context.Context, in io.Reader, field huh.Field, title string) error {
	if f, ok := in.(interface{ Fd() uintptr }); ok && s.Accessible && s.Terminal {
		defer vault.HideTyping(int(f.Fd()))()
	}
	return s.ask(ctx, in, field, title)
}

func (s *Setup) ask(ctx context.Context, in io.Reader, field huh.Field, title string) (err error) {
	form := huh.NewForm(huh.NewGroup(field)).
		WithInput(in).WithOutput(s.Out).WithAccessible(s.Accessible).WithShowHelp(!s.Accessible)
	if s.Accessible {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%w: no valid answer to %q; pipe one answer per line (a number for a choice), or run hush setup at a terminal", ErrInput, title)
			}
		}()
		err := form.RunWithContext(ctx)
		ended := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if lr, ok := in.(*lineReader); ok && lr.eof {
			ended = true // huh took its default for the missing answer
		}
		switch {
		case ended:
			return fmt.Errorf("%w: the input ended before %q was answered; pipe one answer per line, or run hush setup at a terminal", ErrInput, title)
		case errors.Is(err, huh.ErrUserAborted):
			return ErrAborted
		case err != nil:
			return fmt.Errorf("setup form: %w", err)
		}
		return nil
	}
	form.SubmitCmd, form.CancelCmd = tea.Quit, tea.Interrupt
	w := &escForm{form: form}
	m, err := tea.NewProgram(w, tea.WithInput(in), tea.WithOutput(s.Out), tea.WithContext(ctx)).Run()
	if fw, ok := m.(*escForm); ok && fw.back {
		return errBack
	}
	switch {
	case errors.Is(err, tea.ErrInterrupted), form.State == huh.StateAborted:
		return ErrAborted
	case errors.Is(err, tea.ErrProgramKilled):
		if ctx.Err() != nil {
			return ErrAborted
		}
		return fmt.Errorf("setup form: %w", err)
	case err != nil:
		return fmt.Errorf("setup form: %w", err)
	}
	return nil
}

// escForm runs a huh form with Esc meaning "back one step", which huh
// itself does not offer across separate forms.
type escForm struct {
	form *huh.Form
	back bool
}

func (e *escForm) Init() tea.Cmd { return e.form.Init() }

func (e *escForm) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok && k.Type == tea.KeyEsc {
		e.back = true
		return e, tea.Quit
	}
	m, cmd := e.form.Update(msg)
	if f, ok := m.(*huh.Form); ok {
		e.form = f
	}
	return e, cmd
}

func (e *escForm) View() string {
	if e.back {
		return ""
	}
	return e.form.View()
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
	r   io.Reader
	eof bool // the input has ended: an answer read since was huh's default
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
			l.eof = true
			return 0, err
		}
	}
	return n, nil
}
