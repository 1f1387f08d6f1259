package executor

import (
	"context"

	"github.com/hushcli/hush/executor/auditlog"
)

// Audited returns gate with every decision it takes recorded in log under
// session. It is the one place that puts the audit log behind the gate:
// the agent's tool calls, MCP start-up and `hush vault reveal` all use it.
// A nil log records nothing.
func Audited(gate Gate, log *auditlog.Log, session string) Gate {
	return auditedGate{gate: gate, log: log, session: session}
}

// AuditedTo is Audited that also tells events of each decision, if it is
// a PermissionEvents (the --json stream, for MCP servers' start-up reads).
func AuditedTo(gate Gate, log *auditlog.Log, session string, events Events) Gate {
	return auditedGate{gate: gate, log: log, session: session, events: events}
}

// auditedGate records every decision of the gate it wraps.
type auditedGate struct {
	gate    Gate
	log     *auditlog.Log
	session string
	events  Events   // told each decision, if it is a PermissionEvents
	denied  *denials // this turn's denials, if collected
}

func (g auditedGate) Decide(ctx context.Context, req Request) (Verdict, error) {
	v, err := g.gate.Decide(ctx, req)
	if err != nil {
		return v, err
	}
	if aerr := g.log.Record(auditlog.Entry{Session: g.session, Turn: req.Turn, Tool: req.Subject, Gate: req.GateID,
		Decision: v.Decision, Source: v.Source, Rule: v.Rule}); aerr != nil {
		// A decision that cannot be recorded is not taken: "which tool asked
		// for which secret" must stay answerable.
		v = Verdict{Decision: Deny, Source: "audit", Message: "denied because the audit log cannot be written: " + aerr.Error()}
	}
	if v.Decision != Allow {
		g.denied.add(req.GateID)
	}
	if v.Stop {
		g.denied.stopTurn()
	}
	if pe, ok := g.events.(PermissionEvents); ok {
		pe.Permission(req, v)
	}
	return v, nil
}
