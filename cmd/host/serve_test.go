package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warrenhq/warren/serve"
)

// TestServeCLI: host serve as a real process on a loopback port it picks; host runs and host
// answer as its clients (listing, a prompt answered by the CLI); a public address refused; and
// SIGTERM cancels the run still waiting for people, which its summary then says.
func TestServeCLI(t *testing.T) {
	bin, repo := buildBinary(t)
	root := t.TempDir()
	if code, _, errOut := runIn(t, bin, repo, nil, "serve", "--listen", "0.0.0.0:7070", "--state-root", root); code != 2 || !strings.Contains(errOut, "--allow-remote") {
		t.Fatalf("a public address: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := runIn(t, bin, repo, nil, "serve", "--event-memory", "0", "--state-root", root); code != 2 || !strings.Contains(errOut, "1 to 1048576 MiB") {
		t.Fatalf("no event memory: exit %d\n%s", code, errOut)
	}
	// Its runs' spans go to a real OTLP receiver (otel_test.go).
	rc := newOTLPReceiver(t, http.StatusOK)
	for _, tc := range []struct{ flag, says string }{
		{"--allow-folder=no-such-folder", "--allow-folder no-such-folder: not a folder"},
		{"--allow-key=A KEY", "--allow-key A KEY: invalid environment variable name"},
		{"--allow-key=K=https://x.example", "invalid host name"},
		{"--allow-host=a/b", "--allow-host a/b: invalid host name"},
		{"--allow-origin=x.example", "--allow-origin x.example: invalid origin"},
		{"--allow-key=HOME", "a key passed to tools"},
		{"--max-conns=0", "--max-conns 0"},
	} {
		if code, _, errOut := runIn(t, bin, repo, nil, "serve", "--state-root", root, tc.flag); code != 2 || !strings.Contains(errOut, tc.says) {
			t.Errorf("%s: exit %d, want 2 saying %q:\n%s", tc.flag, code, tc.says, errOut)
		}
	}
	// The examples' folder is the only one whose scenarios may be submitted by path.
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--state-root", root, "--allow-folder", filepath.Join("scenarios", "examples"))
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "OTEL_EXPORTER_OTLP_ENDPOINT="+rc.srv.URL, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=",
		"OTEL_SDK_DISABLED=", "OTEL_TRACES_EXPORTER=", "OTEL_EXPORTER_OTLP_PROTOCOL=", "OTEL_TRACES_SAMPLER=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		t.Fatalf("host serve printed nothing: %s", stderr.String())
	}
	m := regexp.MustCompile(`^dashboard: (http://[0-9.:]+)/\?token=(\S+)$`).FindStringSubmatch(lines.Text())
	if m == nil {
		t.Fatalf("first line %q, want the dashboard's address", lines.Text())
	}
	url, pageToken := m[1], m[2]
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "serving on "+url+"/api/v1") {
		t.Fatalf("second line %q", lines.Text())
	}
	go func() {
		for lines.Scan() {
		}
	}()
	token, err := os.ReadFile(filepath.Join(root, "token"))
	if err != nil {
		t.Fatal(err)
	}
	if pageToken != strings.TrimSpace(string(token)) {
		t.Errorf("the dashboard's address carries %q, not the kept token", pageToken)
	}
	// The printed address serves the dashboard's page, and the page its charts library.
	for path, want := range map[string]string{"/?token=" + pageToken: "text/html", "/echarts.min.js": "text/javascript"} {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), want) || len(page) < 500 {
			t.Errorf("GET %s: %s %s, %d bytes", path, resp.Status, resp.Header.Get("Content-Type"), len(page))
		}
	}
	submit := func(file string) *http.Response {
		body, _ := json.Marshal(serve.Submission{File: file})
		req, _ := http.NewRequest(http.MethodPost, url+"/api/v1/runs", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if resp := submit(filepath.Join(repo, "scenarios", "testdata", "scripts", "inherit.toml")); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a scenario outside the allowed folder: %s, want 403", resp.Status)
	}
	resp := submit(filepath.Join(repo, "scenarios", "examples", "people.toml"))
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("submit: %v", resp.Status)
	}
	var run serve.RunInfo
	_ = json.NewDecoder(resp.Body).Decode(&run)
	resp.Body.Close()
	client := []string{"--server", url, "--state-root", root}
	var listing string
	for start := time.Now(); !strings.Contains(listing, "editors-1-t0-c0"); time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > time.Minute {
			t.Fatalf("no prompts listed:\n%s", listing)
		}
		_, listing, _ = runIn(t, bin, repo, nil, append([]string{"answer", run.ID}, client...)...)
	}
	if !strings.Contains(listing, "Which tone should editors-0 write in? [formal/casual]") {
		t.Errorf("the listing does not say what is asked:\n%s", listing)
	}
	if code, out, errOut := runIn(t, bin, repo, nil, append([]string{"answer", run.ID, "editors-0", "editors-0-t0-c0", "loud"}, client...)...); code != 2 || !strings.Contains(errOut, "formal, casual") {
		t.Errorf("a bad answer: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runIn(t, bin, repo, nil, append([]string{"answer", run.ID, "editors-0", "editors-0-t0-c0", "formal", "--by", "ann"}, client...)...); code != 0 || !strings.Contains(out, "answered editors-0's editors-0-t0-c0: formal") {
		t.Fatalf("answer: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := runIn(t, bin, repo, nil, append([]string{"runs"}, client...)...)
	if code != 0 || !strings.Contains(out, run.ID) || !strings.Contains(out, "running") {
		t.Fatalf("runs: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := runIn(t, bin, repo, nil, "runs", "--server", url, "--token", "wrong"); code != 2 || !strings.Contains(errOut, "401") {
		t.Errorf("a wrong token: exit %d %s", code, errOut)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("host serve after SIGTERM: %v\n%s", err, stderr.String())
	}
	summary, err := os.ReadFile(filepath.Join(root, "runs", run.ID, "summary.json"))
	if err != nil || !strings.Contains(string(summary), `"interrupted"`) {
		t.Fatalf("the cancelled run's summary: %v\n%s", err, summary)
	}
	// Before it exited, host serve flushed the run's spans: one per spawn, turn and call traced.
	kinds := traceKinds(t, filepath.Join(root, "runs", run.ID, "trace.jsonl"))
	ops, _ := rc.count()
	want := map[string]int{"invoke_workflow": 1, "invoke_agent": kinds["spawn"], "chat": kinds["model_turn"], "execute_tool": kinds["tool_call"]}
	for op, n := range want {
		if ops[op] != n || n == 0 {
			t.Errorf("%d %s spans, want %d (all received: %v)", ops[op], op, n, ops)
		}
	}
}

// TestRunInteractive: host run --interactive asks each open prompt on the terminal and goes on
// with the answers typed, refusing one that does not fit and asking again.
func TestRunInteractive(t *testing.T) {
	bin, repo := buildBinary(t)
	cmd := exec.Command(bin, "run", filepath.Join("scenarios", "examples", "people.toml"), "--interactive")
	cmd.Dir = repo
	cmd.Stdin = strings.NewReader("loud\nformal\ncasual\nonce\nonce\nrun\nrun\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"asks (ask_user_choice, tick 0): Which tone should", "(valid: formal, casual)", "may it run? keys write_file [deny/once/stage/run]", "agents       22: done 22", "expectations all 0 held"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
}
