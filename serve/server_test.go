package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/operator"
	"github.com/warrenhq/warren/recording"
)

var peopleFile = filepath.Join("..", "scenarios", "examples", "people.toml")

// client talks to a test server over loopback with its token.
type client struct {
	t     testing.TB
	url   string
	token string
}

func startServer(t *testing.T) (*Server, *client) {
	t.Helper()
	return startServerWith(t, Config{StateRoot: t.TempDir(), Policy: examplesPolicy(t)})
}

// examplesPolicy allows submissions by path from the shipped examples' folder and from the
// folders extra.
func examplesPolicy(t testing.TB, extra ...string) *hostconfig.ServePolicy {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "scenarios", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	return &hostconfig.ServePolicy{Read: append([]string{dir}, extra...)}
}

// startServerWith is startServer with cfg, serving Handler through Serve (Config.HTTP's limits)
// on a loopback listener, wrapped by wrap when given.
func startServerWith(t testing.TB, cfg Config, wrap ...func(net.Listener) net.Listener) (*Server, *client) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	for _, w := range wrap {
		ln = w(ln)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln, s.Handler()) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return s, &client{t: t, url: "http://" + addr, token: s.Token()}
}

// do sends a request and decodes a JSON answer into out (when not nil), returning the status.
func (c *client) do(method, path string, body, out any) int {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, c.url+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			c.t.Fatalf("%s %s: %d, body does not decode: %v", method, path, resp.StatusCode, err)
		}
	}
	return resp.StatusCode
}

// sseEvent is one Server-Sent Event.
type sseEvent struct{ id, event, data string }

// stream opens a run's event stream after seq `after` and returns its events on a channel, closed
// when the stream ends.
func (c *client) stream(ctx context.Context, run string, after uint64) <-chan sseEvent {
	c.t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url+APIPrefix+"/runs/"+run+"/events", nil)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if after > 0 {
		req.Header.Set("Last-Event-ID", fmt.Sprint(after))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		c.t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	out := make(chan sseEvent, 1024)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		var e sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if e.event != "" {
					out <- e
				}
				e = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				e.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				e.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				e.data = line[6:]
			}
		}
	}()
	return out
}

// TestServedRunWithPeople: a run submitted over the API waits for people; a client follows its
// events over SSE, answers every prompt through the API (a bad answer refused with what is
// valid), and the run finishes. A second client reconnecting with Last-Event-ID gets exactly the
// rest of the trace, the whole stream equals the run directory's trace, and the recording the
// server kept replays it byte for byte.
func TestServedRunWithPeople(t *testing.T) {
	_, c := startServer(t)
	var info RunInfo
	if code := c.do(http.MethodPost, APIPrefix+"/runs", Submission{File: peopleFile}, &info); code != http.StatusCreated {
		t.Fatalf("submit: %d", code)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	events := c.stream(ctx, info.ID, 0)
	var got [][]byte
	answered := map[string]bool{}
	var cut uint64
	for e := range events {
		switch e.event {
		case "header":
			got = append(got, []byte(e.data))
			continue
		case "end":
			continue
		case "trace":
		default:
			t.Fatalf("event %q", e.event)
		}
		if want := fmt.Sprint(len(got)); e.id != want {
			t.Fatalf("event id %s, want %s", e.id, want)
		}
		got = append(got, []byte(e.data))
		if cut == 0 && len(got) > 20 {
			cut = uint64(len(got) - 1)
		}
		if !strings.Contains(e.data, `"kind":"prompt"`) {
			continue
		}
		var p struct {
			Name   string `json:"name"`
			CallID string `json:"call_id"`
			Prompt string `json:"prompt"`
		}
		if err := json.Unmarshal([]byte(e.data), &p); err != nil {
			t.Fatal(err)
		}
		answer := "once"
		if p.Prompt == "question" {
			var bad map[string]string
			if code := c.do(http.MethodPost, APIPrefix+"/runs/"+info.ID+"/answer", Answer{Agent: p.Name, CallID: p.CallID, Answer: "loud"}, &bad); code != http.StatusUnprocessableEntity || !strings.Contains(bad["error"], "formal, casual") {
				t.Errorf("a bad answer: %d %v", code, bad)
			}
			answer = "formal"
		}
		if code := c.do(http.MethodPost, APIPrefix+"/runs/"+info.ID+"/answer", Answer{Agent: p.Name, CallID: p.CallID, Answer: answer, By: "ann"}, nil); code != http.StatusAccepted {
			t.Fatalf("answer %s %s: %d", p.Name, p.CallID, code)
		}
		answered[p.Name+" "+p.CallID] = true
	}
	if len(answered) != 6 {
		t.Fatalf("answered %d prompts, want 6", len(answered))
	}
	var detail RunDetail
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		c.do(http.MethodGet, APIPrefix+"/runs/"+info.ID, nil, &detail)
		if detail.State == StateEnded || time.Since(start) > time.Minute {
			break
		}
	}
	if detail.Status != warren.RunFinished || len(detail.Failures) != 0 || detail.Counts.Agents != 22 {
		t.Fatalf("run %+v", detail)
	}
	trace, err := os.ReadFile(filepath.Join(detail.Dir, warren.RunTraceFile))
	if err != nil {
		t.Fatal(err)
	}
	if streamed := append(bytes.Join(got, []byte("\n")), '\n'); !bytes.Equal(streamed, trace) {
		t.Fatalf("the streamed events differ from the trace file (%d vs %d bytes)", len(streamed), len(trace))
	}
	// /metrics, scraped and parsed as Prometheus reads it, holds the run's final figures.
	families := scrape(t, c)
	if got := metricValue(t, families, "warren_agents_by_status", info.ID, "status", "done"); got != 22 {
		t.Errorf("warren_agents_by_status{status=done} = %v, want 22", got)
	}
	if got := metricValue(t, families, "warren_model_turns_total", info.ID, "", ""); got != float64(detail.Counts.ModelTurns) {
		t.Errorf("warren_model_turns_total = %v, want %d", got, detail.Counts.ModelTurns)
	}
	// Both lanes are listed, empty once the run has ended (timeline_test.go sees them fill).
	for _, lane := range []string{"model", "tool"} {
		if got := metricValue(t, families, "warren_lane_queued_jobs", info.ID, "lane", lane); got != 0 {
			t.Errorf("warren_lane_queued_jobs{lane=%s} = %v after the run, want 0", lane, got)
		}
	}
	// A reconnect after event `cut` gets the rest, and nothing twice.
	var rest [][]byte
	for e := range c.stream(ctx, info.ID, cut) {
		if e.event == "trace" {
			rest = append(rest, []byte(e.data))
		}
	}
	if !bytes.Equal(bytes.Join(rest, nil), bytes.Join(got[cut+1:], nil)) {
		t.Fatalf("the reconnect got %d events, want the %d after %d", len(rest), len(got)-int(cut)-1, cut)
	}
	// The recording replays the run exactly: the people's answers are in it.
	tape, err := recording.ReadFile(filepath.Join(detail.Dir, RecordingFile))
	if err != nil {
		t.Fatal(err)
	}
	// It names the trace beside it, so host replay --check finds it wherever the folder goes.
	if want := filepath.Join(detail.Dir, warren.RunTraceFile); tape.Header.TraceFile != want {
		t.Errorf("the recording names the trace %q, want %q", tape.Header.TraceFile, want)
	}
	sc, opt, err := warren.LoadReplay(tape, "")
	if err != nil {
		t.Fatal(err)
	}
	var replayed bytes.Buffer
	opt.Trace = &replayed
	if _, err := warren.Run(t.Context(), sc, opt); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(replayed.Bytes(), trace) {
		t.Fatal("the replay of the served run's recording differs from its trace")
	}
}

// TestServedRunControls: listing, agents paged and filtered, one agent's log, a kill, pause and
// resume, a cancel of a run that waits for people, and commands on an ended run refused.
func TestServedRunControls(t *testing.T) {
	_, c := startServer(t)
	seed := uint64(99)
	var info RunInfo
	if code := c.do(http.MethodPost, APIPrefix+"/runs", Submission{File: peopleFile, Launch: Launch{Seed: &seed}}, &info); code != http.StatusCreated {
		t.Fatalf("submit: %d", code)
	}
	run := APIPrefix + "/runs/" + info.ID
	// Wait until both editors wait on their question and every reader is done.
	var prompts []operator.Prompt
	for start := time.Now(); len(prompts) < 2; time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > time.Minute {
			t.Fatal("no prompts")
		}
		c.do(http.MethodGet, run+"/prompts", nil, &prompts)
	}
	if code := c.do(http.MethodPost, run+"/pause", nil, nil); code != http.StatusAccepted {
		t.Fatalf("pause: %d", code)
	}
	var runs []RunInfo
	c.do(http.MethodGet, APIPrefix+"/runs", nil, &runs)
	if len(runs) != 1 || runs[0].ID != info.ID || runs[0].State != StatePaused || runs[0].Prompts != 2 {
		t.Fatalf("runs %+v", runs)
	}
	if code := c.do(http.MethodPost, run+"/resume", nil, nil); code != http.StatusAccepted {
		t.Fatalf("resume: %d", code)
	}
	var page struct {
		Items []struct{ Name string } `json:"items"`
		Total int                     `json:"total"`
		Next  int64                   `json:"next"`
	}
	c.do(http.MethodGet, run+"/agents?group=editors", nil, &page)
	if page.Total != 2 || len(page.Items) != 2 || page.Items[0].Name != "editors-0" {
		t.Fatalf("editors page %+v", page)
	}
	seen := 0
	for after := int64(0); ; {
		page.Items, page.Next = nil, 0 // a last page has no next
		c.do(http.MethodGet, fmt.Sprintf("%s/agents?limit=5&after=%d", run, after), nil, &page)
		seen += len(page.Items)
		if page.Next == 0 {
			break
		}
		after = page.Next
	}
	if seen != 22 {
		t.Fatalf("paging saw %d agents, want 22", seen)
	}
	if code := c.do(http.MethodGet, run+"/agent?name=nobody", nil, nil); code != http.StatusNotFound {
		t.Errorf("an unknown agent: %d", code)
	}
	if code := c.do(http.MethodPost, run+"/kill", Kill{Agent: "editors-1", By: "ann"}, nil); code != http.StatusAccepted {
		t.Fatalf("kill: %d", code)
	}
	var agent struct {
		Status string `json:"status"`
	}
	for start := time.Now(); agent.Status != "killed"; time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			var raw map[string]any
			c.do(http.MethodGet, run+"/agent?name=editors-1", nil, &raw)
			t.Fatalf("editors-1 is %q, want killed: %v", agent.Status, raw)
		}
		c.do(http.MethodGet, run+"/agent?name=editors-1", nil, &agent)
	}
	if code := c.do(http.MethodPost, run+"/cancel?by=ann", nil, nil); code != http.StatusAccepted {
		t.Fatalf("cancel: %d", code)
	}
	var detail RunDetail
	for start := time.Now(); detail.State != StateEnded; time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > time.Minute {
			t.Fatal("the cancelled run did not end")
		}
		c.do(http.MethodGet, run, nil, &detail)
	}
	if detail.Status != warren.RunInterrupted || !strings.Contains(detail.Error, "cancelled by a person") {
		t.Fatalf("cancelled run %+v", detail.RunInfo)
	}
	if code := c.do(http.MethodPost, run+"/pause", nil, nil); code != http.StatusConflict {
		t.Errorf("pause of an ended run: %d", code)
	}
}

// TestServerRefuses: a missing or wrong token, a public address without AllowRemote, a scenario
// that does not load (with its file:line:key error), an unknown run and unknown body fields.
func TestServerRefuses(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:7070", "192.0.2.1:80", "example.com:80"} {
		if _, err := New(Config{Listen: addr, StateRoot: t.TempDir()}); !errors.Is(err, ErrRemote) {
			t.Errorf("listen %s: %v, want ErrRemote", addr, err)
		}
	}
	if _, err := New(Config{Listen: "0.0.0.0:7070", AllowRemote: true, StateRoot: t.TempDir()}); err != nil {
		t.Errorf("AllowRemote: %v", err)
	}
	bads := t.TempDir()
	s, c := startServerWith(t, Config{StateRoot: t.TempDir(), Policy: examplesPolicy(t, bads)})
	if len(s.Token()) < 32 {
		t.Fatalf("token %q", s.Token())
	}
	for _, tok := range []string{"", "wrong", s.Token() + "x"} {
		bad := *c
		bad.token = tok
		var e map[string]string
		if code := bad.do(http.MethodGet, APIPrefix+"/runs", nil, &e); code != http.StatusUnauthorized || e["error"] == "" {
			t.Errorf("token %q: %d %v", tok, code, e)
		}
	}
	bad := filepath.Join(bads, "bad.toml")
	if err := os.WriteFile(bad, []byte("name = \"bad\"\nseeed = 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var e map[string]string
	if code := c.do(http.MethodPost, APIPrefix+"/runs", Submission{File: bad}, &e); code != http.StatusUnprocessableEntity || !strings.Contains(e["error"], "bad.toml:2") || !strings.Contains(e["error"], "seeed") {
		t.Errorf("a bad scenario: %d %v", code, e)
	}
	if code := c.do(http.MethodPost, APIPrefix+"/runs", map[string]any{"file": peopleFile, "speed": 3}, &e); code != http.StatusBadRequest || !strings.Contains(e["error"], "speed") {
		t.Errorf("an unknown field: %d %v", code, e)
	}
	if code := c.do(http.MethodGet, APIPrefix+"/runs/r99/agents", nil, &e); code != http.StatusNotFound {
		t.Errorf("an unknown run: %d", code)
	}
	// The token is kept: a server on the same state root takes it again.
	again, err := New(Config{StateRoot: s.cfg.StateRoot})
	if err != nil || again.Token() != s.Token() {
		t.Errorf("the kept token: %v %q", err, again.Token())
	}
}

// scrape reads /metrics with the token, as a Prometheus scraper would, and parses it.
func scrape(t *testing.T, c *client) map[string]*dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.url+"/metrics", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("/metrics without the token: %v %v", err, resp)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return families
}

// metricValue is the value of family's series of run (and label=value, when label is set).
func metricValue(t *testing.T, families map[string]*dto.MetricFamily, family, run, label, value string) float64 {
	t.Helper()
	f, ok := families[family]
	if !ok {
		t.Fatalf("/metrics has no %s", family)
	}
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["run"] != run || (label != "" && labels[label] != value) {
			continue
		}
		switch {
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue()
		}
	}
	t.Fatalf("/metrics has no %s for run %s %s=%s", family, run, label, value)
	return 0
}

// TestRestartNumbersAfterEarlierRuns: a server started on a state root an earlier one used
// numbers its runs after the runs it finds there, so a submission never collides with a kept
// run directory.
func TestRestartNumbersAfterEarlierRuns(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join("..", "scenarios", "examples", "quickstart.toml")
	ids := []string{}
	for range 2 {
		s, err := New(Config{StateRoot: root, Policy: examplesPolicy(t)})
		if err != nil {
			t.Fatal(err)
		}
		run, err := s.Submit(Submission{File: file, Launch: Launch{Agents: 3}})
		if err != nil {
			t.Fatal(err)
		}
		<-run.Done()
		if err := s.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, run.Info().ID)
	}
	if ids[0] != "r1-quickstart" || ids[1] != "r2-quickstart" {
		t.Errorf("run ids across a restart: %v, want r1-quickstart then r2-quickstart", ids)
	}
	for _, id := range ids {
		if _, err := os.Stat(filepath.Join(root, "runs", id, warren.RunSummaryFile)); err != nil {
			t.Errorf("run %s: %v", id, err)
		}
	}
}

// TestQueryTokenOnlyOnTheEventsStream: a token in the address (?token=) opens a run's live events
// stream, which a browser's EventSource reaches with no headers, and no other route, reading or
// changing: an address ends up in proxies' logs, history and Referer headers.
func TestQueryTokenOnlyOnTheEventsStream(t *testing.T) {
	s, c := startServer(t)
	var run map[string]any
	if code := c.do(http.MethodPost, APIPrefix+"/runs", Submission{File: peopleFile}, &run); code != http.StatusCreated && code != http.StatusAccepted && code != http.StatusOK {
		t.Fatalf("submit: %d %v", code, run)
	}
	id, _ := run["id"].(string)
	if id == "" {
		t.Fatalf("submit answered %v, want a run id", run)
	}
	q := "?token=" + s.Token()
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, APIPrefix + "/runs/" + id + "/events" + q + "&after=0", http.StatusOK},
		{http.MethodGet, APIPrefix + "/runs" + q, http.StatusUnauthorized},
		{http.MethodGet, APIPrefix + "/runs/" + id + q, http.StatusUnauthorized},
		{http.MethodGet, APIPrefix + "/runs/" + id + "/trace" + q, http.StatusUnauthorized},
		{http.MethodGet, "/metrics" + q, http.StatusUnauthorized},
		{http.MethodPost, APIPrefix + "/runs/" + id + "/cancel" + q, http.StatusUnauthorized},
		{http.MethodPost, APIPrefix + "/runs/" + id + "/events" + q, http.StatusUnauthorized},
		{http.MethodGet, APIPrefix + "/runs/" + id + "/x/events" + q, http.StatusUnauthorized},
	} {
		req, err := http.NewRequest(tc.method, c.url+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, resp.StatusCode, tc.want)
		}
	}
}
