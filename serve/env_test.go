package serve

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/hostconfig"
)

// secretEnv is a variable of the server's environment no run may see.
const secretEnv = "WARREN_TEST_SERVE_SECRET"

// TestSubmissionAsksForNoServerVariable: a submitted scenario whose own [host] table would give
// its runs a variable of the server's environment the policy does not pass, or would loosen the
// server's sandbox, is refused at submit (403) naming the key and what the server passes.
func TestSubmissionAsksForNoServerVariable(t *testing.T) {
	t.Setenv(secretEnv, secretText)
	s, c, root := startBundleServer(t)
	for _, tc := range []struct{ name, host, key, says string }{
		{"a command's variable", "[host.sandbox]\nallow_env_vars = [\"PATH\", \"" + secretEnv + "\"]\n", "host.sandbox", secretEnv},
		{"a script's variable", "[host.scripting]\nallow_env = [\"" + secretEnv + "\"]\n", "host.scripting.allow_env", "HOME LANG PATH TERM TZ"},
		{"no sandbox", "[host.sandbox]\nmode = \"none\"\n", "host.sandbox", "mode"},
		{"the server's hidden paths shown", "[host.sandbox]\nhidden = []\n", "host.sandbox.hidden", "/root"},
		{"the network on", "[host.sandbox]\nnetwork = true\n", "host.sandbox", "network"},
		{"scripts reaching loopback", "[host.scripting]\nhttp_allow_private = true\n", "host.scripting.http_allow_private", "loopback"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := *c
			c.t = t
			code, raw := c.post("", "application/zip", bytes.NewReader(zipOf(t,
				zent{name: DefaultBundleEntry, body: []byte(attackScenario + tc.host)}, zent{name: "w.toml", body: []byte(attackBlueprint)})))
			assertRefused(t, code, raw, tc.key)
			if !strings.Contains(string(raw), tc.says) {
				t.Errorf("the refusal does not say %q: %s", tc.says, raw)
			}
			assertNothingLeft(t, root)
		})
	}
	if len(s.Runs()) != 0 {
		t.Errorf("%d runs listed after refusals", len(s.Runs()))
	}
}

// envServer is a stdio MCP server (Python, newline-delimited JSON-RPC) whose one tool, env,
// answers with its process's environment.
const envServer = `#!/usr/bin/python3
import json, os, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method = msg.get("method")
    if method == "initialize":
        res = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "env", "version": "1"}}
    elif method == "tools/list":
        res = {"tools": [{"name": "env", "description": "Its environment.", "inputSchema": {"type": "object", "properties": {}}}]}
    elif method == "tools/call":
        res = {"content": [{"type": "text", "text": "\n".join(sorted(k + "=" + v for k, v in os.environ.items()))}]}
    else:
        res = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": res}) + "\n")
    sys.stdout.flush()
`

// peekScript is a script tool that asks the host for the secret variable.
const peekScript = `defineTool({
  name: "peek",
  description: "Reads a variable.",
  parameters: { type: "object", properties: {}, additionalProperties: false },
  run: function (args, host) {
    try { return { value: String(host.env("` + secretEnv + `")) }; } catch (e) { return { refused: String(e.message) }; }
  }
});
`

// TestServedRunsSeeOnlyPassedVariables: with a secret in the server's environment, a served run's
// command (env), script tool (host.env) and stdio MCP server (its os.environ) see none of it; the
// command and the MCP server see exactly the variables the policy passes, here PATH and LANG.
func TestServedRunsSeeOnlyPassedVariables(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Fatalf("the MCP server of this test runs with /usr/bin/python3: %v", err)
	}
	t.Setenv(secretEnv, secretText)
	t.Setenv("LANG", "C.UTF-8")
	programs := t.TempDir()
	server := filepath.Join(programs, "envserver.py")
	if err := os.WriteFile(server, []byte(envServer), 0o755); err != nil {
		t.Fatal(err)
	}
	scenario := `name = "peek"
[blueprints]
w = "w.toml"
[host.tool_permissions]
shell = "allow"
peek = "allow"
envsrv__env = "allow"
[host.tool_script_permissions]
env = "allow"
[host.sandbox]
allow_env_vars = ["LANG", "PATH"]
[[host.mcp_servers]]
name = "envsrv"
command = "` + server + `"
[models.m]
kind = "scripted"
  [[models.m.turns]]
    [[models.m.turns.calls]]
    tool = "shell"
    args = { command = "env" }
    [[models.m.turns.calls]]
    tool = "peek"
    args = {}
    [[models.m.turns.calls]]
    tool = "envsrv__env"
    args = {}
  [[models.m.turns]]
  text = "done"
[[groups]]
name = "g"
blueprint = "w"
model = "m"
count = 1
`
	blueprint := `name = "w"
entry = "work"
[[stages]]
name = "work"
available_tools = ["shell", "peek", "envsrv__env"]
max_iterations = 3
`
	pass := []string{"HOME", "LANG", "PATH", "TZ"} // what a stdio MCP server inherits, at least
	policy := &hostconfig.ServePolicy{Read: []string{programs}, Env: pass}
	s, c := startServerWith(t, Config{StateRoot: t.TempDir(), Policy: policy})
	code, raw := c.post("", "application/zip", bytes.NewReader(zipOf(t,
		zent{name: DefaultBundleEntry, body: []byte(scenario)}, zent{name: "w.toml", body: []byte(blueprint)},
		zent{name: "tools/peek.js", body: []byte(peekScript)})))
	var info RunInfo
	if code != http.StatusCreated || json.Unmarshal(raw, &info) != nil {
		t.Fatalf("submit: %d %s", code, raw)
	}
	waitEnd(t, s, info.ID)
	trace, err := os.ReadFile(filepath.Join(info.Dir, warren.RunTraceFile))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(trace, []byte(secretText)) {
		t.Fatalf("the server's secret reached the trace:\n%s", trace)
	}
	results := toolResults(t, trace)
	if len(results) != 3 {
		t.Fatalf("%d tool results, want 3: %q", len(results), results)
	}
	names := func(out string) []string {
		var got []string
		for line := range strings.SplitSeq(out, "\n") {
			if name, _, ok := strings.Cut(line, "="); ok && name != "PWD" && name != "SHLVL" && name != "_" && name != "OLDPWD" {
				got = append(got, name)
			}
		}
		slices.Sort(got)
		return got
	}
	if got := names(results["shell"]); !slices.Equal(got, []string{"LANG", "PATH"}) {
		t.Errorf("the command saw %v, want [LANG PATH]:\n%s", got, results["shell"])
	}
	if got := names(results["envsrv__env"]); !slices.Equal(got, []string{"HOME", "LANG", "PATH", "WARREN_MCP_DATA"}) && !slices.Equal(got, []string{"HOME", "LANG", "PATH", "TZ", "WARREN_MCP_DATA"}) {
		t.Errorf("the MCP server saw %v, want HOME LANG PATH (TZ) and its data folder:\n%s", got, results["envsrv__env"])
	}
	if !strings.Contains(results["peek"], "refused") && !strings.Contains(results["peek"], "undefined") {
		t.Errorf("the script read the variable: %s", results["peek"])
	}
}

// toolResults returns each tool's result text in a trace, by tool name.
func toolResults(t *testing.T, trace []byte) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range bytes.Split(trace, []byte("\n")) {
		var e struct {
			Kind    string `json:"kind"`
			Tool    string `json:"tool"`
			Content string `json:"content"`
		}
		if json.Unmarshal(line, &e) == nil && e.Kind == "tool_result" {
			out[e.Tool] = e.Content
		}
	}
	return out
}

// keyServer is an OpenAI-compatible endpoint on loopback that answers every chat completion
// with "done" and keeps the headers each request came with.
type keyServer struct {
	mu      sync.Mutex
	headers []http.Header
	url     string
}

func startKeyServer(t *testing.T) *keyServer {
	t.Helper()
	k := &keyServer{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		k.mu.Lock()
		k.headers = append(k.headers, r.Header.Clone())
		k.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"done"}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	t.Cleanup(ts.Close)
	k.url = ts.URL + "/v1"
	return k
}

// seen returns the headers of the requests so far.
func (k *keyServer) seen() []http.Header {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.headers)
}

// liveScenario is attackScenario with an openai model at base (and the table's extra keys).
func liveScenario(base, extra string) string {
	return strings.Replace(attackScenario, "kind = \"scripted\"\n  [[models.m.turns]]\n  text = \"done\"",
		"kind = \"openai\"\nmodel = \"m\"\nmax_tokens = 16\nbase_url = \""+base+"\"\n"+extra, 1)
}

// TestKeysGoOnlyWhereThePolicySays: a submitted scenario's live model gets a key only when the
// policy gives that variable, and sends it only to a host the policy binds it to; a variable the
// scenario names that the policy does not give is refused (403, naming the model's key and what
// the server gives); the kind's default variable, not given, leaves the model without a key, so a
// local fake model needs nothing; nothing else of the environment goes with the request.
func TestKeysGoOnlyWhereThePolicySays(t *testing.T) {
	t.Setenv(secretEnv, secretText)
	t.Setenv("OPENAI_API_KEY", "sk-server-default-key")
	t.Setenv("WARREN_TEST_GIVEN_KEY", "sk-given-key")
	t.Setenv("OPENAI_ORG_ID", "org-of-the-server")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Leak: "+secretText)
	fake := startKeyServer(t)
	policy := &hostconfig.ServePolicy{Keys: []hostconfig.ServeKey{{Env: "WARREN_TEST_GIVEN_KEY", Hosts: []string{"127.0.0.1"}}},
		Private: []string{"127.0.0.1", "localhost"}}
	s, c := startServerWith(t, Config{StateRoot: t.TempDir(), Policy: policy})
	submit := func(t *testing.T, scenario string) (int, []byte) {
		t.Helper()
		cc := *c
		cc.t = t
		return cc.post("", "application/zip", bytes.NewReader(zipOf(t,
			zent{name: DefaultBundleEntry, body: []byte(scenario)}, zent{name: "w.toml", body: []byte(attackBlueprint)})))
	}
	for _, tc := range []struct{ name, scenario, key, says string }{
		{"a variable the server does not give", liveScenario(fake.url, "api_key_env = \""+secretEnv+"\"\n"), "models.m", "WARREN_TEST_GIVEN_KEY (to 127.0.0.1)"},
		{"a given key to another host", liveScenario("http://localhost:9/v1", "api_key_env = \"WARREN_TEST_GIVEN_KEY\"\n"), "models.m", "only to 127.0.0.1"},
		{"a pool sending a given key elsewhere", liveScenario(fake.url, "api_key_env = \"WARREN_TEST_GIVEN_KEY\"\n") +
			"[[host.inference_pools]]\nname = \"p\"\nendpoint = \"http://localhost:9/v1\"\nmodels = [\"m\"]\n", "host.inference_pools p", "only to 127.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, raw := submit(t, tc.scenario)
			assertRefused(t, code, raw, tc.key)
			if !strings.Contains(string(raw), tc.says) {
				t.Errorf("the refusal does not say %q: %s", tc.says, raw)
			}
		})
	}
	if n := len(fake.seen()); n != 0 {
		t.Fatalf("a refused submission reached the model's server %d times", n)
	}
	for _, tc := range []struct{ name, extra, auth string }{
		{"the default variable, not given: no key", "", "Bearer none"},
		{"a given key to its host", "api_key_env = \"WARREN_TEST_GIVEN_KEY\"\n", "Bearer sk-given-key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(fake.seen())
			code, raw := submit(t, liveScenario(fake.url, tc.extra))
			var info RunInfo
			if code != http.StatusCreated || json.Unmarshal(raw, &info) != nil {
				t.Fatalf("submit: %d %s", code, raw)
			}
			waitEnd(t, s, info.ID)
			got := fake.seen()[before:]
			if len(got) == 0 {
				t.Fatal("the model's server got no request")
			}
			for _, h := range got {
				if a := h.Get("Authorization"); a != tc.auth {
					t.Errorf("Authorization %q, want %q", a, tc.auth)
				}
				for name, vals := range h {
					for _, v := range vals {
						if strings.Contains(v, secretText) || strings.Contains(v, "org-of-the-server") || strings.Contains(v, "sk-server-default-key") {
							t.Errorf("the request carried the server's environment: %s: %s", name, v)
						}
					}
				}
			}
		})
	}
}
