package trace

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/warrenhq/warren/internal/version"
)

// sampleLines returns the lines of testdata/sample.jsonl (header first).
func sampleLines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("testdata/sample.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// edited returns a copy of lines with line n (1-based) replaced by fn(line).
func edited(lines []string, n int, fn func(string) string) []string {
	out := append([]string(nil), lines...)
	out[n-1] = fn(out[n-1])
	return out
}

func joinLines(lines []string) string { return strings.Join(lines, "\n") + "\n" }

func writeTemp(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDiff(t *testing.T) {
	base := sampleLines(t)
	replace := func(old, new string) func(string) string {
		return func(s string) string { return strings.Replace(s, old, new, 1) }
	}
	tests := []struct {
		name string
		got  []string
		want string // the exact report
	}{
		{name: "identical", got: base, want: ""},
		{
			name: "field change",
			got:  edited(base, 5, replace(`"verdict":"allow"`, `"verdict":"ask"`)),
			want: `first difference at line 5; want has 10 events, got has 10
context (identical on both sides):
  line 3: ` + base[2] + `
  line 4: ` + base[3] + `
want: seq 4, tick 1, agent worker-0 (id 1), kind tool_call
got:  seq 4, tick 1, agent worker-0 (id 1), kind tool_call
fields that differ:
- verdict: "allow"
+ verdict: "ask"
after it: no later event differs (seq aside)
`,
		},
		{
			name: "kind change on the first event shows the header as context",
			got:  edited(base, 2, replace(`"kind":"spawn","group":"workers","index":0,`, `"kind":"stage_enter","stage":"plan",`)),
			want: `first difference at line 2; want has 10 events, got has 10
context (identical on both sides):
  line 1: ` + string(elideFields([]byte(base[0]))) + `
want: seq 1, tick 0, agent worker-0 (id 1), kind spawn
got:  seq 1, tick 0, agent worker-0 (id 1), kind stage_enter
fields that differ:
- kind: "spawn"
+ kind: "stage_enter"
- group: "workers"
+ group: (absent)
- index: 0
+ index: (absent)
- stage: (absent)
+ stage: "plan"
after it: no later event differs (seq aside)
`,
		},
		{
			name: "extra event",
			got:  append(append([]string(nil), base...), `{"tick":6,"seq":10,"agent":1,"name":"worker-0","kind":"reap","status":"again","model_turns":0,"tool_calls":0,"tool_errors":0}`),
			want: `note: got: trace incomplete: no end event
got has extra events after line 11: want has 10 events, got has 11
context (identical on both sides):
  line 10: ` + base[9] + `
  line 11: ` + base[10] + `
first extra event:
got:  seq 10, tick 6, agent worker-0 (id 1), kind reap
  line 12: {"tick":6,"seq":10,"agent":1,"name":"worker-0","kind":"reap","status":"again","model_turns":0,"tool_calls":0,"tool_errors":0}
`,
		},
		{
			name: "missing event",
			got:  base[:8],
			want: `note: got: trace incomplete: no end event
got ends early after line 8: want has 10 events, got has 7
context (identical on both sides):
  line 7: ` + base[6] + `
  line 8: ` + base[7] + `
first missing event:
want: seq 8, tick 4, agent worker-0 (id 1), kind terminal
  line 9: ` + base[8] + `
`,
		},
		{
			name: "header change",
			got:  edited(base, 1, replace(`"seed":42`, `"seed":43`)),
			want: `header differs (line 1):
- seed: 42
+ seed: 43
`,
		},
		{
			name: "header and event change",
			got: edited(edited(base, 1, replace(`"scenario":"smoke"`, `"scenario":"smoke-2"`)), 10,
				replace(`"tool_errors":0`, `"tool_errors":1`)),
			want: `header differs (line 1):
- scenario: "smoke"
+ scenario: "smoke-2"
first difference at line 10; want has 10 events, got has 10
context (identical on both sides):
  line 8: ` + base[7] + `
  line 9: ` + base[8] + `
want: seq 9, tick 5, agent worker-0 (id 1), kind reap
got:  seq 9, tick 5, agent worker-0 (id 1), kind reap
fields that differ:
- tool_errors: 0
+ tool_errors: 1
after it: no later event differs (seq aside)
`,
		},
		{
			name: "same fields in another order",
			got:  edited(base, 3, replace(`"stage":"plan","visit":1`, `"visit":1,"stage":"plan"`)),
			want: `first difference at line 3; want has 10 events, got has 10
context (identical on both sides):
  line 1: ` + string(elideFields([]byte(base[0]))) + `
  line 2: ` + base[1] + `
want: seq 2, tick 0, agent worker-0 (id 1), kind stage_enter
got:  seq 2, tick 0, agent worker-0 (id 1), kind stage_enter
same fields and values, encoded differently (field order or spacing):
- ` + base[2] + `
+ ` + strings.Replace(base[2], `"stage":"plan","visit":1`, `"visit":1,"stage":"plan"`, 1) + `
after it: no later event differs (seq aside)
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			report, err := Diff(strings.NewReader(joinLines(base)), strings.NewReader(joinLines(tt.got)))
			if err != nil {
				t.Fatal(err)
			}
			if report != tt.want {
				t.Errorf("report:\n%s\nwant:\n%s", report, tt.want)
			}
		})
	}
}

func TestDiffClipsLongValuesAroundTheChange(t *testing.T) {
	long := strings.Repeat("x", 500)
	line := func(s string) string {
		return `{"tick":1,"seq":1,"agent":1,"name":"a","kind":"model_turn","text":"` + s + `"}`
	}
	header := sampleLines(t)[0]
	want := joinLines([]string{header, line(long), line(long + "A" + long)})
	got := joinLines([]string{header, line(long), line(long + "B" + long)})
	report, err := Diff(strings.NewReader(want), strings.NewReader(got))
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"- text: …" + strings.Repeat("x", 40) + "A", "+ text: …" + strings.Repeat("x", 40) + "B", "x…(+329 bytes)\n"} {
		if !strings.Contains(report, part) {
			t.Errorf("report lacks %q:\n%s", part, report)
		}
	}
	for _, l := range strings.Split(report, "\n") {
		if len(l) > maxLineShown+40 {
			t.Errorf("report line of %d bytes is not clipped: %.60s…", len(l), l)
		}
	}
}

func TestReadAll(t *testing.T) {
	h, events, err := ReadAll(strings.NewReader(joinLines(sampleLines(t))))
	if err != nil {
		t.Fatal(err)
	}
	want := testHeader
	want.HostVersion = version.Warren
	want.Fields = Columns()
	if !reflect.DeepEqual(h, want) {
		t.Errorf("header = %+v, want %+v", h, want)
	}
	if len(events) != 10 || string(events[9]) != sampleLines(t)[10] {
		t.Errorf("read %d events; last = %s", len(events), events[len(events)-1])
	}
	// A last line without its newline (a trace cut short) still reads.
	_, events, err = ReadAll(strings.NewReader(strings.TrimSuffix(joinLines(sampleLines(t)), "\n")))
	if err != nil || len(events) != 10 {
		t.Errorf("without final newline: %d events, %v", len(events), err)
	}
}

func TestReadAllRejectsBadTraces(t *testing.T) {
	tests := []struct {
		file string
		want error
		text string
	}{
		{"empty.jsonl", ErrBadHeader, "empty input"},
		{"header_not_json.jsonl", ErrBadHeader, "line 1 is not JSON"},
		{"header_wrong_format.jsonl", ErrBadHeader, `format "other-trace", want "warren-trace"`},
		{"header_future_version.jsonl", ErrBadHeader, "version 6, this build reads version 5"},
		{"header_old_version.jsonl", ErrBadHeader, "version 4, this build reads version 5"},
		{"header_unknown_field.jsonl", ErrBadHeader, `unknown field "colour"`},
		{"header_negative_seed.jsonl", ErrBadHeader, "line 1"},
		{"header_no_fields.jsonl", ErrBadHeader, "fields: missing"},
		{"event_truncated.jsonl", ErrMalformed, "line 3 is not a JSON object"},
		{"event_blank_line.jsonl", ErrMalformed, "line 3 is not a JSON object"},
		{"event_array.jsonl", ErrMalformed, "line 2 is not a JSON object"},
		{"event_two_objects.jsonl", ErrMalformed, "line 2 is not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", "bad", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			_, _, err = ReadAll(f)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.text) {
				t.Errorf("ReadAll error = %v, want %v containing %q", err, tt.want, tt.text)
			}
		})
	}
}

func TestDiffNamesTheUnreadableSide(t *testing.T) {
	good := joinLines(sampleLines(t))
	if _, err := Diff(strings.NewReader(""), strings.NewReader(good)); err == nil || !strings.HasPrefix(err.Error(), "want: ") {
		t.Errorf("bad want: error = %v", err)
	}
	if _, err := Diff(strings.NewReader(good), strings.NewReader("{}\n")); err == nil || !strings.HasPrefix(err.Error(), "got: ") {
		t.Errorf("bad got: error = %v", err)
	}
}

func TestCompare(t *testing.T) {
	lines := sampleLines(t)
	same := writeTemp(t, []byte(joinLines(lines)))
	if report, err := Compare("testdata/sample.jsonl", same); err != nil || report != "" {
		t.Errorf("identical files: %q, %v", report, err)
	}
	changed := writeTemp(t, []byte(joinLines(edited(lines, 6, func(s string) string {
		return strings.Replace(s, `"ok":true`, `"ok":false`, 1)
	}))))
	report, err := Compare("testdata/sample.jsonl", changed)
	if err != nil {
		t.Fatal(err)
	}
	wantStart := "--- want testdata/sample.jsonl\n+++ got  " + changed + "\nfirst difference at line 6;"
	if !strings.HasPrefix(report, wantStart) || !strings.Contains(report, "- ok: true\n+ ok: false\n") {
		t.Errorf("report:\n%s", report)
	}
	if _, err := Compare("testdata/sample.jsonl", filepath.Join(t.TempDir(), "missing.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: error = %v, want ErrNotExist", err)
	}
	if _, err := Compare("testdata/bad/event_array.jsonl", same); !errors.Is(err, ErrMalformed) {
		t.Errorf("malformed want: error = %v, want ErrMalformed", err)
	}
}

// TestDiffCountsLaterDifferences: after the first divergent event the report counts how many
// later events differ, comparing them without their seq, so one inserted event reads as one
// difference however many seqs it shifted, and a changed course reads as many.
func TestDiffCountsLaterDifferences(t *testing.T) {
	base := []string{
		`{"format":"warren-trace","version":5,"host_version":"x","scenario":"s","scenario_hash":"h","seed":1,"clock":"virtual"` + `,"fields":` + string(headerFields) + `}`,
		`{"tick":0,"seq":1,"agent":1,"name":"a","kind":"stage_enter","stage":"p","visit":1}`,
		`{"tick":0,"seq":2,"agent":1,"name":"a","kind":"model_turn","stage":"p","iteration":0,"text":"x","calls":0}`,
		`{"tick":1,"seq":3,"agent":1,"name":"a","kind":"terminal","status":"done","reason":"","stage":"p"}`,
		`{"tick":1,"seq":4,"agent":1,"name":"a","kind":"reap","status":"done","model_turns":1,"tool_calls":0,"tool_errors":0}`,
	}
	inserted := []string{base[0], base[1],
		`{"tick":0,"seq":2,"agent":1,"name":"a","kind":"message","sender":0,"sender_name":"host","via":"notify","text":"hi"}`,
		strings.Replace(base[2], `"seq":2`, `"seq":3`, 1), strings.Replace(base[3], `"seq":3`, `"seq":4`, 1),
		strings.Replace(base[4], `"seq":4`, `"seq":5`, 1)}
	changed := []string{base[0], base[1], strings.Replace(base[2], `"text":"x"`, `"text":"y"`, 1),
		strings.Replace(base[3], `"done"`, `"failed"`, 1), strings.Replace(base[4], `"done"`, `"failed"`, 1)}
	for _, tc := range []struct {
		name string
		got  []string
		want string
	}{
		{"one inserted event", inserted, "after it: 1 later events differ (seq aside): 0 only in want, 1 only in got\n"},
		{"a changed course", changed, "after it: 4 later events differ (seq aside): 2 only in want, 2 only in got\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			report, err := Diff(strings.NewReader(joinLines(base)), strings.NewReader(joinLines(tc.got)))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(report, tc.want) {
				t.Fatalf("report:\n%s\nwant it to end with %q", report, tc.want)
			}
		})
	}
}
