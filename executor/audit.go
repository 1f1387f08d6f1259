package executor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// AuditFileName is the audit log in the data dir.
const AuditFileName = "audit.jsonl"

// AuditEntry is one gate decision. It never holds a secret value: a vault
// read is recorded by the secret's name, in the gate id.
type AuditEntry struct {
	Time     time.Time `json:"time"`
	Session  string    `json:"session,omitempty"`
	Turn     int       `json:"turn"`
	Tool     string    `json:"tool"`
	Gate     string    `json:"gate"`
	Decision Decision  `json:"decision"`
	Source   string    `json:"source"`
	Rule     string    `json:"rule,omitempty"`
}

// AuditLog appends gate decisions to a JSON-lines file, opened O_APPEND so
// each entry lands whole even with several hush processes writing.
type AuditLog struct {
	mu   sync.Mutex
	path string
	now  func() time.Time
}

// OpenAudit returns the log at path (created 0600 on first write).
func OpenAudit(path string) *AuditLog { return &AuditLog{path: path, now: time.Now} }

// Path is the log's file.
func (a *AuditLog) Path() string { return a.path }

// Record appends e, stamping its time.
func (a *AuditLog) Record(e AuditEntry) error {
	if a == nil {
		return nil
	}
	e.Time = a.now().UTC()
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	line = append(line, '\n')
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(a.path), 0o700); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	f, err := os.OpenFile(a.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		return fmt.Errorf("audit: %w", err)
	}
	return f.Close()
}

// ReadAudit reads every entry of the log at path; a missing log is empty.
// A line that does not parse is reported by number.
func ReadAudit(path string) ([]AuditEntry, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return decodeAudit(f, path)
}

func decodeAudit(r io.Reader, name string) ([]AuditEntry, error) {
	var out []AuditEntry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var e AuditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return out, fmt.Errorf("%s line %d: not an audit entry", name, n)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// auditedGate records every decision of the gate it wraps.
type auditedGate struct {
	gate    Gate
	log     *AuditLog
	session string
}

func (g auditedGate) Decide(ctx context.Context, req Request) (Verdict, error) {
	v, err := g.gate.Decide(ctx, req)
	if err != nil {
		return v, err
	}
	if aerr := g.log.Record(AuditEntry{Session: g.session, Turn: req.Turn, Tool: req.Subject, Gate: req.GateID,
		Decision: v.Decision, Source: v.Source, Rule: v.Rule}); aerr != nil {
		// A decision that cannot be recorded is not taken: "which tool asked
		// for which secret" must stay answerable.
		return Verdict{Decision: Deny, Source: "audit", Message: "denied because the audit log cannot be written: " + aerr.Error()}, nil
	}
	return v, nil
}
