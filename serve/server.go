// Package serve is Warren as a service (host serve): a long-running host that runs many
// scenarios, each its own world through the root package, and serves them over HTTP: submit and
// list runs, watch one's agents, conversations, sub-agent tree and prompts, follow its trace live
// over Server-Sent Events (resumable from the last event id), answer its prompts, kill agents,
// pause, resume or cancel it. docs/api.md describes the API and api/openapi.yaml states it.
//
// A Server's lifecycle, in order: New validates its Config (a token, a state root, a loopback
// address unless AllowRemote); Serve serves Site (or Handler) on a listener under the connection
// limits; Submit (or POST /api/v1/runs) starts runs, each confined to what Config.Policy gives it
// (docs/api.md, "Security"); Close cancels the runs still going (each through its console, so the
// cancel is recorded) and waits for them to write their run directories; Shutdown stops serving.
package serve

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/otelgenai"
	"github.com/warrenhq/warren/runview"
)

// Files a served run's directory holds besides the run directory's own (warren.RunInDir).
const (
	// RecordingFile is the run's recording: with it, host replay runs it again offline, people's
	// answers included.
	RecordingFile = "recording.jsonl"
)

// Defaults of a Config.
const (
	DefaultListen        = "127.0.0.1:7070"
	DefaultPromptTimeout = 10 * time.Minute
	DefaultEventBytes    = 256 << 20
	// DefaultWatcherTimeout is how long a live-event client may take to accept one batch.
	DefaultWatcherTimeout = 10 * time.Second
)

// Errors a caller tests with errors.Is.
var (
	// ErrRemote: the listen address is not loopback and AllowRemote is off.
	ErrRemote = errors.New("refusing to listen beyond loopback")
	// ErrNoRun: no run has that id.
	ErrNoRun = errors.New("no such run")
	// ErrSubmit: a submission is not a runnable scenario.
	ErrSubmit = errors.New("cannot run the submission")
	// ErrNotAllowed: a submission reaches for something of the server's that its policy does
	// not give it (Config.Policy): a file outside its bundle and the allowed folders, an
	// environment variable, a key, or a key for that host (403).
	ErrNotAllowed = errors.New("not allowed by this server")
)

// Config is a server's settings.
type Config struct {
	// Listen is the address to serve on (DefaultListen when empty); one beyond loopback needs
	// AllowRemote.
	Listen      string
	AllowRemote bool
	// Token is the bearer token every request must carry (Authorization: Bearer, or ?token= for
	// a browser's EventSource and the dashboard's first load). Empty: generated and kept in
	// StateRoot/token, so it survives a restart.
	Token string
	// StateRoot is where each run's directory is made (runs/<id>) and the token kept.
	StateRoot string
	// Host replaces each scenario's own host config (host serve --config); nil keeps theirs.
	Host *hostconfig.Config
	// Policy is what a submitted scenario may reach of the server beyond its bundle: folders,
	// environment variables, keys, and the names the HTTP server answers (host serve --policy
	// and its --allow flags). nil allows nothing beyond the bundle (docs/api.md, "Security").
	Policy *hostconfig.ServePolicy
	// PromptTimeout refuses a prompt nobody answered in this long (DefaultPromptTimeout when
	// zero; negative: never).
	PromptTimeout time.Duration
	// EventBytes bounds each run's trace kept in memory for live readers (DefaultEventBytes).
	EventBytes int
	// WatcherTimeout cuts off a live-event (SSE) client that has not accepted a batch of
	// events in this long (DefaultWatcherTimeout when zero or less): a stalled client holds a
	// connection and a cursor, never the world, and not for long.
	WatcherTimeout time.Duration
	// HTTP bounds the connections Serve holds: header, body and idle timeouts, header size and
	// how many at once. A field left zero takes its Default value.
	HTTP HTTPLimits
	// Bundle bounds an uploaded bundle (POST /api/v1/runs with a zip): the upload, its entries,
	// each file and all of them unpacked. A field left zero takes its DefaultBundle value, so a
	// server never unpacks without bounds.
	Bundle BundleLimits
	// Spans, when set, exports every run's model turns and tool calls as OpenTelemetry GenAI
	// spans (otelgenai.FromEnv; host serve makes it when OTEL_EXPORTER_OTLP_ENDPOINT is set).
	// The caller closes it after Close.
	Spans *otelgenai.Exporter
	// Log receives operational logs.
	Log zerolog.Logger
}

// Server runs scenarios and serves them.
type Server struct {
	cfg  Config
	ctx  context.Context
	stop context.CancelFunc
	mu   sync.Mutex
	runs map[string]*Run
	ids  []string
	next int
	// https are the HTTP servers Serve started, for Shutdown; closing refuses new ones.
	https   []*http.Server
	closing bool
	// eventAdded, when set before a run starts (by a benchmark measuring delivery), is called on
	// the world's goroutine with each event's seq once the run's log holds it.
	eventAdded func(seq uint64)
}

// New validates cfg and returns a server with no run. The token is cfg.Token, or the one kept in
// the state root, or a new one written there (Token says which).
func New(cfg Config) (*Server, error) {
	if cfg.Listen == "" {
		cfg.Listen = DefaultListen
	}
	if err := checkListen(cfg.Listen, cfg.AllowRemote); err != nil {
		return nil, err
	}
	if cfg.StateRoot == "" {
		return nil, errors.New("serve: no state root")
	}
	if err := os.MkdirAll(filepath.Join(cfg.StateRoot, "runs"), 0o755); err != nil {
		return nil, fmt.Errorf("serve: state root: %w", err)
	}
	if cfg.PromptTimeout == 0 {
		cfg.PromptTimeout = DefaultPromptTimeout
	}
	if cfg.EventBytes <= 0 {
		cfg.EventBytes = DefaultEventBytes
	}
	if cfg.WatcherTimeout <= 0 {
		cfg.WatcherTimeout = DefaultWatcherTimeout
	}
	if cfg.Token == "" {
		tok, err := keptToken(cfg.StateRoot)
		if err != nil {
			return nil, err
		}
		cfg.Token = tok
	}
	last, err := lastRunNumber(filepath.Join(cfg.StateRoot, "runs"))
	if err != nil {
		return nil, fmt.Errorf("serve: state root: %w", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Server{cfg: cfg, ctx: ctx, stop: stop, runs: map[string]*Run{}, next: last}, nil
}

// lastRunNumber is the highest N of the run directories r<N>-<name> an earlier server left in
// runs, so a restarted server numbers its runs after them instead of colliding with them.
func lastRunNumber(runs string) (int, error) {
	entries, err := os.ReadDir(runs)
	if err != nil {
		return 0, err
	}
	last := 0
	for _, e := range entries {
		digits, _, ok := strings.Cut(strings.TrimPrefix(e.Name(), "r"), "-")
		if n, err := strconv.Atoi(digits); ok && err == nil && strings.HasPrefix(e.Name(), "r") {
			last = max(last, n)
		}
	}
	return last, nil
}

// checkListen refuses an address beyond loopback unless allowed.
func checkListen(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("serve: listen address %q: %w (valid: host:port, such as %s)", addr, err, DefaultListen)
	}
	if allowRemote {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%w: %q is not a loopback address (use 127.0.0.1 or ::1, or pass --allow-remote and put TLS in front)", ErrRemote, addr)
}

// keptToken reads the token kept in root, or makes one.
func keptToken(root string) (string, error) {
	path := filepath.Join(root, "token")
	if raw, err := os.ReadFile(path); err == nil {
		if tok := strings.TrimSpace(string(raw)); len(tok) >= 16 {
			return tok, nil
		}
		return "", fmt.Errorf("serve: %s holds no token of 16 characters or more", path)
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(b)
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("serve: keeping the token: %w", err)
	}
	return tok, nil
}

// Token is the token requests must carry.
func (s *Server) Token() string { return s.cfg.Token }

// Listen is the configured address.
func (s *Server) Listen() string { return s.cfg.Listen }

// authorized reports whether r carries the token: in its Authorization header, or, for the live
// events stream alone (a browser's EventSource cannot set headers), in its ?token= query. A token
// in an address ends up in proxies' logs, browser history and Referer headers, so no other route
// takes one there.
func (s *Server) authorized(r *http.Request) bool {
	var got string
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		got = strings.TrimPrefix(h, "Bearer ")
	} else if isEventsStream(r) {
		got = r.URL.Query().Get("token")
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.Token)) == 1
}

// isEventsStream reports whether r asks for a run's live events (GET /api/v1/runs/{id}/events).
func isEventsStream(r *http.Request) bool {
	id, ok := strings.CutPrefix(r.URL.Path, APIPrefix+"/runs/")
	if !ok || r.Method != http.MethodGet {
		return false
	}
	id, ok = strings.CutSuffix(id, "/events")
	return ok && id != "" && !strings.Contains(id, "/")
}

// Submission is a run to start from a scenario file the server can read (POST /api/v1/runs
// with a JSON body). A scenario uploaded with the files it names is a bundle: SubmitBundle.
type Submission struct {
	// File is the scenario file.
	File   string `json:"file"`
	Launch Launch `json:"launch"`
}

// Submit loads sub's scenario and starts it. A scenario that does not load is ErrSubmit, with
// the loader's file:line:key error. The file must lie in a folder the policy allows (Config.Policy:
// none by default), and so must every file it names; what else the scenario may reach is the
// policy's too (see checkLoaded). A refusal is ErrSubmit and ErrNotAllowed.
func (s *Server) Submit(sub Submission) (*Run, error) {
	if sub.File == "" {
		return nil, fmt.Errorf("%w: no scenario file", ErrSubmit)
	}
	file, err := filepath.Abs(sub.File)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSubmit, err)
	}
	params, opt, err := s.launchOptions(sub.Launch)
	if err != nil {
		return nil, err
	}
	c := s.confine("")
	if err := c.check(file); err != nil {
		return nil, fmt.Errorf("%w: file: %w", ErrSubmit, err)
	}
	sc, err := s.load(file, c, params, opt.Agents)
	if err != nil {
		return nil, err
	}
	id := s.newID(sc.Name)
	return s.start(id, filepath.Join(s.cfg.StateRoot, "runs", id), file, sc, params, opt, sub.Launch)
}

// launchOptions checks a submission's launch and turns it into the run's parameters and options,
// before anything is loaded or unpacked. A bad parameter or permission override is ErrSubmit.
func (s *Server) launchOptions(l Launch) ([]warren.Param, warren.Options, error) {
	params, err := warren.ParseParams(l.Params)
	if err != nil {
		return nil, warren.Options{}, fmt.Errorf("%w: %w", ErrSubmit, err)
	}
	launch := warren.Launch{Yolo: l.Yolo, Allow: l.Allow, Ask: l.Ask, Deny: l.Deny}
	if err := warren.CheckLaunch(launch); err != nil {
		return nil, warren.Options{}, fmt.Errorf("%w: %w", ErrSubmit, err)
	}
	return params, warren.Options{Seed: l.Seed, Agents: l.Agents, Launch: launch, Host: s.cfg.Host, Log: s.cfg.Log, PrivateHosts: s.cfg.Policy.PrivateAllowed}, nil
}

// newID numbers a new run: r<N>-<scenario name>, N counting the server's submissions.
func (s *Server) newID(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	return fmt.Sprintf("r%d-%s", s.next, name)
}

// start makes the run directory dir (which must not exist yet) and starts sc there as run id,
// file naming its scenario. The run is listed only once its directory exists, so a run that
// could not start is never listed (and never waited for by Close).
func (s *Server) start(id, dir, file string, sc *warren.Scenario, params []warren.Param, opt warren.Options, l Launch) (*Run, error) {
	timeout := s.cfg.PromptTimeout
	if timeout < 0 {
		timeout = 0
	}
	r := &Run{id: id, scenario: sc.Name, file: file, dir: dir, launch: l,
		started: time.Now().UTC(), console: warren.NewConsole(timeout), events: newEventLog(s.cfg.EventBytes),
		view: runview.New(runview.Options{}), viewDone: make(chan struct{}), done: make(chan struct{}), spans: s.cfg.Spans,
		eventAdded: s.eventAdded}
	if _, err := os.Stat(r.dir); err == nil {
		return nil, fmt.Errorf("%w: the run directory %s exists already", ErrSubmit, r.dir)
	}
	if l.Paused {
		// Held before its first tick: a new console has not ended, so this cannot fail.
		_ = r.console.Pause()
	}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.runs[id] = r
	s.ids = append(s.ids, id)
	s.mu.Unlock()
	r.start(s.ctx, sc, opt, params)
	s.cfg.Log.Info().Str("run", id).Str("scenario", file).Msg("run started")
	return r, nil
}

// Run returns the run with that id.
func (s *Server) Run(id string) (*Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNoRun, id)
	}
	return r, nil
}

// Runs returns every run, in the order they were submitted.
func (s *Server) Runs() []*Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Run, len(s.ids))
	for i, id := range s.ids {
		out[i] = s.runs[id]
	}
	return out
}

// Close cancels every run still going, through its console (recorded, so its recording replays),
// and waits for all of them to end, or for ctx.
func (s *Server) Close(ctx context.Context) error {
	runs := s.Runs()
	for _, r := range runs {
		_ = r.console.Cancel("server shutdown")
	}
	for _, r := range runs {
		select {
		case <-r.done:
		case <-ctx.Done():
			s.stop()
			return ctx.Err()
		}
	}
	s.stop()
	return nil
}
