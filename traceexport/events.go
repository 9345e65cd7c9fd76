package traceexport

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/warrenhq/warren/table"
	"github.com/warrenhq/warren/trace"
)

// checkEvery is how many events pass between two looks at the context.
const checkEvery = 1024

// exporter turns event lines into the rows of the trace's tables.
type exporter struct {
	out    *output
	events *tableFile
	kinds  map[string]*kindTable
	order  []*tableFile // every table file, in Tables order, for closing
	parser fastjson.Parser
	// ncommon is how many common fields start every kind's row: the events table's row.
	ncommon int
}

// kindTable is one event kind's table as the exporter fills it.
type kindTable struct {
	file     *tableFile
	kind     string
	cols     []table.Column
	index    map[string]int // column by name
	required []bool         // fields every event of the kind has (the common ones too)
	row      []any          // reused for every event
}

// newExporter opens the files of the trace tables, heads: Tables(), the events table first, then
// one per kind in trace.Schema's order.
func newExporter(out *output, format table.Format, heads []table.Table) (*exporter, error) {
	x := &exporter{out: out, kinds: make(map[string]*kindTable, len(heads)), ncommon: len(heads[0].Columns)}
	schema := trace.Schema()
	for i, t := range heads {
		tf, err := out.open(format, t)
		if err != nil {
			return nil, err
		}
		x.order = append(x.order, tf)
		if i == 0 {
			x.events = tf
			continue
		}
		k := &kindTable{file: tf, kind: t.Name, cols: t.Columns, index: make(map[string]int, len(t.Columns)),
			required: make([]bool, len(t.Columns)), row: make([]any, len(t.Columns))}
		for j, c := range t.Columns {
			k.index[c.Name] = j
			k.required[j] = j < x.ncommon || !schema[i-1].Fields[j-x.ncommon].Optional
		}
		x.kinds[t.Name] = k
	}
	return x, nil
}

// run exports every event line of br, then closes the tables.
func (x *exporter) run(ctx context.Context, br *bufio.Reader, st *Stats) error {
	var last *kindTable
	for line := int64(2); ; line++ {
		if line%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("export stopped at line %d: %w", line, err)
			}
		}
		raw, whole, err := readLine(br)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if !whole && !json.Valid(raw) {
			st.Notes = append(st.Notes, "line "+strconv.FormatInt(line, 10)+" was cut mid-line ("+strconv.Itoa(len(raw))+
				" bytes, no newline): read the "+strconv.FormatInt(st.Events, 10)+" whole events before it")
			break
		}
		if last, err = x.event(line, raw); err != nil {
			return err
		}
		st.Events++
	}
	st.Complete = last != nil && last.kind == trace.KindEnd
	if !st.Complete {
		st.Notes = append([]string{trace.NoteIncomplete}, st.Notes...)
	}
	for _, tf := range x.order {
		if err := x.out.close(tf); err != nil {
			return err
		}
	}
	return nil
}

// readLine returns the next line without its "\n", whether it had one (a last line may lack
// it), or io.EOF when nothing is left. The line is br's until the next read.
func readLine(br *bufio.Reader) ([]byte, bool, error) {
	line, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		// A line longer than the buffer: gather it whole (copying the start first: the next read
		// reuses the buffer it is in).
		line = append([]byte(nil), line...)
		rest, err := br.ReadBytes('\n')
		line = append(line, rest...)
		if errors.Is(err, io.EOF) {
			return line, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		return line[:len(line)-1], true, nil
	}
	if errors.Is(err, io.EOF) && len(line) > 0 {
		return line, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return line[:len(line)-1], true, nil
}

// event writes one event line into its kind's table and the events table, and returns the kind.
func (x *exporter) event(line int64, raw []byte) (*kindTable, error) {
	v, err := x.parser.ParseBytes(raw)
	if err != nil {
		return nil, malformed(line, "not a JSON object: %v", err)
	}
	obj, err := v.Object()
	if err != nil {
		return nil, malformed(line, "not a JSON object: %s", clip(raw))
	}
	kv := obj.Get("kind")
	if kv == nil {
		return nil, malformed(line, "the event has no kind")
	}
	kb, err := kv.StringBytes()
	if err != nil {
		return nil, malformed(line, "kind: %v", err)
	}
	k := x.kinds[string(kb)]
	if k == nil {
		return nil, malformed(line, "unknown kind %q; a version %d trace has the kinds %s", kb, trace.Version, strings.Join(trace.Kinds(), ", "))
	}
	clear(k.row)
	obj.Visit(func(key []byte, fv *fastjson.Value) {
		if err != nil {
			return
		}
		i, ok := k.index[string(key)]
		if !ok {
			err = malformed(line, "a %s event has no field %q in a version %d trace", k.kind, key, trace.Version)
			return
		}
		if k.row[i], err = value(k.cols[i].Type, fv); err != nil {
			err = malformed(line, "%s field %q: %v", k.kind, key, err)
		}
	})
	if err != nil {
		return nil, err
	}
	for i, req := range k.required {
		if req && k.row[i] == nil {
			return nil, malformed(line, "the %s event lacks its field %q", k.kind, k.cols[i].Name)
		}
	}
	if err := k.file.w.WriteRow(k.row); err != nil {
		return nil, malformed(line, "%w", err)
	}
	k.file.rows++
	if err := x.events.w.WriteRow(k.row[:x.ncommon]); err != nil {
		return nil, malformed(line, "%w", err)
	}
	x.events.rows++
	return k, nil
}

// malformed is the error for event line line: it wraps trace.ErrMalformed and names the line.
func malformed(line int64, format string, args ...any) error {
	return fmt.Errorf("%w: line %d: %w", trace.ErrMalformed, line, fmt.Errorf(format, args...))
}

// clip is the start of a line, for an error.
func clip(raw []byte) string {
	const limit = 80
	if len(raw) > limit {
		return string(raw[:limit]) + "..."
	}
	return string(raw)
}

// value converts a field's JSON value to the Go value of its column's type (table.Table's):
// int64, string, bool, []string, or for JSON the value's JSON text. A JSON null is refused
// except in a JSON column, where it is the document "null".
func value(t table.Type, v *fastjson.Value) (any, error) {
	switch t {
	case table.Integer:
		if v.Type() != fastjson.TypeNumber {
			return nil, fmt.Errorf("want an integer, got %s", v.Type())
		}
		n, err := v.Int64()
		if err != nil {
			return nil, fmt.Errorf("want a 64-bit integer: %w", err)
		}
		return n, nil
	case table.String, table.Decimal:
		b, err := v.StringBytes()
		if err != nil {
			return nil, fmt.Errorf("want a string, got %s", v.Type())
		}
		return string(b), nil
	case table.Boolean:
		b, err := v.Bool()
		if err != nil {
			return nil, fmt.Errorf("want true or false, got %s", v.Type())
		}
		return b, nil
	case table.Strings:
		items, err := v.Array()
		if err != nil {
			return nil, fmt.Errorf("want an array of strings, got %s", v.Type())
		}
		list := make([]string, len(items))
		for i, it := range items {
			b, err := it.StringBytes()
			if err != nil {
				return nil, fmt.Errorf("want an array of strings, got a %s at %d", it.Type(), i)
			}
			list[i] = string(b)
		}
		return list, nil
	case table.JSON:
		return string(v.MarshalTo(nil)), nil
	}
	return nil, fmt.Errorf("a field of type %q, which no version %d trace has", t, trace.Version)
}
