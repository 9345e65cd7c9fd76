package table

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// openParquet opens a Parquet file held in data.
func openParquet(t *testing.T, data []byte) *parquet.File {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("the Parquet file does not open: %v", err)
	}
	return f
}

// readParquet reads a Parquet table back with parquet-go, level by level: a definition level of
// 0 is a null, and a list column's values are gathered into a []string (an empty list is one
// value at definition level 1).
func readParquet(t *testing.T, data []byte, cols []Column) [][]any {
	t.Helper()
	f := openParquet(t, data)
	var names []string
	for _, fl := range f.Schema().Fields() {
		names = append(names, fl.Name())
	}
	want := make([]string, len(cols))
	for i, c := range cols {
		want[i] = c.Name
	}
	if !slices.Equal(names, want) {
		t.Fatalf("the Parquet file's columns are %q, want %q", names, want)
	}
	r := parquet.NewReader(f)
	defer r.Close()
	var out [][]any
	buf := make([]parquet.Row, 64)
	for {
		n, err := r.ReadRows(buf)
		for _, prow := range buf[:n] {
			row := make([]any, len(cols))
			for _, v := range prow {
				i := v.Column()
				c := cols[i]
				switch {
				case c.Type == Strings && v.DefinitionLevel() == 1:
					row[i] = []string{}
				case c.Type == Strings && v.DefinitionLevel() == 2:
					list, _ := row[i].([]string)
					row[i] = append(list, string(v.ByteArray()))
				case v.DefinitionLevel() == 0:
					row[i] = nil
				default:
					row[i] = parquetValue(t, c.Type, v)
				}
			}
			out = append(out, row)
		}
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("reading the Parquet rows: %v", err)
		}
	}
}

// parquetValue is a present Parquet value as the Go value of its column's type; a decimal comes
// back as the shortest decimal text of its units, as trace.DollarsOf writes money.
func parquetValue(t *testing.T, typ Type, v parquet.Value) any {
	t.Helper()
	switch typ {
	case Integer:
		return v.Int64()
	case Boolean:
		return v.Boolean()
	case Float:
		return v.Double()
	case Decimal:
		b := v.ByteArray()
		if len(b) != 16 {
			t.Fatalf("a decimal of %d bytes, want 16", len(b))
		}
		return decimalText(int64(binary.BigEndian.Uint64(b[8:])))
	}
	return string(v.ByteArray())
}

// decimalText writes units of 10^-12 as the shortest exact decimal number.
func decimalText(units int64) string {
	neg := units < 0
	if neg {
		units = -units
	}
	s := strconv.FormatInt(units/1e12, 10)
	if frac := units % 1e12; frac != 0 {
		s += "." + strings.TrimRight(strconv.FormatInt(frac+1e12, 10)[1:], "0")
	}
	if neg {
		s = "-" + s
	}
	return s
}

// TestParquetSchema pins the Parquet types of docs/analysis.md: the physical and logical type of
// each column, in the table's order, every one optional.
func TestParquetSchema(t *testing.T) {
	var out bytes.Buffer
	if err := Write(&out, Parquet, sample()); err != nil {
		t.Fatal(err)
	}
	f := openParquet(t, out.Bytes())
	want := map[string]string{
		"id":       "optional int64 id (INT(64,true))",
		"text":     "optional binary text (STRING)",
		"ok":       "optional boolean ok",
		"cost_usd": "optional fixed_len_byte_array(16) cost_usd (DECIMAL(38,12))",
		"keys":     "optional group keys (LIST) {\n\t\trepeated group list {\n\t\t\trequired binary element (STRING);\n\t\t}\n\t}",
		"args":     "optional binary args (JSON)",
		"share":    "optional double share",
	}
	schema := f.Schema().String()
	for _, c := range sample().Columns {
		if !strings.Contains(schema, want[c.Name]) {
			t.Errorf("column %s: the schema does not hold %q:\n%s", c.Name, want[c.Name], schema)
		}
	}
}

// TestParquetMetadata checks that a file names its table, doc and column types and docs.
func TestParquetMetadata(t *testing.T) {
	var out bytes.Buffer
	tb := sample()
	if err := Write(&out, Parquet, tb); err != nil {
		t.Fatal(err)
	}
	raw, ok := openParquet(t, out.Bytes()).Lookup(ParquetMetadataKey)
	if !ok {
		t.Fatalf("no %s key in the file's metadata", ParquetMetadataKey)
	}
	var got Description
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatal(err)
	}
	if g, w := mustJSON(t, got), mustJSON(t, DescribeTable(tb)); g != w {
		t.Errorf("metadata %s, want %s", g, w)
	}
	if got.Columns[0] != (ColumnDescription{Name: "id", Type: Integer, Doc: "the row's id"}) || got.Doc != "one row per sample" {
		t.Errorf("metadata %s lacks the docs", mustJSON(t, got))
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestParquetRowGroups checks that rows are cut into row groups of RowGroupRows, which bounds
// what an export holds in memory, and that every row survives the cut in order.
func TestParquetRowGroups(t *testing.T) {
	tb := Table{Name: "n", Columns: []Column{{Name: "i", Type: Integer}, {Name: "s", Type: Strings}}}
	var out bytes.Buffer
	w, err := NewParquetWriter(&out, tb)
	if err != nil {
		t.Fatal(err)
	}
	rows := RowGroupRows + 3
	for i := range rows {
		if err := w.WriteRow([]any{int64(i), []string{strconv.Itoa(i), "x"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f := openParquet(t, out.Bytes())
	if groups := len(f.RowGroups()); groups != 2 || f.NumRows() != int64(rows) {
		t.Fatalf("%d rows in %d row groups, want %d in 2", f.NumRows(), groups, rows)
	}
	got := readParquet(t, out.Bytes(), tb.Columns)
	for _, i := range []int{0, RowGroupRows - 1, RowGroupRows, rows - 1} {
		if want := []any{int64(i), []string{strconv.Itoa(i), "x"}}; mustJSON(t, got[i]) != mustJSON(t, want) {
			t.Errorf("row %d is %v, want %v", i, got[i], want)
		}
	}
}
