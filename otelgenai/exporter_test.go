package otelgenai

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/warren"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// TestFromEnv checks which environments build an exporter: none without an endpoint (nothing is
// built, nothing is paid), one with either endpoint variable, none when the SDK is disabled or
// the traces exporter is "none", and an ErrConfig for what Warren cannot send (gRPC, another
// exporter), where the per-signal protocol variable wins over the general one.
func TestFromEnv(t *testing.T) {
	cases := []struct {
		name    string
		env     map[string]string
		want    bool
		wantErr bool
	}{
		{"nothing set", nil, false, false},
		{"endpoint", map[string]string{EnvEndpoint: "http://127.0.0.1:4318"}, true, false},
		{"traces endpoint", map[string]string{EnvTracesEndpoint: "http://127.0.0.1:4318/v1/traces"}, true, false},
		{"blank endpoint", map[string]string{EnvEndpoint: "  "}, false, false},
		{"sdk disabled", map[string]string{EnvEndpoint: "http://127.0.0.1:4318", envSDKDisabled: "TRUE"}, false, false},
		{"exporter none", map[string]string{EnvEndpoint: "http://127.0.0.1:4318", envTracesExporter: "none"}, false, false},
		{"exporter otlp", map[string]string{EnvEndpoint: "http://127.0.0.1:4318", envTracesExporter: "otlp"}, true, false},
		{"exporter console", map[string]string{EnvEndpoint: "http://127.0.0.1:4318", envTracesExporter: "console"}, false, true},
		{"grpc", map[string]string{EnvEndpoint: "http://127.0.0.1:4317", envProtocol: "grpc"}, false, true},
		{"traces protocol wins", map[string]string{EnvEndpoint: "http://127.0.0.1:4318", envProtocol: "grpc", envTracesProtocol: "http/json"}, true, false},
		{"http/protobuf", map[string]string{EnvEndpoint: "http://127.0.0.1:4318", envProtocol: "http/protobuf"}, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clearOTelEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			x, err := FromEnv(context.Background())
			if x != nil {
				defer x.Close(context.Background())
			}
			if (err != nil) != tc.wantErr || (tc.wantErr && !errors.Is(err, ErrConfig)) {
				t.Fatalf("FromEnv error %v, want an ErrConfig: %v", err, tc.wantErr)
			}
			if (x != nil) != tc.want || enabled() != (tc.want || tc.wantErr) {
				t.Errorf("FromEnv built an exporter: %v, enabled %v; want %v", x != nil, enabled(), tc.want)
			}
		})
	}
}

// TestNilExporter checks that the exporter of an environment without an endpoint, nil, changes
// nothing: Writer and Tap give back what they were given (a nil Writer io.Discard, so a run
// without a trace still has somewhere to write) and Close does nothing.
func TestNilExporter(t *testing.T) {
	var x *Exporter
	var buf bytes.Buffer
	if w := x.Writer("r", &buf); w != &buf {
		t.Errorf("Writer = %T, want the writer given", w)
	}
	if w := x.Writer("r", nil); w == nil {
		t.Error("Writer(nil) = nil, want io.Discard")
	}
	if f := x.Tap("r", "s", nil); f != nil {
		t.Error("Tap(nil) is not nil")
	}
	called := false
	x.Tap("r", "s", func([]byte) { called = true })([]byte("{}\n"))
	if !called {
		t.Error("Tap did not hand the line on")
	}
	if err := x.Close(context.Background()); err != nil {
		t.Error(err)
	}
}

// TestSampledOut checks that a run the sampler leaves out (OTEL_TRACES_SAMPLER=always_off) is not
// read at all: Tap gives back next itself, Writer the writer itself, and no span is sent.
func TestSampledOut(t *testing.T) {
	rc := newReceiver(t, http.StatusOK)
	rc.point(t)
	t.Setenv("OTEL_TRACES_SAMPLER", "always_off")
	x := newTestExporter(t, nil)
	if f := x.Tap("", "quickstart", nil); f != nil {
		t.Error("Tap of a run sampled out is not next (nil)")
	}
	var buf bytes.Buffer
	if w := x.Writer("", &buf); w != &buf {
		t.Errorf("Writer of a run sampled out = %T, want the writer given", w)
	}
	closeExporter(t, x)
	if n := len(rc.received()); n != 0 {
		t.Errorf("%d spans of a run sampled out", n)
	}
}

// TestWriterSplitsLines feeds one trace to Writer in writes of many sizes, cutting lines
// anywhere, and checks that each gives the same spans as the trace read whole by Tap.
func TestWriterSplitsLines(t *testing.T) {
	rc := newReceiver(t, http.StatusOK)
	rc.point(t)
	x := newTestExporter(t, nil)
	data := runExample(t, x, "quickstart.toml", 4)
	closeExporter(t, x)
	want := spanShapes(rc.received())
	if len(want) == 0 {
		t.Fatal("no spans from the run")
	}
	for _, size := range []int{1, 7, 100, 4096, len(data)} {
		rc := newReceiver(t, http.StatusOK)
		rc.point(t)
		x := newTestExporter(t, nil)
		var out bytes.Buffer
		w := x.Writer("", &out)
		for p := data; len(p) > 0; {
			n := min(size, len(p))
			if m, err := w.Write(p[:n]); m != n || err != nil {
				t.Fatalf("Write = %d, %v", m, err)
			}
			p = p[n:]
		}
		closeExporter(t, x)
		if !bytes.Equal(out.Bytes(), data) {
			t.Errorf("writes of %d bytes: the trace written differs from the trace given", size)
		}
		if got := spanShapes(rc.received()); !equalShapes(got, want) {
			t.Errorf("writes of %d bytes: %d spans, want %d as Tap made", size, len(got), len(want))
		}
	}
}

// spanShapes counts spans by name and the attributes that do not depend on wall time.
func spanShapes(spans []span) map[string]int {
	out := map[string]int{}
	for _, s := range spans {
		key := s.name + "|" + s.str("warren.stage") + "|" + s.str("gen_ai.tool.call.id") + "|" + s.str("warren.agent.name")
		out[key]++
	}
	return out
}

func equalShapes(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestExportFailureNeverFailsTrace runs the quickstart with its trace through the exporter's
// Writer against a collector that accepts, one that refuses every batch, one that is down
// (nothing listens on its port) and one that never answers: the trace is byte for byte the trace
// of the run without export (the exporter only reads), no write fails, a failed export is logged
// once at warn however many batches fail, and Close returns within its deadline when the
// collector never answers, saying that spans were not sent.
func TestExportFailureNeverFailsTrace(t *testing.T) {
	plain := runPlain(t, "quickstart.toml", 12)
	down := func(t *testing.T) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		return "http://" + addr
	}
	hang := func(t *testing.T) string {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		t.Cleanup(srv.Close)
		t.Cleanup(func() { close(release) }) // runs first: the handler returns, then the server closes
		return srv.URL
	}
	cases := []struct {
		name         string
		endpoint     func(t *testing.T) string
		failures     int  // "could not be exported" warnings
		lost         bool // a "were not sent" warning (the deadline cut the flush)
		closeFails   bool
		closeTimeout time.Duration
	}{
		{"accepted", func(t *testing.T) string { return newReceiver(t, http.StatusOK).srv.URL }, 0, false, false, 30 * time.Second},
		{"refused", func(t *testing.T) string { return newReceiver(t, http.StatusBadRequest).srv.URL }, 1, false, false, 30 * time.Second},
		{"down", down, 1, false, false, 30 * time.Second},
		{"never answers", hang, 0, true, true, 500 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clearOTelEnv(t)
			t.Setenv(EnvEndpoint, tc.endpoint(t))
			t.Setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "16") // many batches, to fail many times
			var log bytes.Buffer
			x := newTestExporter(t, &log)
			got := runWriter(t, x, "quickstart.toml", 12)
			if !bytes.Equal(got, plain) {
				t.Error("the trace written through the exporter differs from the trace of the same run without it")
			}
			ctx, cancel := context.WithTimeout(context.Background(), tc.closeTimeout)
			defer cancel()
			start := time.Now()
			err := x.Close(ctx)
			if took := time.Since(start); took > tc.closeTimeout+2*time.Second {
				t.Errorf("Close took %v, its deadline was %v", took, tc.closeTimeout)
			}
			if (err != nil) != tc.closeFails {
				t.Errorf("Close = %v, want an error: %v", err, tc.closeFails)
			}
			if n := strings.Count(log.String(), "could not be exported"); n != tc.failures {
				t.Errorf("%d export failures logged, want %d:\n%s", n, tc.failures, log.String())
			}
			if strings.Contains(log.String(), "were not sent") != tc.lost {
				t.Errorf("lost spans logged: %v, want %v:\n%s", !tc.lost, tc.lost, log.String())
			}
			if tc.failures > 0 && !strings.Contains(log.String(), `"level":"warn"`) {
				t.Errorf("the failure is not logged at warn:\n%s", log.String())
			}
		})
	}
}

// runPlain runs a shipped example with no exporter and returns its trace.
func runPlain(t testing.TB, file string, agents int) []byte {
	t.Helper()
	var x *Exporter
	return runWriter(t, x, file, agents)
}

// runWriter runs a shipped example with its trace written through x's Writer.
func runWriter(t testing.TB, x *Exporter, file string, agents int) []byte {
	t.Helper()
	sc, err := warren.Load(filepath.Join(examples, file))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := warren.Run(context.Background(), sc, warren.Options{Agents: agents, Trace: x.Writer("", &buf)}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestCloseStopsRuns checks that a run that never wrote an event (its setup failed) sends no
// span at all, that a run started after Close records nothing, and that Close twice is Close
// once.
func TestCloseStopsRuns(t *testing.T) {
	rc := newReceiver(t, http.StatusOK)
	rc.point(t)
	x := newTestExporter(t, nil)
	if x.Tap("", "never-ran", nil) == nil {
		t.Fatal("Tap before Close reads nothing")
	}
	closeExporter(t, x)
	closeExporter(t, x)
	if f := x.Tap("", "late", nil); f != nil {
		t.Error("Tap after Close reads the run")
	}
	runWriter(t, x, "quickstart.toml", 2)
	if n := len(rc.received()); n != 0 {
		t.Errorf("%d spans sent after Close", n)
	}
}

// TestKindOf checks that the kind is found from a line's bytes for every kind spans are made of,
// the header (whose fields object lists "kind" too) and others, and that an agent named like a
// kind field cannot fool it: its quotes are escaped.
func TestKindOf(t *testing.T) {
	cases := []struct {
		line string
		want kind
	}{
		{`{"format":"warren-trace","version":5,"fields":{"name":"string","kind":"string"}}`, kHeader},
		{`{"tick":0,"seq":1,"agent":1,"name":"a","kind":"spawn","group":"g"}`, kSpawn},
		{`{"tick":0,"seq":2,"agent":1,"name":"a","kind":"stage_enter","stage":"s"}`, kStageEnter},
		{`{"tick":0,"seq":3,"agent":1,"name":"a","kind":"model_turn"}`, kModelTurn},
		{`{"tick":0,"seq":4,"agent":1,"name":"a","kind":"tool_call"}`, kToolCall},
		{`{"tick":0,"seq":5,"agent":1,"name":"a","kind":"answer"}`, kAnswer},
		{`{"tick":0,"seq":6,"agent":1,"name":"a","kind":"tool_result"}`, kToolResult},
		{`{"tick":0,"seq":7,"agent":1,"name":"a","kind":"terminal"}`, kTerminal},
		{`{"tick":0,"seq":8,"agent":1,"name":"a","kind":"reap"}`, kReap},
		{`{"tick":0,"seq":9,"agent":0,"name":"","kind":"end"}`, kEnd},
		{`{"tick":0,"seq":10,"agent":1,"name":"a","kind":"message","text":"\",\"kind\":\"tool_call"}`, kOther},
		{`{"tick":0,"seq":11,"agent":1,"name":"x\",\"kind\":\"end","kind":"memory"}`, kOther},
		{`{"tick":0,"seq":12,"agent":1,"name":"a","kind":"tool_resul`, kOther},
		{`not json`, kOther},
	}
	for _, tc := range cases {
		if got := kindOf([]byte(tc.line)); got != tc.want {
			t.Errorf("kindOf(%s) = %d, want %d", tc.line, got, tc.want)
		}
	}
}

// TestProviderOf checks gen_ai.provider.name for the model ids a trace writes: the conventions'
// values for the kinds that ask a provider, "warren.<kind>" for Warren's own.
func TestProviderOf(t *testing.T) {
	cases := []struct {
		model, provider string
		live            bool
	}{
		{"openai:live", "openai", true},
		{"anthropic:claude", "anthropic", true},
		{"scripted:researcher", "warren.scripted", false},
		{"js:policy", "warren.js", false},
		{"no-kind", "warren", false},
		{":odd", "warren", false},
	}
	for _, tc := range cases {
		p, live := providerOf(tc.model)
		if p != tc.provider || live != tc.live {
			t.Errorf("providerOf(%q) = %q, %v; want %q, %v", tc.model, p, live, tc.provider, tc.live)
		}
	}
}

// TestSemconvVersionPinned checks that SemconvVersion names the version of the semconv package
// the attribute keys come from.
func TestSemconvVersionPinned(t *testing.T) {
	if want := "https://opentelemetry.io/schemas/" + SemconvVersion; semconv.SchemaURL != want {
		t.Errorf("the semconv package is %s, SemconvVersion says %s", semconv.SchemaURL, want)
	}
}
