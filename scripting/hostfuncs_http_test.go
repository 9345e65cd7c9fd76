package scripting

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warrenhq/warren/tools"
)

// roundTripFunc is an http.RoundTripper made of a function, for tests that must not reach a
// network.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// echoed is what the test server's /echo handler saw.
type echoed struct {
	Method      string `json:"method"`
	Body        string `json:"body"`
	ContentType string `json:"content_type"`
	Test        string `json:"test"`
	UserAgent   string `json:"user_agent"`
}

// newTestServer serves the HTTP tests on loopback:
//
//	/echo?status=N   echoes the request as JSON with status N (default 200) and two X-Multi values
//	/bytes/N         a body of N bytes
//	/hop/N           redirects to /hop/N-1; /hop/0 answers "arrived"
//	/to?url=U        redirects to U
//	/slow            never answers (until the client gives up)
//	/slowbody        sends headers and part of the body, then stalls
func newTestServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		status := http.StatusOK
		if s := r.URL.Query().Get("status"); s != "" {
			status, _ = strconv.Atoi(s)
		}
		w.Header().Add("X-Multi", "first")
		w.Header().Add("X-Multi", "second")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(echoed{
			Method: r.Method, Body: string(body), ContentType: r.Header.Get("Content-Type"),
			Test: r.Header.Get("X-Test"), UserAgent: r.UserAgent(),
		})
	})
	mux.HandleFunc("/bytes/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		_, _ = io.WriteString(w, strings.Repeat("b", n))
	})
	mux.HandleFunc("/hop/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		if n == 0 {
			_, _ = io.WriteString(w, "arrived")
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusFound)
	})
	mux.HandleFunc("/to", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("url"), http.StatusFound)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	mux.HandleFunc("/slowbody", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "partial")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// privateFuncs are host functions allowed to reach the loopback test server.
func privateFuncs(cfg HTTPConfig) *Funcs {
	cfg.AllowPrivate = true
	return NewFuncs(FuncsConfig{Tool: "web", HTTP: cfg})
}

func TestHTTPGet(t *testing.T) {
	srv := newTestServer(t)
	tests := []struct {
		name       string
		path       string
		headers    map[string]string
		wantStatus int
		wantEcho   echoed
	}{
		{"plain", "/echo", nil, 200, echoed{Method: "GET", UserAgent: userAgent}},
		{"request headers", "/echo", map[string]string{"x-test": "yes", "User-Agent": "mine/1"}, 200,
			echoed{Method: "GET", Test: "yes", UserAgent: "mine/1"}},
		{"an error status is a response", "/echo?status=404", nil, 404, echoed{Method: "GET", UserAgent: userAgent}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := privateFuncs(HTTPConfig{})
			resp, err := f.HTTPGet(context.Background(), srv.URL+tt.path, tt.headers)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Status != tt.wantStatus {
				t.Fatalf("status = %d, want %d", resp.Status, tt.wantStatus)
			}
			var got echoed
			if err := json.Unmarshal([]byte(resp.Body), &got); err != nil {
				t.Fatalf("body %q: %v", resp.Body, err)
			}
			if got != tt.wantEcho {
				t.Fatalf("server saw %+v, want %+v", got, tt.wantEcho)
			}
			if resp.Headers["X-Multi"] != "first" || resp.Headers["Content-Type"] != "application/json" {
				t.Fatalf("headers = %v, want the first X-Multi and the Content-Type under canonical keys", resp.Headers)
			}
			if calls := f.Calls(); len(calls) != 1 || !calls[0].OK || calls[0].Fn != HostFnHTTPGet {
				t.Fatalf("Calls() = %+v", calls)
			}
		})
	}
}

func TestHTTPPost(t *testing.T) {
	srv := newTestServer(t)
	tests := []struct {
		name        string
		contentType string
		headers     map[string]string
		wantType    string
	}{
		{"content type given", "application/json", nil, "application/json"},
		{"content type from the headers", "", map[string]string{"content-type": "text/csv"}, "text/csv"},
		{"the argument overrides the headers", "application/json", map[string]string{"Content-Type": "text/csv"}, "application/json"},
		{"default content type", "", nil, defaultPostContentType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := privateFuncs(HTTPConfig{})
			resp, err := f.HTTPPost(context.Background(), srv.URL+"/echo?status=201", tt.contentType, `{"a":1}`, tt.headers)
			if err != nil {
				t.Fatal(err)
			}
			var got echoed
			if err := json.Unmarshal([]byte(resp.Body), &got); err != nil {
				t.Fatalf("body %q: %v", resp.Body, err)
			}
			want := echoed{Method: "POST", Body: `{"a":1}`, ContentType: tt.wantType, UserAgent: userAgent}
			if resp.Status != 201 || got != want {
				t.Fatalf("status %d, server saw %+v; want 201, %+v", resp.Status, got, want)
			}
		})
	}
}

func TestHTTPTimeout(t *testing.T) {
	srv := newTestServer(t)
	for _, path := range []string{"/slow", "/slowbody"} {
		t.Run(path, func(t *testing.T) {
			f := privateFuncs(HTTPConfig{Timeout: 100 * time.Millisecond})
			_, err := f.HTTPGet(context.Background(), srv.URL+path, nil)
			if !errors.Is(err, ErrHTTPTimeout) {
				t.Fatalf("error = %v, want ErrHTTPTimeout", err)
			}
			if !strings.Contains(err.Error(), "within 100ms") {
				t.Fatalf("error %q does not give the timeout", err)
			}
		})
	}
}

func TestHTTPCancelledWithTheCall(t *testing.T) {
	srv := newTestServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	ec := tools.NewExecContext(nil, "c", 1, tools.AgentRef{}, t.TempDir())
	f := NewFuncs(FuncsConfig{Tool: "web", Exec: ec, HTTP: HTTPConfig{AllowPrivate: true}})
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := f.HTTPGet(ctx, srv.URL+"/slow", nil)
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrHTTPTimeout) {
		t.Fatalf("error = %v, want the call's cancellation", err)
	}
}

func TestHTTPResponseSizeCap(t *testing.T) {
	srv := newTestServer(t)
	tests := []struct {
		name      string
		maxBody   int64
		maxString int
		size      int
		wantErr   error
		wantCap   string
	}{
		{"at the body cap", 10, 0, 10, nil, ""},
		{"over the body cap", 10, 0, 11, ErrResponseTooLarge, "10-byte cap"},
		{"far over the body cap", 10, 0, 100_000, ErrResponseTooLarge, "10-byte cap"},
		{"the string cap is tighter", 50, 40, 41, ErrResponseTooLarge, "40-byte cap"},
		{"default cap", 0, 0, DefaultMaxResponseBytes + 1, ErrResponseTooLarge, "1048576-byte cap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewFuncs(FuncsConfig{Tool: "web", MaxStringBytes: tt.maxString, HTTP: HTTPConfig{AllowPrivate: true, MaxResponseBytes: tt.maxBody}})
			resp, err := f.HTTPGet(context.Background(), fmt.Sprintf("%s/bytes/%d", srv.URL, tt.size), nil)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				if !strings.Contains(err.Error(), tt.wantCap) {
					t.Fatalf("error %q does not name the %s", err, tt.wantCap)
				}
				return
			}
			if len(resp.Body) != tt.size {
				t.Fatalf("body is %d bytes, want %d", len(resp.Body), tt.size)
			}
		})
	}
}

func TestHTTPRedirects(t *testing.T) {
	srv := newTestServer(t)
	tests := []struct {
		name     string
		path     string
		wantBody string
		wantErr  error
	}{
		{"one redirect", "/hop/1", "arrived", nil},
		{"the most redirects allowed", fmt.Sprintf("/hop/%d", MaxRedirects), "arrived", nil},
		{"one redirect too many", fmt.Sprintf("/hop/%d", MaxRedirects+1), "", ErrTooManyRedirects},
		{"a redirect to another scheme", "/to?url=ftp://example.test/file", "", ErrUnsupportedURL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := privateFuncs(HTTPConfig{}).HTTPGet(context.Background(), srv.URL+tt.path, nil)
			if !errors.Is(err, tt.wantErr) || resp.Body != tt.wantBody {
				t.Fatalf("HTTPGet = %q, %v; want %q, %v", resp.Body, err, tt.wantBody, tt.wantErr)
			}
		})
	}
}

func TestHTTPUnsupportedURL(t *testing.T) {
	tests := []struct{ name, url string }{
		{"ftp", "ftp://example.test/file"},
		{"file", "file:///etc/passwd"},
		{"no host", "http:///path"},
		{"no scheme", "example.test/path"},
		{"javascript", "javascript:alert(1)"},
		{"unparseable", "http://[::1"},
		{"control character", "http://example.test/\x7f\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sent := false
			f := NewFuncs(FuncsConfig{Tool: "web", HTTP: HTTPConfig{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
				sent = true
				return nil, errors.New("sent")
			})}})
			if _, err := f.HTTPGet(context.Background(), tt.url, nil); !errors.Is(err, ErrUnsupportedURL) {
				t.Fatalf("error = %v, want ErrUnsupportedURL", err)
			}
			if sent {
				t.Fatal("the request was sent")
			}
		})
	}
}

func TestGuardAddress(t *testing.T) {
	tests := []struct {
		addr string
		kind string // "" for a public address
	}{
		{"8.8.8.8", ""},
		{"93.184.216.34", ""},
		{"2606:4700:4700::1111", ""},
		{"64:ff9b::808:808", ""}, // NAT64 of 8.8.8.8
		{"2002:808:808::1", ""},  // 6to4 of 8.8.8.8
		{"::ffff:8.8.8.8", ""},   // IPv4-mapped public
		{"100.63.255.255", ""},   // just below CGNAT
		{"100.128.0.0", ""},      // just above CGNAT
		{"172.15.255.255", ""},   // just below 172.16/12
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"},
		{"0.0.0.0", "unspecified"},
		{"::", "unspecified"},
		{"0.1.2.3", "this-network"},
		{"10.0.0.1", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.1.1", "private"},
		{"fc00::1", "private"},
		{"fd00::2", "private"},
		{"169.254.169.254", "link-local"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"224.0.0.1", "link-local"},
		{"239.1.2.3", "multicast"},
		{"ff02::1", "link-local"},
		{"ff0e::1", "multicast"},
		{"100.64.0.1", "carrier-grade NAT"},
		{"100.127.255.255", "carrier-grade NAT"},
		{"192.0.0.8", "IETF protocol"},
		{"198.18.0.1", "benchmarking"},
		{"255.255.255.255", "reserved"},
		{"240.0.0.1", "reserved"},
		{"::127.0.0.1", "IPv4-compatible"},
		{"64:ff9b::7f00:1", "loopback, through NAT64"},
		{"64:ff9b::a00:1", "private, through NAT64"},
		{"64:ff9b:1::1", "local NAT64"},
		{"2002:7f00:1::1", "loopback, through 6to4"},
		{"2002:a9fe:a9fe::1", "link-local, through 6to4"},
		{"2001::1", "Teredo"},
		{"100::1", "discard-only"},
		{"fec0::1", "site-local"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			err := guardAddress(netip.MustParseAddr(tt.addr))
			if tt.kind == "" {
				if err != nil {
					t.Fatalf("a public address was refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrPrivateAddress) {
				t.Fatalf("error = %v, want ErrPrivateAddress", err)
			}
			if want := "non-public address (" + tt.kind + "):"; !strings.Contains(err.Error(), want) {
				t.Fatalf("refusal %q does not say %q", err, want)
			}
		})
	}
	if err := guardAddress(netip.Addr{}); !errors.Is(err, ErrPrivateAddress) {
		t.Fatalf("the zero address: error = %v, want ErrPrivateAddress", err)
	}
	if err := guardDial("tcp4", "not-an-address", nil); !errors.Is(err, ErrPrivateAddress) {
		t.Fatalf("an unparseable dial address: error = %v, want ErrPrivateAddress", err)
	}
}

// countingServer starts a server on listener that counts the requests it gets.
func countingServer(t *testing.T, listener net.Listener, hits *atomic.Int32) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = io.WriteString(w, "secret")
	}))
	srv.Listener.Close()
	srv.Listener = listener
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

func TestHTTPGuardRefusesLoopback(t *testing.T) {
	v4, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	v6, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int32
	srv4 := countingServer(t, v4, &hits)
	srv6 := countingServer(t, v6, &hits)
	_, port4, _ := net.SplitHostPort(v4.Addr().String())
	tests := []struct {
		name string
		url  string
	}{
		{"127.0.0.1", srv4.URL + "/"},
		{"[::1]", srv6.URL + "/"},
		{"localhost resolved at connect time", "http://localhost:" + port4 + "/"},
		{"post", srv4.URL + "/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewFuncs(FuncsConfig{Tool: "web"})
			var err error
			if tt.name == "post" {
				_, err = f.HTTPPost(context.Background(), tt.url, "text/plain", "data", nil)
			} else {
				_, err = f.HTTPGet(context.Background(), tt.url, nil)
			}
			if !errors.Is(err, ErrPrivateAddress) {
				t.Fatalf("error = %v, want ErrPrivateAddress", err)
			}
			if !strings.Contains(err.Error(), "(loopback)") {
				t.Fatalf("refusal %q does not say why", err)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the loopback servers got %d requests, want none", n)
	}
	// The same server is reachable when the host config allows private addresses, so the
	// refusals above are the guard's and not a broken server's.
	resp, err := privateFuncs(HTTPConfig{}).HTTPGet(context.Background(), srv4.URL+"/", nil)
	if err != nil || resp.Body != "secret" {
		t.Fatalf("with AllowPrivate: %q, %v", resp.Body, err)
	}
}

func TestHTTPGuardRefusesRedirectToLoopback(t *testing.T) {
	var secretHits, publicHits atomic.Int32
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	mux.HandleFunc("/secret", func(w http.ResponseWriter, r *http.Request) {
		secretHits.Add(1)
		_, _ = io.WriteString(w, "secret")
	})
	mux.HandleFunc("/go", func(w http.ResponseWriter, r *http.Request) {
		publicHits.Add(1)
		http.Redirect(w, r, srv.URL+"/secret", http.StatusFound)
	})
	// public.test stands for a public server: the test transport connects to it without the
	// guard, and dials every other address through the real guarded dialer.
	guarded := newDialer(false)
	transport := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr == "public.test:80" {
			var d net.Dialer
			return d.DialContext(ctx, network, srv.Listener.Addr().String())
		}
		return guarded.DialContext(ctx, network, addr)
	}}
	t.Cleanup(transport.CloseIdleConnections)
	f := NewFuncs(FuncsConfig{Tool: "web", HTTP: HTTPConfig{Transport: transport}})
	_, err := f.HTTPGet(context.Background(), "http://public.test/go", nil)
	if !errors.Is(err, ErrPrivateAddress) {
		t.Fatalf("error = %v, want ErrPrivateAddress", err)
	}
	if publicHits.Load() != 1 || secretHits.Load() != 0 {
		t.Fatalf("public server hit %d times, loopback secret %d times; want 1 and 0", publicHits.Load(), secretHits.Load())
	}
}

func BenchmarkGuardAddress(b *testing.B) {
	addrs := []netip.Addr{netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("2606:4700:4700::1111"), netip.MustParseAddr("10.1.2.3")}
	for b.Loop() {
		for _, a := range addrs {
			_ = guardAddress(a)
		}
	}
}
