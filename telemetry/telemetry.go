// Package telemetry exports the runs of a Warren service (host serve) as Prometheus metrics, so
// an operator can watch many runs from one dashboard and alert on them (a queue that grows, a
// run that spends, prompts nobody answers) without polling the JSON API run by run.
//
// The figures are not kept here: a [Collector] reads a snapshot of every run from a [Source] at
// each scrape and turns it into constant metrics. The run's read model (its runview.View of the
// trace, its console, its lanes and pools) stays the one place a figure is counted, a scrape
// costs one snapshot per run and nothing at all between scrapes, and a run that has ended keeps
// exporting its final figures for as long as the Source lists it.
//
// # Use
//
//	reg := telemetry.NewRegistry(server)            // server implements Source
//	mux.Handle("GET /metrics", telemetry.Handler(reg))
//
// # Metrics
//
// Every series carries the labels run (the run's id) and scenario; dimensioned ones add one
// more label (phase, status, verdict, kind, lane, pool, state).
//
//	name                                  type     extra label  what
//	warren_agents_by_phase                gauge    phase        agents in each phase (terminal included)
//	warren_agents_by_status               gauge    status       agents by status (running, done, failed, killed...)
//	warren_ticks_total                    counter               ticks the world has run
//	warren_trace_events_total             counter               events the trace has written
//	warren_model_turns_total              counter               model turns
//	warren_tool_calls_total               counter  verdict      tool calls by permission verdict
//	warren_tool_errors_total              counter               tool results that were errors
//	warren_model_tokens_total             counter  kind         tokens of model turns (prompt, completion)
//	warren_model_cost_usd_total           counter               cost of model turns in US dollars
//	warren_prompts_open                   gauge                 prompts waiting for a person
//	warren_lane_queued_jobs               gauge    lane         jobs waiting in a worker lane (model, tool)
//	warren_inference_pool_queued_turns    gauge    pool         model turns waiting in an inference pool
//	warren_run_state                      gauge    state        1 for the run's state, 0 for the others
package telemetry

import (
	"cmp"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/warrenhq/warren/runview"
)

// Run states, Run.State. They are the service's own (serve.StateRunning...), repeated here
// because package serve imports this one; warren_run_state has a series for each of them, so a
// state a run is not in reads 0 rather than vanishing.
const (
	StateRunning = "running"
	StatePaused  = "paused"
	StateEnded   = "ended"
)

// States lists the run states warren_run_state always exports, in that order: a fixed set of
// series per run lets a query like `warren_run_state{state="paused"} == 1` see a state end.
var States = []string{StateRunning, StatePaused, StateEnded}

// Token kinds, the kind label of warren_model_tokens_total: a prompt token and a completion
// token are priced differently, so they are counted apart.
const (
	TokensPrompt     = "prompt"
	TokensCompletion = "completion"
)

// Count is a number of things under a name (a phase, a status, a verdict, a lane, a pool). It is
// runview.Count, so the lists of a runview.Counts (ByPhase, ByStatus, ToolCallsByVerdict) pass
// into a Run as they are, in the order the view keeps.
type Count = runview.Count

// Source is what the collector reads: the service's runs. Runs is called once at each scrape,
// from the HTTP handler's goroutine while the runs go on, so it must be safe to call
// concurrently with them and cheap (a snapshot of each run's read model, not a walk over its
// agents). A run should stay listed after it ends, so its final figures can still be scraped.
type Source interface {
	Runs() []Run
}

// Run is one run's figures at the moment of a scrape. Counters (ticks, events, turns, tool
// calls and errors, tokens, cost) are cumulative since the run started and never go down;
// the others are current values. A run is identified by ID: if Runs lists an ID twice, only the
// first is exported (two series with the same labels would fail the scrape).
//
// In a list of Counts each name should appear once; a name given twice is exported once, with
// the sum, for the same reason. The order of a list does not matter to the output, which the
// registry sorts.
type Run struct {
	// ID is the run's id (label run); Scenario its scenario's name (label scenario).
	ID       string
	Scenario string
	// State is the run's state: StateRunning, StatePaused or StateEnded.
	State string

	// AgentsByPhase counts the agents in each phase (runview.Counts.ByPhase: every phase, zeros
	// included). AgentsByStatus counts them by status (runview.Counts.ByStatus); the status
	// "running" is always exported, 0 when absent, since the view drops a status nobody has and
	// a live-agents gauge must fall to 0 when a run ends, not stop at its last value.
	AgentsByPhase  []Count
	AgentsByStatus []Count

	// Ticks is how many ticks the world has run; Events how many events the trace has written.
	Ticks  uint64
	Events uint64

	// ModelTurns counts the model turns; ToolCallsByVerdict the tool calls by permission verdict
	// (runview.Counts.ToolCallsByVerdict); ToolErrors the tool results that were errors.
	ModelTurns         uint64
	ToolCallsByVerdict []Count
	ToolErrors         uint64

	// TokensPrompt and TokensCompletion are the model turns' prompt and completion tokens.
	TokensPrompt     uint64
	TokensCompletion uint64
	// CostUSD is the model turns' cost in US dollars (runview.Counts.CostUSD, parsed).
	CostUSD float64

	// PromptsOpen is how many prompts wait for a person now.
	PromptsOpen int

	// LaneQueue is, for each of the world's worker lanes (model, tool), how many jobs wait in
	// it now; PoolQueue, for each inference pool, how many model turns wait to be sent. List
	// every lane and pool, idle ones with 0, so that a queue that empties reads 0.
	LaneQueue []Count
	PoolQueue []Count
}

// Collector is a prometheus.Collector of a Source's runs: at each Collect it takes one snapshot
// and makes constant metrics of it. Nothing is stored between scrapes, so it needs no locking
// and a run the Source stops listing stops being exported.
type Collector struct {
	src Source

	agentsByPhase, agentsByStatus     *prometheus.Desc
	ticks, events                     *prometheus.Desc
	modelTurns, toolCalls, toolErrors *prometheus.Desc
	tokens, cost, promptsOpen         *prometheus.Desc
	laneQueue, poolQueue, state       *prometheus.Desc
	descs                             []*prometheus.Desc
}

// NewCollector returns a Collector reading src at each scrape. Register it with a
// prometheus.Registry (NewRegistry does, with the Go and process collectors).
func NewCollector(src Source) *Collector {
	c := &Collector{src: src}
	desc := func(name, help, dim string) *prometheus.Desc {
		labels := []string{"run", "scenario"}
		if dim != "" {
			labels = append(labels, dim)
		}
		d := prometheus.NewDesc(name, help, labels, nil)
		c.descs = append(c.descs, d)
		return d
	}
	c.agentsByPhase = desc("warren_agents_by_phase", "Agents of the run in each phase, terminal included.", "phase")
	c.agentsByStatus = desc("warren_agents_by_status", "Agents of the run by status: running while live, then how they ended.", "status")
	c.ticks = desc("warren_ticks_total", "Ticks the run's world has run.", "")
	c.events = desc("warren_trace_events_total", "Events the run's trace has written.", "")
	c.modelTurns = desc("warren_model_turns_total", "Model turns the run's agents have taken.", "")
	c.toolCalls = desc("warren_tool_calls_total", "Tool calls of the run by permission verdict.", "verdict")
	c.toolErrors = desc("warren_tool_errors_total", "Tool results of the run that were errors.", "")
	c.tokens = desc("warren_model_tokens_total", "Tokens of the run's model turns, by kind (prompt, completion).", "kind")
	c.cost = desc("warren_model_cost_usd_total", "Cost of the run's model turns in US dollars.", "")
	c.promptsOpen = desc("warren_prompts_open", "Prompts of the run waiting for a person.", "")
	c.laneQueue = desc("warren_lane_queued_jobs", "Jobs waiting in each of the run's worker lanes.", "lane")
	c.poolQueue = desc("warren_inference_pool_queued_turns", "Model turns waiting to be sent in each of the run's inference pools.", "pool")
	c.state = desc("warren_run_state", "1 for the run's current state (running, paused, ended), 0 for the others.", "state")
	return c
}

// Describe sends the descriptors of every metric the Collector exports, so that the registry
// checks each scrape's metrics against them (a checked collector).
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect reads the Source once and sends every run's metrics, runs in the Source's order and,
// within a run, metrics in a fixed order, so the same snapshot always gives the same stream.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	seen := map[string]bool{}
	for _, r := range c.src.Runs() {
		if seen[r.ID] {
			continue
		}
		seen[r.ID] = true
		c.collectRun(ch, &r)
	}
}

// collectRun sends one run's metrics.
func (c *Collector) collectRun(ch chan<- prometheus.Metric, r *Run) {
	run, scenario := labelValue(r.ID), labelValue(r.Scenario)
	send := func(d *prometheus.Desc, t prometheus.ValueType, v float64, dim ...string) {
		values := append([]string{run, scenario}, dim...)
		m, err := prometheus.NewConstMetric(d, t, v, values...)
		if err != nil {
			// Not reachable with the label values made valid above; should it be, the scrape
			// reports the error instead of the process panicking in the collector's goroutine.
			m = prometheus.NewInvalidMetric(d, err)
		}
		ch <- m
	}
	counts := func(d *prometheus.Desc, t prometheus.ValueType, cs []Count, always ...string) {
		for _, n := range merge(cs, always...) {
			send(d, t, float64(n.N), n.Name)
		}
	}
	counts(c.agentsByPhase, prometheus.GaugeValue, r.AgentsByPhase)
	counts(c.agentsByStatus, prometheus.GaugeValue, r.AgentsByStatus, runview.StatusRunning)
	send(c.ticks, prometheus.CounterValue, float64(r.Ticks))
	send(c.events, prometheus.CounterValue, float64(r.Events))
	send(c.modelTurns, prometheus.CounterValue, float64(r.ModelTurns))
	counts(c.toolCalls, prometheus.CounterValue, r.ToolCallsByVerdict)
	send(c.toolErrors, prometheus.CounterValue, float64(r.ToolErrors))
	send(c.tokens, prometheus.CounterValue, float64(r.TokensPrompt), TokensPrompt)
	send(c.tokens, prometheus.CounterValue, float64(r.TokensCompletion), TokensCompletion)
	cost := r.CostUSD
	if math.IsNaN(cost) || cost < 0 {
		cost = 0 // a counter never goes below 0; a cost that does is a bug upstream, not spend
	}
	send(c.cost, prometheus.CounterValue, cost)
	send(c.promptsOpen, prometheus.GaugeValue, float64(r.PromptsOpen))
	counts(c.laneQueue, prometheus.GaugeValue, r.LaneQueue)
	counts(c.poolQueue, prometheus.GaugeValue, r.PoolQueue)
	states := States
	if !slices.Contains(States, r.State) {
		states = append(slices.Clip(States), r.State)
	}
	for _, s := range states {
		v := 0.0
		if s == r.State {
			v = 1
		}
		send(c.state, prometheus.GaugeValue, v, labelValue(s))
	}
}

// merge returns cs with each name once (the sum of its counts, at its first place) and each of
// always present (0 if absent), its names made valid label values.
func merge(cs []Count, always ...string) []Count {
	out := make([]Count, 0, len(cs)+len(always))
	at := make(map[string]int, len(cs)+len(always))
	add := func(name string, n int64) {
		name = labelValue(name)
		if i, ok := at[name]; ok {
			out[i].N += n
			return
		}
		at[name] = len(out)
		out = append(out, Count{Name: name, N: n})
	}
	for _, n := range cs {
		add(n.Name, n.N)
	}
	for _, name := range always {
		add(name, 0)
	}
	return out
}

// labelValue makes s a valid label value: the exposition is UTF-8, and an id or a scenario name
// that is not must not make the collector fail (NewConstMetric refuses it).
func labelValue(s string) string {
	return strings.ToValidUTF8(s, "\uFFFD")
}

// NewRegistry returns a registry holding a Collector of src and the standard Go runtime and
// process collectors (go_*, process_*), which tell a host's memory, goroutines and CPU apart
// from what its runs do. It is a registry of its own rather than prometheus.DefaultRegisterer,
// so that two servers in one process (tests) do not collide.
func NewRegistry(src Source) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(src),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Handler serves reg's metrics in the exposition format a scraper asks for (Prometheus text by
// default), as promhttp.Handler does for the default registry: with
// promhttp_metric_handler_requests_total and _requests_in_flight about the scrapes themselves,
// and promhttp_metric_handler_errors_total counting gathering errors. A gathering error does not
// fail the scrape (promhttp.ContinueOnError): what could be gathered is served, so one bad
// series does not blind the dashboard to every run. It may be called more than once with the
// same registry.
func Handler(reg *prometheus.Registry) http.Handler {
	return promhttp.InstrumentMetricHandler(reg, promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      reg,
	}))
}

// CountsOf returns m as Counts sorted by name: for a Source that keeps a figure in a map (queue
// depths by lane or pool), a list in a stable order without writing the loop each time.
func CountsOf[N ~int | ~int64 | ~uint64](m map[string]N) []Count {
	cs := make([]Count, 0, len(m))
	for name, n := range m {
		cs = append(cs, Count{Name: name, N: int64(n)})
	}
	slices.SortFunc(cs, func(a, b Count) int { return cmp.Compare(a.Name, b.Name) })
	return cs
}
