package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/netutil"
)

// Defaults of HTTPLimits: long enough for a person's browser and a 64 MiB bundle on a slow link,
// short enough that idle or half-sent connections do not pile up.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 2 * time.Minute
	DefaultIdleTimeout       = 30 * time.Second
	DefaultMaxHeaderBytes    = 64 << 10
	DefaultMaxConns          = 1024
)

// HTTPLimits bound what the connections of a serving server hold (Config.HTTP). A field of zero
// or less takes its Default value: there is no unbounded setting.
type HTTPLimits struct {
	// ReadHeaderTimeout bounds reading a request's headers: a connection that opens and sends
	// nothing, or sends its headers a byte at a time, is closed after it.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included (an upload). net/http lifts it
	// once a request's body is read, so a live-event stream outlives it (its writes are bounded
	// by WatcherTimeout instead).
	ReadTimeout time.Duration
	// IdleTimeout bounds how long a kept-alive connection waits for its next request.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's headers (431 beyond it).
	MaxHeaderBytes int
	// MaxConns bounds the connections open at once; one more waits to be accepted until one
	// closes (golang.org/x/net/netutil.LimitListener).
	MaxConns int
}

// orDefaults is l with its unset fields set to the defaults.
func (l HTTPLimits) orDefaults() HTTPLimits {
	set := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	set(&l.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	set(&l.ReadTimeout, DefaultReadTimeout)
	set(&l.IdleTimeout, DefaultIdleTimeout)
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if l.MaxConns <= 0 {
		l.MaxConns = DefaultMaxConns
	}
	return l
}

// Serve serves h (Site, or Handler) on ln under Config.HTTP's limits, at most MaxConns
// connections at once, until Shutdown; then it returns http.ErrServerClosed. The server's own
// checks (Host, Origin, the token) are h's: Site and Handler make them.
func (s *Server) Serve(ln net.Listener, h http.Handler) error {
	lim := s.cfg.HTTP.orDefaults()
	hs := &http.Server{Handler: h, ReadHeaderTimeout: lim.ReadHeaderTimeout, ReadTimeout: lim.ReadTimeout,
		IdleTimeout: lim.IdleTimeout, MaxHeaderBytes: lim.MaxHeaderBytes}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return http.ErrServerClosed
	}
	s.https = append(s.https, hs)
	s.mu.Unlock()
	return hs.Serve(netutil.LimitListener(ln, lim.MaxConns))
}

// Shutdown stops every Serve: it stops accepting, closes idle connections and waits for the
// requests going on (a live-event stream ends when its run does: Close first), or for ctx.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	servers := slices.Clone(s.https)
	s.mu.Unlock()
	var errs []error
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, hs := range servers {
		wg.Go(func() {
			if err := hs.Shutdown(ctx); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// guard refuses, before anything else, a request that is not for this server (its Host is not
// a name the server answers: a DNS rebinding page) and a state-changing request from another
// origin (a page driving the API from a browser: CSRF), each 403 with a JSON error. It reads
// no body.
func (s *Server) guard(h http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	if p := s.cfg.Policy; p != nil {
		for _, o := range p.Origins {
			// Validated when the policy was made (hostconfig.ServeOrigin).
			_ = cop.AddTrustedOrigin(o)
		}
	}
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		refuseConn(w, http.StatusForbidden, fmt.Errorf("%w: a %s from the origin %q, which is not this server's: a page of another site may not act on the API (trust an origin with the policy's [http] origins, or host serve --allow-origin)",
			ErrNotAllowed, r.Method, r.Header.Get("Origin")))
	}))
	checked := cop.Handler(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.answersHost(r.Host) {
			refuseConn(w, http.StatusForbidden, fmt.Errorf("%w: the Host %q is not a name this server answers (it answers %s); a page whose name was pointed at this address may not reach it",
				ErrNotAllowed, r.Host, s.hostNames()))
			return
		}
		checked.ServeHTTP(w, r)
	})
}

// answersHost reports whether a request's Host names this server: a loopback address or
// localhost, the listen address's host, a host the policy names, or, when the server listens on
// every address (0.0.0.0, ::), any IP address (a client that reached one of the machine's
// addresses by number was not pointed at it through a name it did not mean).
func (s *Server) answersHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if host == "" {
		return false
	}
	listen, _, _ := net.SplitHostPort(s.cfg.Listen)
	listen = strings.ToLower(listen)
	ip := net.ParseIP(host)
	switch {
	case host == "localhost", ip != nil && ip.IsLoopback(), host == listen:
		return true
	case ip != nil:
		if l := net.ParseIP(listen); listen == "" || l != nil && l.IsUnspecified() {
			return true
		}
	}
	return s.cfg.Policy != nil && slices.Contains(s.cfg.Policy.Hosts, host)
}

// hostNames says which Host names the server answers, for a message.
func (s *Server) hostNames() string {
	names := []string{"localhost", "127.0.0.1", "[::1]"}
	if listen, _, _ := net.SplitHostPort(s.cfg.Listen); listen != "" && !slices.Contains(names, listen) {
		names = append(names, listen)
	}
	if s.cfg.Policy != nil {
		names = append(names, s.cfg.Policy.Hosts...)
	}
	return strings.Join(names, ", ") + "; name another with the policy's [http] hosts, or host serve --allow-host"
}

// refuseConn answers a request the server refuses before reading anything of its body (no
// token, another Host, another Origin) and closes the connection: it takes the connection over
// (Hijack) and writes the answer itself, since the HTTP server, left to finish the request, would
// read up to 256 KiB of the body to keep the connection alive. The connection's write side is
// shut after the answer and the socket closed a moment later, unread, so that the client reads the
// answer before the close resets the connection (the write side is shut first where the
// connection lets it: a plain TCP one, not one a listener wrapped). Where it cannot take the connection over (an
// HTTP/2 stream, a test's recorder) it answers as usual, with Connection: close.
func refuseConn(w http.ResponseWriter, status int, err error) {
	body, _ := json.Marshal(apiError{Error: err.Error()})
	body = append(body, '\n')
	conn, buf, herr := http.NewResponseController(w).Hijack()
	if herr != nil {
		w.Header().Set("Connection", "close")
		writeError(w, status, err)
		return
	}
	fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n", status, http.StatusText(status), len(body))
	if v := w.Header().Get("WWW-Authenticate"); v != "" {
		fmt.Fprintf(buf, "WWW-Authenticate: %s\r\n", v)
	}
	buf.WriteString("\r\n")
	buf.Write(body)
	_ = conn.SetWriteDeadline(time.Now().Add(refuseLinger))
	_ = buf.Flush()
	if tc, ok := conn.(interface{ CloseWrite() error }); ok {
		_ = tc.CloseWrite()
	}
	time.AfterFunc(refuseLinger, func() { _ = conn.Close() })
}

// refuseLinger is how long a refused connection stays open, unread, after its answer was sent
// and its write side shut, before it is closed: Go's HTTP server waits as long.
const refuseLinger = 500 * time.Millisecond
