package wizard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/vault"
	"github.com/hushcli/hush/vault/keyring"
)

// SetupRun is `hush setup` on a running hush's config and vault: it asks
// the setup questions on In/Out and applies the answers — the key into
// the vault, references into config.toml (only its [model] and [vault]
// tables change), and, for the session already running, into *Config and
// the vault proxy, in memory. Nothing is written to the process environment.
type SetupRun struct {
	In       io.Reader
	Out, Err io.Writer
	// TTY is In as a terminal, nil when it is not one; Accessible asks
	// line by line (also without a terminal).
	TTY        *os.File
	Accessible bool
	Config     *config.Config
	Backend    string // the backend in use (config's, or the default)
	ConfigPath string
	DataDir    string
	Registry   *vault.Registry
	Proxy      *vault.Proxy
	// MoveTo moves every secret, plus extra, to backend name with the
	// settings written to config.toml as the commit point (the one backend
	// switch, session.Vault.MoveTo).
	MoveTo func(name string, extra map[string]string, settings []config.Setting) (vault.MoveReport, error)
	Vault  *vault.Layered
	HTTP   *http.Client
	// BeforeForm runs before the form draws (resolving the terminal's
	// background colour); may be nil.
	BeforeForm func()
}

// CurrentAnswers are cfg's settings, the defaults of every question.
func CurrentAnswers(cfg config.Config, backend string) Answers {
	m := cfg.Model
	cur := Answers{Provider: m.Provider, BaseURL: m.BaseURL, Model: m.Name, Backend: backend}
	if cur.Provider == config.ProviderReplay {
		cur = Answers{Backend: cur.Backend}
	}
	// Only a reference that is exactly ${NAME} names the key; anything else
	// is re-asked.
	if refs, err := config.References(m.APIKey); err == nil && len(refs) == 1 && m.APIKey == "${"+refs[0]+"}" {
		cur.KeyName = refs[0]
	}
	return cur
}

// Run asks and applies. ErrAborted and ErrInput come back as they are.
func (s SetupRun) Run(ctx context.Context) error {
	cur := CurrentAnswers(*s.Config, s.Backend)
	reg, lv := s.Registry, s.Vault

	// Offer the backends that can be opened here; say why one cannot.
	opened := map[string]vault.Vault{cur.Backend: s.Proxy.Backend()}
	var backends []Backend
	for _, name := range reg.Names() {
		if _, ok := opened[name]; !ok {
			v, err := reg.Open(name, s.DataDir)
			if err != nil {
				fmt.Fprintln(s.Out, unavailable(name, err))
				continue
			}
			opened[name] = v
		}
		backends = append(backends, Backend{Name: name, Description: name + ": " + vault.BackendDescription(name)})
	}
	defer func() {
		for name, v := range opened {
			if c, ok := v.(io.Closer); ok && v != s.Proxy.Backend() && name != cur.Backend {
				_ = c.Close()
			}
		}
	}()

	tty := s.TTY
	if s.BeforeForm != nil {
		s.BeforeForm()
	}
	form := &Setup{
		In:         s.In,
		Out:        s.Out,
		Accessible: s.Accessible || tty == nil,
		Terminal:   tty != nil,
		Current:    cur,
		Backends:   backends,
		KeySource:  lv.Origin,
		// The key is checked, and the model list fetched, before anything
		// is stored. A key already stored is sent only when a person runs
		// setup at a terminal: otherwise a tool could pipe answers naming
		// its own URL and have hush send it the key.
		Check: func(ctx context.Context, provider, baseURL, key string) Check {
			name := ConventionalKeyName(provider)
			if cur.Provider == provider && cur.KeyName != "" {
				name = cur.KeyName
			}
			if key == "" && lv.Origin(name) != "" {
				t, err := ControllingTerminal()
				if err != nil {
					return Check{OK: true, Skipped: true, Message: "the stored key was not checked: hush sends a stored key to a server only when you run setup at a terminal"}
				}
				t.Close()
				if key, err = lv.Get(name); err != nil {
					return Check{Message: err.Error()}
				}
			}
			return CheckKey(ctx, s.HTTP, provider, baseURL, key)
		},
	}
	ans, err := form.Run(ctx)
	if err != nil {
		return err
	}
	if check := form.Checked; !check.OK {
		ok, err := form.Confirm(ctx, "Save these settings anyway?", false)
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("nothing was saved; run `hush setup` again to change an answer")
		}
	}

	ref := ""
	if ans.KeyName != "" {
		ref = "${" + ans.KeyName + "}"
	}
	settings := []config.Setting{
		{Table: "model", Key: "provider", Value: ans.Provider},
		{Table: "model", Key: "base_url", Value: ans.BaseURL},
		{Table: "model", Key: "model", Value: ans.Model},
		{Table: "model", Key: "api_key", Value: ref},
		{Table: "vault", Key: "backend", Value: ans.Backend},
	}
	extra := map[string]string{}
	if ans.Key != "" {
		extra[ans.KeyName] = ans.Key
	}
	cfgPath := s.ConfigPath
	if ans.Backend != cur.Backend {
		names, err := s.Proxy.Names()
		if err != nil {
			return err
		}
		if len(names) > 0 {
			t, err := ControllingTerminal()
			if err != nil {
				return fmt.Errorf("moving %d secret(s) to the %s backend needs you at a terminal (%v); nothing was saved", len(names), ans.Backend, err)
			}
			t.Close()
		}
		rep, err := s.MoveTo(ans.Backend, extra, settings)
		if err != nil {
			return err
		}
		if len(rep.Moved) > 0 {
			fmt.Fprintf(s.Out, "moved %d secret(s) to the %s backend\n", len(rep.Moved), ans.Backend)
		}
		if w := rep.Warning(cur.Backend); w != "" {
			fmt.Fprintf(s.Err, "hush: warning: %s\n", w)
		}
	} else {
		for n, v := range extra {
			if err := s.Proxy.Set(n, v); err != nil {
				return err
			}
		}
		rewritten, err := config.UpdateConfig(cfgPath, settings...)
		if err != nil {
			return err
		}
		if rewritten {
			fmt.Fprintf(s.Out, "(%s was rewritten in full: its layout defeated an in-place edit; every setting was kept, comments were not)\n", cfgPath)
		}
	}

	// The carry-across into this session: in memory only.
	s.Config.Model.Provider, s.Config.Model.BaseURL, s.Config.Model.Name, s.Config.Model.APIKey = ans.Provider, ans.BaseURL, ans.Model, ref
	s.Config.Vault.Backend = ans.Backend

	where := vault.Describe(ans.Backend, s.Proxy.Backend())
	fmt.Fprintf(s.Out, "saved %s: provider %s, %s, model %s, secrets in %s\n", cfgPath, ans.Provider, ans.BaseURL, ans.Model, where)
	switch {
	case ans.Key != "":
		fmt.Fprintf(s.Out, "the key is in the vault as %s; config.toml says api_key = %q\n", ans.KeyName, ref)
	case ans.KeyName != "":
		fmt.Fprintf(s.Out, "the key is %s (from the %s); config.toml says api_key = %q\n", ans.KeyName, lv.Origin(ans.KeyName), ref)
	default:
		fmt.Fprintln(s.Out, "no API key is used")
	}
	if ans.Key != "" && lv.Origin(ans.KeyName) == "environment" {
		fmt.Fprintf(s.Err, "hush: warning: %s is also set in the environment hush was started with, and that value wins over the vault; unset it in your shell to use the stored one\n", ans.KeyName)
	}
	return nil
}

// unavailable is the one sentence setup prints for a backend it cannot
// open: the registry's and the keyring's wrappers say what the sentence
// already says, and setup itself is where another backend is picked.
func unavailable(name string, err error) string {
	var open *vault.OpenError
	if errors.As(err, &open) {
		err = open.Err
	}
	msg := err.Error()
	var ue *keyring.UnavailableError
	if errors.As(err, &ue) {
		msg = ue.Reason
	}
	return fmt.Sprintf("The %s backend is not available here: %s.", name, strings.TrimSuffix(msg, "."))
}
