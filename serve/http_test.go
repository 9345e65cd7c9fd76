package serve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/warrenhq/warren/hostconfig"
)

// connCounter is a listener that counts what the server does with its connections: how many are
// open at once (and the most ever), how many it closed, and the bytes it read from each.
type connCounter struct {
	net.Listener
	mu             sync.Mutex
	open, max, all int
	closed         int
	read           []*atomic.Int64
}

func (l *connCounter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open++
	l.all++
	l.max = max(l.max, l.open)
	n := &atomic.Int64{}
	l.read = append(l.read, n)
	return &countedConn{Conn: c, l: l, read: n}, nil
}

// counts returns the connections open now, the most open at once, and how many were closed.
func (l *connCounter) counts() (open, most, closed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open, l.max, l.closed
}

type countedConn struct {
	net.Conn
	l    *connCounter
	read *atomic.Int64
	once sync.Once
}

func (c *countedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

func (c *countedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		c.l.open--
		c.l.closed++
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// TestIdleConnectionsAreClosed: connections that send nothing, send half a request, or stay
// open after an unauthenticated answer are all closed by the server, by its header and idle
// timeouts (short here), and never more than MaxConns are open at once: the others wait to be
// accepted and are served, then closed, as the first ones go.
func TestIdleConnectionsAreClosed(t *testing.T) {
	const conns, limit = 60, 8
	counter := &connCounter{}
	lim := HTTPLimits{ReadHeaderTimeout: 150 * time.Millisecond, ReadTimeout: 150 * time.Millisecond, IdleTimeout: 150 * time.Millisecond, MaxConns: limit}
	_, c := startServerWith(t, Config{StateRoot: t.TempDir(), HTTP: lim}, func(l net.Listener) net.Listener { counter.Listener = l; return counter })
	addr := strings.TrimPrefix(c.url, "http://")
	var wg sync.WaitGroup
	var closedByServer atomic.Int32
	for i := range conns {
		wg.Go(func() {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			switch i % 3 {
			case 1: // half a request, never finished
				fmt.Fprint(conn, "GET /api/v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n")
			case 2: // a whole request without the token, then the connection kept
				fmt.Fprint(conn, "GET /api/v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
			}
			// A generous bound for a loaded machine: the server closes long before.
			_ = conn.SetReadDeadline(time.Now().Add(2 * time.Minute))
			if _, err := io.Copy(io.Discard, conn); err == nil {
				closedByServer.Add(1) // EOF: the server closed it
			} else {
				t.Errorf("connection %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if n := closedByServer.Load(); n != conns {
		t.Errorf("the server closed %d of %d idle connections", n, conns)
	}
	open, most, closed := counter.counts()
	if most > limit {
		t.Errorf("%d connections were open at once; the cap is %d", most, limit)
	}
	if open != 0 || closed != conns {
		t.Errorf("the server holds %d connections and closed %d, want 0 and %d", open, closed, conns)
	}
}

// TestUnauthenticatedUploadIsNotRead: an upload without the token is refused with 401 before its
// body is read: the server answers once it has the headers, never sends 100 Continue, closes the
// connection, and reads nothing of the body but what came in the packets with the headers.
func TestUnauthenticatedUploadIsNotRead(t *testing.T) {
	counter := &connCounter{}
	_, c := startServerWith(t, Config{StateRoot: t.TempDir()}, func(l net.Listener) net.Listener { counter.Listener = l; return counter })
	addr := strings.TrimPrefix(c.url, "http://")
	for _, tc := range []struct{ name, headers string }{
		{"content length, expect 100-continue", "Content-Length: 67108864\r\nExpect: 100-continue\r\n"},
		{"content length", "Content-Length: 200000\r\n"},
		{"chunked", "Transfer-Encoding: chunked\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			head := "POST /api/v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/zip\r\n" + tc.headers + "\r\n"
			if _, err := io.WriteString(conn, head); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(tc.headers, "100-continue") {
				// Some of the body, which the server must not read: sent after the headers.
				go func() {
					chunk := strings.Repeat("x", 64<<10)
					if strings.Contains(tc.headers, "chunked") {
						chunk = fmt.Sprintf("%x\r\n%s\r\n", len(chunk), chunk)
					}
					for range 3 {
						if _, err := io.WriteString(conn, chunk); err != nil {
							return
						}
					}
				}()
			}
			_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
				t.Errorf("%d (close %v) %s, want 401 and the connection closed", resp.StatusCode, resp.Close, body)
			}
			// The server closes: EOF, or a reset when it closed with the body unread.
			if _, err := io.Copy(io.Discard, br); err != nil && !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("after the answer: %v, want the server to close", err)
			}
			counter.mu.Lock()
			read := counter.read[len(counter.read)-1].Load()
			counter.mu.Unlock()
			// The headers and at most what the server's first read of them (4 KiB) took with them.
			if read > 4<<10+1 {
				t.Errorf("the server read %d bytes of a request whose headers are %d", read, len(head))
			}
		})
	}
}

// TestHeadersOverTheLimit: a request whose headers outgrow MaxHeaderBytes is refused (431).
func TestHeadersOverTheLimit(t *testing.T) {
	_, c := startServerWith(t, Config{StateRoot: t.TempDir(), HTTP: HTTPLimits{MaxHeaderBytes: 4 << 10}})
	req, err := http.NewRequest(http.MethodGet, c.url+APIPrefix+"/runs", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("X-Padding", strings.Repeat("p", 16<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("%d, want 431", resp.StatusCode)
	}
}

// TestHostAndOriginAreChecked: a request whose Host is not a name the server answers is refused
// (403: a DNS-rebinding page), whatever its token; a state-changing request from another origin
// is refused (403: a CSRF page), by its Origin or by Sec-Fetch-Site; reads from anywhere, the
// server's own origin, loopback names, and the hosts and origins the policy names pass. The
// dashboard at / is checked the same way.
func TestHostAndOriginAreChecked(t *testing.T) {
	policy := &hostconfig.ServePolicy{Hosts: []string{"warren.example.com"}, Origins: []string{"https://warren.example.com"}}
	s, err := New(Config{StateRoot: t.TempDir(), Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(ln, s.Site()) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = s.Close(ctx)
		_ = s.Shutdown(ctx)
	})
	base := "http://" + ln.Addr().String()
	own := base
	for _, tc := range []struct {
		name, method, path, host string
		headers                  map[string]string
		want                     int
	}{
		{"a rebound name", "GET", "/api/v1/runs", "attacker.example:7070", nil, 403},
		{"a rebound name, the page", "GET", "/", "attacker.example", nil, 403},
		{"another address", "GET", "/api/v1/runs", "192.0.2.7:7070", nil, 403},
		{"an empty host", "GET", "/api/v1/runs", "-", nil, 403},
		{"loopback", "GET", "/api/v1/runs", "", nil, 200},
		{"localhost", "GET", "/api/v1/runs", "localhost:7070", nil, 200},
		{"IPv6 loopback", "GET", "/api/v1/runs", "[::1]:7070", nil, 200},
		{"a host the policy names", "GET", "/api/v1/runs", "Warren.Example.com", nil, 200},
		{"the page", "GET", "/", "", nil, 200},
		{"a read from another origin", "GET", "/api/v1/runs", "", map[string]string{"Origin": "https://attacker.example"}, 200},
		{"a command from another origin", "POST", "/api/v1/runs/r1-x/pause", "", map[string]string{"Origin": "https://attacker.example"}, 403},
		{"a submission from another origin", "POST", "/api/v1/runs", "", map[string]string{"Origin": "https://attacker.example", "Content-Type": "application/zip"}, 403},
		{"a command a browser says is cross-site", "POST", "/api/v1/runs/r1-x/pause", "", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"a command from the server's own page", "POST", "/api/v1/runs/r1-x/pause", "", map[string]string{"Origin": own, "Sec-Fetch-Site": "same-origin"}, 404},
		{"a command from an origin the policy trusts", "POST", "/api/v1/runs/r1-x/pause", "", map[string]string{"Origin": "https://warren.example.com", "Sec-Fetch-Site": "cross-site"}, 404},
		{"a command without a browser", "POST", "/api/v1/runs/r1-x/pause", "", nil, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, base+tc.path, strings.NewReader(""))
			if err != nil {
				t.Fatal(err)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			req.Header.Set("Authorization", "Bearer "+s.Token())
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			var code int
			var body []byte
			if tc.host == "-" {
				code, body = rawEmptyHost(t, ln.Addr().String(), s.Token())
			} else {
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
				code = resp.StatusCode
			}
			if code != tc.want {
				t.Errorf("%d %s, want %d", code, body, tc.want)
			}
			if code == http.StatusForbidden && !strings.Contains(string(body), ErrNotAllowed.Error()) {
				t.Errorf("the refusal does not say why: %s", body)
			}
		})
	}
}

// rawEmptyHost sends GET /api/v1/runs with an empty Host header, which net/http's client cannot.
func rawEmptyHost(t *testing.T, addr, token string) (int, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /api/v1/runs HTTP/1.1\r\nHost:\r\nAuthorization: Bearer %s\r\n\r\n", token)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// TestEventsOutliveTheReadTimeout: a live-event stream stays open past ReadTimeout (short here)
// and delivers the whole trace to its end: the stream lifts the read deadline once it starts.
func TestEventsOutliveTheReadTimeout(t *testing.T) {
	const timeout = 100 * time.Millisecond
	s, c := startServerWith(t, Config{StateRoot: t.TempDir(), Policy: examplesPolicy(t),
		HTTP: HTTPLimits{ReadHeaderTimeout: timeout, ReadTimeout: timeout, IdleTimeout: timeout}})
	var info RunInfo
	if code := c.do(http.MethodPost, APIPrefix+"/runs", Submission{File: quickstartFile, Launch: Launch{Agents: 20, Paused: true}}, &info); code != http.StatusCreated {
		t.Fatalf("submit: %d", code)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := c.stream(ctx, info.ID, 0)
	waitWatchers(t, c, APIPrefix+"/runs/"+info.ID, 1)
	time.Sleep(5 * timeout) // the stream idles past the read timeout (a wait, not an assertion)
	if code := c.do(http.MethodPost, APIPrefix+"/runs/"+info.ID+"/resume", nil, nil); code != http.StatusAccepted {
		t.Fatalf("resume: %d", code)
	}
	var last sseEvent
	n := 0
	for e := range events {
		last = e
		n++
	}
	waitEnd(t, s, info.ID)
	if last.event != "end" {
		t.Errorf("the stream ended after %d events with %q, want the end event", n, last.event)
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		t.Error("the test's context ended the stream")
	}
}
