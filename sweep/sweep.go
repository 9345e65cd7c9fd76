package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/internal/version"
)

// The files of a sweep directory besides its runs.
const (
	// ManifestFile is the sweep's manifest: the scenario, the grid and the seeds.
	ManifestFile = "sweep.json"
	// ResultsFile is the results table: a row per run, its parameters, seed, status and the
	// metrics of its run table (metrics/run.csv).
	ResultsFile = "results.csv"
)

// ManifestFormat and ManifestVersion identify a sweep's manifest.
const (
	ManifestFormat  = "warren-sweep"
	ManifestVersion = 1
)

// ErrOtherSweep means the sweep directory holds another sweep: another scenario (by content), grid,
// seeds or agent count. A resume must be the same sweep.
var ErrOtherSweep = errors.New("the directory holds another sweep")

// Spec is a sweep to carry out.
type Spec struct {
	// Scenario is the scenario file; Host, when set, the host config its runs are compiled under
	// (host sweep --config).
	Scenario string
	Host     *warren.HostConfig
	// Axes are the grid's parameters, Seeds the seeds every point of it runs with.
	Axes  []Axis
	Seeds []uint64
	// Agents, when positive, rescales every run (host run --agents).
	Agents int
	// Parallel is how many runs go at once (at least 1).
	Parallel int
	// Dir is the sweep directory.
	Dir string
	// Log receives operational logs of the runs.
	Log zerolog.Logger
	// Progress, when set, hears of every run as it ends or is skipped, from the sweep's
	// goroutines one at a time.
	Progress func(Outcome)
}

// Manifest is sweep.json: what the sweep is, so that a rerun into the same directory can tell it
// resumes the same sweep, and a reader (host report) knows the grid.
type Manifest struct {
	Format       string   `json:"format"`
	Version      int      `json:"version"`
	Scenario     string   `json:"scenario"`
	ScenarioFile string   `json:"scenario_file"`
	ScenarioHash string   `json:"scenario_hash"`
	Params       []Axis   `json:"params"`
	Seeds        []uint64 `json:"seeds"`
	Agents       int      `json:"agents,omitempty"`
	Runs         int      `json:"runs"`
	HostVersion  string   `json:"host_version"`
}

// Outcome is what became of one run.
type Outcome struct {
	Run
	// Status is the run's status (warren.RunFinished, …), or "error" when it could not be run
	// (Err says why); Skipped says it had finished in an earlier sweep.
	Status  string
	Err     error
	Skipped bool
	// Failures are the expectations the run failed: its summary's, or for a skipped run those
	// its summary.json lists.
	Failures []string
	// Summary is the run's summary (nil when skipped or when it could not run); Elapsed the wall
	// time it took.
	Summary *warren.Summary
	Elapsed time.Duration
}

// Done reports whether the run finished (a fixed point or its tick limit): what a resume keeps.
func (o Outcome) Done() bool { return finishedStatus(o.Status) }

func finishedStatus(s string) bool { return s == warren.RunFinished || s == warren.RunTickLimit }

// Report is what a sweep did.
type Report struct {
	Manifest Manifest
	Outcomes []Outcome
}

// Open plans the sweep and makes its directory, or reopens it when it holds the same sweep (a
// resume): the scenario with the same content, the same grid, seeds and agent count.
func Open(spec Spec) (Manifest, []Run, error) {
	runs, err := Plan(spec.Axes, spec.Seeds)
	if err != nil {
		return Manifest{}, nil, err
	}
	sc, err := warren.LoadUnder(spec.Scenario, spec.Host)
	if err != nil {
		return Manifest{}, nil, err
	}
	m := Manifest{Format: ManifestFormat, Version: ManifestVersion, Scenario: sc.Name, ScenarioFile: spec.Scenario,
		ScenarioHash: sc.Hash, Params: spec.Axes, Seeds: spec.Seeds, Agents: spec.Agents, Runs: len(runs), HostVersion: version.Warren}
	if m.Params == nil {
		m.Params = []Axis{}
	}
	path := filepath.Join(spec.Dir, ManifestFile)
	if data, err := os.ReadFile(path); err == nil {
		var old Manifest
		if err := json.Unmarshal(data, &old); err != nil {
			return Manifest{}, nil, fmt.Errorf("%s: %w", path, err)
		}
		if why := differs(old, m); why != "" {
			return Manifest{}, nil, fmt.Errorf("%w in %s: %s; give a new directory, or the same scenario, --param, --seeds and --agents to resume it", ErrOtherSweep, spec.Dir, why)
		}
		return old, runs, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return Manifest{}, nil, err
	}
	if entries, err := os.ReadDir(spec.Dir); err == nil && len(entries) > 0 {
		return Manifest{}, nil, fmt.Errorf("%w: %s holds files and no %s: give a new or empty directory", ErrOtherSweep, spec.Dir, ManifestFile)
	}
	if err := os.MkdirAll(spec.Dir, 0o755); err != nil {
		return Manifest{}, nil, err
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return Manifest{}, nil, err
	}
	return m, runs, os.WriteFile(path, append(data, '\n'), 0o644)
}

// differs says how the sweep old differs from the sweep m ("" when they are the same sweep).
func differs(old, m Manifest) string {
	switch {
	case old.Format != m.Format || old.Version != m.Version:
		return fmt.Sprintf("its %s is %s version %d", ManifestFile, old.Format, old.Version)
	case old.ScenarioHash != m.ScenarioHash:
		return fmt.Sprintf("it ran %s (%s), and %s now has other content (%s)", old.ScenarioFile, old.ScenarioHash, m.ScenarioFile, m.ScenarioHash)
	case !slices.EqualFunc(old.Params, m.Params, func(a, b Axis) bool { return a.Name == b.Name && slices.Equal(a.Values, b.Values) }):
		return fmt.Sprintf("its grid is %v, this one %v", old.Params, m.Params)
	case !slices.Equal(old.Seeds, m.Seeds):
		return fmt.Sprintf("its seeds are %v, these %v", old.Seeds, m.Seeds)
	case old.Agents != m.Agents:
		return fmt.Sprintf("it ran %d agents, this one %d", old.Agents, m.Agents)
	}
	return ""
}

// Carry runs the sweep spec under ctx: Open, then every run that has not finished (in plan order,
// spec.Parallel at a time), then the results table. A run that did not finish in an earlier
// sweep, or failed to run, is run again from nothing; one that finished is skipped. Cancelling
// ctx stops the runs at the end of their tick (they are run again by the next sweep) and starts
// no more. The error is about the sweep itself (a bad spec, another sweep in the directory, the
// results table); what became of each run is in the report.
func Carry(ctx context.Context, spec Spec) (*Report, error) {
	m, runs, err := Open(spec)
	if err != nil {
		return nil, err
	}
	rep := &Report{Manifest: m, Outcomes: make([]Outcome, len(runs))}
	var pending []int
	for i, r := range runs {
		rep.Outcomes[i] = Outcome{Run: r}
		if st, failures, ok := finishedRun(filepath.Join(spec.Dir, r.Dir)); ok {
			rep.Outcomes[i].Status, rep.Outcomes[i].Skipped, rep.Outcomes[i].Failures = st, true, failures
			if spec.Progress != nil {
				spec.Progress(rep.Outcomes[i])
			}
			continue
		}
		pending = append(pending, i)
	}
	cells := &cellCache{spec: spec, loaded: map[int]*loaded{}}
	var mu sync.Mutex // serialises Progress
	work := make(chan int)
	var wg sync.WaitGroup
	for range max(spec.Parallel, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if ctx.Err() != nil {
					// The feed's select may still hand out a run once ctx ended: start no more.
					continue
				}
				o := runOne(ctx, spec, cells, rep.Outcomes[i].Run)
				rep.Outcomes[i] = o
				if spec.Progress != nil {
					mu.Lock()
					spec.Progress(o)
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for _, i := range pending {
		select {
		case work <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	for _, i := range pending {
		if rep.Outcomes[i].Status == "" {
			rep.Outcomes[i].Status, rep.Outcomes[i].Err = warren.RunInterrupted, context.Cause(ctx)
		}
	}
	if err := WriteResults(spec.Dir, m, runs); err != nil {
		return rep, err
	}
	return rep, nil
}

// finishedRun reports whether the run directory dir holds a finished run, with its status and
// the expectations it failed.
func finishedRun(dir string) (string, []string, bool) {
	data, err := os.ReadFile(filepath.Join(dir, warren.RunSummaryFile))
	if err != nil {
		return "", nil, false
	}
	var s struct {
		Status   string   `json:"status"`
		Failures []string `json:"expectations_failed"`
	}
	if json.Unmarshal(data, &s) != nil || !finishedStatus(s.Status) {
		return s.Status, nil, false
	}
	return s.Status, s.Failures, true
}

// loaded is a grid point's scenario, loaded once for all its seeds.
type loaded struct {
	once sync.Once
	sc   *warren.Scenario
	err  error
}

// cellCache loads each grid point's scenario on first use.
type cellCache struct {
	spec   Spec
	mu     sync.Mutex
	loaded map[int]*loaded
}

func (c *cellCache) get(r Run) (*warren.Scenario, error) {
	c.mu.Lock()
	l := c.loaded[r.Cell]
	if l == nil {
		l = &loaded{}
		c.loaded[r.Cell] = l
	}
	c.mu.Unlock()
	l.once.Do(func() { l.sc, l.err = warren.LoadParams(c.spec.Scenario, c.spec.Host, r.Params) })
	return l.sc, l.err
}

// runOne carries out one run into its directory, from nothing.
func runOne(ctx context.Context, spec Spec, cells *cellCache, r Run) (o Outcome) {
	o.Run = r
	start := time.Now()
	defer func() { o.Elapsed = time.Since(start) }()
	dir := filepath.Join(spec.Dir, r.Dir)
	if err := os.RemoveAll(dir); err != nil {
		o.Status, o.Err = "error", err
		return o
	}
	sc, err := cells.get(r)
	if err != nil {
		o.Status, o.Err = "error", err
		return o
	}
	seed := r.Seed
	opt := warren.Options{Seed: &seed, Agents: spec.Agents, Log: spec.Log}
	sum, err := warren.RunInDir(ctx, sc, opt, dir, r.Params)
	o.Summary = sum
	if sum != nil {
		o.Failures = sum.Failures
	}
	switch {
	case sum == nil:
		o.Status, o.Err = "error", err
	default:
		o.Status, o.Err = sum.Status, err
		if err == nil && sum.Err != nil && !finishedStatus(sum.Status) {
			o.Err = sum.Err
		}
	}
	return o
}
