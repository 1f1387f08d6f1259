package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/auditlog"
	"github.com/hushcli/hush/vault"
	"github.com/hushcli/hush/wizard"
)

// RevealSubject is the subject `hush vault reveal` asks the gate as.
const RevealSubject = "hush vault reveal"

// ErrRevealNeedsTerminal is Reveal's answer without a controlling terminal.
var ErrRevealNeedsTerminal = errors.New("vault reveal needs a controlling terminal and a person to confirm, and there is none here; tools run without one, so a tool cannot read the vault through hush")

// Reveal shows secret name's value on tty (`hush vault reveal`) after the
// person there confirms, through the gate → audit → vault chain, so every
// reveal and refusal is in the audit log. A nil tty is a denial, recorded
// as one. audit may be nil.
func Reveal(ctx context.Context, tty io.ReadWriter, audit *auditlog.Log, lv *vault.Layered, name string) error {
	if tty == nil {
		_, _ = executor.Audited(revealGate{}, audit, "").Decide(ctx, executor.Request{GateID: executor.GateVaultRead + name, Subject: RevealSubject})
		return ErrRevealNeedsTerminal
	}
	if _, err := lv.Get(name); err != nil {
		return err // no such secret: nothing to ask about
	}
	gate := revealGate{tty: tty, question: fmt.Sprintf("Show the value of %s (from the %s) on this terminal? [y/N] ", name, lv.Origin(name))}
	value, err := executor.GatedVault(ctx, executor.Audited(gate, audit, ""), RevealSubject, 0, lv).Get(name)
	if errors.Is(err, executor.ErrDenied) {
		fmt.Fprintln(tty, "not shown")
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(tty, value)
	return nil
}

// revealGate is `hush vault reveal`'s permission gate: the person at the
// controlling terminal, or a denial when there is none.
type revealGate struct {
	tty      io.ReadWriter
	question string
}

func (g revealGate) Decide(_ context.Context, _ executor.Request) (executor.Verdict, error) {
	if g.tty == nil {
		return executor.Verdict{Decision: executor.Deny, Source: "no terminal", Message: "no controlling terminal"}, nil
	}
	if wizard.AskTTY(g.tty, g.question) {
		return executor.Verdict{Decision: executor.Allow, Source: "prompt"}, nil
	}
	return executor.Verdict{Decision: executor.Deny, Source: "prompt", Message: "not shown"}, nil
}

// RevealOnTerminal is `hush vault reveal NAME`: it opens the audit log in
// dataDir ("" when the config could not be loaded: nothing is recorded),
// then the controlling terminal, then the vault (open), and reveals name
// there (Reveal). Without a controlling terminal the vault is not opened.
func RevealOnTerminal(ctx context.Context, dataDir string, notice func(string), open func() (*vault.Layered, error), name string) error {
	var audit *auditlog.Log
	if dataDir != "" {
		audit = auditlog.Open(filepath.Join(dataDir, auditlog.FileName))
		audit.Notice = notice
	}
	tty, err := wizard.ControllingTerminal()
	if err != nil {
		return Reveal(ctx, nil, audit, nil, name)
	}
	defer tty.Close()
	lv, err := open()
	if err != nil {
		return err
	}
	return Reveal(ctx, tty, audit, lv, name)
}
