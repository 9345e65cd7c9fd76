package dashboard_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/warrenhq/warren/dashboard"
	"github.com/warrenhq/warren/report"
	"github.com/warrenhq/warren/serve"
)

// get fetches path from the site without a token, with the given Accept-Encoding (set by hand,
// so Go's transport leaves the body as sent).
func get(t *testing.T, s *site, method, path, encoding string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", encoding)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// TestFilesServed: every file of static/ and ECharts are served, with no token, with their media
// type and the bytes on disk (gzip-compressed to a client that asks, revalidated by ETag); the
// index carries its security headers and names only files the handler serves, and no file of the
// page holds an address elsewhere.
func TestFilesServed(t *testing.T) {
	s := startSite(t)
	want := map[string][]byte{dashboard.EChartsFile: report.EChartsJS()}
	entries, err := os.ReadDir("static")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("static", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		want[e.Name()] = b
	}
	types := map[string]string{".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}
	for name, body := range want {
		ctype, ok := types[filepath.Ext(name)]
		if !ok {
			t.Fatalf("static/%s: a file of a type this test does not know", name)
		}
		resp, got := get(t, s, http.MethodGet, "/"+name, "identity")
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != ctype || !bytes.Equal(got, body) {
			t.Errorf("/%s: %d %q, %d bytes (want 200 %q, the %d bytes of the file)", name, resp.StatusCode, resp.Header.Get("Content-Type"), len(got), ctype, len(body))
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("ETag") == "" {
			t.Errorf("/%s: headers %v", name, resp.Header)
		}
		// Compressed, when it pays: the same bytes once inflated.
		zresp, zbody := get(t, s, http.MethodGet, "/"+name, "gzip, deflate, br")
		if zresp.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(zbody))
			if err != nil {
				t.Fatal(err)
			}
			inflated, err := io.ReadAll(zr)
			if err != nil || !bytes.Equal(inflated, body) {
				t.Errorf("/%s gzip: inflates to %d bytes (%v), want the file's %d", name, len(inflated), err, len(body))
			}
		} else if name == dashboard.EChartsFile {
			t.Errorf("/%s is sent uncompressed to a client that takes gzip", name)
		}
		// A reload revalidates: 304, no body.
		again, rest := get(t, s, http.MethodGet, "/"+name, "identity", "If-None-Match", resp.Header.Get("ETag"))
		if again.StatusCode != http.StatusNotModified || len(rest) != 0 {
			t.Errorf("/%s with its ETag: %d, %d bytes; want 304 and none", name, again.StatusCode, len(rest))
		}
		// No file of the page reaches elsewhere (ECharts is a library, left as published).
		if name != dashboard.EChartsFile && (bytes.Contains(body, []byte("http://")) || bytes.Contains(body, []byte("https://"))) {
			t.Errorf("static/%s holds an absolute http(s) address", name)
		}
	}

	resp, index := get(t, s, http.MethodGet, "/", "identity")
	if resp.StatusCode != http.StatusOK || !bytes.Equal(index, want["index.html"]) {
		t.Fatalf("/: %d, %d bytes", resp.StatusCode, len(index))
	}
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "connect-src 'self'") || resp.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("the index's security headers: %v", resp.Header)
	}
	refs := regexp.MustCompile(`(?i)\b(?:src|href)\s*=\s*["']([^"']*)["']`).FindAllStringSubmatch(string(index), -1)
	if len(refs) < 3 {
		t.Fatalf("the index names %d files; want its style, ECharts and its script", len(refs))
	}
	for _, m := range refs {
		ref := m[1]
		switch {
		case strings.HasPrefix(ref, "#") || ref == "data:,":
			continue // a link within the page; the empty icon, so the browser asks for no favicon
		case strings.Contains(ref, "//") || strings.Contains(ref, ":"):
			t.Errorf("the index names %q: an address elsewhere", ref)
			continue
		}
		if _, ok := want[ref]; !ok {
			t.Errorf("the index names %q, which the handler does not serve", ref)
		}
	}
	// The modules import only one another.
	for name, body := range want {
		if !strings.HasSuffix(name, ".js") || name == dashboard.EChartsFile {
			continue
		}
		for _, m := range regexp.MustCompile(`(?m)^import .* from '([^']+)';`).FindAllStringSubmatch(string(body), -1) {
			if _, ok := want[strings.TrimPrefix(m[1], "./")]; !ok || !strings.HasPrefix(m[1], "./") {
				t.Errorf("%s imports %q, which the handler does not serve", name, m[1])
			}
		}
	}

	for path, code := range map[string]int{"/nothing.js": 404, "/static/index.html": 404, "/../dashboard.go": 404} {
		if resp, _ := get(t, s, http.MethodGet, path, "identity"); resp.StatusCode != code {
			t.Errorf("%s: %d, want %d", path, resp.StatusCode, code)
		}
	}
	if resp, _ := get(t, s, http.MethodPost, "/", "identity"); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d", resp.StatusCode)
	}
	if resp, body := get(t, s, http.MethodHead, "/dashboard.js", "identity"); resp.StatusCode != http.StatusOK || len(body) != 0 {
		t.Errorf("HEAD /dashboard.js: %d, %d bytes", resp.StatusCode, len(body))
	}
	// The page's files need no token; the API beside them still does.
	if resp, _ := get(t, s, http.MethodGet, serve.APIPrefix+"/runs", "identity"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the API without a token: %d", resp.StatusCode)
	}
}

// domPrompt is a prompt as the page lists it.
type domPrompt struct {
	Agent string `json:"agent"`
	Call  string `json:"call"`
	Kind  string `json:"kind"`
}

// chartOption is the part of an ECharts option the test reads back.
type chartOption struct {
	Series []struct {
		Name string `json:"name"`
		Data []any  `json:"data"`
	} `json:"series"`
}

// TestBrowserDrivesARun serves people.toml and drives the dashboard in headless Chromium: the
// run is listed and opened, its 22 agents fill the agents table and the tree, the phase chart
// and the stage graph hold the run's numbers, an agent's conversation shows its tool call and
// verdict, and every prompt is answered by clicking its button until the run finishes. Then a
// second run started from the page's form is compared with the first, paused, resumed and
// cancelled from its buttons. The page logs no error, asks for nothing but the server, and says
// what it cost to load and to refresh.
func TestBrowserDrivesARun(t *testing.T) {
	chromium := findChromium(t)
	s := startSite(t)
	var info serve.RunInfo
	if code := s.api(t, http.MethodPost, "/runs", serve.Submission{File: peopleFile}, &info); code != http.StatusCreated {
		t.Fatalf("submit: %d", code)
	}
	b := startBrowser(t, chromium)
	s.meter.reset()
	b.run(t, chromedp.Navigate(s.url+"/?token="+s.token))
	waitFor(t, b, `document.body.dataset.ready === "1"`, `document.body.innerText`, time.Minute)
	if search := eval[string](t, b, `location.search`); search != "" {
		t.Errorf("the token stays in the address bar: %q", search)
	}
	row := fmt.Sprintf(`#runs-body tr[data-run=%q]`, info.ID)
	waitFor(t, b, `document.querySelector('`+row+`')`, `document.getElementById("runs-body").innerText`, 30*time.Second)
	b.run(t, chromedp.SendKeys(chromedp.CSS("#person"), "ann"), chromedp.Click(chromedp.CSS(row+" button")))

	// The agents table and the tree list all 22 agents; the phase chart ends with them all.
	waitFor(t, b, `document.querySelectorAll("#agents-body tr").length === 22 && document.getElementById("agents-range").textContent.includes("of 22 agents")`,
		`document.getElementById("agents-range").textContent`, time.Minute)
	waitFor(t, b, `document.querySelectorAll("#tree li.node").length === 22`, `document.getElementById("tree").innerText`, 30*time.Second)
	waitFor(t, b, `(() => { const c = window.warrenDashboard.charts.phases; return c && c.getOption().series.length === 7 && c.getOption().series[0].data.length > 0; })()`,
		`JSON.stringify(Object.keys(window.warrenDashboard.charts))`, 30*time.Second)
	firstLoad := s.meter.reset()
	phases := eval[chartOption](t, b, `JSON.parse(JSON.stringify(window.warrenDashboard.charts.phases.getOption()))`)
	sum := 0.0
	for _, series := range phases.Series {
		last := series.Data[len(series.Data)-1].([]any)
		sum += last[1].(float64)
	}
	if sum != 22 || phases.Series[3].Name != "awaiting prompt" {
		t.Errorf("the phase chart's last point adds up to %v agents (want 22); series %q", sum, phases.Series[3].Name)
	}
	// The stage graph: the readers went through gather and report, 20 visits each.
	graph := eval[string](t, b, `window.warrenDashboard.charts.graph.getOption().series[0].data.map(n => n.name.split("\u0000").join("/") + "=" + n.value).join(" ")`)
	for _, want := range []string{"researcher/s:gather=20", "researcher/s:report=20", "editor/s:draft=2"} {
		if !strings.Contains(graph, want) {
			t.Errorf("the stage graph has %s; want %s", graph, want)
		}
	}

	// editors-0's conversation: its question, asked through a tool call the gate allowed.
	b.run(t, chromedp.Click(chromedp.CSS(`#agents-body tr[data-name="editors-0"] button`)))
	waitFor(t, b, `document.querySelector("#agent-log .kind-prompt")`, `document.getElementById("agent-panel").innerText`, 30*time.Second)
	call := eval[string](t, b, `document.querySelector("#agent-log .kind-tool_call").innerText`)
	if !strings.Contains(call, "ask_user_choice") || !strings.Contains(call, "allow") || !strings.Contains(call, "Which tone should editors-0 write in?") {
		t.Errorf("editors-0's tool call reads %q", call)
	}

	// The trace viewer follows the live stream while the prompts are answered.
	b.run(t, chromedp.Click(chromedp.CSS("#trace-follow")))

	// Answer every prompt by clicking, until the run ends.
	answered := 0
	for deadline := time.Now().Add(2 * time.Minute); ; {
		if eval[string](t, b, `document.querySelector("#run-state .badge")?.textContent || ""`) == "ended" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not end; the page shows %s", eval[string](t, b, `document.getElementById("run-section").innerText`))
		}
		open := eval[[]domPrompt](t, b, `[...document.querySelectorAll("#prompts > li:not(.sent)")].map(li => ({agent: li.dataset.agent, call: li.dataset.call, kind: li.dataset.kind}))`)
		if len(open) == 0 {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		p := open[0]
		answer := "once"
		if p.Kind == "question" {
			answer = "formal"
		}
		item := fmt.Sprintf(`#prompts li[data-agent=%q][data-call=%q]`, p.Agent, p.Call)
		b.run(t, chromedp.Click(chromedp.CSS(fmt.Sprintf(`%s button[data-answer=%q]`, item, answer))))
		waitFor(t, b, `!document.querySelector('`+item+`')`, `document.getElementById("prompts").innerText`, 30*time.Second)
		answered++
	}
	if answered != 6 {
		t.Errorf("answered %d prompts by clicking, want 6 (2 questions, 4 approvals)", answered)
	}
	waitFor(t, b, `document.querySelector("#run-status .badge")?.textContent === "finished"`, `document.querySelector(".run-header").innerText`, 30*time.Second)
	var detail serve.RunDetail
	s.api(t, http.MethodGet, "/runs/"+info.ID, nil, &detail)
	if detail.Status != "finished" || len(detail.Failures) != 0 || detail.Counts.Agents != 22 {
		t.Fatalf("the run: %+v", detail)
	}
	// editors-0 moved on: answered by ann, then it wrote and ended done.
	waitFor(t, b, `document.querySelector("#agent-log .kind-terminal")`, `document.getElementById("agent-log").innerText`, 30*time.Second)
	answers := eval[string](t, b, `[...document.querySelectorAll("#agent-log .kind-answer")].map(e => e.innerText).join(" | ")`)
	if !strings.Contains(answers, "formal") || !strings.Contains(answers, "person:ann") {
		t.Errorf("editors-0's answers read %q", answers)
	}
	if eval[bool](t, b, `document.querySelector("#agent-kill").disabled`) != true {
		t.Error("the kill button of an ended agent is enabled")
	}
	// The trace viewer, following, got the events up to the end event, in order, with no gap;
	// "First" goes back to the first page and stops following.
	kinds := `[...document.querySelectorAll("#trace-body tr td:nth-child(4)")].map(td => td.textContent)`
	seqs := `[...document.querySelectorAll("#trace-body tr td:nth-child(1)")].map(td => Number(td.textContent))`
	waitFor(t, b, kinds+`.pop() === "end"`, `document.getElementById("trace-range").textContent`, 30*time.Second)
	if got := eval[[]int](t, b, seqs); len(got) < 200 || got[len(got)-1] != 355 || !slices.IsSorted(got) || got[len(got)-1]-got[0] != len(got)-1 {
		t.Errorf("the followed trace shows seqs %v; want the run's last events, up to 355, each once", got)
	}
	b.run(t, chromedp.Click(chromedp.CSS("#trace-first")))
	waitFor(t, b, seqs+`[0] === 1 && !document.getElementById("trace-follow").checked`, `document.getElementById("trace-range").textContent`, 30*time.Second)
	b.screenshot(t, "dashboard-finished")

	// A second run from the form, compared with the first, paused, resumed and cancelled.
	abs, err := filepath.Abs(peopleFile)
	if err != nil {
		t.Fatal(err)
	}
	b.run(t, chromedp.Click(chromedp.CSS("#submit summary")),
		chromedp.SendKeys(chromedp.CSS(`#submit-form input[name="file"]`), abs),
		chromedp.SendKeys(chromedp.CSS(`#submit-form input[name="seed"]`), "17"),
		chromedp.Click(chromedp.CSS(`#submit-form button[type="submit"]`)))
	waitFor(t, b, `document.getElementById("run-title").textContent === "r2-people" && document.querySelector("#run-state .badge")`,
		`document.getElementById("submit-error").textContent + " " + document.getElementById("run-title").textContent`, 30*time.Second)
	waitFor(t, b, `document.querySelectorAll("#prompts > li").length === 2`, `document.getElementById("prompts").innerText`, time.Minute)
	b.run(t, chromedp.SetValue(chromedp.CSS(`#diff-form select[name="a"]`), info.ID),
		chromedp.SetValue(chromedp.CSS(`#diff-form select[name="b"]`), "r2-people"),
		chromedp.Click(chromedp.CSS(`#diff-form button[type="submit"]`)))
	waitFor(t, b, `!["", "Comparing…"].includes(document.getElementById("diff-out").textContent)`, `document.getElementById("diff-out").textContent`, 30*time.Second)
	if out := eval[string](t, b, `document.getElementById("diff-out").textContent`); !strings.Contains(out, "--- want") || !strings.Contains(out, "got ends early") {
		t.Errorf("the diff of a finished run and one waiting for people reads %q", out)
	}
	s.meter.reset()
	b.run(t, chromedp.Click(chromedp.CSS("#pause")))
	waitFor(t, b, `document.querySelector("#run-state .badge").textContent === "paused"`, `document.querySelector(".run-header").innerText`, 30*time.Second)
	// What one refresh fetched (the pause's: the run, its metrics, its agents page).
	refresh := s.meter.reset()
	b.run(t, chromedp.Click(chromedp.CSS("#resume")))
	waitFor(t, b, `document.querySelector("#run-state .badge").textContent === "running"`, `document.querySelector(".run-header").innerText`, 30*time.Second)
	b.run(t, chromedp.Click(chromedp.CSS("#cancel")), chromedp.Click(chromedp.CSS("#cancel")))
	waitFor(t, b, `document.querySelector("#run-status .badge")?.textContent === "interrupted"`, `document.querySelector(".run-header").innerText`, time.Minute)
	b.screenshot(t, "dashboard-cancelled")

	b.checkClean(t, s)
	total, byRoute := costs(firstLoad)
	t.Logf("first load (the page, then the run opened, its agents, tree, trace and charts): %d bytes\n%s", total, describeCosts(byRoute))
	total, byRoute = costs(slices.DeleteFunc(refresh, func(s served) bool { return strings.HasSuffix(s.path, "/pause") }))
	t.Logf("one refresh of a run: %d bytes\n%s", total, describeCosts(byRoute))
}

// TestBrowserPagesAThousandAgents serves fanout.toml (a splitter whose fan-out spawns 1000
// workers) and checks the page never lists them all: the agents table pages by 100 with its
// filters, and the splitter's 1000 children open 100 at a time, with a button for more.
func TestBrowserPagesAThousandAgents(t *testing.T) {
	chromium := findChromium(t)
	s := startSite(t)
	var info serve.RunInfo
	if code := s.api(t, http.MethodPost, "/runs", serve.Submission{File: filepath.Join("..", "scenarios", "examples", "fanout.toml")}, &info); code != http.StatusCreated {
		t.Fatalf("submit: %d", code)
	}
	run, _ := s.srv.Run(info.ID)
	select {
	case <-run.Done():
	case <-time.After(2 * time.Minute):
		t.Fatal("the fan-out did not end")
	}
	b := startBrowser(t, chromium)
	// The address names the run and an agent: the page opens both.
	b.run(t, chromedp.Navigate(s.url+"/?token="+s.token+"#run="+info.ID+"&agent=splitters-0"))
	waitFor(t, b, `document.body.dataset.ready === "1"`, `document.body.innerText`, time.Minute)
	// Its log keeps its last 200 events (the server's bound), and says so.
	waitFor(t, b, `document.querySelectorAll("#agent-log .kind-worker_end").length > 100`, `document.getElementById("agent-panel").innerText`, 30*time.Second)
	if got := eval[string](t, b, `document.querySelector("#agent-log .entry").textContent`); !strings.Contains(got, "older events are not kept") {
		t.Errorf("splitters-0's log starts %q; want a word on the events it no longer keeps", got)
	}

	rows := `document.querySelectorAll("#agents-body tr").length`
	rangeText := `document.getElementById("agents-range").textContent`
	firstID := `document.querySelector("#agents-body tr td").textContent`
	waitFor(t, b, rangeText+` === "1–100 of 1,001 agents" && `+rows+` === 100`, rangeText, 30*time.Second)
	b.run(t, chromedp.Click(chromedp.CSS("#agents-next")))
	waitFor(t, b, rangeText+` === "101–200 of 1,001 agents" && `+firstID+` === "101"`, rangeText, 30*time.Second)
	b.run(t, chromedp.Click(chromedp.CSS("#agents-prev")))
	waitFor(t, b, rangeText+` === "1–100 of 1,001 agents" && `+firstID+` === "1"`, rangeText, 30*time.Second)
	choose(t, b, `#agents-form select[name="status"]`, "failed")
	waitFor(t, b, rangeText+` === "1–20 of 20 agents" && `+rows+` === 20`, rangeText, 30*time.Second)
	choose(t, b, `#agents-form select[name="status"]`, "")
	b.run(t, chromedp.SendKeys(chromedp.CSS(`#agents-form input[name="prefix"]`), "splitters-0/99"))
	waitFor(t, b, rangeText+` === "1–11 of 11 agents"`, rangeText, 30*time.Second)

	// The tree: one root, whose 1000 children come 100 at a time.
	splitter := `#tree li.node[data-name="splitters-0"]`
	children := `document.querySelectorAll('` + splitter + ` > ul > li.node').length`
	waitFor(t, b, `document.querySelector('`+splitter+`')`, `document.getElementById("tree").innerText`, 30*time.Second)
	b.run(t, chromedp.Click(chromedp.CSS(splitter+" > button.toggle")))
	waitFor(t, b, children+` === 100`, `document.getElementById("tree").innerText`, 30*time.Second)
	more := splitter + " > ul > li.more > button"
	if got := eval[string](t, b, `document.querySelector('`+more+`').textContent`); got != "Show more (100 of 1,000)" {
		t.Errorf("the more button reads %q", got)
	}
	b.run(t, chromedp.Click(chromedp.CSS(more)))
	waitFor(t, b, children+` === 200`, `document.getElementById("tree").innerText`, 30*time.Second)
	if got := eval[string](t, b, `document.querySelectorAll('`+splitter+` > ul > li.node')[199].dataset.name`); got != "splitters-0/200" {
		t.Errorf("the 200th child is %q, want splitters-0/200", got)
	}
	// Collapsing hides the children; opening again shows them without a new request.
	b.run(t, chromedp.Click(chromedp.CSS(splitter+" > button.toggle")))
	if hidden := eval[bool](t, b, `document.querySelector('`+splitter+` > ul').hidden`); !hidden {
		t.Error("the collapsed node's children are still shown")
	}
	b.screenshot(t, "dashboard-fanout")
	b.checkClean(t, s)
}
