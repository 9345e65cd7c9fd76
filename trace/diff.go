package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits that keep a diff report readable when lines are long.
const (
	contextLines   = 2   // identical events shown before the first difference
	maxLineShown   = 240 // bytes of a whole line shown as context
	maxValueShown  = 160 // bytes of one field value shown in a difference
	leadBeforeDiff = 40  // bytes shown before the first differing byte of a long value
)

// Result is what comparing two traces found: the report of their first difference and the
// notes on what either trace lacks.
type Result struct {
	// Report is the first difference (see Diff), "" when the traces are identical.
	Report string
	// Notes say what either side lacks, each prefixed with its side ("want: ", "got: "): a
	// trace without its end event (NoteIncomplete), a last line cut mid-line. They are not
	// differences: two traces cut at the same place are identical, and say so with notes.
	Notes []string
}

// Diff compares two traces and returns "" when they are byte-identical. Otherwise it
// returns a report meant for a failing test's output: what either trace lacks (the notes of
// DiffTraces, one "note: " line each), header fields that differ, then the first divergent
// event (its line, seq, tick, agent and kind on both sides, the two preceding lines as
// context, and each differing field as "- field: want" / "+ field: got"), or where one side
// ends early. Only the first divergence is shown, because everything after it usually
// follows from it. A trace that cannot be read is an error naming the side ("want: ..." or
// "got: ...").
func Diff(want, got io.Reader) (string, error) {
	res, err := DiffTraces(want, got)
	if err != nil {
		return "", err
	}
	return res.String(), nil
}

// String is the report with the notes before it, one "note: " line each; "" when the
// report is empty (the notes alone are no difference).
func (r Result) String() string {
	if r.Report == "" {
		return ""
	}
	var b strings.Builder
	for _, n := range r.Notes {
		b.WriteString("note: " + n + "\n")
	}
	b.WriteString(r.Report)
	return b.String()
}

// DiffTraces is Diff that keeps the notes apart from the report, so a command can show
// them even when the traces are identical. Each trace is read as Read reads it: an
// incomplete trace (no end event, or a last line cut mid-line) is compared up to its last
// whole line, and the notes say so.
func DiffTraces(want, got io.Reader) (Result, error) {
	w, err := Read(want)
	if err != nil {
		return Result{}, fmt.Errorf("want: %w", err)
	}
	g, err := Read(got)
	if err != nil {
		return Result{}, fmt.Errorf("got: %w", err)
	}
	var res Result
	for _, n := range w.Notes {
		res.Notes = append(res.Notes, "want: "+n)
	}
	for _, n := range g.Notes {
		res.Notes = append(res.Notes, "got: "+n)
	}
	var b strings.Builder
	writeHeaderDiff(&b, w.Header, g.Header)
	writeEventDiff(&b, w.headerLine, w.Events, g.Events)
	res.Report = b.String()
	return res, nil
}

// Compare is Diff over two trace files; a non-empty report starts with both paths.
func Compare(wantPath, gotPath string) (string, error) {
	res, err := CompareFiles(wantPath, gotPath)
	if err != nil {
		return "", err
	}
	return res.String(), nil
}

// CompareFiles is DiffTraces over two trace files; a non-empty report starts with both
// paths.
func CompareFiles(wantPath, gotPath string) (Result, error) {
	want, err := os.Open(wantPath)
	if err != nil {
		return Result{}, err
	}
	defer want.Close()
	got, err := os.Open(gotPath)
	if err != nil {
		return Result{}, err
	}
	defer got.Close()
	res, err := DiffTraces(want, got)
	if err != nil {
		return Result{}, fmt.Errorf("compare %s with %s: %w", wantPath, gotPath, err)
	}
	if res.Report != "" {
		res.Report = "--- want " + wantPath + "\n+++ got  " + gotPath + "\n" + res.Report
	}
	return res, nil
}

func writeHeaderDiff(b *strings.Builder, want, got Header) {
	wantFields, gotFields := want.Fields, got.Fields
	if want.HostVersion == got.HostVersion && want.Scenario == got.Scenario && want.ScenarioHash == got.ScenarioHash &&
		want.Seed == got.Seed && want.Clock == got.Clock && want.Recording == got.Recording && slices.Equal(wantFields, gotFields) {
		return
	}
	b.WriteString("header differs (line 1):\n")
	writeChange(b, "host_version", strconv.Quote(want.HostVersion), strconv.Quote(got.HostVersion))
	writeChange(b, "scenario", strconv.Quote(want.Scenario), strconv.Quote(got.Scenario))
	writeChange(b, "scenario_hash", strconv.Quote(want.ScenarioHash), strconv.Quote(got.ScenarioHash))
	writeChange(b, "seed", strconv.FormatUint(want.Seed, 10), strconv.FormatUint(got.Seed, 10))
	writeChange(b, "clock", strconv.Quote(want.Clock), strconv.Quote(got.Clock))
	writeChange(b, "recording", strconv.Quote(want.Recording), strconv.Quote(got.Recording))
	if !slices.Equal(wantFields, gotFields) {
		writeChange(b, "fields", fmt.Sprint(len(wantFields))+" fields", fmt.Sprint(len(gotFields))+" fields (another build of this version)")
	}
}

// writeChange writes a "- key: want" / "+ key: got" pair when the values differ.
func writeChange(b *strings.Builder, key, want, got string) {
	if want == got {
		return
	}
	w, g := clipPair(want, got)
	fmt.Fprintf(b, "- %s: %s\n+ %s: %s\n", key, w, key, g)
}

// lineOf is the file line of the event at index i (line 1 is the header).
func lineOf(i int) int { return i + 2 }

func writeEventDiff(b *strings.Builder, header []byte, want, got []json.RawMessage) {
	n := min(len(want), len(got))
	for i := range n {
		if !bytes.Equal(want[i], got[i]) {
			fmt.Fprintf(b, "first difference at line %d; want has %d events, got has %d\n", lineOf(i), len(want), len(got))
			writeContext(b, header, want, i)
			writeEventChange(b, want[i], got[i])
			writeLaterDifferences(b, want[i+1:], got[i+1:])
			return
		}
	}
	switch {
	case len(got) < len(want):
		fmt.Fprintf(b, "got ends early after line %d: want has %d events, got has %d\n", lineOf(n-1), len(want), len(got))
		writeContext(b, header, want, n)
		fmt.Fprintf(b, "first missing event:\nwant: %s\n  line %d: %s\n", identify(want[n]), lineOf(n), clip(want[n], maxLineShown))
	case len(got) > len(want):
		fmt.Fprintf(b, "got has extra events after line %d: want has %d events, got has %d\n", lineOf(n-1), len(want), len(got))
		writeContext(b, header, want, n)
		fmt.Fprintf(b, "first extra event:\ngot:  %s\n  line %d: %s\n", identify(got[n]), lineOf(n), clip(got[n], maxLineShown))
	}
}

// writeLaterDifferences counts how the events after the first difference differ, as multisets of
// events without their seq (which shifts for every event once one is added or lost): so an edit
// that changed one decision reads "1 later event differs", and one that changed a whole agent's
// course shows how much it changed.
func writeLaterDifferences(b *strings.Builder, want, got []json.RawMessage) {
	counts := make(map[uint64]int, len(want))
	for _, e := range want {
		counts[eventKey(e)]++
	}
	onlyGot := 0
	for _, e := range got {
		k := eventKey(e)
		if counts[k] > 0 {
			counts[k]--
		} else {
			onlyGot++
		}
	}
	onlyWant := 0
	for _, c := range counts {
		onlyWant += c
	}
	if onlyWant+onlyGot == 0 {
		b.WriteString("after it: no later event differs (seq aside)\n")
		return
	}
	fmt.Fprintf(b, "after it: %d later events differ (seq aside): %d only in want, %d only in got\n", onlyWant+onlyGot, onlyWant, onlyGot)
}

// eventKey hashes an event line without its seq field.
func eventKey(e []byte) uint64 {
	h := fnv.New64a()
	if i := bytes.Index(e, []byte(`,"seq":`)); i >= 0 {
		if j := bytes.IndexByte(e[i+1:], ','); j >= 0 {
			h.Write(e[:i])
			h.Write(e[i+1+j:])
			return h.Sum64()
		}
	}
	h.Write(e)
	return h.Sum64()
}

// elideFields shortens a header line for display: its "fields" object (every column and its type,
// the same for every trace of a version) becomes {…}.
func elideFields(header []byte) []byte {
	i := bytes.Index(header, []byte(`,"fields":{`))
	if i < 0 {
		return header
	}
	j := bytes.IndexByte(header[i:], '}')
	if j < 0 {
		return header
	}
	return slices.Concat(header[:i], []byte(`,"fields":{…}`), header[i+j+1:])
}

// writeContext shows up to contextLines lines (the header included) before event i.
func writeContext(b *strings.Builder, header []byte, events []json.RawMessage, i int) {
	first := max(i-contextLines, -1)
	if first >= i {
		return
	}
	b.WriteString("context (identical on both sides):\n")
	for j := first; j < i; j++ {
		line := elideFields(header)
		if j >= 0 {
			line = events[j]
		}
		fmt.Fprintf(b, "  line %d: %s\n", lineOf(j), clip(line, maxLineShown))
	}
}

func writeEventChange(b *strings.Builder, want, got []byte) {
	wf, werr := parseFields(want)
	gf, gerr := parseFields(got)
	if werr != nil || gerr != nil {
		fmt.Fprintf(b, "- %s\n+ %s\n", clip(want, maxLineShown), clip(got, maxLineShown))
		return
	}
	fmt.Fprintf(b, "want: %s\ngot:  %s\n", identify(want), identify(got))
	var changes strings.Builder
	for _, f := range wf {
		other, ok := lookup(gf, f.key)
		switch {
		case !ok:
			writeChange(&changes, f.key, string(f.value), "(absent)")
		case !bytes.Equal(f.value, other):
			writeChange(&changes, f.key, string(f.value), string(other))
		}
	}
	for _, f := range gf {
		if _, ok := lookup(wf, f.key); !ok {
			writeChange(&changes, f.key, "(absent)", string(f.value))
		}
	}
	if changes.Len() == 0 {
		fmt.Fprintf(b, "same fields and values, encoded differently (field order or spacing):\n- %s\n+ %s\n",
			clip(want, maxLineShown), clip(got, maxLineShown))
		return
	}
	b.WriteString("fields that differ:\n")
	b.WriteString(changes.String())
}

// field is one top-level member of an event, its value kept as written.
type field struct {
	key   string
	value json.RawMessage
}

// parseFields splits an event object into its members in written order.
func parseFields(raw []byte) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // the opening brace; ReadAll checked the rest
		return nil, err
	}
	var fields []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		fields = append(fields, field{key: key, value: value})
	}
	return fields, nil
}

func lookup(fields []field, key string) (json.RawMessage, bool) {
	for _, f := range fields {
		if f.key == key {
			return f.value, true
		}
	}
	return nil, false
}

// identify summarises an event as "seq 4, tick 2, agent worker-0 (id 3), kind tool_call".
func identify(raw []byte) string {
	fields, err := parseFields(raw)
	if err != nil {
		return "(unreadable event)"
	}
	get := func(key string) string {
		v, ok := lookup(fields, key)
		if !ok {
			return "?"
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
		return string(v)
	}
	return fmt.Sprintf("seq %s, tick %s, agent %s (id %s), kind %s",
		get("seq"), get("tick"), get("name"), get("agent"), get("kind"))
}

// clip shortens b to about limit bytes at a UTF-8 boundary, saying how much it left out.
func clip(b []byte, limit int) string {
	if len(b) <= limit {
		return string(b)
	}
	cut := runeFloor(b, limit)
	return string(b[:cut]) + "…(+" + strconv.Itoa(len(b)-cut) + " bytes)"
}

// clipPair shortens two long values to windows around their first differing byte, so
// a change deep inside a long string is visible.
func clipPair(want, got string) (string, string) {
	if len(want) <= maxValueShown && len(got) <= maxValueShown {
		return want, got
	}
	common := 0
	for common < len(want) && common < len(got) && want[common] == got[common] {
		common++
	}
	start := max(common-leadBeforeDiff, 0)
	return window(want, start), window(got, start)
}

// window returns about maxValueShown bytes of s from start, marking elided ends.
func window(s string, start int) string {
	start = runeFloor([]byte(s), min(start, len(s)))
	end := len(s)
	if end-start > maxValueShown {
		end = start + runeFloor([]byte(s[start:]), maxValueShown)
	}
	out := s[start:end]
	if start > 0 {
		out = "…" + out
	}
	if end < len(s) {
		out += "…"
	}
	return out
}

// runeFloor moves i back to the start of the UTF-8 sequence containing b[i].
func runeFloor(b []byte, i int) int {
	for i > 0 && i < len(b) && !utf8.RuneStart(b[i]) {
		i--
	}
	return i
}
