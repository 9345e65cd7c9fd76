package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/warrenhq/warren/internal/netguard"
	"github.com/warrenhq/warren/mcp/mcpconfig"
)

const (
	// startTimeout bounds starting a server and its MCP handshake, whoever waits for it.
	startTimeout = 30 * time.Second
	// stopGrace is how long a stdio server gets to exit after its stdin closes (and again after
	// SIGKILL) before it is given up on.
	stopGrace = 2 * time.Second
	// stderrTailBytes is how much of a stdio server's stderr is kept for error messages.
	stderrTailBytes = 4 << 10
	// clientName and clientVersion are what Warren reports in the MCP handshake.
	clientName    = "warren"
	clientVersion = "0.1.0"
)

// quietLogger silences mcp-go's own logging: every failure it sees reaches Warren as an error
// and is reported there, in the world's log and the agent's result.
var quietLogger = slog.New(slog.DiscardHandler)

// session is one live connection to a server: for stdio, one child process. It ends exactly
// once (end), for one of three reasons: stopped by the Manager, the child exited, or the server
// broke the protocol. Calls in flight watch ctx, which is cancelled when it ends.
type session struct {
	server    string
	number    uint64
	transport string
	client    *client.Client
	// slots is the semaphore bounding the calls in flight (cfg.MaxConcurrency).
	slots chan struct{}
	// private, when set, lets an HTTP session reach non-public addresses only for the hosts it
	// allows (Options.PrivateHosts).
	private func(host string) bool

	ctx    context.Context
	cancel context.CancelFunc

	endOnce   sync.Once
	ended     chan struct{}
	endReason string // for the exit event: "exit status 3", "malformed reply: ..."
	failure   string // what a call in flight reads when the session ends under it
	// onBreak is told when the session ends on its own (exit or malformed reply), not when the
	// Manager stops it.
	onBreak func(*session)
	// maxReply is the server's max_reply_bytes; read counts the bytes read from the server.
	maxReply int
	read     *atomic.Int64

	// stdio only.
	cmd        *exec.Cmd
	stdin      *os.File
	stdout     *os.File
	stderrPipe *os.File
	stderr     *tailBuffer
	stderrDone chan struct{}
	exited     chan struct{}

	// http only.
	httpTransport *http.Transport
}

// end marks the session over with reason (for events) and failure (for calls in flight) and
// cancels its context. It reports whether this call ended it (false: it had already ended).
func (s *session) end(reason, failure string) bool {
	ended := false
	s.endOnce.Do(func() {
		s.endReason, s.failure = reason, failure
		close(s.ended)
		s.cancel()
		ended = true
	})
	return ended
}

// breakWith ends the session on its own account and tells its owner.
func (s *session) breakWith(reason, failure string) {
	if s.end(reason, failure) && s.onBreak != nil {
		s.onBreak(s)
	}
}

// isEnded reports, without blocking, whether the session has ended.
func (s *session) isEnded() bool {
	select {
	case <-s.ended:
		return true
	default:
		return false
	}
}

// startSession starts a session for cfg and completes the MCP handshake under initCtx (and
// startTimeout). The session itself lives under a context of its own, so the caller that
// triggered the start can give up without ending it. read counts the bytes the session reads
// from the server (nil: a counter of its own). Errors wrap ErrStart.
func startSession(initCtx context.Context, cfg *mcpconfig.Server, number uint64, onBreak func(*session), read *atomic.Int64, private func(host string) bool) (*session, error) {
	sessCtx, cancel := context.WithCancel(context.Background())
	if read == nil {
		read = new(atomic.Int64)
	}
	s := &session{
		maxReply:  maxReplyBytes(cfg),
		read:      read,
		server:    cfg.Name,
		number:    number,
		transport: cfg.Transport(),
		slots:     make(chan struct{}, maxConcurrency(cfg)),
		ctx:       sessCtx,
		cancel:    cancel,
		ended:     make(chan struct{}),
		onBreak:   onBreak,
		private:   private,
	}
	var tr transport.Interface
	var err error
	if s.transport == "http" {
		tr, err = s.openHTTP(cfg)
	} else {
		tr, err = s.openStdio(cfg)
	}
	if err != nil {
		s.end("start failed", "")
		return nil, fmt.Errorf("%w: server %s: %w", ErrStart, cfg.Name, err)
	}
	s.client = client.NewClient(tr)
	if err := s.handshake(initCtx); err != nil {
		_ = s.shutdown(true)
		return nil, fmt.Errorf("%w: server %s: %w%s", ErrStart, cfg.Name, err, s.stderrNote())
	}
	return s, nil
}

// handshake starts the client and initializes the MCP session.
func (s *session) handshake(initCtx context.Context) error {
	if err := s.client.Start(s.ctx); err != nil {
		return fmt.Errorf("start transport: %w", err)
	}
	ctx, cancel := context.WithTimeoutCause(initCtx, startTimeout, ErrTimeout)
	defer cancel()
	ctx, stop := s.bind(ctx)
	defer stop()
	var req mcp.InitializeRequest
	req.Params.ClientInfo = mcp.Implementation{Name: clientName, Version: clientVersion}
	if _, err := s.client.Initialize(ctx, req); err != nil {
		return s.explain(ctx, "initialize", err)
	}
	return nil
}

// bind derives from ctx a context that also ends when the session ends, so a request in flight
// stops at once when the server exits or breaks the protocol.
func (s *session) bind(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(s.ctx, func() { cancel(ErrServerExited) })
	return ctx, func() {
		stop()
		cancel(nil)
	}
}

// explain turns the error of a request made under ctx (from bind) into the error that says
// why: the session ended (exit, malformed reply), the deadline passed, or the request failed.
func (s *session) explain(ctx context.Context, what string, err error) error {
	if errors.Is(err, transport.ErrTransportClosed) && s.transport == "stdio" {
		// The server closed its stdout: it exited or is about to, and the waiter says which.
		select {
		case <-s.ended:
		case <-ctx.Done():
		}
	}
	switch {
	case s.isEnded():
		if strings.HasPrefix(s.endReason, malformedPrefix) {
			return fmt.Errorf("%s: %w: %s", what, ErrProtocol, s.endReason)
		}
		return fmt.Errorf("%s: %w (%s)", what, ErrServerExited, s.endReason)
	case errors.Is(context.Cause(ctx), ErrTimeout):
		return fmt.Errorf("%s: %w", what, ErrTimeout)
	default:
		return fmt.Errorf("%s: %w", what, err)
	}
}

// openStdio starts the child process with its three pipes and the goroutines that drain stderr
// and wait for it, and returns a transport over its stdin and stdout.
func (s *session) openStdio(cfg *mcpconfig.Server) (transport.Interface, error) {
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW)
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW, stdoutR, stdoutW)
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	cmd := exec.Command(cfg.Command, cfg.Args...)
	if cfg.Command == mcpconfig.DemoCommand {
		cmd = &exec.Cmd{Path: "/proc/self/exe", Args: append([]string{mcpconfig.DemoReexecName}, cfg.Args...)}
	}
	cmd.Dir = cfg.Dir
	cmd.Env = childEnv(hostEnv, cfg.Env)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	closeAll(stdinR, stdoutW, stderrW) // the child holds its own copies
	if err != nil {
		closeAll(stdinW, stdoutR, stderrR)
		return nil, fmt.Errorf("run %s: %w", cfg.Command, err)
	}
	s.cmd, s.stdin, s.stdout, s.stderrPipe = cmd, stdinW, stdoutR, stderrR
	s.stderr = &tailBuffer{}
	s.stderrDone = make(chan struct{})
	s.exited = make(chan struct{})
	go func() {
		defer close(s.stderrDone)
		_, _ = io.Copy(s.stderr, stderrR)
	}()
	go s.wait()
	watcher := &replyWatcher{r: stdoutR, session: s, max: s.maxReply, read: s.read}
	return transport.NewIO(watcher, stdinW, nil), nil
}

// wait reaps the child; an exit the Manager did not ask for breaks the session.
func (s *session) wait() {
	err := s.cmd.Wait()
	close(s.exited)
	reason := exitReason(err)
	s.breakWith(reason, fmt.Sprintf("server %s exited (%s) during the call; it is restarted on the next call", s.server, reason))
}

// exitReason renders how a child ended: "exit status 3", "signal: killed".
func exitReason(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// openHTTP builds a streamable HTTP transport with a connection pool sized for the session's
// concurrency, so a thousand calls reuse connections instead of exhausting ports.
func (s *session) openHTTP(cfg *mcpconfig.Server) (transport.Interface, error) {
	base, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return nil, errors.New("http.DefaultTransport is not an *http.Transport")
	}
	ht := base.Clone()
	ht.MaxIdleConns = cap(s.slots)
	ht.MaxIdleConnsPerHost = cap(s.slots)
	var inner http.RoundTripper = ht
	if s.private != nil {
		inner = netguard.NewTransport(ht, s.private, netguard.ServedRule)
	}
	capped := &cappedTransport{base: inner, max: int64(s.maxReply), read: s.read, tooLarge: s.tooLarge()}
	tr, err := transport.NewStreamableHTTP(cfg.URL,
		transport.WithHTTPHeaders(cfg.Headers),
		transport.WithHTTPBasicClient(&http.Client{Transport: capped}),
		transport.WithHTTPLogger(quietLogger),
	)
	if err != nil {
		return nil, fmt.Errorf("url %s: %w", cfg.URL, err)
	}
	s.httpTransport = ht
	return tr, nil
}

// shutdown releases everything the session holds. For stdio it closes the child's stdin and
// gives it stopGrace to exit (none when kill is set), then kills its process group (which also
// reaps any process it left behind) and waits for the reaper and the stderr drain, so no
// goroutine of the session outlives it. It must run exactly once per session.
func (s *session) shutdown(kill bool) error {
	s.end("stopped", fmt.Sprintf("server %s stopped during the call", s.server))
	if s.client != nil {
		_ = s.client.Close()
	}
	if s.httpTransport != nil {
		s.httpTransport.CloseIdleConnections()
	}
	if s.cmd == nil {
		return nil
	}
	_ = s.stdin.Close()
	var err error
	if !kill && !waitClosed(s.exited, stopGrace) {
		kill = true
	}
	// Kill the group even after a clean exit: a grandchild the server left running still holds
	// the pipes. ESRCH (nothing left) is the usual answer.
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	if !waitClosed(s.exited, stopGrace) {
		err = fmt.Errorf("server %s (pid %d) did not exit after SIGKILL", s.server, s.cmd.Process.Pid)
	}
	waitClosed(s.stderrDone, stopGrace)
	closeAll(s.stdout, s.stderrPipe)
	<-s.stderrDone
	return err
}

// waitClosed waits up to d for ch to close and reports whether it did.
func waitClosed(ch <-chan struct{}, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ch:
		return true
	case <-timer.C:
		return false
	}
}

// closeAll closes files whose close errors carry no information (pipe ends being discarded).
func closeAll(files ...*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

// stderrNote renders the tail of a stdio server's stderr for an error message, or "".
func (s *session) stderrNote() string {
	if s.stderr == nil {
		return ""
	}
	if s.stderrDone != nil {
		waitClosed(s.stderrDone, 100*time.Millisecond)
	}
	tail := strings.TrimSpace(s.stderr.String())
	if tail == "" {
		return ""
	}
	return "; stderr: " + tail
}

// tailBuffer keeps the last stderrTailBytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

// Write keeps the newest bytes of p, dropping the oldest beyond the cap; it never fails, so the
// drain never stops and the child never blocks on a full pipe.
func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - stderrTailBytes; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String returns what is kept.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// killGroup sends SIGKILL to the child's process group while the child has not been reaped.
func (s *session) killGroup() {
	select {
	case <-s.exited:
	default:
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
}
