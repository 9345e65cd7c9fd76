package serve

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// benchAgents is the served run's size: the quickstart at 2,000 agents writes about 48,000
// events (10 MB of trace) in about a second, long enough that attaching and detaching clients
// costs nothing next to it.
const benchAgents = 2000

// submitPaused submits the quickstart at agents agents, held before its first tick.
func submitPaused(b *testing.B, c *client, agents int) RunInfo {
	b.Helper()
	var info RunInfo
	sub := Submission{File: quickstartFile, Launch: Launch{Agents: agents, Paused: true}}
	if code := c.do(http.MethodPost, APIPrefix+"/runs", sub, &info); code != http.StatusCreated {
		b.Fatalf("submit: %d", code)
	}
	return info
}

// BenchmarkServedRun is a served run's time from resume to end (its trace, recording and run
// directory written), with no live-event client and with ten that read every event as it comes
// and throw it away. The ratio of the two is what watchers cost the world (issue 18's target:
// under 5%):
//
//	go test ./serve/ -run '^$' -bench BenchmarkServedRun -benchtime 5x -count 3
func BenchmarkServedRun(b *testing.B) {
	for _, clients := range []int{0, 10} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			s, c := startServerWith(b, Config{StateRoot: b.TempDir(), Policy: examplesPolicy(b)})
			var events uint64
			for range b.N {
				b.StopTimer()
				info := submitPaused(b, c, benchAgents)
				wait := attachWatchers(b, c, info.ID, clients, func(body io.Reader) int64 {
					n, _ := io.Copy(io.Discard, body)
					return n
				})
				b.StartTimer()
				resume(b, c, info.ID)
				r, _ := s.Run(info.ID)
				<-r.Done()
				b.StopTimer()
				got := wait()
				waitEnd(b, s, info.ID)
				events += r.events.last()
				for i, n := range got {
					if n < 1<<20 {
						b.Fatalf("client %d read %d bytes of the run's events", i, n)
					}
				}
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// attachWatchers opens n live-event streams on the run, each read to its end by read in a
// goroutine of its own, and returns once the server counts them all; the function it returns
// waits for the streams to end and gives what each read returned.
func attachWatchers[T any](b *testing.B, c *client, id string, n int, read func(io.Reader) T) func() []T {
	b.Helper()
	var wg sync.WaitGroup
	got := make([]T, n)
	for i := range n {
		body := openEvents(b, c, id)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer body.Close()
			got[i] = read(body)
		}()
	}
	waitWatchers(b, c, APIPrefix+"/runs/"+id, n)
	return func() []T {
		wg.Wait()
		return got
	}
}

// resume lets a run submitted paused go on.
func resume(b *testing.B, c *client, id string) {
	b.Helper()
	if code := c.do(http.MethodPost, APIPrefix+"/runs/"+id+"/resume", nil, nil); code != http.StatusAccepted {
		b.Fatalf("resume: %d", code)
	}
}

// openEvents opens a run's live events and returns the stream's body.
func openEvents(b *testing.B, c *client, id string) io.ReadCloser {
	b.Helper()
	req, err := http.NewRequest(http.MethodGet, c.url+APIPrefix+"/runs/"+id+"/events", nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("events: %d", resp.StatusCode)
	}
	return resp.Body
}

// BenchmarkEventDelivery is how long an event takes from the world's adding it to the run's log
// (as its tick writes it) to a live-event client's reading its id line, over loopback, with the
// world running flat out: p50, p99 and the worst, in microseconds, over every event of the runs,
// for one client and for ten.
//
//	go test ./serve/ -run '^$' -bench BenchmarkEventDelivery -benchtime 3x -count 3
func BenchmarkEventDelivery(b *testing.B) {
	for _, clients := range []int{1, 10} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			s, c := startServerWith(b, Config{StateRoot: b.TempDir(), Policy: examplesPolicy(b)})
			var added []time.Time
			s.eventAdded = func(seq uint64) {
				if int(seq) >= len(added) {
					added = append(added, make([]time.Time, int(seq)+1-len(added))...)
				}
				added[seq] = time.Now()
			}
			var lags []time.Duration
			for range b.N {
				added = added[:0]
				info := submitPaused(b, c, benchAgents)
				wait := attachWatchers(b, c, info.ID, clients, receiveTimes)
				resume(b, c, info.ID)
				waitEnd(b, s, info.ID)
				got := wait()
				r, _ := s.Run(info.ID)
				n := int(r.events.last())
				for i, times := range got {
					if len(times) != n+1 {
						b.Fatalf("client %d got %d events, want %d", i, len(times)-1, n)
					}
					for seq := 1; seq < len(times); seq++ {
						lags = append(lags, times[seq].Sub(added[seq]))
					}
				}
			}
			slices.Sort(lags)
			at := func(q float64) float64 { return float64(lags[int(q*float64(len(lags)-1))].Microseconds()) }
			b.ReportMetric(at(0.5), "p50-µs")
			b.ReportMetric(at(0.99), "p99-µs")
			b.ReportMetric(at(1), "max-µs")
		})
	}
}

// receiveTimes reads an event stream to its end and returns when each event's id line arrived,
// indexed by seq.
func receiveTimes(body io.Reader) []time.Time {
	times := []time.Time{{}}
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			seq, err := strconv.Atoi(id)
			if err != nil || seq != len(times) {
				return times // out of order: the caller's count check fails
			}
			times = append(times, time.Now())
		}
	}
	return times
}

// BenchmarkDashboardPayload is what the dashboard reads to show one run, by the run's size, in
// bytes: the page (its HTML, scripts and styles as a browser fetches them, gzip accepted), the
// API answers it asks for when opened on the run (runs, the run, its metrics, the first page of
// agents and of the tree, the prompts and the trace's last page), and one refresh while the run
// goes (the run, its metrics, the agents page). The page never reads per-agent data beyond
// a page, so neither grows with the agents; the metrics' series grow with the run's ticks.
//
//	go test ./serve/ -run '^$' -bench BenchmarkDashboardPayload -benchtime 1x
func BenchmarkDashboardPayload(b *testing.B) {
	for _, agents := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("agents=%d", agents), func(b *testing.B) {
			s, c := startServerWith(b, Config{StateRoot: b.TempDir(), Policy: examplesPolicy(b)})
			site := s.Site()
			var static, first, refresh int
			for range b.N {
				info := submitPaused(b, c, agents)
				resume(b, c, info.ID)
				r, _ := s.Run(info.ID)
				<-r.Done()
				<-r.viewDone
				// The quickstart's tick limit ends the largest runs before every agent is done:
				// the dashboard shows such a run all the same.
				sum := r.Summary()
				if sum == nil || sum.Agents != agents {
					b.Fatalf("run %s: %v", info.ID, r.Info().Error)
				}
				run := APIPrefix + "/runs/" + info.ID
				files, err := os.ReadDir(filepath.Join("..", "dashboard", "static"))
				if err != nil {
					b.Fatal(err)
				}
				page := []string{"/", "/echarts.min.js"}
				for _, f := range files {
					if f.Name() != "index.html" {
						page = append(page, "/"+f.Name())
					}
				}
				api := []string{APIPrefix + "/runs", run, run + "/metrics", run + "/agents?limit=100", run + "/tree?limit=100",
					run + "/prompts", fmt.Sprintf("%s/trace?after=%d&limit=200", run, max(0, sum.TraceEvents-200))}
				static = fetchBytes(b, site, s.Token(), page)
				first = fetchBytes(b, site, s.Token(), api)
				refresh = fetchBytes(b, site, s.Token(), []string{run, run + "/metrics", run + "/agents?limit=100"})
			}
			b.ReportMetric(float64(static), "page-B")
			b.ReportMetric(float64(first), "first-api-B")
			b.ReportMetric(float64(refresh), "refresh-B")
		})
	}
}

// fetchBytes GETs each path from h as the dashboard does (the token as a bearer, gzip accepted)
// and returns the bytes of the bodies.
func fetchBytes(b *testing.B, h http.Handler, token string, paths []string) int {
	b.Helper()
	total := 0
	for _, p := range paths {
		req := httptest.NewRequestWithContext(context.Background(), http.MethodGet, p, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Accept-Encoding", "gzip")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("GET %s: %d %s", p, w.Code, w.Body.Bytes())
		}
		total += w.Body.Len()
		b.Logf("GET %s: %d bytes", p, w.Body.Len())
	}
	return total
}
