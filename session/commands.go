package session

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor/auditlog"
	"github.com/hushcli/hush/selftest"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/tools/dockerbash"
	"github.com/hushcli/hush/tools/sandbox"
	"github.com/hushcli/hush/wizard"
)

// ShowEnv is `hush env`: the environment tool would start with under its
// policy (tools.EnvShow), secrets masked; showDropped also lists what the
// policy named but kept out.
func (e *Env) ShowEnv(tool string, showDropped bool) error {
	v, err := e.Vault()
	if err != nil {
		return err
	}
	all, err := v.All()
	if err != nil {
		return err
	}
	policy, extra, err := EnvPolicy(e.cfg, e.dirs.Config, tool)
	if err != nil {
		return err
	}
	return tools.EnvShow{Tool: tool, Ambient: e.Ambient, Policy: policy, Extra: extra, Secrets: tools.NewSecretSet(all), Dropped: showDropped}.Render(e.Stdout)
}

// SandboxShow is `hush sandbox show`: tool's sandbox, the protections on
// this machine, then every mask with its reason.
func (e *Env) SandboxShow(tool string) error {
	if tool == dockerbash.Name {
		return fmt.Errorf("%s runs in a container, not the host sandbox: the project is mounted read-only at /app with its .env files hidden (see `hush env --tool %s`)", tool, tool)
	}
	if err := e.Load(); err != nil {
		return err
	}
	if _, _, err := EnvPolicy(e.cfg, e.dirs.Config, tool); err != nil {
		return err
	}
	sb, err := e.HostSandbox(strings.SplitN(tool, ":", 2)[0])
	if err != nil {
		return err
	}
	return sandbox.Render(e.Stdout, tool, sb, sandbox.Status())
}

// AuditLog is `hush audit log`: the gate's decisions from audit.jsonl, as a
// table or JSON lines, the last entries only when last > 0.
func (e *Env) AuditLog(asJSON bool, last int) error {
	if err := e.Load(); err != nil {
		return err
	}
	path := filepath.Join(e.dirs.Data, auditlog.FileName)
	entries, damage, err := auditlog.Read(path)
	if err != nil {
		return err
	}
	if msg := damage.Describe(path); msg != "" {
		e.Warn(msg)
	}
	entries = auditlog.Last(entries, last)
	if asJSON {
		return auditlog.WriteJSON(e.Stdout, entries)
	}
	return auditlog.WriteTable(e.Stdout, entries, path)
}

// IsLiteralCredential says an env entry is a credential written literally:
// a credential-named variable or a credential-looking value.
func IsLiteralCredential(name, value string) bool {
	return tools.IsCredentialName(name) || tools.IsCredentialValue(value)
}

// Trust is `hush trust` (config.Trust): it shows what the project's
// .hush/config.toml would add and records trust after the person at the
// controlling terminal confirms; revoke stops trusting the project.
func (e *Env) Trust(revoke bool) error {
	dir, err := e.Project()
	if err != nil {
		return err
	}
	t := config.Trust{Store: config.NewTrustStore(e.dirs.Config), Dir: dir, Out: e.Stdout, IsLiteralCredential: IsLiteralCredential,
		Confirm: func(question string) (bool, error) {
			tty, err := wizard.ControllingTerminal()
			if err != nil {
				return false, config.ErrTrustNeedsTerminal
			}
			defer tty.Close()
			return wizard.AskTTY(tty, question), nil
		}}
	if revoke {
		return t.Revoke()
	}
	return t.Grant()
}

// SelfTest is `hush audit` (selftest.Command): it audits this hush binary
// under the user's tool policies; Ctrl-C or SIGTERM stops it.
func (e *Env) SelfTest(asJSON, docker, noSandbox bool, timeout time.Duration) error {
	if err := e.Load(); err != nil {
		return err
	}
	hush, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the hush binary to audit: %w", err)
	}
	dir, err := e.ProjectDir()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return selftest.Command{Options: selftest.Options{Hush: hush, Ambient: e.Ambient, User: e.cfg, Docker: docker, NoSandbox: noSandbox, Timeout: timeout},
		ProjectDir: dir, ConfigDir: e.dirs.Config, DataDir: e.dirs.Data, JSON: asJSON, Progress: e.Stderr}.Run(ctx, e.Stdout)
}
