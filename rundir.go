package warren

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/warrenhq/warren/internal/version"
	"github.com/warrenhq/warren/metrics"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/report"
	"github.com/warrenhq/warren/scenarios"
	"github.com/warrenhq/warren/table"
)

// The files of a run directory (host run --out, each run of a sweep): what host report, host
// trace export and a researcher's own tools read. docs/research.md describes each.
const (
	// RunTraceFile is the run's trace.
	RunTraceFile = "trace.jsonl"
	// RunTimelineFile has a row per tick: the agents by phase at its end, those finished, the
	// trace's events so far, and the wall time.
	RunTimelineFile = "timeline.csv"
	// RunGraphFile holds the stage graphs of the run's blueprints, every edge with what it fires on.
	RunGraphFile = "graph.json"
	// RunMetricsDir holds the metrics tables (metrics.Schema), one CSV file each.
	RunMetricsDir = "metrics"
	// RunSummaryFile is the run's summary, written last: a directory without it holds a run that
	// did not end (a sweep runs such a cell again).
	RunSummaryFile = "summary.json"
	// RunManifestFile is what a run needs to be made again: the scenario's hash, the seed, the
	// parameters, the host's version, the models, the inputs by hash.
	RunManifestFile = "manifest.json"
)

// ManifestFormat and ManifestVersion identify a run directory's manifest.
const (
	ManifestFormat  = "warren-run"
	ManifestVersion = 1
)

// ErrRunDir marks a run directory that cannot be used: it holds files already, or cannot be made
// or written.
var ErrRunDir = errors.New("run directory")

// Param gives one value of a scenario another value for a run (LoadParams, a sweep's --param):
// a parameter of its [params] by name, or any string, number or boolean the file sets, by its
// key path ("limits.max_ticks", "groups.voters.count").
type Param = scenarios.Param

// ErrParam marks a parameter that names no value of the scenario, or gives it a value of another
// kind.
var ErrParam = scenarios.ErrParam

// LoadParams loads the scenario at path, under host (nil: its own [host]), with params applied to
// its text: each replaces its key's value in its own kind, so errors still name the file's lines
// and the scenario's hash covers the values given.
func LoadParams(path string, host *HostConfig, params []Param) (*Scenario, error) {
	return scenarios.LoadParams(path, KnownTools(), host, nil, params)
}

// LoadOptions are how LoadWith loads a scenario: LoadParams's host and params, and for a host
// running other people's scenarios (host serve) two guards of its own machine.
type LoadOptions struct {
	Host   *HostConfig
	Params []Param
	// Confine, when set, is asked about every file, folder and MCP server program the scenario
	// and its blueprints name, before any of them is opened or started; its error refuses the
	// path and is reported at the key naming it (scenarios.LoadOptions.Confine).
	Confine func(path string) error
	// Keys, when set, is where live models look up their api_key_env instead of the process
	// environment: a variable it does not give leaves the model without a key.
	Keys func(name string) (string, bool)
	// PrivateHosts, when set, makes the live models reach only public addresses, except the
	// hosts it reports true for (scenarios.LoadOptions.PrivateHosts): host serve's guard against
	// a submitted base_url reaching the server's own network.
	PrivateHosts func(host string) bool
}

// LoadWith is LoadParams with LoadOptions.
func LoadWith(path string, o LoadOptions) (*Scenario, error) {
	return scenarios.LoadWithOptions(path, scenarios.LoadOptions{KnownTools: KnownTools(), Host: o.Host, Params: o.Params, Confine: o.Confine, Keys: o.Keys, PrivateHosts: o.PrivateHosts})
}

// ParseParams reads parameters written name=value (host run --param, a served run's launch),
// each name at most once.
func ParseParams(flags []string) ([]Param, error) {
	var out []Param
	for _, f := range flags {
		name, value, ok := strings.Cut(f, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("%w: %q: write name=value (a [params] name or a key path such as limits.max_ticks)", ErrParam, f)
		}
		for _, p := range out {
			if p.Name == name {
				return nil, fmt.Errorf("%w: %s is given twice", ErrParam, name)
			}
		}
		out = append(out, Param{Name: name, Value: value})
	}
	return out, nil
}

// Manifest is a run's reproducibility record (manifest.json): with the same scenario files (by
// hash), parameters, seed, host version and recording, a run is made again; the trace's hash says
// whether it was.
type Manifest struct {
	Format       string `json:"format"`
	Version      int    `json:"version"`
	Scenario     string `json:"scenario"`
	ScenarioFile string `json:"scenario_file,omitempty"`
	// ScenarioHash is the trace header's: the content of every file the scenario uses, then what
	// the command line changed.
	ScenarioHash string          `json:"scenario_hash"`
	Seed         uint64          `json:"seed"`
	FaultsSeed   *uint64         `json:"faults_seed,omitempty"`
	Clock        string          `json:"clock"`
	Agents       int             `json:"agents"`
	Params       []Param         `json:"params,omitempty"`
	HostVersion  string          `json:"host_version"`
	GoVersion    string          `json:"go_version"`
	Models       []ManifestModel `json:"models"`
	Inputs       []ManifestInput `json:"inputs"`
	// Recording names the recording written beside the run (host run --record), with its hash.
	Recording       string `json:"recording,omitempty"`
	RecordingSHA256 string `json:"recording_sha256,omitempty"`
	Trace           string `json:"trace"`
	TraceSHA256     string `json:"trace_sha256"`
}

// ManifestModel is a model the run's agents may use: its id as the trace gives it, and for a
// live model its provider and the provider's model name.
type ManifestModel struct {
	ID       string `json:"id"`
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
}

// ManifestInput is a file the run read from outside the scenario file itself (a blueprint, a
// script tool, a policy, the host config, a group's input files), by content hash. Path is
// relative to the scenario file's folder when it lies under it.
type ManifestInput struct {
	Path   string `json:"path"`
	What   string `json:"what"`
	SHA256 string `json:"sha256"`
}

// RunDir writes a run directory: OpenRunDir makes it and points the run's trace and timeline at
// it, Finish writes the rest once the run ended. A RunDir serves one run.
type RunDir struct {
	dir      string
	sc       *Scenario
	opt      *Options
	trace    *os.File
	samples  []TickStats
	finished bool
}

// OpenRunDir makes dir, which must not exist or be empty, for a run of sc under opt: the run's
// trace goes to dir/trace.jsonl (opt.Trace must be nil, and opt.State nil: a state directory
// keeps its own trace) and its timeline is kept for timeline.csv (an opt.Timeline already set is
// called too).
func OpenRunDir(dir string, sc *Scenario, opt *Options) (*RunDir, error) {
	if opt.Trace != nil || opt.State != nil {
		return nil, fmt.Errorf("%w %s: the run directory keeps the run's trace, so the run can have no other trace or state directory", ErrRunDir, dir)
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("%w %s holds files already (%s): give a new or empty directory", ErrRunDir, dir, entries[0].Name())
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w %s: %w", ErrRunDir, dir, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, RunMetricsDir), 0o755); err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrRunDir, dir, err)
	}
	f, err := os.Create(filepath.Join(dir, RunTraceFile))
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrRunDir, dir, err)
	}
	d := &RunDir{dir: dir, sc: sc, opt: opt, trace: f}
	opt.Trace = f
	if opt.TraceFile == "" {
		// As a path from where the run is made (a recording's header names it relative to its own
		// folder), not the bare name, which would read as a file in the working directory.
		opt.TraceFile = filepath.Join(dir, RunTraceFile)
	}
	prev := opt.Timeline
	opt.Timeline = func(s TickStats) {
		d.samples = append(d.samples, s)
		if prev != nil {
			prev(s)
		}
	}
	return d, nil
}

// Dir is the run directory's path.
func (d *RunDir) Dir() string { return d.dir }

// Close closes the trace file if Finish has not; a run that could not start leaves the directory
// with its trace file only.
func (d *RunDir) Close() error {
	if d.finished {
		return nil
	}
	d.finished = true
	return d.trace.Close()
}

// Finish writes what the run left for research once rt's run returned sum: it closes the trace,
// then writes the timeline, the stage graphs, the metrics tables (computed from the trace and
// the timeline), the manifest and, last, the summary. params are the values a sweep gave the
// run; recording names the recording written beside it ("" for none).
func (d *RunDir) Finish(rt *Runtime, sum *Summary, params []Param, recording string) error {
	if d.finished {
		return fmt.Errorf("%w %s: finished already", ErrRunDir, d.dir)
	}
	d.finished = true
	if err := d.trace.Close(); err != nil {
		return fmt.Errorf("%w %s: the trace: %w", ErrRunDir, d.dir, err)
	}
	steps := []struct {
		what string
		fn   func() error
	}{
		{RunTimelineFile, d.writeTimeline},
		{RunGraphFile, d.writeGraphs},
		{RunMetricsDir, d.writeMetrics},
		{RunManifestFile, func() error { return d.writeManifest(rt, params, recording) }},
		{RunSummaryFile, func() error { return d.writeSummary(sum) }},
	}
	for _, s := range steps {
		if err := s.fn(); err != nil {
			return fmt.Errorf("%w %s: %s: %w", ErrRunDir, d.dir, s.what, err)
		}
	}
	return nil
}

// create writes the file name of the directory through fill, then closes it.
func (d *RunDir) create(name string, fill func(w io.Writer) error) error {
	f, err := os.Create(filepath.Join(d.dir, name))
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	if err := fill(bw); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeJSON writes v, indented, into the file name.
func (d *RunDir) writeJSON(name string, v any) error {
	return d.create(name, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	})
}

// writeTimeline writes timeline.csv: tick, wall_ms, the phases, finished, events.
func (d *RunDir) writeTimeline() error {
	return d.create(RunTimelineFile, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		header := append([]string{"tick", "wall_ms"}, PhaseNames[:len(PhaseNames)-1]...)
		if err := cw.Write(append(header, "finished", "events")); err != nil {
			return err
		}
		row := make([]string, 0, len(header)+2)
		for _, s := range d.samples {
			row = append(row[:0], strconv.FormatUint(s.Tick, 10), strconv.FormatFloat(float64(s.Wall.Microseconds())/1000, 'f', 3, 64))
			// The terminal phase is left out: reap ends those agents within the tick, so it is
			// always empty at a tick's end; finished counts them.
			for _, n := range s.Phases[:len(s.Phases)-1] {
				row = append(row, strconv.Itoa(n))
			}
			row = append(row, strconv.Itoa(s.Finished), strconv.FormatUint(s.Events, 10))
			if err := cw.Write(row); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	})
}

// writeGraphs writes graph.json: every blueprint of the scenario, by key.
func (d *RunDir) writeGraphs() error {
	var out []report.GraphBlueprint
	for _, key := range slices.Sorted(maps.Keys(d.sc.Blueprints)) {
		bp := d.sc.Blueprints[key]
		g := report.GraphBlueprint{Blueprint: bp.Name, Key: key, Entry: bp.Stages[bp.Entry].Name, Edges: []report.GraphEdge{}}
		for i := range bp.Stages {
			g.Stages = append(g.Stages, bp.Stages[i].Name)
		}
		for _, e := range bp.Edges() {
			ge := report.GraphEdge{From: bp.Stages[e.From].Name, End: e.End.String()}
			if e.To >= 0 {
				ge.To = bp.Stages[e.To].Name
			}
			if e.Transition >= 0 {
				t := &bp.Stages[e.From].Transitions[e.Transition]
				ge.On = t.On.String()
				if t.When != nil {
					ge.When = t.When.Source
				}
			} else {
				ge.On = e.Outcome.String()
			}
			g.Edges = append(g.Edges, ge)
		}
		out = append(out, g)
	}
	return d.writeJSON(RunGraphFile, out)
}

// writeMetrics computes the metrics tables from the trace and the timeline and writes each.
func (d *RunDir) writeMetrics() error {
	f, err := os.Open(filepath.Join(d.dir, RunTraceFile))
	if err != nil {
		return err
	}
	defer f.Close()
	samples := make([]metrics.Sample, len(d.samples))
	for i, s := range d.samples {
		samples[i] = metrics.Sample{Tick: s.Tick, WallNanos: s.Wall.Nanoseconds()}
	}
	tables, err := metrics.FromTrace(bufio.NewReaderSize(f, 1<<20), samples)
	if err != nil {
		return err
	}
	for _, t := range tables {
		if err := d.create(filepath.Join(RunMetricsDir, t.Name+table.CSV.Ext()), func(w io.Writer) error {
			return table.Write(w, table.CSV, t)
		}); err != nil {
			return err
		}
	}
	return nil
}

// writeManifest writes manifest.json.
func (d *RunDir) writeManifest(rt *Runtime, params []Param, recording string) error {
	sc := d.sc
	m := Manifest{Format: ManifestFormat, Version: ManifestVersion, Scenario: sc.Name, ScenarioFile: sc.Path,
		ScenarioHash: rt.hash, Seed: rt.seed, Clock: sc.Clock.Mode.String(), Agents: rt.total, Params: params,
		HostVersion: version.Warren, GoVersion: runtime.Version(), Models: manifestModels(sc), Inputs: []ManifestInput{},
		Trace: RunTraceFile}
	if rt.set.Faults != nil {
		fs := rt.set.Faults.Seed()
		m.FaultsSeed = &fs
	}
	var err error
	if m.TraceSHA256, err = fileHash(filepath.Join(d.dir, RunTraceFile)); err != nil {
		return err
	}
	if recording != "" {
		m.Recording = recording
		if m.RecordingSHA256, err = fileHash(recording); err != nil {
			return err
		}
	}
	for _, in := range sc.Inputs() {
		sum, err := fileHash(in.Path)
		if err != nil {
			return err
		}
		m.Inputs = append(m.Inputs, ManifestInput{Path: relativeTo(sc.Dir, in.Path), What: in.What, SHA256: sum})
	}
	return d.writeJSON(RunManifestFile, m)
}

// manifestModels lists every model the scenario's groups, their stages and its [spawn] entries
// name, each once, sorted by id.
func manifestModels(sc *Scenario) []ManifestModel {
	seen := map[string]ManifestModel{}
	add := func(m models.Model) {
		if m == nil {
			return
		}
		mm := ManifestModel{ID: m.ID()}
		if lm, ok := m.(models.Live); ok {
			spec := lm.Spec()
			mm.Provider, mm.Model = spec.Provider, spec.Model
		}
		seen[mm.ID] = mm
	}
	for i := range sc.Groups {
		add(sc.Groups[i].Model)
		for _, sm := range sc.Groups[i].StageModels {
			add(sm.Model)
		}
	}
	for _, sp := range sc.Spawn {
		add(sp.Model)
		for _, sm := range sp.StageModels {
			add(sm.Model)
		}
	}
	out := make([]ManifestModel, 0, len(seen))
	for _, id := range slices.Sorted(maps.Keys(seen)) {
		out = append(out, seen[id])
	}
	return out
}

// summaryJSON is summary.json: the run's outcome and counts, and its throughput.
type summaryJSON struct {
	Scenario       string         `json:"scenario"`
	Seed           uint64         `json:"seed"`
	Clock          string         `json:"clock"`
	Status         string         `json:"status"`
	Stop           string         `json:"stop"`
	Error          string         `json:"error,omitempty"`
	Ticks          uint64         `json:"ticks"`
	Agents         int            `json:"agents"`
	Spawned        int            `json:"spawned"`
	ByStatus       map[string]int `json:"by_status"`
	ModelTurns     uint64         `json:"model_turns"`
	ToolCalls      uint64         `json:"tool_calls"`
	ToolErrors     uint64         `json:"tool_errors"`
	TraceEvents    uint64         `json:"trace_events"`
	Tokens         int64          `json:"tokens"`
	CostUSD        string         `json:"cost_usd"`
	Models         []summaryModel `json:"models"`
	ElapsedSeconds float64        `json:"elapsed_s"`
	StepsPerSecond float64        `json:"steps_per_s"`
	Expectations   []string       `json:"expectations_failed"`
}

// summaryModel is one model's line of summary.json.
type summaryModel struct {
	ID      string `json:"id"`
	Turns   uint64 `json:"turns"`
	Failed  uint64 `json:"failed"`
	Tokens  int64  `json:"tokens"`
	CostUSD string `json:"cost_usd"`
}

// writeSummary writes summary.json.
func (d *RunDir) writeSummary(sum *Summary) error {
	s := summaryJSON{Scenario: sum.Scenario, Seed: sum.Seed, Clock: sum.Clock, Status: sum.Status, Stop: sum.Stop.String(),
		Ticks: sum.Ticks, Agents: sum.Agents, Spawned: sum.Spawned, ByStatus: map[string]int{}, ModelTurns: sum.ModelTurns,
		ToolCalls: sum.ToolCalls, ToolErrors: sum.ToolErrors, TraceEvents: sum.TraceEvents, Tokens: sum.Spend.Tokens.Total(),
		CostUSD: Dollars(sum.Spend.Cost), Models: []summaryModel{}, ElapsedSeconds: sum.Elapsed.Seconds(),
		StepsPerSecond: sum.StepsPerSecond(), Expectations: append([]string{}, sum.Failures...)}
	if sum.Err != nil {
		s.Error = sum.Err.Error()
	}
	for k, n := range sum.ByStatus {
		s.ByStatus[Status(k).String()] = n
	}
	for _, m := range sum.Models {
		s.Models = append(s.Models, summaryModel{ID: m.ID, Turns: m.Turns, Failed: m.Failed, Tokens: m.Spend.Tokens.Total(),
			CostUSD: Dollars(m.Spend.Cost)})
	}
	return d.writeJSON(RunSummaryFile, s)
}

// fileHash is the SHA-256 of a file's content, as "sha256:<hex>".
func fileHash(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// relativeTo names path relative to dir when it lies under it, so that a manifest does not
// depend on where the scenario's folder is; otherwise as given.
func relativeTo(dir, path string) string {
	abs, err1 := filepath.Abs(path)
	base, err2 := filepath.Abs(dir)
	if err1 != nil || err2 != nil {
		return path
	}
	if rel, err := filepath.Rel(base, abs); err == nil && filepath.IsLocal(rel) {
		return filepath.ToSlash(rel)
	}
	return path
}

// RunInDir runs sc like Run, keeping the run directory dir (OpenRunDir, RunDir.Finish): its
// trace, timeline, stage graphs, metrics, manifest and summary. params go into the manifest.
func RunInDir(ctx context.Context, sc *Scenario, opt Options, dir string, params []Param) (*Summary, error) {
	d, err := OpenRunDir(dir, sc, &opt)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	rt, err := New(sc, opt)
	if err != nil {
		return nil, err
	}
	sum, err := rt.Run(ctx)
	if sum == nil {
		return nil, err
	}
	if ferr := d.Finish(rt, sum, params, opt.RecordFile); ferr != nil && err == nil {
		err = ferr
	}
	return sum, err
}
