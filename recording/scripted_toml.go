package recording

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Tables writes the script's models as scenario tables, [models.<key>] kind = "scripted" with
// one [[models.<key>.turns]] per recorded turn, to paste into the scenario in place of the live
// models' tables. The text is the same for the same recording (no map order reaches it).
func (s *Script) Tables() []byte {
	var b bytes.Buffer
	for i := range s.Models {
		if i > 0 {
			b.WriteString("\n")
		}
		s.writeModel(&b, &s.Models[i])
	}
	return b.Bytes()
}

// writeModel writes one model's tables.
func (s *Script) writeModel(b *bytes.Buffer, m *ScriptModel) {
	path := "models." + tomlKey(m.Key)
	fmt.Fprintf(b, "# [models.%s] was a live model (%s): these are the %s its %s had in %s\n",
		m.Key, m.ID, count(len(m.Turns), "turn"), count(m.Agents, "agent"), commentText(s.Source))
	fmt.Fprintf(b, "# (host record to-scripted). Each agent walks the turns that name it; edit them freely.\n")
	fmt.Fprintf(b, "[%s]\nkind = \"scripted\"\n", path)
	b.WriteString("when_exhausted = \"fail\"             # an agent asking for more turns than it had fails loudly\n")
	for i := range m.Turns {
		t := &m.Turns[i]
		b.WriteString("\n  # " + commentText(t.describe()) + "\n")
		fmt.Fprintf(b, "  [[%s.turns]]\n", path)
		fmt.Fprintf(b, "  agent = %s\n", tomlString(t.Agent, false))
		if t.Stage != "" {
			fmt.Fprintf(b, "  stage = %s\n", tomlString(t.Stage, false))
		}
		if t.Err != "" {
			fmt.Fprintf(b, "  error = %s\n", tomlString(escapeTemplate(t.Err), true))
			if t.Text != "" || len(t.Calls) > 0 {
				fmt.Fprintf(b, "  # the failed answer also had %s, which a failing turn cannot\n", partsOf(t))
			}
			continue
		}
		if t.Text != "" {
			fmt.Fprintf(b, "  text = %s\n", tomlString(escapeTemplate(t.Text), true))
		}
		for c := range t.Calls {
			call := &t.Calls[c]
			fmt.Fprintf(b, "    [[%s.turns.calls]]\n", path)
			fmt.Fprintf(b, "    tool = %s\n", tomlString(call.Name, false))
			if call.Unwritable != "" {
				fmt.Fprintf(b, "    # recorded arguments, not a JSON object: %s\n", commentText(call.Unwritable))
			}
			if len(call.Args) > 0 {
				writeTable(b, "      ", path+".turns.calls.args", call.Args, false)
			}
		}
	}
}

// count is n things, "1 turn", "3 turns".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

// describe is a turn's comment: whose turn it is, and how many attempts it took.
func (t *ScriptTurn) describe() string {
	d := fmt.Sprintf("%s, turn %d", t.Agent, t.Turn)
	if t.Stage != "" {
		d += ", stage " + strconv.Quote(t.Stage)
	}
	if t.Attempts > 1 {
		d += fmt.Sprintf(", attempt %d (retried after: %s)", t.Attempts, strings.Join(t.Retried, "; "))
	}
	if t.Err != "" {
		d += ": the model failed"
	}
	return d
}

// partsOf says what a failed answer carried besides its error.
func partsOf(t *ScriptTurn) string {
	var parts []string
	if t.Text != "" {
		parts = append(parts, "text")
	}
	if len(t.Calls) > 0 {
		parts = append(parts, strconv.Itoa(len(t.Calls))+" calls")
	}
	return strings.Join(parts, " and ")
}

// writeTable writes m as the TOML table at path: its plain values first (strings, numbers,
// booleans, arrays of those, empty tables), each key sorted, then its tables, then its arrays of
// tables, so no value lands under a later header. inArray is set for an element of an array of
// tables, whose header was written by the caller.
func writeTable(b *bytes.Buffer, indent, path string, m map[string]any, inArray bool) {
	if !inArray {
		fmt.Fprintf(b, "%s[%s]\n", indent, path)
	}
	keys := sortedKeys(m)
	var tables, arrays []string
	for _, k := range keys {
		switch v := m[k].(type) {
		case map[string]any:
			if len(v) > 0 {
				tables = append(tables, k)
				continue
			}
		case []any:
			if tableArray(v) {
				arrays = append(arrays, k)
				continue
			}
		}
		fmt.Fprintf(b, "%s%s = %s\n", indent, tomlKey(k), inlineValue(m[k], true))
	}
	for _, k := range tables {
		writeTable(b, indent+"  ", path+"."+tomlKey(k), m[k].(map[string]any), false)
	}
	for _, k := range arrays {
		for _, e := range m[k].([]any) {
			fmt.Fprintf(b, "%s  [[%s]]\n", indent, path+"."+tomlKey(k))
			writeTable(b, indent+"  ", path+"."+tomlKey(k), e.(map[string]any), true)
		}
	}
}

// tableArray reports whether a is written as an array of tables: it is not empty and every
// element is a table that is not empty.
func tableArray(a []any) bool {
	for _, e := range a {
		if m, ok := e.(map[string]any); !ok || len(m) == 0 {
			return false
		}
	}
	return len(a) > 0
}

// inlineValue writes one decoded JSON value as a TOML value on one line (a multi-line string
// only where multiline allows it: a key's own value, not inside an array or inline table).
// String leaves are escaped for the scripted kind, which reads them as templates.
func inlineValue(v any, multiline bool) string {
	switch v := v.(type) {
	case string:
		return tomlString(escapeTemplate(v), multiline)
	case bool:
		return strconv.FormatBool(v)
	case json.Number:
		return tomlNumber(v)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = inlineValue(e, false)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		if len(v) == 0 {
			return "{}"
		}
		var parts []string
		for _, k := range sortedKeys(v) {
			parts = append(parts, tomlKey(k)+" = "+inlineValue(v[k], false))
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	}
	return tomlString(fmt.Sprint(v), false) // not reached: dropNulls leaves only the types above
}

// tomlNumber writes a JSON number as a TOML integer, or a float with a point or an exponent (a
// TOML number without either is an integer).
func tomlNumber(n json.Number) string {
	if i, err := n.Int64(); err == nil {
		return strconv.FormatInt(i, 10)
	}
	f, _ := n.Float64()
	var s string
	if a := math.Abs(f); a == 0 || a >= 1e-6 && a < 1e21 {
		s = strconv.FormatFloat(f, 'f', -1, 64)
	} else {
		s = strconv.FormatFloat(f, 'e', -1, 64)
	}
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// bareKey is a key TOML reads without quotes.
var bareKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// tomlKey writes a key, quoted when it is not bare.
func tomlKey(k string) string {
	if bareKey.MatchString(k) {
		return k
	}
	return tomlString(k, false)
}

// tomlString writes s as a TOML string: a multi-line literal string (between two runs of three
// single quotes) when multiline allows it and s has a newline and nothing such a string cannot
// hold (a run of three single quotes, a carriage return, a control character, a single quote
// at the end), so that text reads as it was written; a basic string with escapes otherwise.
func tomlString(s string, multiline bool) string {
	if multiline && strings.Contains(s, "\n") && !strings.Contains(s, "'''") && !strings.HasSuffix(s, "'") &&
		!strings.ContainsFunc(s, func(r rune) bool { return r != '\n' && r != '\t' && unicode.IsControl(r) }) {
		return "'''\n" + s + "'''"
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 || r == 0x7f || r == utf8.RuneError {
				fmt.Fprintf(&b, `\u%04X`, r)
				continue
			}
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// escapeTemplate makes s render as itself in the scripted kind, which reads text, errors and
// string arguments as Go templates: every "{{" becomes an action printing "{{" (a raw string,
// which needs no escaping in TOML).
func escapeTemplate(s string) string {
	return strings.ReplaceAll(s, "{{", "{{`{{`}}")
}

// commentText is s on one line, short enough for a comment.
func commentText(s string) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }), " ")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if len(s) > 200 {
		cut := 200
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// Splice writes a copy of the scenario file (its text src) with the table of every model of
// the script replaced by its scripted tables, everything else as it was, byte for byte: the
// lines of the live table and its sub-tables ([models.live.headers]) or dotted keys
// (models.live.kind = …) are cut out, and the scripted tables go where the live table's header
// was (at the end, when it had none). A scenario without such a table, or with one of another
// kind than the recording names, is an error naming both, as is a scenario that is not TOML.
func (s *Script) Splice(file string, src []byte) ([]byte, error) {
	var doc map[string]any
	if err := toml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("%s is not a TOML file: %w", file, err)
	}
	tables, _ := doc["models"].(map[string]any)
	for i := range s.Models {
		m := &s.Models[i]
		t, ok := tables[m.Key].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s has no [models.%s] table, which the recording's turns of model %s come from; give the scenario that was recorded (%s)",
				file, m.Key, m.ID, s.ScenarioFile)
		}
		if kind, _ := t["kind"].(string); kind != m.Kind {
			return nil, fmt.Errorf("%s: [models.%s] is kind %q, but the recording's turns are of model %s (kind %q): give the scenario that was recorded (%s)",
				file, m.Key, kind, m.ID, m.Kind, s.ScenarioFile)
		}
	}
	cuts, at, err := modelRegions(src, s.Models)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var out bytes.Buffer
	pos := 0
	for _, c := range cuts {
		out.Write(src[pos:c.from])
		for i := range s.Models {
			if at[i] == c.from && c.header {
				s.writeModel(&out, &s.Models[i])
				out.WriteString("\n")
				at[i] = -2 // written
			}
		}
		pos = max(pos, c.to)
	}
	out.Write(src[pos:])
	for i := range s.Models {
		if at[i] == -2 {
			continue
		}
		// No table header of its own (dotted keys, an inline table): at the end.
		if out.Len() > 0 && !bytes.HasSuffix(out.Bytes(), []byte("\n")) {
			out.WriteString("\n")
		}
		out.WriteString("\n")
		s.writeModel(&out, &s.Models[i])
	}
	if err := s.checkSplice(file, doc, out.Bytes()); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// cut is a region of the scenario's text that belongs to a model being replaced: from the
// start of a line to the end of a line. header is set for a [models.<key>…] table's region,
// where the scripted tables may go.
type cut struct {
	from, to int
	header   bool
}

// modelRegions finds the regions of src that define the script's models, in order, and for each
// model the offset where its scripted tables go (-1: none of its regions is a table's, so they
// go at the end). A table's region runs from its header's line to the end of the line of its
// last key: comments and blank lines after it stay, as they usually introduce what follows.
func modelRegions(src []byte, ms []ScriptModel) ([]cut, []int, error) {
	want := map[string]int{}
	for i := range ms {
		want[ms[i].Key] = i
	}
	at := make([]int, len(ms))
	for i := range at {
		at[i] = -1
	}
	var p unstable.Parser
	p.Reset(src)
	var cuts []cut
	var table []string
	open := -1 // the index in cuts of the region of the table being read, -1 for none
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			parts, first := keyParts(e)
			table = parts
			open = -1
			if i, ok := modelOf(parts, want); ok {
				from := lineStart(src, int(first.Raw.Offset))
				cuts = append(cuts, cut{from: from, to: lineEnd(src, int(first.Raw.Offset)), header: true})
				open = len(cuts) - 1
				if at[i] < 0 {
					at[i] = from
				}
			}
		case unstable.KeyValue:
			if open >= 0 {
				cuts[open].to = lineEnd(src, int(e.Raw.Offset+e.Raw.Length))
				continue
			}
			parts, _ := keyParts(e)
			if _, ok := modelOf(append(slices.Clone(table), parts...), want); ok {
				cuts = append(cuts, cut{from: lineStart(src, int(e.Raw.Offset)), to: lineEnd(src, int(e.Raw.Offset+e.Raw.Length))})
			}
		}
	}
	if err := p.Error(); err != nil {
		return nil, nil, err
	}
	return cuts, at, nil
}

// keyParts is the parts of an expression's key and the node of its first part.
func keyParts(e *unstable.Node) ([]string, *unstable.Node) {
	var parts []string
	var first *unstable.Node
	for it := e.Key(); it.Next(); {
		n := it.Node()
		if first == nil {
			first = n
		}
		parts = append(parts, string(n.Data))
	}
	if first == nil {
		return parts, e
	}
	return parts, first
}

// modelOf reports which model a full key path is under (models.<key>…).
func modelOf(parts []string, want map[string]int) (int, bool) {
	if len(parts) < 2 || parts[0] != "models" {
		return 0, false
	}
	i, ok := want[parts[1]]
	return i, ok
}

// lineStart is the offset of the start of the line holding offset.
func lineStart(src []byte, offset int) int {
	return bytes.LastIndexByte(src[:offset], '\n') + 1
}

// lineEnd is the offset just past the newline ending the line holding offset (or the end).
func lineEnd(src []byte, offset int) int {
	if offset > 0 && offset <= len(src) && src[offset-1] == '\n' {
		return offset
	}
	i := bytes.IndexByte(src[offset:], '\n')
	if i < 0 {
		return len(src)
	}
	return offset + i + 1
}

// checkSplice makes sure the written scenario is what was meant: TOML that decodes to the
// original document with the models' tables, and only those, replaced by scripted ones of as
// many turns as the script has.
func (s *Script) checkSplice(file string, before map[string]any, out []byte) error {
	var after map[string]any
	if err := toml.Unmarshal(out, &after); err != nil {
		return fmt.Errorf("%s: the scenario with its live models replaced is not TOML (%w); write the tables alone (without --scenario) and paste them in", file, err)
	}
	strip := func(doc map[string]any) map[string]any {
		c := maps.Clone(doc)
		if ms, ok := c["models"].(map[string]any); ok {
			ms = maps.Clone(ms)
			for i := range s.Models {
				delete(ms, s.Models[i].Key)
			}
			c["models"] = ms
		}
		return c
	}
	if !reflect.DeepEqual(strip(before), strip(after)) {
		return fmt.Errorf("%s: replacing its live models would change more than them (its [models] tables are written in a way this command cannot cut out); write the tables alone (without --scenario) and paste them in", file)
	}
	tables, _ := after["models"].(map[string]any)
	for i := range s.Models {
		m := &s.Models[i]
		t, _ := tables[m.Key].(map[string]any)
		turns, _ := t["turns"].([]any)
		if kind, _ := t["kind"].(string); kind != "scripted" || len(turns) != len(m.Turns) {
			return fmt.Errorf("%s: [models.%s] did not come out as the %d scripted turns written; write the tables alone (without --scenario) and paste them in", file, m.Key, len(m.Turns))
		}
	}
	return nil
}
