package traceexport

import (
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/warrenhq/warren/table"
	"github.com/warrenhq/warren/trace"
)

// readTable reads an exported table back into rows of Go values as table.Table holds them,
// independently of the writers: Parquet with parquet-go, level by level, CSV with encoding/csv,
// each field by its column's type.
func readTable(t *testing.T, dir string, f table.Format, head table.Table) [][]any {
	t.Helper()
	path := filepath.Join(dir, head.Name+f.Ext())
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if f == table.CSV {
		return readCSVTable(t, path, data, head.Columns)
	}
	return readParquetTable(t, path, data, head.Columns)
}

func columnNames(cols []table.Column) []string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return names
}

func readCSVTable(t *testing.T, path string, data []byte, cols []table.Column) [][]any {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(recs) == 0 || !slices.Equal(recs[0], columnNames(cols)) {
		t.Fatalf("%s: header row %q, want %q", path, recs[:min(1, len(recs))], columnNames(cols))
	}
	var rows [][]any
	for _, rec := range recs[1:] {
		row := make([]any, len(cols))
		for i, field := range rec {
			if field == "" {
				continue
			}
			var err error
			switch cols[i].Type {
			case table.Integer:
				row[i], err = strconv.ParseInt(field, 10, 64)
			case table.Boolean:
				row[i], err = strconv.ParseBool(field)
			case table.Strings:
				var list []string
				err = json.Unmarshal([]byte(field), &list)
				row[i] = list
			case table.JSON:
				row[i] = canonicalJSON(t, field)
			default:
				row[i] = field
			}
			if err != nil {
				t.Fatalf("%s: %q in column %s: %v", path, field, cols[i].Name, err)
			}
		}
		rows = append(rows, row)
	}
	return rows
}

func readParquetTable(t *testing.T, path string, data []byte, cols []table.Column) [][]any {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var names []string
	for _, fl := range f.Schema().Fields() {
		names = append(names, fl.Name())
	}
	if !slices.Equal(names, columnNames(cols)) {
		t.Fatalf("%s: columns %q, want %q", path, names, columnNames(cols))
	}
	r := parquet.NewReader(f)
	defer r.Close()
	var rows [][]any
	buf := make([]parquet.Row, 128)
	for {
		n, err := r.ReadRows(buf)
		for _, prow := range buf[:n] {
			row := make([]any, len(cols))
			for _, v := range prow {
				i := v.Column()
				switch c := cols[i]; {
				case c.Type == table.Strings && v.DefinitionLevel() == 1:
					row[i] = []string{}
				case c.Type == table.Strings && v.DefinitionLevel() == 2:
					list, _ := row[i].([]string)
					row[i] = append(list, string(v.ByteArray()))
				case v.DefinitionLevel() == 0:
				case c.Type == table.Integer:
					row[i] = v.Int64()
				case c.Type == table.Boolean:
					row[i] = v.Boolean()
				case c.Type == table.Decimal:
					b := v.ByteArray()
					row[i] = trace.DollarsOf(int64(binary.BigEndian.Uint64(b[8:])))
				case c.Type == table.JSON:
					row[i] = canonicalJSON(t, string(v.ByteArray()))
				default:
					row[i] = string(v.ByteArray())
				}
			}
			rows = append(rows, row)
		}
		if errors.Is(err, io.EOF) {
			return rows
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
}

// canonicalJSON re-encodes a JSON text with its object keys sorted, so that two texts of one value
// compare equal.
func canonicalJSON(t *testing.T, text string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%q is not JSON: %v", text, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantRows is what the table head holds for the events, built from the trace's own JSON with
// encoding/json: every field of each event of the table's kind (every event, for the events
// table) in its column, nil where the event has no such field. From CSV, an empty string reads
// back as nil.
func wantRows(t *testing.T, events []map[string]any, head table.Table, f table.Format) [][]any {
	t.Helper()
	var rows [][]any
	for _, e := range events {
		if head.Name != EventsTable && e["kind"] != head.Name {
			continue
		}
		row := make([]any, len(head.Columns))
		for i, c := range head.Columns {
			v, ok := e[c.Name]
			if !ok {
				continue
			}
			switch c.Type {
			case table.Integer:
				n, err := v.(json.Number).Int64()
				if err != nil {
					t.Fatal(err)
				}
				row[i] = n
			case table.Strings:
				list := []string{}
				for _, s := range v.([]any) {
					list = append(list, s.(string))
				}
				row[i] = list
			case table.JSON:
				b, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				row[i] = canonicalJSON(t, string(b))
			default:
				row[i] = v
			}
			if f == table.CSV && row[i] == "" {
				row[i] = nil
			}
		}
		rows = append(rows, row)
	}
	return rows
}
