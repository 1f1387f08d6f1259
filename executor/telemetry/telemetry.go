// Package telemetry exports hush's audit trail over OpenTelemetry (OTLP/HTTP
// traces), for teams that want "which tool read which secret" across
// runners: one span per session, a child span per tool call (name,
// duration, status, exit code) and per gate decision (gate id, subject,
// decision, source, rule, and for a vault read the secret's name).
//
// It is opt-in ([telemetry] endpoint in config.toml): nothing is built and
// nothing is sent unless an Exporter is opened. It never exports a secret
// value, a tool's arguments or its output — only names, ids, counts and
// durations, which is all an Exporter is ever handed.
package telemetry

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/auditlog"
	"github.com/hushcli/hush/executor/provider"
)

// Options configures an Exporter.
type Options struct {
	// Endpoint is the OTLP/HTTP base URL ("http://127.0.0.1:4318");
	// traces go to its /v1/traces unless it names another path.
	Endpoint string
	// Headers go with every export (an API key, already resolved).
	Headers map[string]string
	// HTTPClient carries the exports (proxy settings); nil: a default one.
	HTTPClient *http.Client
	// Version is hush's, for the resource.
	Version string
	// Session, Project and Model describe the session span.
	Session, Project, Model string
}

// Span and attribute names.
const (
	SpanSession = "hush.session"
	SpanTool    = "hush.tool_call"
	SpanGate    = "hush.gate"

	AttrSession  = "hush.session.id"
	AttrProject  = "hush.project"
	AttrModel    = "hush.model"
	AttrTurn     = "hush.turn"
	AttrTool     = "hush.tool.name"
	AttrCallID   = "hush.tool.call_id"
	AttrStatus   = "hush.tool.status"
	AttrExitCode = "hush.tool.exit_code"
	AttrGate     = "hush.gate.id"
	AttrSubject  = "hush.gate.subject"
	AttrDecision = "hush.gate.decision"
	AttrSource   = "hush.gate.source"
	AttrRule     = "hush.gate.rule"
	AttrSecret   = "hush.secret.name" // the name of a secret read, never its value
	// A connection through the egress proxy (gate net.connect:HOST).
	AttrNetHost     = "hush.net.host"
	AttrNetPort     = "hush.net.port"
	AttrNetSecrets  = "hush.net.secrets" // the names of the secrets the call held
	AttrNetSent     = "hush.net.sent_bytes"
	AttrNetReceived = "hush.net.received_bytes"
)

// Exporter sends one session's audit trail. It implements executor.Events
// with its ToolFinishEvents and TurnEvents capabilities (see Tee), and
// Gate receives the audit log's entries (auditlog.Log.Mirror).
type Exporter struct {
	tp      *sdktrace.TracerProvider
	tracer  trace.Tracer
	ctx     context.Context // the session span's
	session trace.Span

	mu    sync.Mutex
	turns int
}

// Open builds the exporter and starts the session span. Nothing is sent
// until spans end; Close flushes.
func Open(o Options) (*Exporter, error) {
	u, err := url.Parse(o.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("telemetry.endpoint is not an http(s) URL like http://127.0.0.1:4318")
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	client := o.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	exp := &otlpExporter{url: u.String(), headers: o.Headers, client: client}
	// The resource is built here, not from OTEL_RESOURCE_ATTRIBUTES:
	// hush's settings come from its config, never its environment.
	res := resource.NewSchemaless(
		attribute.String("service.name", "hush"),
		attribute.String("service.version", o.Version),
	)
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithExportTimeout(10*time.Second)), sdktrace.WithResource(res))
	e := &Exporter{tp: tp, tracer: tp.Tracer("github.com/hushcli/hush")}
	e.ctx, e.session = e.tracer.Start(context.Background(), SpanSession, trace.WithAttributes(
		attribute.String(AttrSession, o.Session), attribute.String(AttrProject, o.Project), attribute.String(AttrModel, o.Model)))
	return e, nil
}

// Gate exports one gate decision, as the audit log recorded it.
func (e *Exporter) Gate(en auditlog.Entry) {
	attrs := []attribute.KeyValue{
		attribute.String(AttrGate, en.Gate), attribute.String(AttrSubject, en.Tool),
		attribute.String(AttrDecision, string(en.Decision)), attribute.String(AttrSource, en.Source),
		attribute.Int(AttrTurn, en.Turn),
	}
	if en.Rule != "" {
		attrs = append(attrs, attribute.String(AttrRule, en.Rule))
	}
	if name, ok := strings.CutPrefix(en.Gate, executor.GateVaultRead); ok {
		attrs = append(attrs, attribute.String(AttrSecret, name))
	}
	if n := en.Net; n != nil {
		// A connection through the egress proxy: where to, the names of
		// the secrets the call held, and the bytes each way.
		attrs = append(attrs, attribute.String(AttrNetHost, n.Host), attribute.Int(AttrNetPort, n.Port),
			attribute.StringSlice(AttrNetSecrets, n.Secrets), attribute.Int64(AttrNetSent, n.Sent), attribute.Int64(AttrNetReceived, n.Received))
	}
	_, span := e.tracer.Start(e.ctx, SpanGate, trace.WithTimestamp(en.Time), trace.WithAttributes(attrs...))
	if en.Decision != executor.Allow {
		span.SetStatus(codes.Error, "denied")
	}
	span.End(trace.WithTimestamp(en.Time))
}

// TurnStarted implements executor.TurnEvents.
func (e *Exporter) TurnStarted(turn int) {
	e.mu.Lock()
	e.turns = turn
	e.mu.Unlock()
}

// TurnCompleted implements executor.TurnEvents: the session span counts
// turns and tokens.
func (e *Exporter) TurnCompleted(turn int, r executor.TurnResult) {
	e.session.AddEvent("hush.turn.completed", trace.WithAttributes(attribute.Int(AttrTurn, turn),
		attribute.Int64("hush.usage.input_tokens", r.Usage.InputTokens), attribute.Int64("hush.usage.output_tokens", r.Usage.OutputTokens),
		attribute.Int("hush.turn.denied", len(r.Denied))))
}

// ToolFinished implements executor.ToolFinishEvents.
func (e *Exporter) ToolFinished(call provider.ToolCall, f executor.ToolFinish) {
	e.mu.Lock()
	turn := e.turns
	e.mu.Unlock()
	end := time.Now()
	attrs := []attribute.KeyValue{attribute.String(AttrTool, call.Name), attribute.String(AttrCallID, call.ID),
		attribute.String(AttrStatus, f.Status), attribute.Int(AttrTurn, turn)}
	if f.ExitCode != nil {
		attrs = append(attrs, attribute.Int(AttrExitCode, *f.ExitCode))
	}
	_, span := e.tracer.Start(e.ctx, SpanTool, trace.WithTimestamp(end.Add(-f.Duration)), trace.WithAttributes(attrs...))
	if f.Status != executor.StatusOK {
		span.SetStatus(codes.Error, f.Status)
	}
	span.End(trace.WithTimestamp(end))
}

// Text, ToolStart, ToolOutput and ToolEnd implement executor.Events and
// export nothing: text, arguments and output are never sent.
func (e *Exporter) Text(string)                             {}
func (e *Exporter) ToolStart(provider.ToolCall)             {}
func (e *Exporter) ToolOutput(provider.ToolCall, []byte)    {}
func (e *Exporter) ToolEnd(provider.ToolCall, string, bool) {}

// Close ends the session span and sends what is left, waiting up to
// timeout. It may be called more than once.
func (e *Exporter) Close(timeout time.Duration) error {
	if e == nil {
		return nil
	}
	e.session.End()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := e.tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("telemetry: the last export did not finish: %w", err)
	}
	return nil
}

var (
	_ executor.Events           = (*Exporter)(nil)
	_ executor.TurnEvents       = (*Exporter)(nil)
	_ executor.ToolFinishEvents = (*Exporter)(nil)
)
