package main

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/warrenhq/warren/otelgenai"
)

// otlpReceiver is a real OTLP/HTTP trace receiver on loopback: it decodes the protobuf
// ExportTraceServiceRequest each batch is posted as and keeps, per span, its name, its operation
// and the service that sent it. status other than 200 refuses every batch.
type otlpReceiver struct {
	srv    *httptest.Server
	status int

	mu    sync.Mutex
	spans []otlpSpan
}

type otlpSpan struct{ name, op, service string }

func newOTLPReceiver(t *testing.T, status int) *otlpReceiver {
	t.Helper()
	rc := &otlpReceiver{status: status}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rc.status != http.StatusOK {
			http.Error(w, "refused by the test's collector", rc.status)
			return
		}
		data, err := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(data, &req)
		}
		if err != nil || r.URL.Path != "/v1/traces" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		defer rc.mu.Unlock()
		for _, rs := range req.GetResourceSpans() {
			service := ""
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.GetKey() == "service.name" {
					service = kv.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					sp := otlpSpan{name: s.GetName(), service: service}
					for _, kv := range s.GetAttributes() {
						if kv.GetKey() == "gen_ai.operation.name" {
							sp.op = kv.GetValue().GetStringValue()
						}
					}
					rc.spans = append(rc.spans, sp)
				}
			}
		}
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// count returns the spans received by operation, and the services that sent them.
func (rc *otlpReceiver) count() (map[string]int, map[string]bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	ops, services := map[string]int{}, map[string]bool{}
	for _, s := range rc.spans {
		ops[s.op]++
		services[s.service] = true
	}
	return ops, services
}

// workflowNames returns the names of the run spans received.
func (rc *otlpReceiver) workflowNames() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []string
	for _, s := range rc.spans {
		if s.op == "invoke_workflow" {
			out = append(out, s.name)
		}
	}
	return out
}

// traceKinds counts a trace file's events by kind.
func traceKinds(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kind := regexp.MustCompile(`^\{"tick":\d+,"seq":\d+,"agent":\d+,"name":"(?:[^"\\]|\\.)*","kind":"([a-z_]+)"`)
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if m := kind.FindStringSubmatch(sc.Text()); m != nil {
			out[m[1]]++
		}
	}
	return out
}

// summaryCount reads a count from host run's summary ("model turns  50000").
func summaryCount(t *testing.T, stdout, label string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + label + `\s+(\d+)`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no %q line in the summary:\n%s", label, stdout)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestRunExportsSpans runs host run with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a real OTLP/HTTP
// receiver, and checks what reached it against the run: a workflow span named after the scenario,
// and as many agent, chat and execute_tool spans as the trace has spawn, model_turn and tool_call
// events, from service "warren" (or OTEL_SERVICE_NAME), whether the run keeps its trace in a
// file, keeps none, or keeps it in a state directory; that a collector refusing every batch
// changes neither the run nor its exit code and is logged once; and that a gRPC protocol, which
// Warren cannot send, is refused as bad input before the run.
func TestRunExportsSpans(t *testing.T) {
	cases := []struct {
		name    string
		status  int
		env     map[string]string
		args    func(dir string) []string
		trace   func(dir string) string // the trace file to count events in ("": use the summary)
		code    int
		service string
		warns   int // "could not be exported" warnings
	}{
		{name: "trace file", status: http.StatusOK,
			args: func(dir string) []string {
				return []string{"run", example("quickstart.toml"), "--agents", "6", "--trace", filepath.Join(dir, "t.jsonl")}
			},
			trace: func(dir string) string { return filepath.Join(dir, "t.jsonl") }, service: "warren"},
		{name: "no trace kept", status: http.StatusOK, env: map[string]string{"OTEL_SERVICE_NAME": "warren-ci"},
			args: func(string) []string { return []string{"run", example("on_error.toml")} }, service: "warren-ci"},
		{name: "state directory", status: http.StatusOK,
			args: func(dir string) []string {
				return []string{"run", example("quickstart.toml"), "--agents", "4", "--state", filepath.Join(dir, "st")}
			},
			trace: func(dir string) string { return filepath.Join(dir, "st", "trace.jsonl") }, service: "warren"},
		{name: "collector refuses", status: http.StatusBadRequest, env: map[string]string{"OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "8"},
			args: func(dir string) []string {
				return []string{"run", example("quickstart.toml"), "--agents", "6", "--trace", filepath.Join(dir, "t.jsonl")}
			},
			trace: func(dir string) string { return filepath.Join(dir, "t.jsonl") }, warns: 1},
		{name: "grpc", status: http.StatusOK, env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			args: func(string) []string { return []string{"run", example("on_error.toml")} }, code: exitBadInput},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{otelgenai.EnvTracesEndpoint, "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
				"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_TRACES_SAMPLER",
				"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "OTEL_EXPORTER_OTLP_HEADERS"} {
				t.Setenv(k, "")
			}
			rc := newOTLPReceiver(t, tc.status)
			t.Setenv(otelgenai.EnvEndpoint, rc.srv.URL)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			dir := t.TempDir()
			r := host(t, tc.args(dir)...)
			wantCode(t, r, tc.code)
			if n := strings.Count(r.stderr, "could not be exported"); n != tc.warns {
				t.Errorf("%d export failures logged, want %d:\n%s", n, tc.warns, r.stderr)
			}
			ops, services := rc.count()
			if tc.code != exitOK || tc.status != http.StatusOK {
				if len(ops) != 0 {
					t.Errorf("spans received: %v", ops)
				}
				if tc.code == exitBadInput && !strings.Contains(r.stderr, "gRPC") {
					t.Errorf("the refusal does not say why:\n%s", r.stderr)
				}
				return
			}
			want := map[string]int{"invoke_workflow": 1}
			if tc.trace != nil {
				kinds := traceKinds(t, tc.trace(dir))
				want["invoke_agent"], want["chat"], want["execute_tool"] = kinds["spawn"], kinds["model_turn"], kinds["tool_call"]
			} else {
				want["invoke_agent"] = summaryCount(t, r.stdout, "agents")
				want["chat"], want["execute_tool"] = summaryCount(t, r.stdout, "model turns"), summaryCount(t, r.stdout, "tool calls")
			}
			for op, n := range want {
				if ops[op] != n {
					t.Errorf("%d %s spans, want %d (all received: %v)", ops[op], op, n, ops)
				}
			}
			if len(services) != 1 || !services[tc.service] {
				t.Errorf("spans from services %v, want %q", services, tc.service)
			}
			if names := rc.workflowNames(); len(names) != 1 || !strings.HasPrefix(names[0], "invoke_workflow ") {
				t.Errorf("run spans %q", names)
			}
		})
	}
}
