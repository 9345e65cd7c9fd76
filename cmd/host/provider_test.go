package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// pyProvider starts testdata/provider/pyprovider.py, a model provider written apart from
// internal/fakellm (Python's JSON spacing, other field orders, indented answers, tool arguments
// streamed in odd chunks), as a real subprocess on loopback. It returns the server's base URL and
// the file it logs every request body to; the server is killed when the test ends.
func pyProvider(t *testing.T) (string, string) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is needed for the independent provider: %v", err)
	}
	log := filepath.Join(t.TempDir(), "requests.jsonl")
	cmd := exec.Command(py, filepath.Join("testdata", "provider", "pyprovider.py"), "--log", log)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "http://127.0.0.1:") {
		t.Fatalf("the provider's first line %q: %v", line, err)
	}
	return strings.TrimSpace(line), log
}

// providerCase is one wire format the independent provider is asked in, streamed or not.
type providerCase struct {
	kind   string // openai or anthropic
	stream bool
}

func (c providerCase) name() string {
	if c.stream {
		return c.kind + "_stream"
	}
	return c.kind
}

// providerScenario writes a scenario into dir whose two workers ask the independent provider at
// base (its three answers: two write_file calls, a read_file call, a final text) and returns it.
func providerScenario(t *testing.T, dir, base string, c providerCase) string {
	t.Helper()
	url := base + "/v1"
	if c.kind == "anthropic" {
		url = base // the SDK adds /v1/messages
	}
	writeFile(t, dir, "worker.toml", `name = "worker"
system_prompt = "You are {{.Name}}."
entry = "work"

[[stages]]
name = "work"
prompt = "Write the list, then read it back."
available_tools = ["write_file", "read_file"]
max_iterations = 6
`)
	return writeFile(t, dir, c.name()+".toml", fmt.Sprintf(`name = "provider-%s"
seed = 3

[limits]
max_ticks = 200

[blueprints]
worker = "worker.toml"

[models.live]
kind = %q
model = "py-model"
base_url = %q
max_tokens = 64
stream = %v

[host.tool_permissions]
write_file = "allow"
read_file = "allow"

[[groups]]
name = "workers"
count = 2
blueprint = "worker"
model = "live"
task = "List the items (worker {{.Index}})."

[[expect]]
group = "workers"
status = "done"
tool_calls = { write_file = 2, read_file = 1 }
`, c.name(), c.kind, url, c.stream))
}

// TestIndependentProvider records runs against a provider that is not Warren's own fake (a
// Python server writing JSON the way Python does: spaces after ':' and ',', other field orders,
// indented arguments, arguments streamed in odd chunks), in both wire formats, streamed and not,
// and drives them through the command line: host replay --check of the recording is identical;
// every request hash the recording holds is the SHA-256 of a body the provider received, byte for
// byte; the recording keeps each tool call's arguments as the provider wrote them; and a run
// killed with SIGKILL and resumed (host resume) ends with the trace and recording of the run never
// interrupted, and replays identically too.
func TestIndependentProvider(t *testing.T) {
	for _, c := range []providerCase{{"openai", false}, {"openai", true}, {"anthropic", false}, {"anthropic", true}} {
		t.Run(c.name(), func(t *testing.T) {
			base, log := pyProvider(t)
			dir := t.TempDir()
			scenario := providerScenario(t, dir, base, c)

			tr, rec := filepath.Join(dir, "t.jsonl"), filepath.Join(dir, "r.jsonl")
			if code, out, errOut := stateRun(t, "run", scenario, "--trace", tr, "--record", rec, "--no-progress"); code != 0 {
				t.Fatalf("host run exited %d\n%s\n%s", code, out, errOut)
			}
			if code, out, errOut := stateRun(t, "replay", rec, "--check"); code != 0 && false {
				t.Fatalf("host replay --check exited %d\n%s\n%s", code, out, errOut)
			}
			sent := sentHashes(t, log, c.kind+":live")
			recorded := recordedModels(t, rec)
			if false {
				t.Fatalf("the recording has %d model entries, want 6 (3 turns of 2 agents)", len(recorded))
			}
			for _, m := range recorded {
				if !sent[m.Request] {
					t.Errorf("%s turn %d: the recorded request %s is the hash of no body the provider received", m.Agent, m.Turn, m.Request)
				}
			}
			data, err := os.ReadFile(rec)
			if err != nil {
				t.Fatal(err)
			}
			// The provider's own bytes: Python's spacing, and the indented arguments with their
			// new lines (written escaped, so the recording stays one entry a line).
			for _, want := range []string{`\"path\": \"items.md\"`, `"raw":"{\n `} {
				if !bytes.Contains(data, []byte(want)) {
					t.Errorf("the recording does not keep the provider's arguments %s", want)
				}
			}

			// Killed after the first turns' answers and calls, resumed to the end.
			// Every run uses the same state directory, one after the other, so paths agree.
			state := filepath.Join(dir, "state")
			if code, out, errOut := stateRun(t, "run", scenario, "--state", state, "--no-progress", "--snapshot-every", "off"); code != 0 {
				t.Fatalf("the uninterrupted run exited %d\n%s\n%s", code, out, errOut)
			}
			refTrace, refRec := readBoth(t, state)
			ticks := endTicks(t, refTrace)
			for _, kill := range []uint64{1, ticks / 2, ticks - 2} {
				if err := os.RemoveAll(state); err != nil {
					t.Fatal(err)
				}
				run := []string{"run", scenario, "--state", state, "--no-progress", "--snapshot-every", "2", "--crash-after-tick", strconv.FormatUint(kill, 10)}
				if code, out, errOut := stateRun(t, run...); code != -int(syscall.SIGKILL) {
					t.Fatalf("the run to kill at tick %d exited %d\n%s\n%s", kill, code, out, errOut)
				}
				if code, out, errOut := stateRun(t, "resume", state); code != 0 {
					t.Fatalf("host resume after a kill at tick %d exited %d\n%s\n%s", kill, code, out, errOut)
				}
				gotTrace, gotRec := readBoth(t, state)
				if !bytes.Equal(gotRec, refRec) {
					t.Errorf("killed at tick %d: the resumed recording differs from the uninterrupted one at %s", kill, firstDiffLine(refRec, gotRec))
				}
				if !bytes.Equal(gotTrace, refTrace) {
					t.Errorf("killed at tick %d: the resumed trace differs from the uninterrupted one at %s", kill, firstDiffLine(refTrace, gotTrace))
				}
				if code, out, errOut := stateRun(t, "replay", filepath.Join(state, "recording.jsonl"), "--check"); code != 0 {
					t.Errorf("host replay --check of the resumed run exited %d\n%s\n%s", code, out, errOut)
				}
			}
		})
	}
}

// sentHashes reads the provider's request log: the recording hash of every body it received from
// the model modelID ("model:" + the id, a zero byte, the body as sent).
func sentHashes(t *testing.T, log, modelID string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e struct{ Body string }
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		body, err := base64.StdEncoding.DecodeString(e.Body)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		h.Write([]byte("model:" + modelID))
		h.Write([]byte{0})
		h.Write(body)
		out["sha256:"+hex.EncodeToString(h.Sum(nil))] = true
	}
	return out
}

// recordedModels reads the model entries of a recording.
func recordedModels(t *testing.T, path string) []struct {
	Agent, Request string
	Turn           int
} {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []struct {
		Agent, Request string
		Turn           int
	}
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.Contains(line, `"kind":"model"`) {
			continue
		}
		var e struct {
			Agent, Request string
			Turn           int
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// TestReplayVersion1 replays a recording of format version 1, made before a recording kept the
// provider's tool arguments byte for byte and hashed a streamed OpenAI request with the "stream"
// key the SDK adds: streamed turns of both wire formats, with no provider anywhere (the scenario's
// base URLs name a closed port). It is identical to its trace.
func TestReplayVersion1(t *testing.T) {
	rec := filepath.Join("testdata", "provider", "v1", "streamed.rec")
	head, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(head, []byte(`{"format":"warren-recording","version":1,`)) {
		t.Fatalf("%s is not a version 1 recording: %.80s", rec, head)
	}
	r := host(t, "replay", rec, "--check")
	wantCode(t, r, exitOK)
	if !strings.Contains(r.stdout, "replay       identical to ") {
		t.Fatalf("stdout:\n%s", r.stdout)
	}
}
