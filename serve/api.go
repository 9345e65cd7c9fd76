package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/gzhttp"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/dashboard"
	"github.com/warrenhq/warren/operator"
	"github.com/warrenhq/warren/report"
	"github.com/warrenhq/warren/runview"
	"github.com/warrenhq/warren/telemetry"
)

// APIPrefix is the path every API route starts with.
const APIPrefix = "/api/v1"

// Routes lists every route the API serves, method and pattern: the handler registers exactly
// these, and a test checks api/openapi.json and docs/api.md state them all.
var Routes = []string{
	"GET " + APIPrefix + "/runs",
	"POST " + APIPrefix + "/runs",
	"GET " + APIPrefix + "/runs/{id}",
	"GET " + APIPrefix + "/runs/{id}/metrics",
	"GET " + APIPrefix + "/runs/{id}/agents",
	"GET " + APIPrefix + "/runs/{id}/agent",
	"GET " + APIPrefix + "/runs/{id}/tree",
	"GET " + APIPrefix + "/runs/{id}/prompts",
	"POST " + APIPrefix + "/runs/{id}/answer",
	"POST " + APIPrefix + "/runs/{id}/kill",
	"POST " + APIPrefix + "/runs/{id}/pause",
	"POST " + APIPrefix + "/runs/{id}/resume",
	"POST " + APIPrefix + "/runs/{id}/cancel",
	"GET " + APIPrefix + "/runs/{id}/events",
	"GET " + APIPrefix + "/runs/{id}/trace",
	"GET " + APIPrefix + "/diff",
}

// MetricsRoute serves every run's figures in the Prometheus text format (telemetry); it takes the
// token like the API (a scraper sends it from its authorization.credentials_file).
const MetricsRoute = "GET /metrics"

// Handler serves the API and /metrics. Every request must be for this server (its Host), come
// from no other site's page when it changes anything (its Origin), and carry the token; a request
// that fails one is refused before its body is read (guard, api).
func (s *Server) Handler() http.Handler { return s.guard(s.api()) }

// api serves the API and /metrics to requests that carry the token.
func (s *Server) api() http.Handler {
	mux := http.NewServeMux()
	handlers := map[string]http.HandlerFunc{
		Routes[0]:  s.listRuns,
		Routes[1]:  s.submit,
		Routes[2]:  s.withRun(s.getRun),
		Routes[3]:  s.withRun(s.metrics),
		Routes[4]:  s.withRun(s.agents),
		Routes[5]:  s.withRun(s.agent),
		Routes[6]:  s.withRun(s.tree),
		Routes[7]:  s.withRun(s.prompts),
		Routes[8]:  s.withRun(s.answer),
		Routes[9]:  s.withRun(s.kill),
		Routes[10]: s.withRun(s.pause),
		Routes[11]: s.withRun(s.resume),
		Routes[12]: s.withRun(s.cancelRun),
		Routes[13]: s.withRun(s.events),
		Routes[14]: s.withRun(s.tracePage),
		Routes[15]: s.diff,
	}
	for _, route := range Routes {
		h := http.Handler(handlers[route])
		if route != Routes[13] {
			// JSON answers are gzipped for clients that accept it (a browser does): the
			// metrics of a long run, an agents page, a trace page shrink several times. The
			// live events are not: a compressor would hold them back.
			h = gzhttp.GzipHandler(h)
		}
		mux.Handle(route, h)
	}
	mux.Handle(MetricsRoute, telemetry.Handler(telemetry.NewRegistry(telemetrySource{s})))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="warren"`)
			refuseConn(w, http.StatusUnauthorized, errors.New("a valid token is required (Authorization: Bearer TOKEN; ?token=TOKEN on the live events stream only)"))
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// Site serves everything host serve does: the API under /api/v1 and /metrics, which take the
// token (Handler), and the dashboard at every other path, whose files hold no data and so need
// none (the page calls the API with the token it was opened with: /?token=TOKEN). Host and
// Origin are checked for every path, as Handler does.
func (s *Server) Site() http.Handler {
	api := s.api()
	page := dashboard.Handler(report.EChartsJS())
	return s.guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" || r.URL.Path == APIPrefix || strings.HasPrefix(r.URL.Path, APIPrefix+"/") {
			api.ServeHTTP(w, r)
			return
		}
		page.ServeHTTP(w, r)
	}))
}

// runHandler is a handler of one run's routes.
type runHandler func(w http.ResponseWriter, r *http.Request, run *Run)

func (s *Server) withRun(h runHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		run, err := s.Run(r.PathValue("id"))
		if err != nil {
			writeError(w, http.StatusNotFound, err)
			return
		}
		h(w, r, run)
	}
}

// apiError is an error as the API returns it.
type apiError struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, apiError{Error: err.Error()})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// readJSON decodes the request body into v, refusing unknown fields.
func readJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("the request body: %w", err)
	}
	return nil
}

func (s *Server) listRuns(w http.ResponseWriter, _ *http.Request) {
	runs := s.Runs()
	out := make([]RunInfo, len(runs))
	for i, r := range runs {
		out[i] = r.Info()
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) submit(w http.ResponseWriter, r *http.Request) {
	if kind, boundary := bundleKind(r); kind != "" {
		s.submitBundle(w, r, kind, boundary)
		return
	}
	var sub Submission
	if err := readJSON(r, &sub); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	run, err := s.Submit(sub)
	if err != nil {
		status := http.StatusInternalServerError
		switch {
		case errors.Is(err, ErrNotAllowed):
			status = http.StatusForbidden
		case errors.Is(err, ErrSubmit):
			status = http.StatusUnprocessableEntity
		}
		writeError(w, status, err)
		return
	}
	writeJSON(w, http.StatusCreated, run.Info())
}

// RunDetail is one run: its listing, the view's counts and, once it ended, its summary's figures.
type RunDetail struct {
	RunInfo
	Counts runview.Counts `json:"counts"`
	// Failures are the expectations that failed and the prompts nobody could answer.
	Failures []string `json:"failures,omitempty"`
}

func (s *Server) getRun(w http.ResponseWriter, _ *http.Request, run *Run) {
	d := RunDetail{RunInfo: run.Info(), Counts: run.view.Counts()}
	if sum := run.Summary(); sum != nil {
		d.Failures = sum.Failures
	}
	writeJSON(w, http.StatusOK, d)
}

// Metrics is what the dashboard charts: counts, the stage graph as traced and the per-tick
// series.
type Metrics struct {
	Counts runview.Counts   `json:"counts"`
	Graph  runview.Graph    `json:"graph"`
	Series []runview.Sample `json:"series"`
}

func (s *Server) metrics(w http.ResponseWriter, _ *http.Request, run *Run) {
	writeJSON(w, http.StatusOK, Metrics{Counts: run.view.Counts(), Graph: run.view.Graph(), Series: run.view.Series()})
}

// intParam reads an integer query parameter (def when absent).
func intParam(r *http.Request, name string, def int64) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("query parameter %s=%q: want a whole number of 0 or more", name, v)
	}
	return n, nil
}

func (s *Server) agents(w http.ResponseWriter, r *http.Request, run *Run) {
	after, err := intParam(r, "after", 0)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	limit, err := intParam(r, "limit", 0)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	q := r.URL.Query()
	writeJSON(w, http.StatusOK, run.view.Agents(runview.AgentQuery{Phase: q.Get("phase"), Group: q.Get("group"),
		Status: q.Get("status"), NamePrefix: q.Get("prefix"), After: after, Limit: int(limit)}))
}

func (s *Server) agent(w http.ResponseWriter, r *http.Request, run *Run) {
	name := r.URL.Query().Get("name")
	d, ok := run.view.Agent(name)
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Errorf("run %s has no agent named %q", run.id, name))
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) tree(w http.ResponseWriter, r *http.Request, run *Run) {
	after, err := intParam(r, "after", 0)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	limit, err := intParam(r, "limit", 0)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	page, ok := run.view.Tree(runview.TreeQuery{Parent: r.URL.Query().Get("parent"), After: after, Limit: int(limit)})
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Errorf("run %s has no agent named %q", run.id, r.URL.Query().Get("parent")))
		return
	}
	writeJSON(w, http.StatusOK, page)
}

func (s *Server) prompts(w http.ResponseWriter, _ *http.Request, run *Run) {
	writeJSON(w, http.StatusOK, run.console.Prompts())
}

// Answer is a person's answer to a prompt (POST …/answer).
type Answer struct {
	Agent  string `json:"agent"`
	CallID string `json:"call_id"`
	// Answer is deny, once, stage or run for an approval; the reply for a question.
	Answer string `json:"answer"`
	// By names the person (recorded with the answer).
	By string `json:"by,omitempty"`
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request, run *Run) {
	var a Answer
	if err := readJSON(r, &a); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	writeCommand(w, run.console.Answer(a.Agent, a.CallID, a.Answer, a.By))
}

// Kill names the agent to kill with its subtree (POST …/kill).
type Kill struct {
	Agent string `json:"agent"`
	By    string `json:"by,omitempty"`
}

func (s *Server) kill(w http.ResponseWriter, r *http.Request, run *Run) {
	var k Kill
	if err := readJSON(r, &k); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if _, ok := run.view.Agent(k.Agent); !ok {
		writeError(w, http.StatusNotFound, fmt.Errorf("run %s has no agent named %q", run.id, k.Agent))
		return
	}
	writeCommand(w, run.console.Kill(k.Agent, k.By))
}

func (s *Server) pause(w http.ResponseWriter, _ *http.Request, run *Run) {
	writeCommand(w, run.console.Pause())
}

func (s *Server) resume(w http.ResponseWriter, _ *http.Request, run *Run) {
	writeCommand(w, run.console.Resume())
}

func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request, run *Run) {
	writeCommand(w, run.console.Cancel(r.URL.Query().Get("by")))
}

// Accepted is the answer to a command: the world applies it at its next tick.
type Accepted struct {
	Accepted bool      `json:"accepted"`
	At       time.Time `json:"at"`
}

// writeCommand answers a command the console took (202) or refused.
func writeCommand(w http.ResponseWriter, err error) {
	switch {
	case err == nil:
		writeJSON(w, http.StatusAccepted, Accepted{Accepted: true, At: time.Now().UTC()})
	case errors.Is(err, operator.ErrNoPrompt):
		writeError(w, http.StatusNotFound, err)
	case errors.Is(err, operator.ErrBadAnswer):
		writeError(w, http.StatusUnprocessableEntity, err)
	case errors.Is(err, operator.ErrEnded):
		writeError(w, http.StatusConflict, err)
	default:
		writeError(w, http.StatusBadRequest, err)
	}
}

// TracePage is a page of a run's trace events as kept in memory (the trace viewer's).
type TracePage struct {
	// Header is the trace's header line; Events the events after After, in seq order.
	Header json.RawMessage   `json:"header"`
	Events []json.RawMessage `json:"events"`
	// Next is the After of the next page (the seq of the last event here), First the oldest
	// seq still kept, Ended whether the trace is complete and this page reaches its end.
	Next  uint64 `json:"next"`
	First uint64 `json:"first"`
	Ended bool   `json:"ended"`
}

func (s *Server) tracePage(w http.ResponseWriter, r *http.Request, run *Run) {
	after, err := intParam(r, "after", 0)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	limit, err := intParam(r, "limit", 200)
	if err != nil || limit == 0 || limit > 5000 {
		writeError(w, http.StatusBadRequest, fmt.Errorf("query parameter limit: want 1 to 5000"))
		return
	}
	events, next, _, ended, behind := run.events.read(uint64(after), int(limit))
	if behind {
		writeError(w, http.StatusGone, fmt.Errorf("events after %d are no longer kept in memory (the oldest kept is %d); the run directory's trace.jsonl has them all", after, run.events.firstKept()))
		return
	}
	page := TracePage{Header: run.events.head(), Events: make([]json.RawMessage, len(events)), Next: next, First: run.events.firstKept(), Ended: ended}
	for i, e := range events {
		page.Events[i] = e.line()
	}
	writeJSON(w, http.StatusOK, page)
}

// Diff is the first difference between two runs' traces (host trace diff).
type Diff struct {
	// Same is true when the traces are identical; Report shows the first difference; Notes say
	// what either trace lacks (a run still going has no end event).
	Same   bool     `json:"same"`
	Report string   `json:"report"`
	Notes  []string `json:"notes,omitempty"`
}

func (s *Server) diff(w http.ResponseWriter, r *http.Request) {
	a, err := s.Run(r.URL.Query().Get("a"))
	if err != nil {
		writeError(w, http.StatusNotFound, err)
		return
	}
	b, err := s.Run(r.URL.Query().Get("b"))
	if err != nil {
		writeError(w, http.StatusNotFound, err)
		return
	}
	report, notes, err := warren.CompareTraces(filepath.Join(a.dir, warren.RunTraceFile), filepath.Join(b.dir, warren.RunTraceFile))
	if err != nil {
		writeError(w, http.StatusConflict, err)
		return
	}
	writeJSON(w, http.StatusOK, Diff{Same: report == "", Report: report, Notes: notes})
}
