package serve

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/internal/testenv"
)

// TestServedRunsReachOnlyPublicAddresses: a submitted scenario cannot make the server reach its
// own machine or network (SSRF). A live model's base_url or an MCP server's url written as a
// loopback address is refused at submission (403, naming the policy's [outbound] private), with
// nothing sent; a host the policy allows is reached, and a redirect from it to another loopback
// address is refused as the connection is made: the server behind it gets nothing.
func TestServedRunsReachOnlyPublicAddresses(t *testing.T) {
	inner, innerHits := testenv.CountingServer(t, "127.0.0.2:0", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"secret":"of the server's own network"}`)
	})
	front, frontHits := testenv.CountingServer(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, inner.URL+r.URL.Path, http.StatusTemporaryRedirect)
	})
	submitTo := func(t *testing.T, c *client, scenario string) (int, []byte) {
		t.Helper()
		cc := *c
		cc.t = t
		return cc.post("", "application/zip", bytes.NewReader(zipOf(t,
			zent{name: DefaultBundleEntry, body: []byte(scenario)}, zent{name: "w.toml", body: []byte(attackBlueprint)})))
	}

	_, closed := startServerWith(t, Config{StateRoot: t.TempDir(), Policy: &hostconfig.ServePolicy{}})
	for _, tc := range []struct{ name, scenario, key string }{
		{"a model at a loopback address", liveScenario(front.URL+"/v1", ""), "models.m: base_url"},
		{"a model at localhost", liveScenario(strings.Replace(front.URL, "127.0.0.1", "localhost", 1)+"/v1", ""), "models.m: base_url"},
		{"a model at the cloud metadata address", liveScenario("http://169.254.169.254/v1", ""), "link-local"},
		{"an MCP server at a loopback address", attackScenario + "[[host.mcp_servers]]\nname = \"x\"\nurl = \"" + inner.URL + "/mcp\"\n", "non-public address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, raw := submitTo(t, closed, tc.scenario)
			if code != http.StatusForbidden && code != http.StatusUnprocessableEntity {
				t.Fatalf("submit: %d %s, want a refusal", code, raw)
			}
			for _, want := range []string{tc.key, "[outbound] private"} {
				if !strings.Contains(string(raw), want) {
					t.Errorf("the refusal does not say %q: %s", want, raw)
				}
			}
		})
	}
	if n := frontHits.Load() + innerHits.Load(); n != 0 {
		t.Fatalf("refused submissions reached the servers %d times", n)
	}

	// The allowed host redirects an MCP client to another loopback address: the connection is
	// refused as it is made (the openai SDK already refuses a model's cross-origin redirect), so
	// the load's discovery of the server's tools fails, naming the refusal.
	_, open := startServerWith(t, Config{StateRoot: t.TempDir(), Policy: &hostconfig.ServePolicy{Private: []string{"127.0.0.1"}}})
	code, raw := submitTo(t, open, attackScenario+"[[host.mcp_servers]]\nname = \"x\"\nurl = \""+front.URL+"/mcp\"\n")
	if code == http.StatusCreated || !strings.Contains(string(raw), "a non-public address (loopback)") {
		t.Fatalf("submit through an allowed host's redirect: %d %s, want the loopback refusal", code, raw)
	}
	if frontHits.Load() == 0 {
		t.Error("the allowed host got no request")
	}
	if innerHits.Load() != 0 {
		t.Errorf("the redirect reached the other loopback server %d times", innerHits.Load())
	}
	if strings.Contains(string(raw), "of the server's own network") {
		t.Errorf("the answer carries what the inner server holds: %s", raw)
	}
}
