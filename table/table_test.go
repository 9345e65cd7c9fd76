package table

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestParseFormat(t *testing.T) {
	tests := []struct {
		name, in string
		want     Format
		ext      string
		err      string
	}{
		{name: "parquet", in: "parquet", want: Parquet, ext: ".parquet"},
		{name: "csv", in: "csv", want: CSV, ext: ".csv"},
		{name: "unknown", in: "json", err: `unknown table format "json": valid formats are parquet, csv`},
		{name: "case matters", in: "CSV", err: `unknown table format "CSV": valid formats are parquet, csv`},
		{name: "empty", in: "", err: `unknown table format "": valid formats are parquet, csv`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseFormat(tt.in)
			if tt.err != "" {
				if !errors.Is(err, ErrFormat) || err.Error() != tt.err {
					t.Fatalf("ParseFormat(%q) = %v, want the error %q wrapping ErrFormat", tt.in, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want || got.Ext() != tt.ext {
				t.Fatalf("ParseFormat(%q) = %q (ext %q), %v; want %q (ext %q)", tt.in, got, got.Ext(), err, tt.want, tt.ext)
			}
		})
	}
}

func TestParseDecimal(t *testing.T) {
	tests := []struct {
		name, in string
		want     int64
		err      string
	}{
		{name: "zero", in: "0", want: 0},
		{name: "a trace's cost", in: "0.00045585", want: 455_850_000},
		{name: "a picodollar", in: "0.000000000001", want: 1},
		{name: "whole dollars", in: "12", want: 12_000_000_000_000},
		{name: "negative", in: "-3.5", want: -3_500_000_000_000},
		{name: "the largest", in: "9223372.036854775807", want: 9223372036854775807},
		{name: "the smallest", in: "-9223372.036854775807", want: -9223372036854775807},
		{name: "beyond the range", in: "9223372.036854775808", err: "beyond"},
		{name: "too many places", in: "0.0000000000001", err: "more than 12 decimal places"},
		{name: "exponent", in: "1e-6", err: "not a decimal number"},
		{name: "plus sign", in: "+1", err: "not a decimal number"},
		{name: "no whole part", in: ".5", err: "not a decimal number"},
		{name: "no fraction after the point", in: "5.", err: "not a decimal number"},
		{name: "empty", in: "", err: "not a decimal number"},
		{name: "a float's text", in: "NaN", err: "not a decimal number"},
		{name: "spaces", in: " 1", err: "not a decimal number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseDecimal(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("parseDecimal(%q) = %d, %v; want an error saying %q", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("parseDecimal(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
		})
	}
}

// sample is a table with a column of every type and rows with every kind of value: nulls, an
// empty list and a list holding "", negative and whole decimals, nested JSON, text that CSV
// must quote.
func sample() Table {
	return Table{
		Name: "sample",
		Doc:  "one row per sample",
		Columns: []Column{
			{Name: "id", Type: Integer, Doc: "the row's id"},
			{Name: "text", Type: String},
			{Name: "ok", Type: Boolean},
			{Name: "cost_usd", Type: Decimal},
			{Name: "keys", Type: Strings},
			{Name: "args", Type: JSON},
			{Name: "share", Type: Float},
		},
		Rows: [][]any{
			{int64(1), "plain", true, "0.00045585", []string{"write_file", "/tmp/x"}, `{"path":"a.txt","n":[1,2.5,{"deep":null}]}`, 0.25},
			{int64(-2), "a \"quoted\", multi\nline text", false, "-12", []string{}, `"just a string"`, -1e21},
			{int64(3), nil, nil, nil, nil, nil, nil},
			{int64(9223372036854775807), "", true, "9223372.036854775807", []string{""}, `null`, 0.1},
		},
	}
}

func TestWriteRefusesBadTables(t *testing.T) {
	tests := []struct {
		name string
		cols []Column
		err  string
	}{
		{"a column without a name", []Column{{Name: "a", Type: Integer}, {Type: String}}, `table "t": column 1 has no name`},
		{"two columns of one name", []Column{{Name: "a", Type: Integer}, {Name: "a", Type: String}}, `table "t": two columns are named "a"`},
		{"an unknown type", []Column{{Name: "a", Type: "uuid"}}, `table "t": column "a": unknown type "uuid"; valid types are [integer string boolean decimal strings json float]`},
	}
	for _, tt := range tests {
		for _, f := range Formats() {
			t.Run(tt.name+"/"+string(f), func(t *testing.T) {
				var out bytes.Buffer
				err := Write(&out, f, Table{Name: "t", Columns: tt.cols})
				if !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Write = %v, want an error wrapping ErrSchema saying %q", err, tt.err)
				}
			})
		}
	}
	t.Run("unknown format", func(t *testing.T) {
		if err := Write(&bytes.Buffer{}, "xlsx", sample()); !errors.Is(err, ErrFormat) {
			t.Fatalf("Write in xlsx = %v, want ErrFormat", err)
		}
	})
}

func TestWriteRowRefusesValuesOfTheWrongType(t *testing.T) {
	tests := []struct {
		name string
		row  []any
		err  string
	}{
		{"too few values", []any{int64(1)}, "row 2: 1 values for 7 columns"},
		{"an int for an Integer", []any{1, nil, nil, nil, nil, nil, nil}, `row 2: column "id" (integer): got int 1, want int64`},
		{"a number for a String", []any{nil, int64(4), nil, nil, nil, nil, nil}, `column "text" (string): got int64 4, want string`},
		{"a string for a Boolean", []any{nil, nil, "true", nil, nil, nil, nil}, `column "ok" (boolean): got string true, want bool`},
		{"a float for a Decimal", []any{nil, nil, nil, 0.5, nil, nil, nil}, `column "cost_usd" (decimal): got float64 0.5, want a decimal number as a string`},
		{"an inexact Decimal", []any{nil, nil, nil, "1e-3", nil, nil, nil}, `column "cost_usd" (decimal): "1e-3" is not a decimal number`},
		{"a string for Strings", []any{nil, nil, nil, nil, "a", nil, nil}, `column "keys" (strings): got string a, want []string`},
		{"text that is not JSON", []any{nil, nil, nil, nil, nil, "{oops", nil}, `column "args" (json): got string {oops, want a JSON document's text as a string`},
		{"an int for a Float", []any{nil, nil, nil, nil, nil, nil, int64(1)}, `column "share" (float): got int64 1, want float64`},
	}
	for _, tt := range tests {
		for _, f := range Formats() {
			t.Run(tt.name+"/"+string(f), func(t *testing.T) {
				tb := sample()
				tb.Rows = tb.Rows[:1]
				w, err := NewWriter(&bytes.Buffer{}, f, tb)
				if err != nil {
					t.Fatal(err)
				}
				err = w.WriteRow(tt.row)
				if !errors.Is(err, ErrValue) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("WriteRow = %v, want an error wrapping ErrValue saying %q", err, tt.err)
				}
			})
		}
	}
}

// TestRefusedRowIsNotWritten checks that a row refused halfway leaves nothing behind: the rows
// around it read back whole.
func TestRefusedRowIsNotWritten(t *testing.T) {
	for _, f := range Formats() {
		t.Run(string(f), func(t *testing.T) {
			tb := sample()
			var out bytes.Buffer
			w, err := NewWriter(&out, f, Table{Name: tb.Name, Columns: tb.Columns})
			if err != nil {
				t.Fatal(err)
			}
			bad := []any{int64(7), "half", true, "not money", nil, nil, nil}
			if err := w.WriteRow(tb.Rows[0]); err != nil {
				t.Fatal(err)
			}
			if err := w.WriteRow(bad); !errors.Is(err, ErrValue) {
				t.Fatalf("WriteRow(%v) = %v, want ErrValue", bad, err)
			}
			if err := w.WriteRow(tb.Rows[1]); err != nil {
				t.Fatalf("the row after a refused one: %v", err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got := readBack(t, f, out.Bytes(), tb.Columns)
			compareRows(t, got, wantBack(f, tb.Columns, tb.Rows[:2]))
		})
	}
}

// TestWriteRoundTrip writes the sample table in every format and reads it back: every value,
// null, empty list and decimal as it went in.
func TestWriteRoundTrip(t *testing.T) {
	for _, f := range Formats() {
		t.Run(string(f), func(t *testing.T) {
			tb := sample()
			var out bytes.Buffer
			if err := Write(&out, f, tb); err != nil {
				t.Fatal(err)
			}
			compareRows(t, readBack(t, f, out.Bytes(), tb.Columns), wantBack(f, tb.Columns, tb.Rows))
		})
	}
}

// TestStreamingMatchesWhole checks that rows written one by one through the RowWriter give the
// same file as the whole table written at once.
func TestStreamingMatchesWhole(t *testing.T) {
	for _, f := range Formats() {
		t.Run(string(f), func(t *testing.T) {
			tb := sample()
			var whole, streamed bytes.Buffer
			if err := Write(&whole, f, tb); err != nil {
				t.Fatal(err)
			}
			w, err := NewWriter(&streamed, f, Table{Name: tb.Name, Doc: tb.Doc, Columns: tb.Columns})
			if err != nil {
				t.Fatal(err)
			}
			for _, row := range tb.Rows {
				if err := w.WriteRow(row); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(whole.Bytes(), streamed.Bytes()) {
				t.Errorf("streamed rows give %d bytes, the whole table %d: they differ", streamed.Len(), whole.Len())
			}
		})
	}
}

// readBack reads a table written in format f back into rows of Go values, as Table.Rows holds
// them.
func readBack(t *testing.T, f Format, data []byte, cols []Column) [][]any {
	t.Helper()
	if f == CSV {
		return readCSV(t, data, cols)
	}
	return readParquet(t, data, cols)
}

// wantBack is what rows read back as from format f: as they are, but for CSV, where an empty
// String is an empty field and so a null.
func wantBack(f Format, cols []Column, rows [][]any) [][]any {
	if f != CSV {
		return rows
	}
	out := make([][]any, len(rows))
	for i, row := range rows {
		out[i] = slices.Clone(row)
		for j, v := range row {
			if cols[j].Type == String && v == "" {
				out[i][j] = nil
			}
		}
	}
	return out
}

// compareRows fails the test unless got and want hold the same values, row by row.
func compareRows(t *testing.T, got, want [][]any) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("read back %d rows, want %d:\n%v", len(got), len(want), got)
	}
	for i := range want {
		if g, w := fmt.Sprintf("%#v", got[i]), fmt.Sprintf("%#v", want[i]); g != w {
			t.Errorf("row %d:\n got  %s\n want %s", i+1, g, w)
		}
	}
}
