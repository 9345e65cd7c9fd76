package testenv

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// CountingServer starts a real HTTP server listening on addr ("127.0.0.2:0": any loopback
// address, which a test of address guards needs besides 127.0.0.1), answering with h and
// counting the requests it answers, so a test can show that a refused request reached nothing.
// It is closed when the test ends.
func CountingServer(t testing.TB, addr string, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	})}}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &n
}
