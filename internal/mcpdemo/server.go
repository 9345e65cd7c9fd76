// Package mcpdemo is Warren's own MCP server, built with mcp-go: a small set of deterministic
// tools (a shared key-value store, echo, a cancellable sleep) plus fault injectors (crash,
// garbage, big) that let host tests exercise every failure a real MCP server can show, and that
// shipped scenarios use as a shared tool server. Three ways run it:
//
//	go run ./cmd/mcpserver [--transport stdio|http] [--listen ADDR] [--name NAME] [--log-level LEVEL]
//	host mcp serve [same flags]
//	command = "@demo" in an [[mcp_servers]] entry: the host re-executes its own binary as the server
//
// In stdio mode it speaks newline-delimited JSON-RPC on stdin/stdout. In http mode it serves
// streamable HTTP at /mcp and prints "listening http://HOST:PORT/mcp" as the first line of
// stdout, so a caller can start it on port 0 and learn the address. Logs go to stderr only.
//
// With --hostile it serves hostile.go's server instead, which abuses its client (a reply as
// large as asked, tool lists as long and fat as told), for the tests of the bounds the client
// holds a server to.
//
// Exit codes: 0 clean shutdown (stdin closed, or SIGINT/SIGTERM); 1 a runtime failure; 2 bad
// usage; 3 the crash tool was called.
package mcpdemo

import (
	"context"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/alecthomas/kong"
	"github.com/mark3labs/mcp-go/server"
	"github.com/rs/zerolog"

	"github.com/warrenhq/warren/mcp/mcpconfig"
)

// Exit codes other than ExitCrash (see tools.go).
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// serverVersion is reported in the initialize result.
const serverVersion = "0.1.0"

// endpointPath is where the streamable HTTP endpoint is mounted.
const endpointPath = "/mcp"

// shutdownGrace bounds how long HTTP mode waits for in-flight requests on SIGINT/SIGTERM.
const shutdownGrace = 5 * time.Second

// cli is the command line.
type cli struct {
	Transport string `enum:"stdio,http" default:"stdio" help:"Transport: stdio or http (streamable HTTP)."`
	Listen    string `default:"127.0.0.1:0" help:"Address to listen on in http mode; port 0 picks a free port."`
	Name      string `default:"warren-test" help:"Server name reported in the initialize result."`
	LogLevel  string `enum:"trace,debug,info,warn,error,disabled" default:"info" help:"Log level; logs go to stderr."`
	Persist   bool   `help:"Keep the key-value store in the data folder the host gives (WARREN_MCP_DATA, as kv.jsonl), so that it outlives the process: a restart, or a resumed run's reconnect (in memory when there is none)."`
	// Hostile mode (hostile.go): for tests of what a client reads of a server that abuses it.
	Hostile     bool `help:"Serve hostile mode instead: tools flood {bytes} (a reply of that many bytes, up to 1 GiB, streamed) and echo {text}, plus --tools fillers."`
	Tools       int  `help:"Hostile mode: how many filler tools to list besides flood and echo." default:"0"`
	PageSize    int  `help:"Hostile mode: tools per tools/list page (0: one page)." default:"0"`
	SchemaBytes int  `help:"Hostile mode: pad each filler tool's input schema by this many bytes." default:"0"`
}

// Main parses args and serves until the transport ends; it returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var opts cli
	parser, err := kong.New(&opts,
		kong.Name("mcpserver"),
		kong.Description("Warren's MCP test server."),
		kong.Writers(stdout, stderr),
	)
	if err != nil {
		fmt.Fprintf(stderr, "mcpserver: %v\n", err)
		return exitFailure
	}
	if _, err := parser.Parse(args); err != nil {
		fmt.Fprintf(stderr, "mcpserver: %v\n", err)
		return exitUsage
	}
	level, err := zerolog.ParseLevel(opts.LogLevel)
	if err != nil {
		fmt.Fprintf(stderr, "mcpserver: %v\n", err)
		return exitUsage
	}
	log := zerolog.New(stderr).Level(level).With().Timestamp().Str("server", opts.Name).Logger()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if opts.Hostile {
		h := hostileOptions{name: opts.Name, tools: max(opts.Tools, 0), pageSize: max(opts.PageSize, 0), schemaBytes: max(opts.SchemaBytes, 0)}
		if opts.Transport == "http" {
			err = serveHostileHTTP(ctx, h, opts.Listen, stdout)
		} else {
			err = serveHostileStdio(ctx, h, stdin, stdout)
		}
		if err != nil {
			log.Error().Err(err).Msg("hostile server failed")
			return exitFailure
		}
		return exitOK
	}

	kv := newKVStore()
	if opts.Persist {
		dir := os.Getenv(mcpconfig.DataEnv)
		if dir == "" {
			// The host asking for the tool list (a scenario's load) gives no data folder.
			log.Info().Msgf("--persist: no data folder in %s, so the store lives in memory", mcpconfig.DataEnv)
		} else if kv, err = openKVStore(filepath.Join(dir, "kv.jsonl")); err != nil {
			fmt.Fprintf(stderr, "mcpserver: --persist: %v\n", err)
			return exitFailure
		}
	}
	mcpServer := newMCPServer(opts.Name, serverVersion, kv, log)
	if opts.Transport == "http" {
		err = serveHTTP(ctx, mcpServer, opts.Listen, stdout, log)
	} else {
		err = serveStdio(ctx, mcpServer, stdin, stdout, log)
	}
	if err != nil {
		log.Error().Err(err).Msg("server failed")
		return exitFailure
	}
	return exitOK
}

// lockedWriter serialises whole writes to stdout, so a garbage line never lands inside a JSON-RPC
// message that mcp-go is writing concurrently (mcp-go issues one Write per message).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// Write implements io.Writer under the lock.
func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// serveStdio serves one client on stdin/stdout until stdin closes or ctx ends.
func serveStdio(ctx context.Context, mcpServer *server.MCPServer, stdin io.Reader, stdout io.Writer, log zerolog.Logger) error {
	out := &lockedWriter{w: stdout}
	emit := garbageEmitter(func() error {
		_, err := io.WriteString(out, GarbageLine)
		return err
	})
	stdio := server.NewStdioServer(mcpServer)
	stdio.SetErrorLogger(newStdLogger(log))
	stdio.SetContextFunc(func(ctx context.Context) context.Context {
		return withGarbageEmitter(ctx, emit)
	})
	log.Info().Msg("serving stdio")
	if err := stdio.Listen(ctx, stdin, out); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("stdio: %w", err)
	}
	return nil
}

// newStdLogger adapts log for mcp-go's stdio error logger, which takes a standard *log.Logger.
func newStdLogger(log zerolog.Logger) *stdlog.Logger {
	return stdlog.New(log.With().Str("component", "mcp-go").Logger(), "", 0)
}

// serveHTTP serves streamable HTTP on addr until ctx ends, announcing the bound URL on stdout.
func serveHTTP(ctx context.Context, mcpServer *server.MCPServer, addr string, stdout io.Writer, log zerolog.Logger) error {
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	streamable := server.NewStreamableHTTPServer(mcpServer, server.WithEndpointPath(endpointPath))
	mux := http.NewServeMux()
	mux.Handle(endpointPath, garbageMiddleware(streamable))
	httpServer := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	url := fmt.Sprintf("http://%s%s", listener.Addr(), endpointPath)
	if err := announce(stdout, url); err != nil {
		_ = listener.Close()
		return fmt.Errorf("announce address: %w", err)
	}
	log.Info().Str("url", url).Msg("serving streamable HTTP")

	served := make(chan error, 1)
	go func() { served <- httpServer.Serve(listener) }()
	select {
	case err := <-served:
		return fmt.Errorf("http: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := httpServer.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("http shutdown: %w", err)
	}
	return nil
}

// garbageMiddleware gives each request a garbageEmitter that, once called, makes the response
// body non-JSON whatever mcp-go writes afterwards. mcp-go builds the tool handler's context from
// the request's, so the emitter reaches the garbage tool.
func garbageMiddleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gw := &garblingResponseWriter{ResponseWriter: w}
		emit := garbageEmitter(func() error {
			gw.mu.Lock()
			gw.garble = true
			gw.mu.Unlock()
			return nil
		})
		next.ServeHTTP(gw, r.WithContext(withGarbageEmitter(r.Context(), emit)))
	})
}

// garblingResponseWriter passes writes through until garble is set, then sends a text/plain
// garbage body in place of whatever mcp-go writes. It deliberately does not implement
// http.Flusher, so mcp-go answers with one buffered JSON body rather than an SSE stream.
type garblingResponseWriter struct {
	http.ResponseWriter
	mu            sync.Mutex
	garble        bool
	headerWritten bool
	garbageSent   bool
}

// WriteHeader rewrites the content type when garbling.
func (g *garblingResponseWriter) WriteHeader(code int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.writeHeaderLocked(code)
}

func (g *garblingResponseWriter) writeHeaderLocked(code int) {
	if g.headerWritten {
		return
	}
	g.headerWritten = true
	if g.garble {
		g.Header().Set("Content-Type", "text/plain; charset=utf-8")
		g.Header().Del("Content-Length")
	}
	g.ResponseWriter.WriteHeader(code)
}

// Write passes p through, or once garbling, sends GarbageLine once and swallows the rest.
func (g *garblingResponseWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.writeHeaderLocked(http.StatusOK)
	if !g.garble {
		return g.ResponseWriter.Write(p)
	}
	if !g.garbageSent {
		g.garbageSent = true
		if _, err := io.WriteString(g.ResponseWriter, GarbageLine); err != nil {
			return 0, fmt.Errorf("write garbage: %w", err)
		}
	}
	return len(p), nil
}
