package telemetry

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// receiver keeps every body posted to it, decoded with the official OTLP
// protobuf types, and the headers of the last one.
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	reqs   []*coltrace.ExportTraceServiceRequest
	header http.Header
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		data, _ := io.ReadAll(req.Body)
		var m coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(data, &m); err != nil {
			t.Errorf("the export does not decode as OTLP: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.reqs = append(r.reqs, &m)
		r.header = req.Header.Clone()
		r.mu.Unlock()
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) take(t *testing.T) *coltrace.ExportTraceServiceRequest {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reqs) != 1 {
		t.Fatalf("%d exports, want 1", len(r.reqs))
	}
	m := r.reqs[0]
	r.reqs = nil
	return m
}

// spans covers every field the encoder writes: each attribute type (and
// each type's zero value), events, links, a remote parent, status codes,
// trace state, two resources and two scopes.
func spans(t *testing.T) []sdktrace.ReadOnlySpan {
	tid := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	ts, err := trace.ParseTraceState("vendor=value")
	if err != nil {
		t.Fatal(err)
	}
	sc := func(sid byte, remote bool) trace.SpanContext {
		return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{sid, 1}, TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: remote})
	}
	start := time.Unix(1_700_000_000, 123456789)
	attrs := []attribute.KeyValue{
		attribute.String("s", "value"), attribute.String("empty", ""),
		attribute.Bool("t", true), attribute.Bool("f", false),
		attribute.Int64("i", -42), attribute.Int64("zero", 0), attribute.Int("big", 1<<40),
		attribute.Float64("pi", 3.25), attribute.Float64("fzero", 0),
		attribute.StringSlice("ss", []string{"a", ""}), attribute.BoolSlice("bs", []bool{true, false}),
		attribute.Int64Slice("is", []int64{1, -1}), attribute.Float64Slice("fs", []float64{0.5}),
	}
	res1 := resource.NewSchemaless(attribute.String("service.name", "hush"), attribute.String("service.version", "1.2.3"))
	res2 := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.26.0", attribute.String("service.name", "other"))
	scope1 := instrumentation.Scope{Name: "github.com/hushcli/hush"}
	scope2 := instrumentation.Scope{Name: "second", Version: "v2", SchemaURL: "https://example.test/schema",
		Attributes: attribute.NewSet(attribute.String("scope.attr", "x"))}
	stubs := tracetest.SpanStubs{
		{
			Name: "hush.session", SpanContext: sc(1, false), SpanKind: trace.SpanKindInternal,
			StartTime: start, EndTime: start.Add(time.Second), Attributes: attrs,
			Events: []sdktrace.Event{{Name: "hush.turn.completed", Time: start.Add(time.Millisecond),
				Attributes: []attribute.KeyValue{attribute.Int("hush.turn", 1)}, DroppedAttributeCount: 2}},
			Status: sdktrace.Status{Code: codes.Ok}, Resource: res1, InstrumentationScope: scope1,
			DroppedAttributes: 3, DroppedEvents: 4, DroppedLinks: 5,
		},
		{
			Name: "hush.gate", SpanContext: sc(2, false), Parent: sc(1, true), SpanKind: trace.SpanKindClient,
			StartTime: start, EndTime: start,
			Links:  []sdktrace.Link{{SpanContext: sc(9, true), Attributes: []attribute.KeyValue{attribute.String("l", "v")}, DroppedAttributeCount: 1}},
			Status: sdktrace.Status{Code: codes.Error, Description: "denied"}, Resource: res1, InstrumentationScope: scope1,
		},
		{Name: "other scope", SpanContext: sc(3, false), Parent: sc(1, false), StartTime: start, EndTime: start.Add(time.Nanosecond),
			Resource: res1, InstrumentationScope: scope2},
		{Name: "other resource", SpanContext: sc(4, false), StartTime: start, EndTime: start.Add(time.Minute),
			Resource: res2, InstrumentationScope: scope1},
	}
	return stubs.Snapshots()
}

// TestOTLPEncodingMatchesTheProto: the same spans sent through hush's
// exporter and through the official otlptracehttp exporter decode, with the
// official OTLP types, to equal requests.
func TestOTLPEncodingMatchesTheProto(t *testing.T) {
	ctx := context.Background()
	rs := spans(t)

	ours := newReceiver(t)
	x := &otlpExporter{url: ours.srv.URL + "/v1/traces", headers: map[string]string{"X-Team-Key": "k"}, client: ours.srv.Client()}
	if err := x.ExportSpans(ctx, rs); err != nil {
		t.Fatal(err)
	}
	got := ours.take(t)
	if h := ours.header; h.Get("Content-Type") != "application/x-protobuf" || h.Get("X-Team-Key") != "k" {
		t.Errorf("headers %v", h)
	}

	theirs := newReceiver(t)
	official, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(theirs.srv.URL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	if err := official.ExportSpans(ctx, rs); err != nil {
		t.Fatal(err)
	}
	want := theirs.take(t)

	// Positive control: the comparison sees a difference when there is one.
	if n := len(want.ResourceSpans); n != 2 {
		t.Fatalf("the official exporter sent %d resources, want 2", n)
	}
	if proto.Equal(got, &coltrace.ExportTraceServiceRequest{}) {
		t.Fatal("hush's export decoded to an empty request")
	}
	// Both exporters group spans by resource through a map: the order of
	// the resources in one request is not part of the format.
	for _, r := range []*coltrace.ExportTraceServiceRequest{got, want} {
		name := func(i int) string {
			for _, a := range r.ResourceSpans[i].GetResource().GetAttributes() {
				if a.GetKey() == "service.name" {
					return a.GetValue().GetStringValue()
				}
			}
			return ""
		}
		sort.SliceStable(r.ResourceSpans, func(i, j int) bool { return name(i) < name(j) })
	}
	if !proto.Equal(got, want) {
		t.Errorf("hush's export differs from otlptracehttp's:\n got %s\nwant %s", got, want)
	}
}

// TestOTLPExportFailsOnAnErrorStatus: a collector's refusal is an error the
// SDK reports, and nothing is sent after Shutdown.
func TestOTLPExportFailsOnAnErrorStatus(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls++
		http.Error(w, "no", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	x := &otlpExporter{url: srv.URL, client: srv.Client()}
	if err := x.ExportSpans(context.Background(), spans(t)); err == nil {
		t.Error("a 503 was not an error")
	}
	if err := x.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := x.ExportSpans(context.Background(), spans(t)); err != nil || calls != 1 {
		t.Errorf("after Shutdown: err %v, %d calls, want 1", err, calls)
	}
}
