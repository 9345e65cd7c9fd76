package telemetry_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/warrenhq/warren/runview"
	"github.com/warrenhq/warren/telemetry"
)

// fakeSource is a Source whose runs a test changes between scrapes.
type fakeSource struct {
	mu    sync.Mutex
	runs  []telemetry.Run
	calls int
}

func (s *fakeSource) Runs() []telemetry.Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	return slices.Clone(s.runs)
}

func (s *fakeSource) set(runs ...telemetry.Run) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs = runs
}

func phases(ns ...int64) []telemetry.Count {
	var cs []telemetry.Count
	for i, name := range runview.PhaseNames {
		cs = append(cs, telemetry.Count{Name: name, N: ns[i]})
	}
	return cs
}

// running is a run under way: agents live, prompts and queues non-empty.
func running() telemetry.Run {
	return telemetry.Run{
		ID: "r1-people", Scenario: "people", State: telemetry.StateRunning,
		AgentsByPhase:      phases(1, 2, 3, 1, 0, 0, 4),
		AgentsByStatus:     []telemetry.Count{{Name: "done", N: 3}, {Name: "failed", N: 1}, {Name: "running", N: 7}},
		Ticks:              42,
		Events:             1234,
		ModelTurns:         88,
		ToolCallsByVerdict: []telemetry.Count{{Name: "allow", N: 50}, {Name: "ask", N: 4}, {Name: "deny", N: 2}},
		ToolErrors:         5,
		TokensPrompt:       90000,
		TokensCompletion:   12000,
		CostUSD:            1.2345,
		PromptsOpen:        1,
		LaneQueue:          []telemetry.Count{{Name: "model", N: 6}, {Name: "tool", N: 2}},
		PoolQueue:          telemetry.CountsOf(map[string]int{"sonnet": 3, "haiku": 0}),
	}
}

// ended is a run that is over: what the view gives at its end, "running" status absent.
func ended() telemetry.Run {
	return telemetry.Run{
		ID: "r2-fanout", Scenario: "fanout", State: telemetry.StateEnded,
		AgentsByPhase:      phases(0, 0, 0, 0, 0, 0, 10),
		AgentsByStatus:     []telemetry.Count{{Name: "done", N: 9}, {Name: "killed", N: 1}},
		Ticks:              300,
		Events:             5000,
		ModelTurns:         120,
		ToolCallsByVerdict: []telemetry.Count{{Name: "allow", N: 70}},
		ToolErrors:         0,
		TokensPrompt:       150000,
		TokensCompletion:   30000,
		CostUSD:            3.5,
		PromptsOpen:        0,
		LaneQueue:          []telemetry.Count{{Name: "model", N: 0}, {Name: "tool", N: 0}},
		PoolQueue:          []telemetry.Count{{Name: "default", N: 0}},
	}
}

// sample is one expected series: its family, its labels beyond run and scenario, its value.
type sample struct {
	family string
	labels map[string]string
	value  float64
}

// families are the collector's metric families and their types.
var families = map[string]dto.MetricType{
	"warren_agents_by_phase":             dto.MetricType_GAUGE,
	"warren_agents_by_status":            dto.MetricType_GAUGE,
	"warren_ticks_total":                 dto.MetricType_COUNTER,
	"warren_trace_events_total":          dto.MetricType_COUNTER,
	"warren_model_turns_total":           dto.MetricType_COUNTER,
	"warren_tool_calls_total":            dto.MetricType_COUNTER,
	"warren_tool_errors_total":           dto.MetricType_COUNTER,
	"warren_model_tokens_total":          dto.MetricType_COUNTER,
	"warren_model_cost_usd_total":        dto.MetricType_COUNTER,
	"warren_prompts_open":                dto.MetricType_GAUGE,
	"warren_lane_queued_jobs":            dto.MetricType_GAUGE,
	"warren_inference_pool_queued_turns": dto.MetricType_GAUGE,
	"warren_run_state":                   dto.MetricType_GAUGE,
}

// dims are the label each family adds to run and scenario ("" for none).
var dims = map[string]string{
	"warren_agents_by_phase":             "phase",
	"warren_agents_by_status":            "status",
	"warren_tool_calls_total":            "verdict",
	"warren_model_tokens_total":          "kind",
	"warren_lane_queued_jobs":            "lane",
	"warren_inference_pool_queued_turns": "pool",
	"warren_run_state":                   "state",
}

// expect lists every series a run should give, built independently of the collector.
func expect(r telemetry.Run) []sample {
	var out []sample
	one := func(family string, v float64) { out = append(out, sample{family, nil, v}) }
	dim := func(family, value string, v float64) {
		out = append(out, sample{family, map[string]string{dims[family]: value}, v})
	}
	for _, c := range r.AgentsByPhase {
		dim("warren_agents_by_phase", c.Name, float64(c.N))
	}
	hasRunning := false
	for _, c := range r.AgentsByStatus {
		dim("warren_agents_by_status", c.Name, float64(c.N))
		hasRunning = hasRunning || c.Name == "running"
	}
	if !hasRunning {
		dim("warren_agents_by_status", "running", 0)
	}
	one("warren_ticks_total", float64(r.Ticks))
	one("warren_trace_events_total", float64(r.Events))
	one("warren_model_turns_total", float64(r.ModelTurns))
	for _, c := range r.ToolCallsByVerdict {
		dim("warren_tool_calls_total", c.Name, float64(c.N))
	}
	one("warren_tool_errors_total", float64(r.ToolErrors))
	dim("warren_model_tokens_total", "prompt", float64(r.TokensPrompt))
	dim("warren_model_tokens_total", "completion", float64(r.TokensCompletion))
	one("warren_model_cost_usd_total", r.CostUSD)
	one("warren_prompts_open", float64(r.PromptsOpen))
	for _, c := range r.LaneQueue {
		dim("warren_lane_queued_jobs", c.Name, float64(c.N))
	}
	for _, c := range r.PoolQueue {
		dim("warren_inference_pool_queued_turns", c.Name, float64(c.N))
	}
	for _, s := range []string{"running", "paused", "ended"} {
		v := 0.0
		if s == r.State {
			v = 1
		}
		dim("warren_run_state", s, v)
	}
	for i := range out {
		labels := map[string]string{"run": r.ID, "scenario": r.Scenario}
		for k, v := range out[i].labels {
			labels[k] = v
		}
		out[i].labels = labels
	}
	return out
}

// key names a series: its family and its labels, sorted.
func key(family string, labels map[string]string) string {
	var parts []string
	for k, v := range labels {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return family + "{" + strings.Join(parts, ",") + "}"
}

// scrape gets url and parses the body as the Prometheus text format.
func scrape(t *testing.T, url string) (map[string]*dto.MetricFamily, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("Content-Type %q, want the text format", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, body)
	}
	return mfs, body
}

// check compares the warren_ families of mfs with what runs should give: every family of the
// collector present, with its type, and exactly the expected series with their values.
func check(t *testing.T, mfs map[string]*dto.MetricFamily, runs ...telemetry.Run) {
	t.Helper()
	want := map[string]float64{}
	for _, r := range runs {
		for _, s := range expect(r) {
			k := key(s.family, s.labels)
			if _, dup := want[k]; dup {
				t.Fatalf("test bug: %s expected twice", k)
			}
			want[k] = s.value
		}
	}
	got := map[string]float64{}
	for name, mf := range mfs {
		if !strings.HasPrefix(name, "warren_") {
			continue
		}
		typ, ok := families[name]
		if !ok {
			t.Errorf("unexpected family %s", name)
			continue
		}
		if mf.GetType() != typ {
			t.Errorf("%s: type %v, want %v", name, mf.GetType(), typ)
		}
		if mf.GetHelp() == "" {
			t.Errorf("%s: no help", name)
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			wantLabels := 2
			if dims[name] != "" {
				wantLabels = 3
			}
			if len(labels) != wantLabels || labels["run"] == "" || labels["scenario"] == "" ||
				(dims[name] != "" && labels[dims[name]] == "") {
				t.Errorf("%s: labels %v, want run, scenario and %q", name, labels, dims[name])
			}
			v := m.GetGauge().GetValue()
			if typ == dto.MetricType_COUNTER {
				v = m.GetCounter().GetValue()
			}
			got[key(name, labels)] = v
		}
	}
	if len(runs) > 0 {
		for name := range families {
			if mfs[name] == nil {
				t.Errorf("family %s missing", name)
			}
		}
	}
	for k, v := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("missing %s", k)
		} else if g != v {
			t.Errorf("%s = %v, want %v", k, g, v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected %s = %v", k, v)
		}
	}
}

// serve serves reg at /metrics on loopback and returns its URL.
func serve(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", telemetry.Handler(reg))
	srv := httptest.NewServer(mux) // listens on 127.0.0.1
	t.Cleanup(srv.Close)
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("server at %s, not loopback", srv.URL)
	}
	return srv.URL + "/metrics"
}

func TestScrape(t *testing.T) {
	src := &fakeSource{}
	src.set(running(), ended())
	url := serve(t, telemetry.NewRegistry(src))

	mfs, _ := scrape(t, url)
	check(t, mfs, running(), ended())
	// The registry's other collectors are there: the Go runtime, the process, the handler.
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "process_cpu_seconds_total",
		"process_resident_memory_bytes", "promhttp_metric_handler_requests_total"} {
		if mfs[name] == nil {
			t.Errorf("family %s missing", name)
		}
	}

	// The first run goes on and is paused; the one that ended keeps its final figures.
	r1 := running()
	r1.State = telemetry.StatePaused
	r1.Ticks, r1.Events, r1.ModelTurns, r1.CostUSD = 50, 1500, 95, 1.5
	r1.AgentsByStatus = []telemetry.Count{{Name: "done", N: 10}, {Name: "failed", N: 1}} // nobody running
	r1.LaneQueue = []telemetry.Count{{Name: "model", N: 0}, {Name: "tool", N: 0}}
	src.set(r1, ended())
	mfs, _ = scrape(t, url)
	check(t, mfs, r1, ended())
	if got := value(mfs, "warren_agents_by_status", "r1-people", "running"); got != 0 {
		t.Errorf("running agents after all ended: %v, want 0", got)
	}
	if got := value(mfs, "warren_run_state", "r1-people", "paused"); got != 1 {
		t.Errorf("paused state: %v, want 1", got)
	}
	if got := value(mfs, "warren_ticks_total", "r2-fanout", ""); got != 300 {
		t.Errorf("ended run's ticks: %v, want its final 300", got)
	}

	// A run the source no longer lists is no longer exported.
	src.set(ended())
	mfs, _ = scrape(t, url)
	check(t, mfs, ended())
}

// value returns the value of family's series of run with the dimension dim ("" for none).
func value(mfs map[string]*dto.MetricFamily, family, run, dim string) float64 {
	for _, m := range mfs[family].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["run"] != run || (dim != "" && labels[dims[family]] != dim) {
			continue
		}
		if m.Counter != nil {
			return m.GetCounter().GetValue()
		}
		return m.GetGauge().GetValue()
	}
	return -1
}

func TestLint(t *testing.T) {
	src := &fakeSource{}
	src.set(running(), ended())
	c := telemetry.NewCollector(src)
	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	// The whole registry too: the Go and process collectors beside it.
	problems, err = testutil.GatherAndLint(telemetry.NewRegistry(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint (registry): %s: %s", p.Metric, p.Text)
	}
	if n := testutil.CollectAndCount(c); n != len(expect(running()))+len(expect(ended())) {
		t.Errorf("%d series, want %d", n, len(expect(running()))+len(expect(ended())))
	}
}

func TestDescribe(t *testing.T) {
	c := telemetry.NewCollector(&fakeSource{})
	ch := make(chan *prometheus.Desc, 100)
	c.Describe(ch)
	close(ch)
	var got []string
	for d := range ch {
		got = append(got, d.String())
	}
	if len(got) != len(families) {
		t.Fatalf("%d descriptors, want %d:\n%s", len(got), len(families), strings.Join(got, "\n"))
	}
	for name := range families {
		if !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, `fqName: "`+name+`"`) }) {
			t.Errorf("no descriptor for %s", name)
		}
	}
}

// TestDeterministic: the same runs give the same exposition byte for byte and the same stream
// from Collect, whatever order the source lists runs and counts in.
func TestDeterministic(t *testing.T) {
	src := &fakeSource{}
	src.set(running(), ended())
	reg := prometheus.NewRegistry()
	c := telemetry.NewCollector(src)
	reg.MustRegister(c)
	// Not Handler: its promhttp_metric_handler_* metrics change with every scrape.
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)
	url := srv.URL
	_, first := scrape(t, url)
	for range 5 {
		if _, body := scrape(t, url); !bytes.Equal(body, first) {
			t.Fatalf("scrapes differ:\n%s\n---\n%s", first, body)
		}
	}
	r1 := running()
	slices.Reverse(r1.AgentsByStatus)
	slices.Reverse(r1.LaneQueue)
	src.set(ended(), r1)
	if _, body := scrape(t, url); !bytes.Equal(body, first) {
		t.Fatalf("reordered source gives another exposition:\n%s\n---\n%s", first, body)
	}

	stream := func() []string {
		ch := make(chan prometheus.Metric, 1000)
		c.Collect(ch)
		close(ch)
		var out []string
		for m := range ch {
			var pb dto.Metric
			if err := m.Write(&pb); err != nil {
				t.Fatal(err)
			}
			out = append(out, m.Desc().String()+" "+pb.String())
		}
		return out
	}
	a := stream()
	for range 5 {
		if b := stream(); !slices.Equal(a, b) {
			t.Fatalf("Collect streams differ")
		}
	}
	// In the text, families come sorted by name.
	var names []string
	for _, line := range strings.Split(string(first), "\n") {
		if name, ok := strings.CutPrefix(line, "# TYPE "); ok {
			names = append(names, strings.Fields(name)[0])
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("families not sorted: %v", names)
	}
}

// TestRobust: a source's mistakes (a run listed twice, a name twice in a list, a label that is
// not UTF-8, a state nobody knows, a negative cost) neither panic nor fail the scrape.
func TestRobust(t *testing.T) {
	r := running()
	r.ToolCallsByVerdict = append(r.ToolCallsByVerdict, telemetry.Count{Name: "allow", N: 10})
	r.Scenario = "bad\xffname"
	r.State = "starting"
	r.CostUSD = -1
	dup := running()
	dup.Ticks = 999
	src := &fakeSource{}
	src.set(r, dup)
	url := serve(t, telemetry.NewRegistry(src))
	mfs, body := scrape(t, url)
	if got := value(mfs, "warren_tool_calls_total", "r1-people", "allow"); got != 60 {
		t.Errorf("allow calls %v, want 50+10", got)
	}
	if got := value(mfs, "warren_ticks_total", "r1-people", ""); got != 42 {
		t.Errorf("ticks %v, want the first listing's 42", got)
	}
	if got := value(mfs, "warren_model_cost_usd_total", "r1-people", ""); got != 0 {
		t.Errorf("negative cost exported as %v, want 0", got)
	}
	for _, s := range []string{"running", "paused", "ended"} {
		if got := value(mfs, "warren_run_state", "r1-people", s); got != 0 {
			t.Errorf("state %s = %v, want 0", s, got)
		}
	}
	if got := value(mfs, "warren_run_state", "r1-people", "starting"); got != 1 {
		t.Errorf("state starting = %v, want 1", got)
	}
	if !strings.Contains(string(body), `scenario="bad`+"\uFFFD"+`name"`) {
		t.Errorf("scenario not made valid UTF-8:\n%s", body)
	}
	if mfs["promhttp_metric_handler_errors_total"] != nil {
		for _, m := range mfs["promhttp_metric_handler_errors_total"].GetMetric() {
			if m.GetCounter().GetValue() != 0 {
				t.Errorf("gathering errors: %v", m)
			}
		}
	}
}

func TestEmpty(t *testing.T) {
	src := &fakeSource{}
	mfs, _ := scrape(t, serve(t, telemetry.NewRegistry(src)))
	check(t, mfs)
	if src.calls != 1 {
		t.Errorf("source read %d times in a scrape, want once", src.calls)
	}
}

// TestHandlerTwice: Handler may wrap the same registry twice (two routes, a restart in tests).
func TestHandlerTwice(t *testing.T) {
	reg := telemetry.NewRegistry(&fakeSource{})
	for i := range 2 {
		rec := httptest.NewRecorder()
		telemetry.Handler(reg).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("call %d: %d", i, rec.Code)
		}
	}
}

func TestCountsOf(t *testing.T) {
	got := fmt.Sprint(telemetry.CountsOf(map[string]uint64{"tool": 2, "model": 5, "a": 0}))
	if want := "[{a 0} {model 5} {tool 2}]"; got != want {
		t.Errorf("CountsOf = %s, want %s", got, want)
	}
}
