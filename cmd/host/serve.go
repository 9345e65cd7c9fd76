package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/otelgenai"
	"github.com/warrenhq/warren/serve"
)

// serveCmd is host serve: Warren as a service (docs/api.md).
type serveCmd struct {
	Listen        string        `default:"127.0.0.1:7070" help:"The address to serve on; one beyond loopback needs --allow-remote." placeholder:"HOST:PORT"`
	AllowRemote   bool          `help:"Serve beyond loopback (put TLS in front: the token travels in every request)."`
	Token         string        `env:"WARREN_TOKEN" help:"The bearer token every request must carry (default: the one kept in the state root, made on first start)." placeholder:"TOKEN"`
	StateRoot     string        `default:"warren-serve" help:"Where each run's directory (runs/ID: trace, recording, metrics, summary) and the token are kept." placeholder:"DIR"`
	Config        string        `help:"A host config file replacing each scenario's [host]." placeholder:"FILE" type:"existingfile"`
	PromptTimeout time.Duration `default:"10m" help:"Refuse a prompt nobody answered in this long (0: wait as long as the run does)."`
	// WatcherTimeout and EventMemory bound what live-event clients cost (serve.Config).
	WatcherTimeout time.Duration `default:"10s" help:"Cut off a live-event client that has not taken a batch of events in this long."`
	EventMemory    int           `default:"256" help:"MiB of each run's events kept in memory for live clients; one that falls further behind is told so and cut off (the run's trace.jsonl keeps them all)." placeholder:"MIB"`
	// Policy and the --allow flags say what a submitted scenario may reach beyond its bundle
	// (serve.PolicyFlags; docs/api.md, "Security"): nothing by default.
	Policy       string        `help:"A serve policy file: the folders, variables, keys, hosts and origins submitted scenarios may reach beyond their bundle (docs/api.md, Security)." placeholder:"FILE" type:"existingfile"`
	AllowFolder  []string      `help:"A folder of this machine whose files submitted scenarios may name (by path, or from a bundle); repeatable." placeholder:"DIR"`
	AllowKey     []string      `help:"A variable submitted scenarios' live models may take their key from (api_key_env), optionally only for these base_url hosts; repeatable." placeholder:"NAME[=HOST,...]"`
	AllowHost    []string      `help:"A name the server answers requests for (their Host) besides loopback and the listen address: the name a proxy or a remote client uses; repeatable." placeholder:"HOST"`
	AllowOrigin  []string      `help:"An origin (scheme://host[:port]) trusted to send commands besides the server's own; repeatable." placeholder:"ORIGIN"`
	AllowPrivate []string      `help:"A host (name or address) served runs' models and MCP servers may reach although it is not public, such as a local model server; every other host is reached only at public addresses. Repeatable." placeholder:"HOST"`
	MaxConns     int           `default:"1024" help:"The most connections open at once; another waits to be accepted." placeholder:"N"`
	IdleTimeout  time.Duration `default:"30s" help:"Close a kept-alive connection that sends no request in this long."`
	ReadTimeout  time.Duration `default:"2m" help:"Close a connection whose request (an upload's body included) takes longer than this to arrive."`
}

// Run serves until the command's context ends (a signal), then cancels the runs still going,
// through their consoles so their recordings say so, and waits for them.
func (s *serveCmd) Run(e *env) error {
	log := zerolog.New(zerolog.ConsoleWriter{Out: e.stderr, NoColor: !e.isTerminal, TimeFormat: time.TimeOnly}).
		Level(zerolog.InfoLevel).With().Timestamp().Logger()
	cfg := serve.Config{Listen: s.Listen, AllowRemote: s.AllowRemote, Token: s.Token, StateRoot: s.StateRoot, PromptTimeout: s.PromptTimeout,
		WatcherTimeout: s.WatcherTimeout, EventBytes: s.EventMemory << 20, Log: log}
	if s.PromptTimeout == 0 {
		cfg.PromptTimeout = -1
	}
	if s.WatcherTimeout <= 0 || s.EventMemory < 1 || s.EventMemory > 1<<20 {
		fmt.Fprintf(e.stderr, "host: --watcher-timeout %s, --event-memory %d: want a duration above 0 and 1 to %d MiB\n", s.WatcherTimeout, s.EventMemory, 1<<20)
		return errBadInput
	}
	if s.MaxConns < 1 || s.IdleTimeout <= 0 || s.ReadTimeout <= 0 {
		fmt.Fprintf(e.stderr, "host: --max-conns %d, --idle-timeout %s, --read-timeout %s: want 1 or more and durations above 0\n", s.MaxConns, s.IdleTimeout, s.ReadTimeout)
		return errBadInput
	}
	cfg.HTTP = serve.HTTPLimits{MaxConns: s.MaxConns, IdleTimeout: s.IdleTimeout, ReadTimeout: s.ReadTimeout}
	policy, err := serve.PolicyFlags{File: s.Policy, Folders: s.AllowFolder, Keys: s.AllowKey, Hosts: s.AllowHost, Origins: s.AllowOrigin, Private: s.AllowPrivate}.Policy()
	if err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	cfg.Policy = policy
	if s.Config != "" {
		host, err := warren.LoadHostConfig(s.Config)
		if err != nil {
			fmt.Fprintf(e.stderr, "host: %v\n", err)
			return errBadInput
		}
		cfg.Host = host
	}
	// OpenTelemetry spans of every run, when the environment names a collector; flushed after
	// the runs have ended.
	spans, err := otelgenai.FromEnv(log.WithContext(e.ctx))
	if err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	defer closeSpans(spans, log)
	cfg.Spans = spans
	srv, err := serve.New(cfg)
	if err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	ln, err := net.Listen("tcp", srv.Listen())
	if err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	fmt.Fprintf(e.stdout, "dashboard: http://%s/?token=%s\n", ln.Addr(), srv.Token())
	fmt.Fprintf(e.stdout, "serving on http://%s/api/v1 (token in %s/token)\n", ln.Addr(), s.StateRoot)
	fmt.Fprintf(e.stdout, "try: curl -H 'Authorization: Bearer %s' http://%s/api/v1/runs\n", srv.Token(), ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln, srv.Site()) }()
	select {
	case err := <-errc:
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return err
	case <-e.ctx.Done():
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cerr := srv.Close(ctx)
	if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return cerr
}
