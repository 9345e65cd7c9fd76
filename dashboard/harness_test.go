package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/hostconfig"
	"github.com/warrenhq/warren/serve"
)

func TestMain(m *testing.M) {
	warren.Init()
	os.Exit(m.Run())
}

var peopleFile = filepath.Join("..", "scenarios", "examples", "people.toml")

// served is one response the test server wrote: the route and the bytes of its body on the wire.
type served struct {
	path  string
	bytes int
}

// meter counts what the test server sends, so the test can say what the page costs.
type meter struct {
	mu  sync.Mutex
	log []served
}

func (m *meter) reset() []served {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.log
	m.log = nil
	return out
}

// countingWriter counts a response's body bytes; Unwrap lets http.ResponseController reach the
// real writer's Flush and deadlines (the SSE route needs them).
type countingWriter struct {
	http.ResponseWriter
	n int
}

func (w *countingWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	w.n += n
	return n, err
}

func (w *countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// site is a served API with the dashboard beside it, on loopback.
type site struct {
	srv   *serve.Server
	url   string
	token string
	meter *meter
	ts    *httptest.Server
}

// startSite starts a serve.Server with a temporary state root and mounts the API under /api/ and
// the dashboard at /, as host serve does.
func startSite(t *testing.T) *site {
	t.Helper()
	examples, err := filepath.Abs(filepath.Join("..", "scenarios", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	// The page starts runs by their path: the server allows the examples' folder.
	srv, err := serve.New(serve.Config{StateRoot: t.TempDir(), Policy: &hostconfig.ServePolicy{Read: []string{examples}}})
	if err != nil {
		t.Fatal(err)
	}
	mux := srv.Site()
	m := &meter{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &countingWriter{ResponseWriter: w}
		mux.ServeHTTP(cw, r)
		m.mu.Lock()
		m.log = append(m.log, served{path: r.URL.Path, bytes: cw.n})
		m.mu.Unlock()
	}))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Errorf("closing the server: %v", err)
		}
		ts.CloseClientConnections()
		ts.Close()
	})
	return &site{srv: srv, url: ts.URL, token: srv.Token(), meter: m, ts: ts}
}

// api sends a request to the API with the token and decodes the answer into out (when not nil).
func (s *site) api(t *testing.T, method, path string, body, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, s.url+serve.APIPrefix+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("%s %s: %d, the body does not decode: %v", method, path, resp.StatusCode, err)
		}
	}
	return resp.StatusCode
}

// costs sums what a list of responses sent, per route (run ids and names folded).
func costs(log []served) (total int, byRoute map[string][2]int) {
	byRoute = map[string][2]int{}
	for _, s := range log {
		route := s.path
		if strings.HasPrefix(route, serve.APIPrefix+"/runs/") {
			parts := strings.SplitN(strings.TrimPrefix(route, serve.APIPrefix+"/runs/"), "/", 2)
			route = serve.APIPrefix + "/runs/{id}"
			if len(parts) == 2 {
				route += "/" + parts[1]
			}
		}
		c := byRoute[route]
		byRoute[route] = [2]int{c[0] + 1, c[1] + s.bytes}
		total += s.bytes
	}
	return total, byRoute
}

// describeCosts writes costs as one line per route, in order.
func describeCosts(byRoute map[string][2]int) string {
	routes := make([]string, 0, len(byRoute))
	for r := range byRoute {
		routes = append(routes, r)
	}
	sort.Strings(routes)
	var b strings.Builder
	for _, r := range routes {
		fmt.Fprintf(&b, "  %-40s %3d× %9d bytes\n", r, byRoute[r][0], byRoute[r][1])
	}
	return b.String()
}

// requireChromium, set to 1 (as .ci/run does), fails the browser test where it would skip.
const requireChromium = "WARREN_REQUIRE_CHROMIUM"

// findChromium returns the path of a Chromium or Chrome, skipping the test when there is none, or
// failing it under WARREN_REQUIRE_CHROMIUM=1 (as report's browser test does).
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium found (chromium, chromium-browser, google-chrome) to open the dashboard in: apt-get install chromium"
	if os.Getenv(requireChromium) == "1" {
		t.Fatal(msg + " (" + requireChromium + "=1 asks for it)")
	}
	t.Skip(msg)
	return ""
}

// browser is one headless Chromium tab, with what its page logged and requested.
type browser struct {
	ctx context.Context

	mu       sync.Mutex
	errors   []string
	requests []string
}

// startBrowser starts Chromium headless and off the network (no background networking, component
// updates or sync), with a fresh profile; a start the loaded machine loses is tried again.
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
		chromedp.WindowSize(1400, 1000),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
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
	err = chromedp.Listen(b.ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
				var parts []string
				for _, a := range ev.Args {
					if len(a.Value) > 0 {
						parts = append(parts, string(a.Value))
					} else {
						parts = append(parts, a.Description)
					}
				}
				b.errors = append(b.errors, "console."+string(ev.Type)+": "+strings.Join(parts, " "))
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

// run runs chromedp actions, failing the test on an error.
func (b *browser) run(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		t.Fatalf("%v (page errors: %q)", err, b.pageErrors())
	}
}

func (b *browser) pageErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.errors)
}

// eval runs a JavaScript expression in the page and decodes its value into a T.
func eval[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v (page errors: %q)", expr, err, b.pageErrors())
	}
	return v
}

// waitFor polls a JavaScript condition until it holds, failing the test after timeout with what
// describe (another expression) says of the page then.
func waitFor(t *testing.T, b *browser, cond, describe string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !eval[bool](t, b, "Boolean("+cond+")") {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s; the page shows %s; page errors %q", timeout, cond, eval[string](t, b, describe), b.pageErrors())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// screenshot saves the whole page as name.png under WARREN_ARTIFACTS (or the test's temporary
// directory) and logs where.
func (b *browser) screenshot(t *testing.T, name string) {
	t.Helper()
	dir := os.Getenv("WARREN_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// checkClean fails the test when the page logged an error or asked anything of another server.
func (b *browser) checkClean(t *testing.T, s *site) {
	t.Helper()
	if errs := b.pageErrors(); len(errs) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(errs, "\n"))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range b.requests {
		if !strings.HasPrefix(r, s.url+"/") && !strings.HasPrefix(r, "data:") {
			t.Errorf("the page requested %s; it must need nothing but its server", r)
		}
	}
}

// choose picks value in a <select>, as a person would (the change event included).
func choose(t *testing.T, b *browser, selector, value string) {
	t.Helper()
	eval[bool](t, b, `(() => { const s = document.querySelector(`+strconv.Quote(selector)+`); s.value = `+strconv.Quote(value)+
		`; s.dispatchEvent(new Event("change")); return true; })()`)
}
