package report

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// requireChromium, set to 1 (as .ci/run does), fails the browser test where it would skip.
const requireChromium = "WARREN_REQUIRE_CHROMIUM"

// findChromium returns the path of a Chromium (Debian's chromium package) or Chrome, skipping
// the test when there is none, or failing it under WARREN_REQUIRE_CHROMIUM=1.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium found (chromium, chromium-browser, google-chrome) to open the report in: apt-get install chromium"
	if os.Getenv(requireChromium) == "1" {
		t.Fatal(msg + " (" + requireChromium + "=1 asks for it)")
	}
	t.Skip(msg)
	return ""
}

// browser is one headless Chromium, with what its pages logged and requested.
type browser struct {
	ctx context.Context

	mu       sync.Mutex
	errors   []string
	requests []string
}

// startBrowser starts Chromium headless, off the network: no background networking, component
// updates or sync (which would try the closed network), a fresh profile.
func startBrowser(t *testing.T, path string) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1280, 900),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	// A loaded machine sometimes loses Chromium's start (it exits before it answers); a second
	// try, with a fresh profile, is cheaper than a flaky test.
	var b *browser
	var err error
	for try := 0; try < 3 && b == nil; try++ {
		actx, acancel := chromedp.NewExecAllocator(ctx, append(slices.Clip(opts), chromedp.UserDataDir(t.TempDir()))...)
		t.Cleanup(acancel)
		bctx, bcancel := chromedp.NewContext(actx)
		t.Cleanup(bcancel)
		if err = chromedp.Do(bctx); err == nil { // starts the browser and opens the tab
			b = &browser{ctx: bctx}
		}
	}
	if b == nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	bctx := b.ctx
	err = chromedp.Listen(bctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
				b.errors = append(b.errors, "console."+string(ev.Type)+": "+describeArgs(ev.Args))
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			text := d.Text
			if d.Exception != nil {
				text += " " + d.Exception.Description
			}
			b.errors = append(b.errors, fmt.Sprintf("exception at %s:%d:%d: %s", d.URL, d.LineNumber+1, d.ColumnNumber+1, text))
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				b.errors = append(b.errors, "log: "+ev.Entry.Text)
			}
		case *network.EventRequestWillBeSent:
			b.requests = append(b.requests, ev.Request.URL)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// describeArgs writes a console call's arguments.
func describeArgs(args []*runtime.RemoteObject) string {
	var parts []string
	for _, a := range args {
		if len(a.Value) > 0 {
			parts = append(parts, string(a.Value))
		} else {
			parts = append(parts, a.Description)
		}
	}
	return strings.Join(parts, " ")
}

// open loads the page at path from file://, waits until its script says every chart rendered,
// saves a screenshot into shots, and checks that the page logged no error and asked the network
// for nothing but itself.
func (b *browser) open(t *testing.T, path, shots string) {
	t.Helper()
	b.mu.Lock()
	b.errors, b.requests = nil, nil
	b.mu.Unlock()
	u := (&url.URL{Scheme: "file", Path: path}).String()
	if err := chromedp.Do(b.ctx, chromedp.Navigate(u)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](`document.body && document.body.dataset.ready === "1"`,
		chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		b.mu.Lock()
		defer b.mu.Unlock()
		t.Fatalf("the page never said it was ready: %v; errors: %q", err, b.errors)
	}
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(shots, strings.TrimSuffix(filepath.Base(path), ".html")+".png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", shot)
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.errors) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(b.errors, "\n"))
	}
	for _, r := range b.requests {
		if r != u {
			t.Errorf("the page requested %s; it must need nothing but itself", r)
		}
	}
}

// eval runs a JavaScript expression in the page and decodes its value into a T.
func eval[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// chartOption returns a chart's ECharts option as the page holds it (functions left out by JSON).
func chartOption[T any](t *testing.T, b *browser, id string) T {
	t.Helper()
	return eval[T](t, b, `JSON.parse(JSON.stringify(window.warrenReport.charts[`+strconv.Quote(id)+`].getOption()))`)
}

// choose picks option value in a chart's <select>, as a user would.
func choose(t *testing.T, b *browser, id string, value int) {
	t.Helper()
	eval[bool](t, b, `(() => { const s = document.getElementById("select-`+id+`"); s.value = "`+strconv.Itoa(value)+
		`"; s.dispatchEvent(new Event("change")); return true; })()`)
}

// renderTo writes dir's page into out/name.html and returns the page Go computed for it.
func renderTo(t *testing.T, dir, out, name string) (*page, string) {
	t.Helper()
	p, err := build(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(out, name+".html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := Write(f, dir); err != nil {
		t.Fatal(err)
	}
	return p, path
}

// chartData returns the data of the page's chart id, as Go computed it.
func chartData[T any](t *testing.T, p *page, id string) T {
	t.Helper()
	for _, c := range p.Charts {
		if c.ID == id {
			d, ok := c.Data.(T)
			if !ok {
				t.Fatalf("chart %s holds %T", id, c.Data)
			}
			return d
		}
	}
	t.Fatalf("the page has no chart %s", id)
	panic("unreachable")
}

// seriesOption is the part of an ECharts option the test reads back.
type seriesOption struct {
	Series []struct {
		Name  string            `json:"name"`
		Type  string            `json:"type"`
		Data  []json.RawMessage `json:"data"`
		Links []struct {
			Source int `json:"source"`
			Target int `json:"target"`
			Value  int `json:"value"`
			Label  struct {
				Formatter string `json:"formatter"`
			} `json:"label"`
		} `json:"links"`
	} `json:"series"`
	XAxis []struct {
		Data []string `json:"data"`
	} `json:"xAxis"`
}

// numbers decodes a series' data as numbers (null as NaN is not expected: the charts here have
// a value at every point).
func numbers(t *testing.T, data []json.RawMessage) []float64 {
	t.Helper()
	out := make([]float64, len(data))
	for i, d := range data {
		var v any
		if err := json.Unmarshal(d, &v); err != nil {
			t.Fatal(err)
		}
		switch x := v.(type) {
		case float64:
			out[i] = x
		case []any: // [x, y]
			out[i] = x[len(x)-1].(float64)
		default:
			t.Fatalf("point %d is %s, want a number", i, d)
		}
	}
	return out
}

// toFloats converts counts for comparison.
func toFloats[T int | int64 | float64](xs []T) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

// TestBrowserRendersTheRunsNumbers opens each fixture's page in headless Chromium from file://
// and reads back what each chart holds (echarts getOption), checking it against what Go computed
// from the fixture's files and against numbers counted by hand from them: the page draws the
// run's numbers, renders with no JavaScript error, and needs no network.
func TestBrowserRendersTheRunsNumbers(t *testing.T) {
	path := findChromium(t)
	out := t.TempDir()
	shots, err := os.MkdirTemp("", "warren-report-screenshots-")
	if err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t, path)

	t.Run("review run", func(t *testing.T) {
		p, html := renderTo(t, "testdata/review", out, "review")
		b.open(t, html, shots)

		// Agents by phase at tick 8 (timeline.csv's row: 2 entering, 1 ready to infer, 2 finished).
		ph := chartData[*phaseChart](t, p, "phases")
		got := chartOption[seriesOption](t, b, "phases")
		i := slices.Index(ph.Ticks, 8)
		want := map[string]float64{"entering": 2, "ready to infer": 1, "awaiting tools": 0, "finished": 2}
		for k, s := range got.Series {
			if g, w := numbers(t, s.Data), toFloats(ph.Series[k].Data); !slices.Equal(g, w) || s.Name != ph.Series[k].Name {
				t.Errorf("phases series %d: page has %s %v, Go computed %s %v", k, s.Name, g, ph.Series[k].Name, w)
			}
			if w, ok := want[s.Name]; ok && numbers(t, s.Data)[i] != w {
				t.Errorf("phases: %s at tick 8 is %v, timeline.csv says %v", s.Name, numbers(t, s.Data)[i], w)
			}
		}

		// The stage graph: every edge's count and label, review → work taken 4 times.
		g := chartData[graphView](t, p, "graph-"+strconv.Itoa(slices.IndexFunc(p.Charts, func(c chart) bool { return c.Type == "graph" })))
		gopt := chartOption[seriesOption](t, b, "graph-"+strconv.Itoa(slices.IndexFunc(p.Charts, func(c chart) bool { return c.Type == "graph" })))
		links := gopt.Series[0].Links
		if len(links) != len(g.Links) {
			t.Fatalf("the graph has %d edges, Go computed %d", len(links), len(g.Links))
		}
		taken := map[string]string{} // "source target line" -> the count the page shows
		for k, l := range links {
			w := g.Links[k]
			if l.Value != w.Count || l.Label.Formatter != w.Label || g.Nodes[l.Source].ID != w.Source || g.Nodes[l.Target].ID != w.Target {
				t.Errorf("link %d: page has %d→%d %q (%d), Go computed %s→%s %q (%d)", k, l.Source, l.Target, l.Label.Formatter, l.Value, w.Source, w.Target, w.Label, w.Count)
			}
			lines := strings.Split(l.Label.Formatter, "\n")
			for i, line := range lines {
				what, n, ok := strings.Cut(line, " × ")
				if !ok {
					continue // a condition, under its edge's line
				}
				if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "  when ") {
					what += " " + strings.TrimSpace(lines[i+1])
				}
				taken[w.Source+" "+w.Target+" "+what] = n
			}
		}
		for edge, n := range map[string]string{
			"s:plan s:work done":   "5",
			"s:work s:review done": "9",
			"s:review s:work done": "4",
			"s:review end:done done when tools.grade?.verdict == \"approve\"": "4",
			"s:review end:failed done when (memory.rounds ?? 0) + 1 >= 3":     "1",
			"s:review end:failed max_iterations":                              "0",
			"s:plan end:failed error":                                         "0",
		} {
			if taken[edge] != n {
				t.Errorf("edge %s was taken %q times on the page; the trace has %s", edge, taken[edge], n)
			}
		}

		// One stage's histogram, after picking it: review's visit lengths in ticks.
		h := chartData[histData](t, p, "latency-ticks-hist")
		k := slices.Index(h.Stages, "review")
		choose(t, b, "latency-ticks-hist", k)
		hopt := chartOption[seriesOption](t, b, "latency-ticks-hist")
		if g, w := numbers(t, hopt.Series[0].Data), toFloats(h.Hists[k].Counts); !slices.Equal(g, w) || !slices.Equal(hopt.XAxis[0].Data, h.Hists[k].Labels) {
			t.Errorf("review's histogram: page has %v over %v, Go computed %v over %v", g, hopt.XAxis[0].Data, w, h.Hists[k].Labels)
		}
		// The box plot: each stage's five numbers.
		bx := chartData[boxData](t, p, "latency-ticks-box")
		bopt := chartOption[seriesOption](t, b, "latency-ticks-box")
		for s, d := range bopt.Series[0].Data {
			var five []float64
			if err := json.Unmarshal(d, &five); err != nil {
				t.Fatal(err)
			}
			w := bx.Boxes[s]
			if !slices.Equal(five, []float64{w.Min, w.Q1, w.Median, w.Q3, w.Max}) {
				t.Errorf("box of %s: page has %v, Go computed %+v", bx.Stages[s], five, w)
			}
		}
		// Throughput: the events per tick are timeline.csv's differences (20 at tick 0, then 7).
		topt := chartOption[seriesOption](t, b, "throughput")
		if ev := numbers(t, topt.Series[0].Data); ev[0] != 20 || ev[1] != 7 {
			t.Errorf("events per tick start %v, want 20, 7", ev[:2])
		}
	})

	t.Run("live run with tokens", func(t *testing.T) {
		p, html := renderTo(t, "testdata/live", out, "live")
		b.open(t, html, shots)
		tk := chartData[*tokenChart](t, p, "tokens")
		got := chartOption[seriesOption](t, b, "tokens")
		total := 0.0
		for k, m := range tk.Models {
			g := numbers(t, got.Series[k].Data)
			if !slices.Equal(g, toFloats(m.Data)) {
				t.Errorf("tokens of %s: page has %v, Go computed %v", m.Name, g, m.Data)
			}
			for _, v := range g {
				total += v
			}
		}
		if total != 2139 { // the trace's end event: tokens 2139
			t.Errorf("the token bars add up to %v, the run spent 2139", total)
		}
		cost := numbers(t, got.Series[len(got.Series)-1].Data)
		if last := cost[len(cost)-1]; last != 0.00045585 {
			t.Errorf("the cost line ends at %v, the run cost $0.00045585", last)
		}
	})

	t.Run("sweep", func(t *testing.T) {
		p, html := renderTo(t, "testdata/sweep", out, "sweep")
		b.open(t, html, shots)
		sc := chartData[sweepChart](t, p, "sweep-0")
		check := func(metric int, series string, value int, mean, lo, hi float64) {
			t.Helper()
			got := chartOption[seriesOption](t, b, "sweep-0")
			s := slices.IndexFunc(sc.Series, func(s sweepSeries) bool { return s.Name == series })
			means := got.Series[2*s].Data
			var m float64
			if err := json.Unmarshal(means[value], &m); err != nil {
				t.Fatal(err)
			}
			var bar []float64
			for _, d := range got.Series[2*s+1].Data {
				if err := json.Unmarshal(d, &bar); err != nil {
					t.Fatal(err)
				}
				if bar[0] == float64(value) {
					break
				}
			}
			pt := sc.Series[s].Points[metric][value]
			if m != pt.Mean || bar[1] != pt.Min || bar[2] != pt.Max {
				t.Errorf("%s, %s = %s: page has mean %v, bar %v; Go computed %+v", sc.Metrics[metric], series, sc.Values[value], m, bar, pt)
			}
			if m != mean || bar[1] != lo || bar[2] != hi {
				t.Errorf("%s, %s = %s: page has mean %v, range %v–%v; results.csv gives %v, %v–%v", sc.Metrics[metric], series, sc.Values[value], m, bar[1], bar[2], mean, lo, hi)
			}
		}
		done, ticks := slices.Index(sc.Metrics, "done"), slices.Index(sc.Metrics, "ticks")
		// The metric shown first is done: 88, 86, 84 for 100 voters at max_ticks 50.
		check(done, "limits.max_ticks=50", 0, 86, 84, 88)
		choose(t, b, "sweep-0", ticks)
		check(ticks, "limits.max_ticks=200", 1, 56, 53, 59)
		links := eval[int](t, b, `document.querySelectorAll('a[href$="report.html"]').length`)
		if links != 1 {
			t.Errorf("the cell table links %d run reports, want the one that exists", links)
		}
	})
}
