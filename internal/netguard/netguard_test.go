package netguard

import (
	"errors"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/warrenhq/warren/internal/testenv"
)

func TestKind(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		{"8.8.8.8", ""},
		{"2606:4700::1111", ""},
		{"127.0.0.1", "loopback"},
		{"::1", "loopback"},
		{"10.1.2.3", "private"},
		{"169.254.169.254", "link-local"},
		{"100.64.0.1", "carrier-grade NAT"},
		{"::ffff:192.168.0.1", "private"},
		{"64:ff9b::7f00:1", "loopback, through NAT64"},
		{"2002:7f00:1::", "loopback, through 6to4"},
		{"0.0.0.0", "unspecified"},
	} {
		if got := Kind(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("Kind(%s) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}

// TestTransport: a request to a host the transport allows reaches it on loopback; one to any
// other host on a non-public address is refused before connecting (nothing reaches the server),
// and so is a redirect from an allowed host to another one.
func TestTransport(t *testing.T) {
	other, otherHits := testenv.CountingServer(t, "127.0.0.2:0", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "other") })
	allowedSrv, allowedHits := testenv.CountingServer(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, other.URL+"/", http.StatusTemporaryRedirect)
			return
		}
		_, _ = io.WriteString(w, "allowed")
	})
	allowedHost := strings.TrimPrefix(allowedSrv.URL, "http://")
	client := &http.Client{Transport: NewTransport(nil, func(host string) bool { return host == allowedHost }, "the test's rule")}
	get := func(url string) (string, error) {
		resp, err := client.Get(url)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	if body, err := get(allowedSrv.URL + "/"); err != nil || body != "allowed" {
		t.Fatalf("the allowed host: %q, %v", body, err)
	}
	for name, url := range map[string]string{"another loopback host": other.URL + "/", "a redirect to it": allowedSrv.URL + "/redirect"} {
		_, err := get(url)
		var refusal *Refusal
		if !errors.Is(err, ErrNonPublic) || !errors.As(err, &refusal) || refusal.Kind != "loopback" || !strings.Contains(err.Error(), "the test's rule") {
			t.Errorf("%s: %v, want a loopback refusal naming the rule", name, err)
		}
	}
	if otherHits.Load() != 0 {
		t.Errorf("the refused server answered %d requests", otherHits.Load())
	}
	if allowedHits.Load() != 2 {
		t.Errorf("the allowed server answered %d requests, want 2 (the page and the redirect)", allowedHits.Load())
	}
}
