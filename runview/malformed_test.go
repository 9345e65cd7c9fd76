package runview_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/warrenhq/warren/runview"
	"github.com/warrenhq/warren/trace"
)

// snapshot is everything a View shows, as JSON, to check that a bad line changed nothing and
// that two Views of one trace are the same.
func snapshot(t *testing.T, v *runview.View) string {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	all := v.Agents(runview.AgentQuery{Limit: runview.MaxLimit})
	var details []runview.AgentDetail
	for _, a := range all.Items {
		d, _ := v.AgentByID(a.ID)
		details = append(details, d)
	}
	tree, _ := v.Tree(runview.TreeQuery{})
	for _, x := range []any{v.Header(), v.Progress(), v.Counts(), all, details, tree, v.Prompts(), v.Graph(), v.Series()} {
		if err := enc.Encode(x); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// TestMalformed feeds bad lines after a good start and checks each is an error wrapping
// ErrMalformed (trace.ErrBadHeader for a bad header) that names the line (and the seq and kind
// when the line has them), never a panic, and that the View is unchanged by it.
func TestMalformed(t *testing.T) {
	good := newBuilder(t).spawn(0, 1, "a", 0, "").spawn(0, 2, "b", 1, "a").
		event(0, 1, "a", "stage_enter", "stage", "s", "visit", 1).lines
	const next = `"tick":1,"seq":4,"agent":1,"name":"a",`
	tests := []struct {
		name   string
		line   string
		header bool     // the line is the first: the header is expected
		want   []string // in the error
	}{
		{"not JSON", `{"tick":1,`, false, []string{"line 5", "not JSON"}},
		{"an array", `[1,2]`, false, []string{"line 5", "not a JSON object"}},
		{"empty", ``, false, []string{"line 5", "not JSON"}},
		{"no kind", `{` + next[:len(next)-1] + `}`, false, []string{"line 5", "(seq 4)", `no "kind" field`}},
		{"unknown kind", `{` + next + `"kind":"dance"}`, false, []string{"seq 4", `unknown kind "dance"`}},
		{"unknown field", `{` + next + `"kind":"stage_enter","stage":"s","visit":2,"mood":"ok"}`, false,
			[]string{"seq 4", `unknown field "mood"`}},
		{"a field of another kind", `{` + next + `"kind":"stage_enter","stage":"s","visit":2,"tool":"x"}`, false,
			[]string{"seq 4, stage_enter", `"tool" is not a field of stage_enter`}},
		{"a missing field", `{` + next + `"kind":"stage_enter","stage":"s"}`, false,
			[]string{"seq 4, stage_enter", `without its "visit"`}},
		{"a string for an integer", `{"tick":"1","seq":4,"agent":1,"name":"a","kind":"spawn"}`, false,
			[]string{"line 5", `"tick": want an integer`}},
		{"a fraction for an integer", `{` + next + `"kind":"stage_enter","stage":"s","visit":1.5}`, false,
			[]string{`"visit": want an integer`}},
		{"a string for a boolean", `{` + next + `"kind":"tool_result","stage":"s","call_id":"c","tool":"t","ok":"yes","content":""}`,
			false, []string{`"ok": want a boolean`}},
		{"a string for a list", `{` + next + `"kind":"kill","killer":0,"killer_name":"host","reason":"r","cascade":"a"}`,
			false, []string{`"cascade": want an array of strings`}},
		{"a field twice", `{` + next + `"kind":"stage_enter","stage":"s","stage":"t","visit":1}`, false,
			[]string{`"stage" twice`}},
		{"a negative tick", `{"tick":-1,"seq":4,"agent":1,"name":"a","kind":"stage_enter","stage":"s","visit":1}`, false,
			[]string{"want tick and agent >= 0"}},
		{"seq not increasing", `{"tick":1,"seq":3,"agent":1,"name":"a","kind":"stage_enter","stage":"s","visit":2}`, false,
			[]string{"seq 3 after seq 3"}},
		{"an agent never spawned", `{"tick":1,"seq":4,"agent":9,"name":"z","kind":"stage_enter","stage":"s","visit":1}`, false,
			[]string{"agent 9", "never spawned"}},
		{"a world event of an agent", `{` + next + `"kind":"pool_breaker","pool":"p","state":"open","failures":3}`, false,
			[]string{"world event"}},
		{"an agent event of the host", `{"tick":1,"seq":4,"agent":0,"name":"","kind":"stage_enter","stage":"s","visit":1}`, false,
			[]string{"of agent 0"}},
		{"an id spawned twice", `{` + next + `"kind":"spawn","group":"g","index":0,"blueprint":"b","model":"m","task":""}`, false,
			[]string{"ids increase in spawn order"}},
		{"a name spawned twice", `{"tick":1,"seq":4,"agent":3,"name":"a","kind":"spawn","group":"g","index":0,"blueprint":"b","model":"m","task":""}`,
			false, []string{`a second agent named "a"`}},
		{"a parent never spawned", `{"tick":1,"seq":4,"agent":3,"name":"c","kind":"spawn","group":"g","index":0,"blueprint":"b","model":"m","task":"","parent":7,"parent_name":"x","depth":1,"detached":false,"call":"c"}`,
			false, []string{"parent 7 was never spawned"}},
		{"a cost that is not a decimal", `{` + next + `"kind":"model_turn","stage":"s","model":"m","iteration":0,"text":"","calls":0,"cost_usd":"1e-3"}`,
			false, []string{"cost_usd", "not a decimal"}},
		{"a second header", string(good[0]), false, []string{"line 5", "a trace header where an event was expected"}},
		{"an event first", string(good[1]), true, []string{"line 1", "want the trace header first"}},
		{"another version", `{"format":"warren-trace","version":4,"scenario":"x","scenario_hash":"h","seed":1,"clock":"virtual"}`,
			true, []string{"line 1", "version 4"}},
		{"another format", `{"format":"csv","version":5}`, true, []string{"line 1", "format"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := runview.New(runview.Options{})
			if !tt.header {
				v = feed(t, runview.Options{}, good)
			}
			before := snapshot(t, v)
			err := v.Apply([]byte(tt.line))
			if err == nil {
				t.Fatal("no error")
			}
			wantErr := runview.ErrMalformed
			if tt.header {
				wantErr = trace.ErrBadHeader
			}
			if !errors.Is(err, wantErr) {
				t.Errorf("%v does not wrap %v", err, wantErr)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if after := snapshot(t, v); after != before {
				t.Errorf("the bad line changed the view:\nbefore %s\nafter  %s", before, after)
			}
			// The View goes on with the next good line.
			if !tt.header {
				if err := v.Apply([]byte(`{"tick":1,"seq":4,"agent":1,"name":"a","kind":"stage_enter","stage":"t","visit":1}`)); err != nil {
					t.Errorf("a good line after the bad one: %v", err)
				}
			}
		})
	}
	t.Run("an event after the end event", func(t *testing.T) {
		lines := golden(t, "expect_fail")
		v := feed(t, runview.Options{}, lines)
		err := v.Apply([]byte(`{"tick":99,"seq":9999,"agent":1,"name":"x","kind":"stage_enter","stage":"s","visit":1}`))
		if !errors.Is(err, runview.ErrMalformed) || !strings.Contains(err.Error(), "after the end event") {
			t.Errorf("got %v", err)
		}
	})
}

// TestCutLines cuts every line of a golden trace at several places (as a write cut short leaves
// the last line) and applies each cut line: an error or, where the cut leaves valid JSON of
// the same event, nothing new, but never a panic, and the View goes on with the whole line.
func TestCutLines(t *testing.T) {
	lines := golden(t, "kill_tree")
	v := runview.New(runview.Options{})
	for i, l := range lines {
		for _, cut := range []int{1, len(l) / 3, len(l) / 2, len(l) - 1} {
			if i > 0 && v.Apply(l[:cut]) == nil {
				t.Fatalf("line %d cut at %d applied: %s", i+1, cut, l[:cut])
			}
		}
		if err := v.Apply(l); err != nil {
			t.Fatalf("line %d after its cut forms: %v", i+1, err)
		}
	}
	if p := v.Progress(); !p.Ended {
		t.Error("the trace did not end")
	}
}

// TestDeterministic builds two Views of the same trace and checks everything they show is the
// same, byte for byte: nothing may depend on a map's order.
func TestDeterministic(t *testing.T) {
	for _, name := range []string{"review", "planner", "live", "gated"} {
		t.Run(name, func(t *testing.T) {
			lines := golden(t, name)
			a, b := snapshot(t, feed(t, runview.Options{}, lines)), snapshot(t, feed(t, runview.Options{}, lines))
			if a != b {
				t.Error("two Views of one trace differ")
			}
		})
	}
}

// TestConcurrentReaders applies a trace from one goroutine while others call every reader;
// run with -race. Readers must also see the trace only move forward.
func TestConcurrentReaders(t *testing.T) {
	lines := golden(t, "wait_storm")
	prompts := golden(t, "gated")
	for _, tt := range []struct {
		name  string
		lines [][]byte
	}{{"wait_storm", lines}, {"gated", prompts}} {
		t.Run(tt.name, func(t *testing.T) {
			v := runview.New(runview.Options{MaxEntries: 8, MaxSeries: 16})
			done := make(chan struct{})
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for r := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var last runview.Progress
					for i := 0; ; i++ {
						select {
						case <-done:
							return
						default:
						}
						p := v.Progress()
						if p.LastSeq < last.LastSeq || p.Events < last.Events {
							errs <- errors.New("progress went back")
							return
						}
						last = p
						_ = v.Header()
						c := v.Counts()
						page := v.Agents(runview.AgentQuery{Limit: 50, After: int64(i % 100), Phase: []string{"", "waiting"}[r%2]})
						if len(page.Items) > 0 {
							d, ok := v.Agent(page.Items[0].Name)
							if !ok || d.ID != page.Items[0].ID {
								errs <- errors.New("an agent listed cannot be found")
								return
							}
							_, _ = v.Tree(runview.TreeQuery{Parent: d.Name, Limit: 5})
						}
						_, _ = v.Tree(runview.TreeQuery{Limit: 20})
						_, _ = v.AgentByID(int64(i%2000 + 1))
						_ = v.Prompts()
						_ = v.Graph()
						_ = v.Series()
						if c.Agents < 0 {
							return
						}
					}
				}()
			}
			for i, l := range tt.lines {
				if err := v.Apply(l); err != nil {
					t.Errorf("line %d: %v", i+1, err)
					break
				}
			}
			close(done)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			want := snapshot(t, feed(t, runview.Options{MaxEntries: 8, MaxSeries: 16}, tt.lines))
			if got := snapshot(t, v); got != want {
				t.Error("the view applied under concurrent reads differs from one applied alone")
			}
		})
	}
}

// TestEntryGet checks the helper the server and tests read fields with.
func TestEntryGet(t *testing.T) {
	e := runview.Entry{Fields: []runview.Field{{Name: "a", Value: int64(1)}, {Name: "b", Value: "x"}}}
	if f, ok := e.Get("b"); !ok || !reflect.DeepEqual(f.Value, "x") {
		t.Errorf("Get(b) = %+v, %v", f, ok)
	}
	if _, ok := e.Get("c"); ok {
		t.Error("Get of a missing field")
	}
}
