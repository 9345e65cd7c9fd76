package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestHostileProviderRun runs a scenario against a provider on loopback that answers one agent
// with an endless body and another with more tool calls than its pool allows, through the command
// line: each agent's turn fails with the cap's error in its model_turn event and its reason, the
// third agent, answered sanely, finishes, the host reads a bounded part of the endless body, and
// the recording keeps each capped attempt (its error and status 200), so host replay --check
// reproduces the run byte for byte without the provider.
func TestHostileProviderRun(t *testing.T) {
	var written atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.Contains(string(body), "(agent 0)"):
			_, _ = io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"`)
			chunk := strings.Repeat("a", 64<<10)
			for written.Load() < 400<<20 {
				n, err := io.WriteString(w, chunk)
				written.Add(int64(n))
				if err != nil {
					return
				}
			}
		case strings.Contains(string(body), "(agent 1)"):
			var calls []string
			for i := range 3 {
				calls = append(calls, fmt.Sprintf(`{"id":"c%d","type":"function","function":{"name":"read_file","arguments":"{\"path\": \"x\"}"}}`, i))
			}
			_, _ = io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","tool_calls":[`+strings.Join(calls, ",")+`]}}]}`)
		default:
			_, _ = io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Nothing to add."}}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	writeFile(t, dir, "worker.toml", `name = "worker"
entry = "work"

[[stages]]
name = "work"
prompt = "Answer."
available_tools = ["read_file"]
max_iterations = 3
`)
	scenario := writeFile(t, dir, "hostile.toml", fmt.Sprintf(`name = "hostile"
seed = 1

[blueprints]
worker = "worker.toml"

[models.live]
kind = "openai"
model = "m"
base_url = %q
max_response_bytes = 1048576

[[host.inference_pools]]
name = "edge"
models = ["m"]
max_tool_calls = 2

[[groups]]
name = "workers"
count = 3
blueprint = "worker"
model = "live"
task = "Answer (agent {{.Index}})."
`, srv.URL+"/v1"))
	tr, rec := filepath.Join(dir, "t.jsonl"), filepath.Join(dir, "r.jsonl")
	r := host(t, "run", scenario, "--trace", tr, "--record", rec, "--no-progress")
	if r.code != exitOK {
		t.Fatalf("host run exited %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if n := written.Load(); n > 64<<20 {
		t.Errorf("the provider wrote %d bytes before the host hung up: the cap of 1 MiB did not hold", n)
	}
	trace, err := os.ReadFile(tr)
	if err != nil {
		t.Fatal(err)
	}
	for agent, want := range map[string]string{
		"workers-0": "openai: the response passed max_response_bytes = 1048576 bytes; the rest was not read",
		"workers-1": "openai: the answer has 3 tool calls, past max_tool_calls = 2",
	} {
		var turn, end string
		for _, line := range strings.Split(string(trace), "\n") {
			if !strings.Contains(line, `"name":"`+agent+`"`) {
				continue
			}
			if strings.Contains(line, `"kind":"model_turn"`) {
				turn = line
			}
			if strings.Contains(line, `"kind":"terminal"`) {
				end = line
			}
		}
		if !strings.Contains(turn, `"error":`+quote(want)) || !strings.Contains(turn, `"attempts":1`) {
			t.Errorf("%s's model_turn: %s\nwant the error %q after one attempt", agent, turn, want)
		}
		if !strings.Contains(end, `"status":"failed","reason":`+quote("model error: "+want)) {
			t.Errorf("%s's end: %s\nwant failed with the cap's error", agent, end)
		}
	}
	if !strings.Contains(string(trace), `"name":"workers-2","kind":"model_turn","stage":"work","model":"openai:live","iteration":0,"text":"Nothing to add."`) {
		t.Errorf("the sane agent's turn is missing from the trace")
	}
	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(data), `"err":"openai: `) != 2 || strings.Count(string(data), `"status":200`) != 2 {
		t.Errorf("the recording does not keep both capped attempts with their status:\n%s", data)
	}
	srv.Close()
	r = host(t, "replay", rec, "--check")
	wantCode(t, r, exitOK)
	if !strings.Contains(r.stdout, "replay       identical to ") {
		t.Fatalf("stdout:\n%s", r.stdout)
	}
}

// quote is s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestDeepScenario checks that host run and host validate refuse a scenario of dotted keys
// 20,000 deep (a minute and a gigabyte before the cap) with the depth cap's error, exit 2.
func TestDeepScenario(t *testing.T) {
	deep := writeFile(t, t.TempDir(), "deep.toml", "name = \"deep\"\n"+strings.Repeat("a.", 19999)+"a = 1\n")
	for _, cmd := range []string{"run", "validate"} {
		r := host(t, cmd, deep)
		wantCode(t, r, exitBadInput)
		if !strings.Contains(r.stderr, deep+":2:129: a.a.a.") || !strings.Contains(r.stderr, "nested more than 64 levels deep") {
			t.Errorf("host %s: stderr does not name the file, line, key and cap:\n%.600s", cmd, r.stderr)
		}
	}
}

// TestWideScenario: a scenario whose [params] table has 100,000 keys (1.4 MB; it took 19 s to
// load, the TOML decoder comparing each key with its table's) is refused at the key past
// tomlfile.MaxTableKeys, naming the file, line, table and cap, by host run and host validate.
func TestWideScenario(t *testing.T) {
	var b strings.Builder
	b.WriteString("name = \"wide\"\n[params]\n")
	for i := range 100_000 {
		fmt.Fprintf(&b, "k%d = %d\n", i, i)
	}
	wide := writeFile(t, t.TempDir(), "wide.toml", b.String())
	for _, cmd := range []string{"run", "validate"} {
		r := host(t, cmd, wide)
		wantCode(t, r, exitBadInput)
		if !strings.Contains(r.stderr, wide+":4099:1: params: a table may have at most 4096 keys") {
			t.Errorf("host %s: stderr does not name the file, line, table and cap:\n%.600s", cmd, r.stderr)
		}
	}
}
