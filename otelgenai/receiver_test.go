package otelgenai

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// receiver is a real OTLP/HTTP trace receiver on loopback: it decodes each
// ExportTraceServiceRequest the exporter posts to /v1/traces (protobuf or JSON, gzipped or not)
// and keeps its spans, the way a collector would receive them.
type receiver struct {
	srv *httptest.Server
	// status, when not 200, is what every request is answered with (a collector that refuses).
	status int

	mu       sync.Mutex
	spans    []span
	requests int
}

// span is one received span, decoded into plain values for the checks.
type span struct {
	name           string
	traceID        string
	id, parent     string
	kind           tracepb.Span_SpanKind
	start, end     uint64
	status         tracepb.Status_StatusCode
	attrs          map[string]any // string, int64, bool or []string
	service, scope string
	scopeSchema    string
	scopeVersion   string
}

// op is the span's gen_ai.operation.name.
func (s span) op() string { v, _ := s.attrs["gen_ai.operation.name"].(string); return v }

// str and num read an attribute ("" and -1 when it is missing or of another type).
func (s span) str(key string) string { v, _ := s.attrs[key].(string); return v }
func (s span) num(key string) int64 {
	if v, ok := s.attrs[key].(int64); ok {
		return v
	}
	return -1
}

// newReceiver starts a receiver answering status (200 to accept the spans).
func newReceiver(t testing.TB, status int) *receiver {
	t.Helper()
	rc := &receiver{status: status}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	rc.requests++
	rc.mu.Unlock()
	if rc.status != http.StatusOK {
		http.Error(w, "refused by the test's collector", rc.status)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
		http.Error(w, "not the traces path: "+r.URL.Path, http.StatusNotFound)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = gz
	}
	data, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req coltracepb.ExportTraceServiceRequest
	ct := r.Header.Get("Content-Type")
	switch ct {
	case "application/x-protobuf":
		err = proto.Unmarshal(data, &req)
	case "application/json":
		err = protojson.Unmarshal(data, &req)
	default:
		http.Error(w, "content type "+ct, http.StatusUnsupportedMediaType)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.keep(&req)
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// keep decodes a request's spans.
func (rc *receiver) keep(req *coltracepb.ExportTraceServiceRequest) {
	var got []span
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := span{name: s.GetName(), traceID: hex.EncodeToString(s.GetTraceId()), id: hex.EncodeToString(s.GetSpanId()),
					parent: hex.EncodeToString(s.GetParentSpanId()), kind: s.GetKind(), start: s.GetStartTimeUnixNano(),
					end: s.GetEndTimeUnixNano(), status: s.GetStatus().GetCode(), attrs: map[string]any{}, service: service,
					scope: ss.GetScope().GetName(), scopeVersion: ss.GetScope().GetVersion(), scopeSchema: ss.GetSchemaUrl()}
				for _, kv := range s.GetAttributes() {
					sp.attrs[kv.GetKey()] = value(kv.GetValue())
				}
				got = append(got, sp)
			}
		}
	}
	rc.mu.Lock()
	rc.spans = append(rc.spans, got...)
	rc.mu.Unlock()
}

// value turns an OTLP value into a plain Go value.
func value(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_ArrayValue:
		var out []string
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, e.GetStringValue())
		}
		return out
	}
	return v.String()
}

// received returns the spans so far.
func (rc *receiver) received() []span {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]span(nil), rc.spans...)
}

// point sets the standard environment to export to rc, clearing every variable of the
// environment the test runs in that would change where or whether spans go.
func (rc *receiver) point(t testing.TB) {
	t.Helper()
	clearOTelEnv(t)
	t.Setenv(EnvEndpoint, rc.srv.URL)
}

// clearOTelEnv empties the OpenTelemetry variables the package or the SDK read.
func clearOTelEnv(t testing.TB) {
	t.Helper()
	for _, k := range []string{EnvEndpoint, EnvTracesEndpoint, envProtocol, envTracesProtocol, envSDKDisabled,
		envTracesExporter, "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_TRACES_SAMPLER",
		"OTEL_TRACES_SAMPLER_ARG", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
		"OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_BSP_MAX_QUEUE_SIZE"} {
		t.Setenv(k, "")
	}
}

// newTestExporter builds the exporter from the environment, logging into log (nil: nowhere),
// and fails the test when the environment asked for none.
func newTestExporter(t testing.TB, log io.Writer) *Exporter {
	t.Helper()
	if log == nil {
		log = io.Discard
	}
	ctx := zerolog.New(log).WithContext(context.Background())
	x, err := FromEnv(ctx)
	if err != nil || x == nil {
		t.Fatalf("FromEnv = %v, %v; want an exporter", x, err)
	}
	t.Cleanup(func() { _ = x.Close(context.Background()) })
	return x
}

// closeExporter flushes x within a generous bound and fails the test when it could not.
func closeExporter(t testing.TB, x *Exporter) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := x.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// byOp groups spans by their operation.
func byOp(spans []span) map[string][]span {
	out := map[string][]span{}
	for _, s := range spans {
		out[s.op()] = append(out[s.op()], s)
	}
	return out
}

// containsAny reports which of needles (the run's content) s contains.
func containsAny(s string, needles []string) string {
	for _, n := range needles {
		if strings.Contains(s, n) {
			return n
		}
	}
	return ""
}

// lines splits a trace into its lines, the header first.
func lines(trace []byte) [][]byte {
	var out [][]byte
	for l := range bytes.SplitSeq(bytes.TrimSuffix(trace, []byte("\n")), []byte("\n")) {
		out = append(out, l)
	}
	return out
}
