package serve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/otelgenai"
	"github.com/warrenhq/warren/runview"
	"github.com/warrenhq/warren/telemetry"
)

// Run states, RunInfo.State.
const (
	// StateRunning: the world ticks (or waits for people).
	StateRunning = "running"
	// StatePaused: a person paused it.
	StatePaused = "paused"
	// StateEnded: it ended; RunInfo.Status says how (the trace's end status).
	StateEnded = "ended"
)

// Launch is what a submission may change about a run, as host run's flags do.
type Launch struct {
	// Seed replaces the scenario's seed; Agents rescales its groups to this many agents.
	Seed   *uint64 `json:"seed,omitempty"`
	Agents int     `json:"agents,omitempty"`
	// Params are NAME=VALUE overrides of the scenario's [params] or key paths (host run --param).
	Params []string `json:"params,omitempty"`
	// Allow, Ask and Deny add launch permission overrides; Yolo allows every tool.
	Allow []string `json:"allow,omitempty"`
	Ask   []string `json:"ask,omitempty"`
	Deny  []string `json:"deny,omitempty"`
	Yolo  bool     `json:"yolo,omitempty"`
	// Paused starts the run held before its first tick, as if a person had paused it at once:
	// watchers attach (and a test sees every event live) before anything happens; resume it
	// with POST /api/v1/runs/{id}/resume.
	Paused bool `json:"paused,omitempty"`
}

// Run is one scenario the server runs: its own world, its run directory, the people's console,
// its trace as it is written and the view built from it.
type Run struct {
	id       string
	scenario string
	file     string
	dir      string
	launch   Launch
	started  time.Time
	console  *warren.Console
	cancel   context.CancelFunc
	events   *eventLog
	view     *runview.View
	viewDone chan struct{}
	done     chan struct{}

	mu      sync.Mutex
	summary *warren.Summary
	err     error
	// viewErr is why the view stopped following the trace (a bug, or a run that fell behind).
	viewErr error
	// spans exports the run's GenAI spans (nil: none).
	spans *otelgenai.Exporter
	// queues are the world's lane and pool queues at the end of its last tick (Prometheus).
	queues warren.TickStats
	// watchers counts the SSE streams open on the run.
	watchers atomic.Int32
	// eventAdded is Server.eventAdded.
	eventAdded func(seq uint64)
}

// RunInfo is a run as the API lists it.
type RunInfo struct {
	ID       string    `json:"id"`
	Scenario string    `json:"scenario"`
	File     string    `json:"file"`
	Dir      string    `json:"dir"`
	Launch   Launch    `json:"launch"`
	Started  time.Time `json:"started"`
	State    string    `json:"state"`
	// Status is the trace's end status once the run ended (finished, interrupted, failed,
	// tick_limit); Error why it did not finish.
	Status string `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
	// Tick and Events are how far it got; Agents how many it has had; Prompts how many wait for
	// people now.
	Tick    uint64 `json:"tick"`
	Events  uint64 `json:"events"`
	Agents  int    `json:"agents"`
	Prompts int    `json:"prompts"`
	// Watchers is how many clients follow its live events now.
	Watchers int `json:"watchers"`
}

// Info returns the run as the API lists it.
func (r *Run) Info() RunInfo {
	p := r.view.Progress()
	info := RunInfo{ID: r.id, Scenario: r.scenario, File: r.file, Dir: r.dir, Launch: r.launch, Started: r.started,
		State: StateRunning, Tick: uint64(max(p.LastTick, 0)), Events: uint64(max(p.Events, 0)), Agents: r.view.Counts().Agents,
		Prompts: len(r.console.Prompts()), Watchers: int(r.watchers.Load())}
	if r.console.Paused() {
		info.State = StatePaused
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.summary != nil || r.err != nil {
		info.State = StateEnded
		if r.summary != nil {
			info.Status = r.summary.Status
			if r.summary.Err != nil {
				info.Error = r.summary.Err.Error()
			}
		}
		if r.err != nil {
			info.Error = r.err.Error()
		}
	}
	if r.viewErr != nil {
		info.Error = r.viewErr.Error()
	}
	return info
}

// start runs sc in its own goroutine, its run directory at r.dir.
func (r *Run) start(ctx context.Context, sc *warren.Scenario, opt warren.Options, params []warren.Param) {
	ctx, r.cancel = context.WithCancel(ctx)
	opt.Console = r.console
	add := r.events.add
	if hook := r.eventAdded; hook != nil {
		add = func(line []byte) { r.events.add(line); hook(r.events.last()) }
	}
	opt.Events = r.spans.Tap(r.id, r.scenario, add)
	opt.Timeline = r.tick
	go r.follow()
	go func() {
		defer close(r.done)
		defer r.events.end()
		sum, err := r.run(ctx, sc, opt, params)
		r.mu.Lock()
		r.summary, r.err = sum, err
		r.mu.Unlock()
	}()
}

// tick keeps the queue depths of the tick that just ended, for a scrape to read (on the world's
// goroutine: it only copies).
func (r *Run) tick(s warren.TickStats) {
	r.mu.Lock()
	r.queues = warren.TickStats{ModelLaneWaiting: s.ModelLaneWaiting, ToolLaneWaiting: s.ToolLaneWaiting, Pools: s.Pools}
	r.mu.Unlock()
}

// queueDepths returns the queues of the run's last tick as Prometheus counts: both lanes always,
// every pool by name.
func (r *Run) queueDepths() (lanes, pools []telemetry.Count) {
	r.mu.Lock()
	q := r.queues
	r.mu.Unlock()
	lanes = []telemetry.Count{{Name: "model", N: int64(q.ModelLaneWaiting)}, {Name: "tool", N: int64(q.ToolLaneWaiting)}}
	for _, p := range q.Pools {
		pools = append(pools, telemetry.Count{Name: p.Pool, N: int64(p.Queued)})
	}
	return lanes, pools
}

// run runs sc in the run directory, with its recording beside the directory's own files.
func (r *Run) run(ctx context.Context, sc *warren.Scenario, opt warren.Options, params []warren.Param) (*warren.Summary, error) {
	d, err := warren.OpenRunDir(r.dir, sc, &opt)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	opt.Trace = &headerTap{w: opt.Trace, log: r.events}
	rec, err := os.Create(filepath.Join(r.dir, RecordingFile))
	if err != nil {
		return nil, err
	}
	defer rec.Close()
	// Named by its absolute path: the recording's header names the scenario relative to it.
	opt.Record, opt.RecordFile = rec, rec.Name()
	rt, err := warren.New(sc, opt)
	if err != nil {
		return nil, err
	}
	sum, err := rt.Run(ctx)
	if sum == nil {
		return nil, err
	}
	if cerr := rec.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if ferr := d.Finish(rt, sum, params, rec.Name()); ferr != nil && err == nil {
		err = ferr
	}
	return sum, err
}

// follow feeds the run's view from its event log until the log ends.
func (r *Run) follow() {
	defer close(r.viewDone)
	var after uint64
	header := false
	for {
		if !header {
			h := r.events.head()
			if h == nil {
				_, _, grew, ended, _ := r.events.read(0, 0)
				if ended {
					return
				}
				<-grew
				continue
			}
			if err := r.view.Apply(h); err != nil {
				r.setViewErr(err)
				return
			}
			header = true
		}
		events, next, grew, ended, behind := r.events.read(after, 4096)
		if behind {
			r.setViewErr(errors.New("the view fell behind the events kept in memory"))
			return
		}
		for _, e := range events {
			if err := r.view.Apply(e.line()); err != nil {
				r.setViewErr(err)
				return
			}
		}
		after = next
		if ended && len(events) == 0 {
			return
		}
		if len(events) == 0 {
			<-grew
		}
	}
}

func (r *Run) setViewErr(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.viewErr = fmt.Errorf("the run's view: %w", err)
}

// Summary returns the run's summary, nil while it runs.
func (r *Run) Summary() *warren.Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.summary
}

// Done is closed when the run ended and its files are written.
func (r *Run) Done() <-chan struct{} { return r.done }
