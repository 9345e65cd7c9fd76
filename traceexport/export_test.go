package traceexport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/warren/table"
	"github.com/warrenhq/warren/trace"
)

// everyKindTrace writes a trace with an event of every kind through the trace.Writer, each with
// what is hard to carry: optional fields present and absent, an empty list and a list holding
// "", money at the limit of a trace's picodollars, a negative cost, null and nested args, a line
// longer than the exporter's buffer, text with quotes, commas, newlines and non-ASCII.
func everyKindTrace(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, trace.Header{Scenario: "every", ScenarioHash: "sha256:1", Clock: trace.ClockVirtual, Seed: 18446744073709551615, Recording: "every.rec"})
	if err != nil {
		t.Fatal(err)
	}
	a := trace.AgentRef{ID: 1, Name: "a-0"}
	child := trace.AgentRef{ID: 2, Name: "a-0/1"}
	w.Spawn(0, a, "g", 0, "bp", "openai:m", "say \"hi\",\nthen leave — ünïcode")
	w.SpawnChild(0, child, "g", 0, "bp", "scripted:c", "item", a, "a-0-t0-c0", 1, true, 3)
	w.StageEnter(0, a, "plan", 1)
	w.ModelTurn(1, a, "plan", "openai:m", 0, "thinking, \"aloud\"", 2, "", &trace.LiveTurn{Pool: "p", Attempts: 2, Prompt: 10, Completion: 5, CacheRead: 1, CacheWrite: 2, Cost: 9_223_372_036_854_775_807, Dropped: 1})
	w.ModelTurn(1, a, "plan", "scripted:c", 1, "", 0, "boom", nil)
	w.ModelRetry(1, a, "plan", 1, 1, "p", "429", 429, 1500)
	w.ModelRetry(1, a, "plan", 1, 2, "p", "reset", 0, 10)
	w.ModelFallback(1, a, 1, "p", "q", "breaker open")
	w.PoolBreaker(1, "p", "open", 5)
	w.ToolCall(1, a, "plan", "a-0-t0-c0", "write_file", json.RawMessage(`{"path":"x,y.md","n":[1,2.5,{"deep":null}]}`), []string{"write_file", ""}, "ask", "default", "no layer")
	w.ToolCall(1, a, "plan", "a-0-t0-c1", "todo_list", nil, []string{}, "deny", "visibility", "not here")
	// A line longer than the exporter's read buffer (256 KiB): a write_file call's whole file.
	long, err := json.Marshal(map[string]string{"path": "big.txt", "content": strings.Repeat("all work and no play, ", 20_000)})
	if err != nil {
		t.Fatal(err)
	}
	w.ToolCall(1, a, "plan", "a-0-t0-c2", "write_file", long, []string{"write_file"}, "allow", "default", "")
	w.Prompt(1, a, "plan", "a-0-t0-c0", "write_file", "approval", []string{}, "", 9)
	w.Answer(2, a, "plan", "a-0-t0-c0", "write_file", "once", "script", "allow")
	w.ToolNote(2, a, "plan", "a-0-t0-c0", "write_file", "log", "line\nbreak", false, "degraded")
	w.ToolResult(2, a, "plan", "a-0-t0-c0", "write_file", false, "")
	w.Memory(2, a, "plan", "rounds", "1")
	w.Transition(2, a, "plan", "work", "done", "", "")
	w.Transition(3, a, "work", "end", "done", `result.verdict == "ok"`, "")
	w.Message(3, a, child, "notify", "a-0/1 ended: killed")
	w.WaitStart(3, a, "a-0-t1-c0", child)
	w.WaitEnd(4, a, "a-0-t1-c0", child, "killed")
	w.Kill(4, child, trace.AgentRef{Name: trace.HostName}, "run timeout", []string{"a-0/1"})
	w.FanOutStart(4, a, "a-0-t2-c0", "bp", 3, 2, "continue", "tool")
	w.WorkerEnd(5, a, "a-0-t2-c0", 0, child, "done")
	w.Merge(5, a, "a-0-t2-c0", 1, 1, 0, 1, 512, true)
	w.MCPServer(5, "demo", "start", 1, "stdio", "")
	w.Terminal(6, a, "done", "", "work")
	w.Reap(6, a, "done", 2, 2, 1, &trace.Spent{Tokens: 15, Cost: -450_000})
	w.Reap(6, child, "killed", 0, 0, 0, nil)
	w.End(7, trace.RunFinished, 8, 2, 2, 2, 1, &trace.Spent{Tokens: 15, Cost: 1})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// decodeEvents decodes a trace's event lines, numbers as json.Number.
func decodeEvents(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	_, lines, err := trace.ReadAll(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	events := make([]map[string]any, len(lines))
	for i, l := range lines {
		dec := json.NewDecoder(bytes.NewReader(l))
		dec.UseNumber()
		if err := dec.Decode(&events[i]); err != nil {
			t.Fatal(err)
		}
	}
	return events
}

// exportBytes exports a trace held in memory into a new temporary folder.
func exportBytes(t *testing.T, data []byte, opts Options) (string, Stats) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "out")
	st, err := Export(context.Background(), bytes.NewReader(data), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return dir, st
}

// checkTables reads every table of an export back and compares it with the trace's events.
func checkTables(t *testing.T, dir string, f table.Format, events []map[string]any) {
	t.Helper()
	for _, head := range Tables() {
		got := readTable(t, dir, f, head)
		want := wantRows(t, events, head, f)
		if len(got) != len(want) {
			t.Errorf("%s: %d rows, want %d", head.Name, len(got), len(want))
			continue
		}
		for i := range want {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Errorf("%s row %d:\n got  %#v\n want %#v", head.Name, i+1, got[i], want[i])
			}
		}
	}
}

// TestExportEveryKind exports a trace with an event of every kind in every format and reads each
// table back: every value, null, list, decimal and JSON document as the trace has it.
func TestExportEveryKind(t *testing.T) {
	data := everyKindTrace(t)
	events := decodeEvents(t, data)
	kinds := map[string]bool{}
	for _, e := range events {
		kinds[e["kind"].(string)] = true
	}
	for _, k := range trace.Kinds() {
		if !kinds[k] {
			t.Fatalf("everyKindTrace has no %s event", k)
		}
	}
	for _, f := range table.Formats() {
		t.Run(string(f), func(t *testing.T) {
			dir, st := exportBytes(t, data, Options{Format: f})
			if !st.Complete || len(st.Notes) != 0 || st.Events != int64(len(events)) || st.TraceBytes != int64(len(data)) {
				t.Errorf("stats %+v: want a complete trace of %d events, %d bytes", st, len(events), len(data))
			}
			checkTables(t, dir, f, events)
		})
	}
}

// TestExportGoldenTraces exports every shipped golden trace in every format and reads each table
// back, compared with the trace.
func TestExportGoldenTraces(t *testing.T) {
	paths, err := filepath.Glob(goldenTrace("*"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden traces: %v", err)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			events := decodeEvents(t, data)
			for _, f := range table.Formats() {
				dir, _ := exportBytes(t, data, Options{Format: f})
				checkTables(t, dir, f, events)
			}
		})
	}
}

// TestTables checks the tables' columns against the trace schema: the common fields, then the
// kind's own in order, each of its type, the optional ones saying so.
func TestTables(t *testing.T) {
	tables := Tables()
	schema := trace.Schema()
	if len(tables) != len(schema)+1 || tables[0].Name != EventsTable {
		t.Fatalf("%d tables starting with %q, want events and one per kind (%d)", len(tables), tables[0].Name, len(schema))
	}
	common := trace.CommonFields()
	for i, k := range schema {
		tb := tables[i+1]
		fields := append(slices.Clone(common), k.Fields...)
		if tb.Name != k.Kind || len(tb.Columns) != len(fields) {
			t.Fatalf("table %d is %s with %d columns, want %s with %d", i+1, tb.Name, len(tb.Columns), k.Kind, len(fields))
		}
		for j, fl := range fields {
			c := tb.Columns[j]
			if c.Name != fl.Name || string(c.Type) != string(fl.Type) || (c.Doc == optionalDoc) != fl.Optional {
				t.Errorf("%s column %d is %+v, want field %+v", tb.Name, j, c, fl)
			}
		}
	}
	for _, tb := range tables {
		if err := table.Check(tb); err != nil {
			t.Errorf("table %s cannot be written: %v", tb.Name, err)
		}
	}
}

// TestExportEmptyKinds checks that a kind no event has still gets its table, empty and with all
// its columns, so every export of a version has the same files.
func TestExportEmptyKinds(t *testing.T) {
	data, err := os.ReadFile(goldenTrace("on_error"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range table.Formats() {
		t.Run(string(f), func(t *testing.T) {
			dir, st := exportBytes(t, data, Options{Format: f})
			if len(st.Tables) != len(Tables()) {
				t.Fatalf("%d tables written, want %d", len(st.Tables), len(Tables()))
			}
			for _, ts := range st.Tables {
				if ts.Name == trace.KindFanOutStart && (ts.Rows != 0 || ts.Bytes == 0) {
					t.Errorf("fanout_start: %d rows in %d bytes, want an empty table", ts.Rows, ts.Bytes)
				}
				if fi, err := os.Stat(ts.File); err != nil || fi.Size() != ts.Bytes || filepath.Dir(ts.File) != dir {
					t.Errorf("%s: %v, want a file of %d bytes in %s", ts.File, err, ts.Bytes, dir)
				}
			}
			for _, head := range Tables() {
				if head.Name == trace.KindFanOutStart {
					if rows := readTable(t, dir, f, head); len(rows) != 0 {
						t.Errorf("fanout_start holds %d rows", len(rows))
					}
				}
			}
		})
	}
}

// TestExportManifest checks tables.json: the trace's header and completeness, each table's file,
// rows and typed columns, extra tables included.
func TestExportManifest(t *testing.T) {
	extra := table.Table{Name: "groups", Doc: "one row per group", Columns: []table.Column{{Name: "group", Type: table.String},
		{Name: "cost_usd", Type: table.Decimal}, {Name: "share", Type: table.Float}},
		Rows: [][]any{{"g", "0.5", 0.25}, {"h", nil, nil}}}
	data := everyKindTrace(t)
	dir, st := exportBytes(t, data, Options{Format: table.CSV, Extra: []table.Table{extra}})
	var m Manifest
	raw, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	wantTrace := ManifestTrace{Version: trace.Version, HostVersion: st.Header.HostVersion, Scenario: "every", ScenarioHash: "sha256:1",
		Seed: 18446744073709551615, Clock: trace.ClockVirtual, Recording: "every.rec", Events: st.Events, Complete: true}
	if fmt.Sprint(m.Trace) != fmt.Sprint(wantTrace) || m.Format != table.CSV {
		t.Errorf("manifest trace %+v (format %s), want %+v (csv)", m.Trace, m.Format, wantTrace)
	}
	heads := append(Tables(), extra)
	if len(m.Tables) != len(heads) {
		t.Fatalf("the manifest lists %d tables, want %d", len(m.Tables), len(heads))
	}
	for i, mt := range m.Tables {
		want := table.DescribeTable(heads[i])
		if fmt.Sprint(mt.Description) != fmt.Sprint(want) || mt.File != heads[i].Name+".csv" || mt.Rows != st.Tables[i].Rows {
			t.Errorf("manifest table %d: %+v, want %+v in %s.csv with %d rows", i, mt, want, heads[i].Name, st.Tables[i].Rows)
		}
	}
	if got := readTable(t, dir, table.CSV, extra); fmt.Sprint(got) != fmt.Sprint(extra.Rows) {
		t.Errorf("the extra table reads back as %v, want %v", got, extra.Rows)
	}
	var total int64
	for _, ts := range st.Tables {
		total += ts.Bytes
	}
	if st.OutputBytes() != total+int64(len(raw)) {
		t.Errorf("OutputBytes %d, want the tables' %d and the manifest's %d", st.OutputBytes(), total, len(raw))
	}
}

// TestExportIncomplete exports traces a killed run leaves: without the end event, and with a last
// line cut mid-line; each is exported up to its last whole line, with the notes trace.Read gives.
func TestExportIncomplete(t *testing.T) {
	data := everyKindTrace(t)
	lines := bytes.SplitAfter(data, []byte("\n"))
	tests := []struct {
		name   string
		data   []byte
		events int
		notes  []string
	}{
		{"no end event", bytes.Join(lines[:10], nil), 9, []string{trace.NoteIncomplete}},
		{"a line cut mid-line", append(bytes.Join(lines[:10], nil), lines[10][:20]...), 9,
			[]string{trace.NoteIncomplete, "line 11 was cut mid-line (20 bytes, no newline): read the 9 whole events before it"}},
		{"a last line without its newline", bytes.TrimSuffix(bytes.Join(lines[:10], nil), []byte("\n")), 9, []string{trace.NoteIncomplete}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			read, err := trace.Read(bytes.NewReader(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			dir, st := exportBytes(t, tt.data, Options{Format: table.Parquet})
			if st.Complete || st.Events != int64(tt.events) || !slices.Equal(st.Notes, tt.notes) || !slices.Equal(st.Notes, read.Notes) {
				t.Errorf("stats: complete %v, %d events, notes %q; want incomplete, %d events, notes %q (trace.Read's: %q)",
					st.Complete, st.Events, st.Notes, tt.events, tt.notes, read.Notes)
			}
			checkTables(t, dir, table.Parquet, decodeEvents(t, bytes.Join(lines[:tt.events+1], nil)))
			var m Manifest
			raw, _ := os.ReadFile(filepath.Join(dir, ManifestFile))
			if err := json.Unmarshal(raw, &m); err != nil || m.Trace.Complete || !slices.Equal(m.Trace.Notes, tt.notes) {
				t.Errorf("the manifest says complete %v, notes %q (%v)", m.Trace.Complete, m.Trace.Notes, err)
			}
		})
	}
}

// TestExportRefusesBadTraces checks that a trace that is not what version 5 writes is refused
// with an error naming the line, and that nothing is left in the folder.
func TestExportRefusesBadTraces(t *testing.T) {
	data := everyKindTrace(t)
	header := string(bytes.SplitAfter(data, []byte("\n"))[0])
	ev := `{"tick":0,"seq":1,"agent":1,"name":"a","kind":"stage_enter","stage":"s","visit":1}`
	tests := []struct {
		name, trace string
		is          error
		msg         string
	}{
		{"empty", "", trace.ErrBadHeader, "empty input"},
		{"version 4", strings.Replace(header, `"version":5`, `"version":4`, 1), trace.ErrBadHeader, "version 4, this build reads version 5"},
		{"not a trace", "scenario = 1\n", trace.ErrBadHeader, "line 1 is not JSON"},
		{"not JSON", header + "{oops\n", trace.ErrMalformed, "line 2: not a JSON object"},
		{"an array", header + "[1]\n", trace.ErrMalformed, "line 2: not a JSON object"},
		{"no kind", header + `{"tick":0,"seq":1,"agent":1,"name":"a"}` + "\n", trace.ErrMalformed, "line 2: the event has no kind"},
		{"an unknown kind", header + strings.Replace(ev, "stage_enter", "stage_exit", 1) + "\n", trace.ErrMalformed,
			`line 2: unknown kind "stage_exit"; a version 5 trace has the kinds answer, end,`},
		{"an unknown field", header + ev + "\n" + strings.Replace(ev, `"visit":1`, `"visit":1,"extra":true`, 1) + "\n", trace.ErrMalformed,
			`line 3: a stage_enter event has no field "extra" in a version 5 trace`},
		{"a string for an integer", header + strings.Replace(ev, `"visit":1`, `"visit":"1"`, 1) + "\n", trace.ErrMalformed,
			`line 2: stage_enter field "visit": want an integer, got string`},
		{"a fraction for an integer", header + strings.Replace(ev, `"visit":1`, `"visit":1.5`, 1) + "\n", trace.ErrMalformed,
			`line 2: stage_enter field "visit": want a 64-bit integer`},
		{"a missing field", header + strings.Replace(ev, `,"visit":1`, ``, 1) + "\n", trace.ErrMalformed,
			`line 2: the stage_enter event lacks its field "visit"`},
		{"a missing common field", header + strings.Replace(ev, `"tick":0,`, ``, 1) + "\n", trace.ErrMalformed,
			`line 2: the stage_enter event lacks its field "tick"`},
		{"a null", header + strings.Replace(ev, `"stage":"s"`, `"stage":null`, 1) + "\n", trace.ErrMalformed,
			`line 2: stage_enter field "stage": want a string, got null`},
		{"a bad list", header + `{"tick":0,"seq":1,"agent":1,"name":"a","kind":"kill","killer":0,"killer_name":"host","reason":"r","cascade":["a",1]}` + "\n",
			trace.ErrMalformed, `line 2: kill field "cascade": want an array of strings, got a number at 1`},
		{"money as a float", header + `{"tick":0,"seq":1,"agent":1,"name":"a","kind":"reap","status":"done","model_turns":0,"tool_calls":0,"tool_errors":0,"cost_usd":"1e-3"}` + "\n",
			trace.ErrMalformed, `line 2: invalid table row: table "reap", row 1: column "cost_usd" (decimal): "1e-3" is not a decimal number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			fds := openFiles(t)
			_, err := Export(context.Background(), strings.NewReader(tt.trace), dir, Options{Format: table.Parquet})
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("Export = %v, want an error wrapping %v saying %q", err, tt.is, tt.msg)
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("a failed export left %d files in the folder, %s first", len(left), left[0].Name())
			}
			if now := openFiles(t); now != fds {
				t.Errorf("a failed export left files open: %d open before it, %d after", fds, now)
			}
		})
	}
}

// openFiles counts the process's open file descriptors.
func openFiles(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count open files: %v", err)
	}
	return len(fds)
}

// TestExportFolder checks what Export does with the folder: it makes it when missing, refuses a
// file, refuses to replace an earlier export's files unless forced, and leaves other files alone.
func TestExportFolder(t *testing.T) {
	data := everyKindTrace(t)
	export := func(dir string, opts Options) error {
		_, err := Export(context.Background(), bytes.NewReader(data), dir, opts)
		return err
	}
	t.Run("a missing folder is made", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "a", "b")
		if err := export(dir, Options{Format: table.CSV}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "events.csv")); err != nil {
			t.Error(err)
		}
	})
	t.Run("a file", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "out")
		if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		err := export(file, Options{Format: table.CSV})
		if !errors.Is(err, ErrOutDir) || !strings.Contains(err.Error(), file+" is a file; give a folder") {
			t.Fatalf("Export into a file = %v, want ErrOutDir naming it", err)
		}
	})
	t.Run("an earlier export", func(t *testing.T) {
		dir := t.TempDir()
		mine := filepath.Join(dir, "notes.txt")
		if err := os.WriteFile(mine, []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := export(dir, Options{Format: table.CSV}); err != nil {
			t.Fatal(err)
		}
		stale := filepath.Join(dir, "events.csv")
		if err := os.WriteFile(stale, []byte("stale"), 0o644); err != nil {
			t.Fatal(err)
		}
		err := export(dir, Options{Format: table.CSV})
		if !errors.Is(err, ErrExists) || err.Error() != "files of an earlier export exist: "+dir+" holds events.csv, answer.csv, end.csv and 23 more" {
			t.Fatalf("a second export = %v, want ErrExists naming the files", err)
		}
		if b, _ := os.ReadFile(stale); string(b) != "stale" {
			t.Errorf("a refused export changed events.csv")
		}
		// One folder holds one export: its manifest says what the folder holds.
		if err := export(dir, Options{Format: table.Parquet}); !errors.Is(err, ErrExists) || !strings.HasSuffix(err.Error(), "holds tables.json") {
			t.Errorf("a Parquet export beside a CSV one = %v, want ErrExists naming the manifest", err)
		}
		if err := export(dir, Options{Format: table.CSV, Force: true}); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(stale); string(b) == "stale" {
			t.Errorf("a forced export did not replace events.csv")
		}
		if b, _ := os.ReadFile(mine); string(b) != "mine" {
			t.Errorf("an export changed a file it does not write")
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				t.Errorf("a temporary file is left: %s", e.Name())
			}
		}
	})
}

// TestExportRefusesBadOptions checks the options Export refuses before it reads anything.
func TestExportRefusesBadOptions(t *testing.T) {
	good := table.Table{Name: "metrics", Columns: []table.Column{{Name: "n", Type: table.Integer}}}
	tests := []struct {
		name string
		opts Options
		is   error
		msg  string
	}{
		{"unknown format", Options{Format: "json"}, table.ErrFormat, `unknown table format "json": valid formats are parquet, csv`},
		{"no format", Options{}, table.ErrFormat, `unknown table format "": valid formats are parquet, csv`},
		{"a table named like a kind", Options{Format: table.CSV, Extra: []table.Table{{Name: "tool_call", Columns: good.Columns}}},
			ErrTableName, `invalid extra table name "tool_call": a trace table or another extra table has it (the trace tables are events, answer,`},
		{"two extra tables of one name", Options{Format: table.CSV, Extra: []table.Table{good, good}}, ErrTableName, `"metrics": a trace table or another extra table has it`},
		{"a name that is no identifier", Options{Format: table.CSV, Extra: []table.Table{{Name: "../x", Columns: good.Columns}}},
			ErrTableName, `invalid extra table name "../x": use a lower-case identifier`},
		{"a row that does not fit", Options{Format: table.CSV, Extra: []table.Table{{Name: "m", Columns: good.Columns, Rows: [][]any{{1}}}}},
			table.ErrValue, `table "m", row 1: column "n" (integer): got int 1, want int64`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			// The reader fails the test if it is read: options are checked first.
			_, err := Export(context.Background(), failReader{t}, dir, tt.opts)
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("Export = %v, want an error wrapping %v saying %q", err, tt.is, tt.msg)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the refused export made its folder")
			}
		})
	}
}

// failReader fails the test when read.
type failReader struct{ t *testing.T }

func (f failReader) Read([]byte) (int, error) {
	f.t.Error("the trace was read before the options were checked")
	return 0, errors.New("not to be read")
}

// TestExportCancelled checks that a cancelled export stops, says so, and leaves nothing behind.
func TestExportCancelled(t *testing.T) {
	data, err := os.ReadFile(goldenTrace("fanout"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	_, err = Export(ctx, bytes.NewReader(data), dir, Options{Format: table.Parquet})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "export stopped at line 1024") {
		t.Fatalf("a cancelled export = %v, want context.Canceled and where it stopped", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("a cancelled export left %d files", len(left))
	}
}

// TestExportFileNamesTheTrace checks that ExportFile's errors about the trace name its file.
func TestExportFileNamesTheTrace(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "old.jsonl")
	old := strings.Replace(string(everyKindTrace(t)), `"version":5`, `"version":4`, 1)
	if err := os.WriteFile(bad, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, path, msg string }{
		{"a missing file", filepath.Join(dir, "missing.jsonl"), "open " + filepath.Join(dir, "missing.jsonl") + ": no such file or directory"},
		{"an old trace", bad, bad + ": invalid trace header: line 1: version 4, this build reads version 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, "out")
			_, err := ExportFile(context.Background(), tt.path, out, Options{Format: table.Parquet})
			if err == nil || err.Error() != tt.msg {
				t.Fatalf("ExportFile = %v, want %q", err, tt.msg)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the refused export made its folder")
			}
		})
	}
}

// TestExportIsDeterministic checks that the same trace exports to the same bytes: exports can be
// compared and cached like traces.
func TestExportIsDeterministic(t *testing.T) {
	data := everyKindTrace(t)
	for _, f := range table.Formats() {
		a, _ := exportBytes(t, data, Options{Format: f})
		b, _ := exportBytes(t, data, Options{Format: f})
		for _, head := range Tables() {
			x, _ := os.ReadFile(filepath.Join(a, head.Name+f.Ext()))
			y, _ := os.ReadFile(filepath.Join(b, head.Name+f.Ext()))
			if !bytes.Equal(x, y) {
				t.Errorf("%s%s differs between two exports of one trace", head.Name, f.Ext())
			}
		}
	}
}
