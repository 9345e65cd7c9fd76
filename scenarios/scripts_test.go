package scenarios_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/scenarios"
	"github.com/warrenhq/warren/scripting"
)

// TestScriptToolsShipped runs the shipped script-tool scenario twice and checks what the trace
// says each script did: the host function calls and logs (tool_note), call_tool through the
// gate, the refused http_get, and the same virtual dice at the same virtual time in both runs.
func TestScriptToolsShipped(t *testing.T) {
	file := filepath.Join("examples", "scripts.toml")
	sum, first := runTraced(t, file, warren.Options{})
	if len(sum.Failures) > 0 {
		t.Fatalf("expectations failed: %v", sum.Failures)
	}
	_, second := runTraced(t, file, warren.Options{})
	if string(first) != string(second) {
		t.Fatalf("two runs differ:\n%s", traceDiff(t, first, second))
	}
	notes := map[string]bool{}
	results := map[string]string{}
	for _, e := range decodeEvents(t, first) {
		if e.Name != "analysts-1" {
			continue
		}
		switch e.Kind {
		case "tool_note":
			notes[e.Tool+" "+e.Fn+" "+e.Text] = e.OK
		case "tool_result":
			results[e.Tool] = e.Content
		}
	}
	for note, ok := range map[string]bool{
		"word_count read_file notes.md":               true,
		"word_count log counted 12 words in notes.md": true,
		"note_todo call_tool todo_add":                true,
		"fetch_status http_get https://example.com/":  false,
	} {
		if got, seen := notes[note]; !seen || got != ok {
			t.Errorf("tool_note %q: seen %v ok %v, want ok %v (notes: %v)", note, seen, got, ok, notes)
		}
	}
	if got := results["word_count"]; got != `{"path":"notes.md","words":12,"lines":2}` {
		t.Errorf("word_count result %s", got)
	}
	if got := results["note_todo"]; got != "Added task 1: [review] check the count of analysts-1" {
		t.Errorf("note_todo result %q", got)
	}
	if got := results["roll_dice"]; !strings.Contains(got, `"at":"2025-01-01T00:00:02.000Z"`) {
		t.Errorf("roll_dice is not at the virtual clock's time: %s", got)
	}
	if got := results["fetch_status"]; !strings.Contains(got, "http_get is not allowed for scripts by script:default") {
		t.Errorf("fetch_status was not refused by Layer 3: %s", got)
	}
}

// TestScriptInheritAcrossStages: a script's write_file inherits the built-in's verdict in the
// agent's current stage, taken at each call: refused in draft (write_file asks), allowed in
// publish (the stage allows it). env shows only the variables the host allows.
func TestScriptInheritAcrossStages(t *testing.T) {
	t.Setenv("WARREN_TEST_SHOWN", "visible")
	t.Setenv("WARREN_TEST_HIDDEN", "secret")
	root := t.TempDir()
	sum, tr := runTraced(t, filepath.Join("testdata", "scripts", "inherit.toml"), warren.Options{WorkRoot: root})
	if len(sum.Failures) > 0 {
		t.Fatalf("expectations failed: %v", sum.Failures)
	}
	var saves []string
	peek := ""
	for _, e := range decodeEvents(t, tr) {
		if e.Kind == "tool_result" && e.Tool == "save" {
			saves = append(saves, e.Content)
		}
		if e.Kind == "tool_result" && e.Tool == "peek" {
			peek = e.Content
		}
	}
	if len(saves) != 2 || !strings.HasPrefix(saves[0], "refused: write_file is not allowed for scripts") ||
		!strings.Contains(saves[0], `(stage "draft")`) || !strings.Contains(saves[0], "inherit") {
		t.Fatalf("the draft save: %q, want a Layer 3 refusal by inherit in stage draft", saves)
	}
	if saves[1] != `Wrote 5 bytes to "final.md" (new file)` {
		t.Errorf("the publish save: %q, want the write allowed", saves[1])
	}
	wantFile(t, filepath.Join(root, "stagers", "stagers-0", "final.md"), "final")
	wantNoFile(t, filepath.Join(root, "stagers", "stagers-0", "draft.md"))
	if peek != "visible / refused" {
		t.Errorf("peek = %q, want the allowed variable and a refusal for the other", peek)
	}
}

// TestScriptLoadErrors: a script that does not compile is a load error naming its file, line and
// column; one that takes a built-in tool's name is refused naming both.
func TestScriptLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
		is   error
	}{
		{"broken.toml", []string{"blueprints.agent: script tools in", "broken.js:5:"}, scripting.ErrSyntax},
		{"clash.toml", []string{"clash.js: script tool \"read_file\" takes the name of a built-in tool"}, nil},
	} {
		t.Run(tc.file, func(t *testing.T) {
			_, err := scenarios.Load(filepath.Join("testdata", "scripts", "bad", tc.file), scenarios.KnownTools())
			if err == nil {
				t.Fatal("loaded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error does not wrap %v", tc.is)
			}
		})
	}
}

// TestDynamicTools: an agent whose blueprint sets dynamic_tools writes a tool into its workdir's
// tools/ folder and calls it on its next turn; a file that does not compile is reported to the
// agent (a message in its inbox, in the trace) and its tool is not advertised.
func TestDynamicTools(t *testing.T) {
	sum, tr := runTraced(t, filepath.Join("testdata", "scripts", "dynamic.toml"), warren.Options{})
	if len(sum.Failures) > 0 {
		t.Fatalf("expectations failed: %v", sum.Failures)
	}
	results := map[string]string{}
	reported := ""
	for _, e := range decodeEvents(t, tr) {
		switch {
		case e.Kind == "tool_result":
			results[e.Tool] = e.Content
		case e.Kind == "message" && e.Text != "":
			reported = e.Text
		}
	}
	if got := results["shout"]; got != "MADE IT!" {
		t.Errorf("shout = %q, want the dynamic tool's result", got)
	}
	if got := results["bad"]; !strings.Contains(got, `tool "bad" is not available in stage "make"`) {
		t.Errorf("bad = %q, want it refused as not available", got)
	}
	if !strings.Contains(reported, "[dynamic tools] tools/bad.js:1:") || !strings.Contains(reported, "not available until the file is fixed") {
		t.Errorf("the broken file was reported as %q", reported)
	}
}

// TestScriptHTTPThroughTheHost: with the host's consent (http_get allowed in
// [tool_script_permissions], private addresses allowed), a script fetches from a real server on
// loopback; without http_allow_private the same call is refused at connect time.
func TestScriptHTTPThroughTheHost(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusTeapot)
	}))
	defer srv.Close()
	bp, err := filepath.Abs(filepath.Join("examples", "scripted", "analyst.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name         string
		allowPrivate bool
		want         string
		wantHits     int64
	}{
		{"private allowed", true, "status 418", 1},
		{"private refused", false, "could not fetch " + srv.URL + "/: ", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits.Store(0)
			dir := t.TempDir()
			scenario := fmt.Sprintf(`name = "scripts-http"
[blueprints]
analyst = %q
[host.tool_permissions]
fetch_status = "allow"
[host.tool_script_permissions]
http_get = "allow"
[host.scripting]
http_allow_private = %v
[models.m]
kind = "scripted"
  [[models.m.turns]]
    [[models.m.turns.calls]]
    tool = "fetch_status"
    args = { url = %q }
  [[models.m.turns]]
  text = "done"
[[groups]]
name = "g"
blueprint = "analyst"
model = "m"
count = 1
`, bp, tc.allowPrivate, srv.URL+"/")
			file := filepath.Join(dir, "http.toml")
			if err := os.WriteFile(file, []byte(scenario), 0o644); err != nil {
				t.Fatal(err)
			}
			_, tr := runTraced(t, file, warren.Options{WorkRoot: t.TempDir()})
			got := ""
			for _, e := range decodeEvents(t, tr) {
				if e.Kind == "tool_result" && e.Tool == "fetch_status" {
					got = e.Content
				}
			}
			if !strings.HasPrefix(got, tc.want) || hits.Load() != tc.wantHits {
				t.Errorf("fetch_status = %q with %d requests served, want %q with %d", got, hits.Load(), tc.want, tc.wantHits)
			}
		})
	}
}
