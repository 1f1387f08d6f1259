package telemetry

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net/http"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// otlpExporter is the SDK's span exporter for OTLP/HTTP with protobuf
// bodies, encoded here with encoding/binary.
//
// Why not otlptracehttp: it imports the OTLP collector package, which
// carries the gRPC service and the grpc-gateway handlers, and its config
// package imports grpc/credentials. Linked into hush they added 58
// packages initialised at every start (gRPC, protobuf's registry,
// grpc-gateway), 4.6 MB of binary and about 155 KB allocated before main —
// paid by `hush --version` with telemetry off. The encoder below is the
// handful of OTLP messages hush sends; TestOTLPEncodingMatchesTheProto
// decodes its output with the official OTLP protobuf types.
type otlpExporter struct {
	url     string
	headers map[string]string
	client  *http.Client

	mu      sync.Mutex
	stopped bool
}

// ExportSpans implements sdktrace.SpanExporter: one POST per batch.
func (x *otlpExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	x.mu.Lock()
	stopped := x.stopped
	x.mu.Unlock()
	if stopped || len(spans) == 0 {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, x.url, bytes.NewReader(encodeTraces(spans)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	for k, v := range x.headers {
		req.Header.Set(k, v)
	}
	resp, err := x.client.Do(req)
	if err != nil {
		return fmt.Errorf("otlp export: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("otlp export: %s answered %s", x.url, resp.Status)
	}
	return nil
}

// Shutdown implements sdktrace.SpanExporter; later exports send nothing.
func (x *otlpExporter) Shutdown(context.Context) error {
	x.mu.Lock()
	x.stopped = true
	x.mu.Unlock()
	return nil
}

// Field numbers of the OTLP messages written below
// (opentelemetry/proto/collector/trace/v1, trace/v1, common/v1, resource/v1).
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5

	spanFlagsHasIsRemote = 0x100
	spanFlagsIsRemote    = 0x200
)

// encodeTraces is an ExportTraceServiceRequest: spans grouped by resource,
// then by instrumentation scope, in the order they came.
func encodeTraces(spans []sdktrace.ReadOnlySpan) []byte {
	type scopeKey struct {
		res   *resource.Resource
		scope instrumentation.Scope
	}
	var resOrder []*resource.Resource
	scopes := map[*resource.Resource][]instrumentation.Scope{}
	byScope := map[scopeKey][]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		r := s.Resource()
		k := scopeKey{r, s.InstrumentationScope()}
		if _, ok := scopes[r]; !ok {
			resOrder = append(resOrder, r)
			scopes[r] = nil
		}
		if _, ok := byScope[k]; !ok {
			scopes[r] = append(scopes[r], k.scope)
		}
		byScope[k] = append(byScope[k], s)
	}
	var out []byte
	for _, r := range resOrder {
		var rs []byte
		rs = appendMessage(rs, 1, encodeResource(r))
		for _, sc := range scopes[r] {
			var ss []byte
			ss = appendMessage(ss, 1, encodeScope(sc))
			for _, s := range byScope[scopeKey{r, sc}] {
				ss = appendMessage(ss, 2, encodeSpan(s))
			}
			ss = appendString(ss, 3, sc.SchemaURL)
			rs = appendMessage(rs, 2, ss)
		}
		if r != nil {
			rs = appendString(rs, 3, r.SchemaURL())
		}
		out = appendMessage(out, 1, rs)
	}
	return out
}

func encodeResource(r *resource.Resource) []byte {
	var b []byte
	if r == nil {
		return b
	}
	for _, kv := range r.Attributes() {
		b = appendMessage(b, 1, encodeKeyValue(kv))
	}
	return b
}

func encodeScope(s instrumentation.Scope) []byte {
	var b []byte
	b = appendString(b, 1, s.Name)
	b = appendString(b, 2, s.Version)
	for _, kv := range s.Attributes.ToSlice() {
		b = appendMessage(b, 3, encodeKeyValue(kv))
	}
	return b
}

func encodeSpan(s sdktrace.ReadOnlySpan) []byte {
	var b []byte
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytes(b, 1, tid[:])
	b = appendBytes(b, 2, sid[:])
	b = appendString(b, 3, sc.TraceState().String())
	if p := s.Parent(); p.SpanID().IsValid() {
		psid := p.SpanID()
		b = appendBytes(b, 4, psid[:])
	}
	b = appendString(b, 5, s.Name())
	b = appendVarint(b, 6, uint64(s.SpanKind())) // trace.SpanKind's values are OTLP's
	b = appendFixed64(b, 7, uint64(s.StartTime().UnixNano()))
	b = appendFixed64(b, 8, uint64(s.EndTime().UnixNano()))
	for _, kv := range s.Attributes() {
		b = appendMessage(b, 9, encodeKeyValue(kv))
	}
	b = appendVarint(b, 10, uint64(s.DroppedAttributes()))
	for _, e := range s.Events() {
		var eb []byte
		eb = appendFixed64(eb, 1, uint64(e.Time.UnixNano()))
		eb = appendString(eb, 2, e.Name)
		for _, kv := range e.Attributes {
			eb = appendMessage(eb, 3, encodeKeyValue(kv))
		}
		eb = appendVarint(eb, 4, uint64(e.DroppedAttributeCount))
		b = appendMessage(b, 11, eb)
	}
	b = appendVarint(b, 12, uint64(s.DroppedEvents()))
	for _, l := range s.Links() {
		var lb []byte
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		lb = appendBytes(lb, 1, ltid[:])
		lb = appendBytes(lb, 2, lsid[:])
		// trace_state (3) left out, as otlptracehttp leaves it out
		for _, kv := range l.Attributes {
			lb = appendMessage(lb, 4, encodeKeyValue(kv))
		}
		lb = appendVarint(lb, 5, uint64(l.DroppedAttributeCount))
		lb = appendFixed32(lb, 6, spanFlags(uint32(l.SpanContext.TraceFlags()), l.SpanContext.IsRemote()))
		b = appendMessage(b, 13, lb)
	}
	b = appendVarint(b, 14, uint64(s.DroppedLinks()))
	var st []byte
	st = appendString(st, 2, s.Status().Description)
	st = appendVarint(st, 3, statusCode(s.Status().Code))
	b = appendMessage(b, 15, st)
	b = appendFixed32(b, 16, spanFlags(uint32(sc.TraceFlags()), s.Parent().IsRemote()))
	return b
}

func spanFlags(traceFlags uint32, remote bool) uint32 {
	f := traceFlags | spanFlagsHasIsRemote
	if remote {
		f |= spanFlagsIsRemote
	}
	return f
}

// statusCode maps the API's codes (Unset 0, Error 1, Ok 2) to OTLP's
// (UNSET 0, OK 1, ERROR 2).
func statusCode(c codes.Code) uint64 {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0
}

func encodeKeyValue(kv attribute.KeyValue) []byte {
	var b []byte
	b = appendString(b, 1, string(kv.Key))
	return appendMessage(b, 2, encodeValue(kv.Value))
}

// encodeValue is an AnyValue: string 1, bool 2, int 3, double 4, array 5.
// A value is written even when it is its type's zero, since the oneof
// says which type it is.
func encodeValue(v attribute.Value) []byte {
	var b []byte
	switch v.Type() {
	case attribute.BOOL:
		b = appendTag(b, 2, wireVarint)
		if v.AsBool() {
			return append(b, 1)
		}
		return append(b, 0)
	case attribute.INT64:
		b = appendTag(b, 3, wireVarint)
		return binary.AppendUvarint(b, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		b = appendTag(b, 4, wireFixed64)
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v.AsFloat64()))
	case attribute.STRING:
		return appendLen(appendTag(b, 1, wireBytes), []byte(v.AsString()))
	case attribute.BOOLSLICE:
		return appendArray(b, v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		return appendArray(b, v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		return appendArray(b, v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		return appendArray(b, v.AsStringSlice(), attribute.StringValue)
	}
	return appendLen(appendTag(b, 1, wireBytes), []byte(v.String()))
}

func appendArray[T any](b []byte, vs []T, value func(T) attribute.Value) []byte {
	var arr []byte
	for _, v := range vs {
		arr = appendMessage(arr, 1, encodeValue(value(v)))
	}
	return appendLen(appendTag(b, 5, wireBytes), arr)
}

func appendTag(b []byte, field, wire int) []byte {
	return binary.AppendUvarint(b, uint64(field)<<3|uint64(wire))
}

func appendLen(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// appendMessage writes a nested message, also when it is empty (an empty
// Status or Resource is still present).
func appendMessage(b []byte, field int, m []byte) []byte {
	return appendLen(appendTag(b, field, wireBytes), m)
}

// The scalar writers below leave a field out at its zero value, as proto3 does.

func appendBytes(b []byte, field int, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	return appendLen(appendTag(b, field, wireBytes), v)
}

func appendString(b []byte, field int, s string) []byte {
	return appendBytes(b, field, []byte(s))
}

func appendVarint(b []byte, field int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return binary.AppendUvarint(appendTag(b, field, wireVarint), v)
}

func appendFixed64(b []byte, field int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return binary.LittleEndian.AppendUint64(appendTag(b, field, wireFixed64), v)
}

func appendFixed32(b []byte, field int, v uint32) []byte {
	if v == 0 {
		return b
	}
	return binary.LittleEndian.AppendUint32(appendTag(b, field, wireFixed32), v)
}
