// Package table is the one shape Warren's data out takes: a named table of typed columns and
// rows, which the trace export (one table per event kind), the metrics (per agent, stage, group,
// tree, model and run), a run's timeline and a sweep's results all produce, and which the CSV
// and Parquet writers write. A column's type says how every reader (Parquet, CSV, DuckDB,
// pandas) should take its values, so the tables load without guessing.
package table

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Type is a column's type.
type Type string

// The column types. They are the trace's field types (trace.FieldType) and Float, which only
// derived tables (metrics, timelines) use: a trace holds no floats.
const (
	// Integer values are int64.
	Integer Type = "integer"
	// String values are string.
	String Type = "string"
	// Boolean values are bool.
	Boolean Type = "boolean"
	// Decimal values are exact decimal numbers written as strings ("0.00045585"): money.
	Decimal Type = "decimal"
	// Strings values are []string.
	Strings Type = "strings"
	// JSON values are a JSON document's text, as a string.
	JSON Type = "json"
	// Float values are float64.
	Float Type = "float"
)

// Column is one column of a table: its name, its type and what it holds (for the generated
// schema documentation).
type Column struct {
	Name string
	Type Type
	Doc  string
}

// Table is a named table. Every row has one value per column, in column order: an int64, string,
// bool, []string or float64 as the column's type says, or nil for a value the row does not have
// (a field its event left out).
type Table struct {
	// Name names the table: the event kind for a trace table ("tool_call"), the metric's scope
	// for a metrics table ("stages"). Files are named after it.
	Name string
	// Doc says what one row is.
	Doc     string
	Columns []Column
	Rows    [][]any
}

// Format is a file format a table is written in.
type Format string

// The formats a table is written in.
const (
	// Parquet is Apache Parquet: typed, compressed and columnar, what DuckDB, pandas (with
	// pyarrow), Polars and Spark read fastest. Every column is nullable; see NewParquetWriter for
	// how each Type is stored.
	Parquet Format = "parquet"
	// CSV is comma-separated values with a header row, for tools that read nothing else. It has no
	// types (each Type's text is what NewCSVWriter says), and an empty field is both null and "".
	CSV Format = "csv"
)

// Formats lists every Format, for help texts and for the error that names what is valid.
func Formats() []Format { return []Format{Parquet, CSV} }

// ErrFormat means a format name is not one of Formats.
var ErrFormat = errors.New("unknown table format")

// ParseFormat returns the Format named s ("parquet", "csv"): a command-line flag's value becomes
// a Format here, and a wrong one is an error wrapping ErrFormat that lists the valid names.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats() {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("%w %q: valid formats are %s", ErrFormat, s, formatNames())
}

// formatNames is "parquet, csv": the valid format names for an error.
func formatNames() string {
	names := make([]string, 0, len(Formats()))
	for _, f := range Formats() {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}

// Ext is the file name extension of the format, dot included (".parquet", ".csv"), so that a
// table named "tool_call" is written as tool_call.parquet.
func (f Format) Ext() string { return "." + string(f) }

// RowWriter writes one table's rows as they come, so that a table too big to hold in memory (the
// events of a 500,000-event trace) can be written while it is read.
type RowWriter interface {
	// WriteRow writes one row: one value per column, in column order, of the Go type the
	// column's Type names, or nil for none (see Table). A row of the wrong length or a value of
	// the wrong type is an error wrapping ErrValue, and nothing of that row is written.
	// WriteRow does not keep row: the caller may reuse it.
	WriteRow(row []any) error
	// Close writes what is still buffered and the format's trailer (the Parquet footer). It does
	// not close the io.Writer the RowWriter was made with. A RowWriter is not usable after Close.
	Close() error
}

// NewWriter starts writing t to w in format f, writes t's rows, and returns the RowWriter to
// write more: NewParquetWriter or NewCSVWriter. An unknown format is an error wrapping ErrFormat;
// an invalid table (see ErrSchema) one wrapping ErrSchema.
func NewWriter(w io.Writer, f Format, t Table) (RowWriter, error) {
	switch f {
	case Parquet:
		return NewParquetWriter(w, t)
	case CSV:
		return NewCSVWriter(w, t)
	}
	return nil, fmt.Errorf("%w %q: valid formats are %s", ErrFormat, f, formatNames())
}

// Write writes the whole table t to w in format f: NewWriter, then Close.
func Write(w io.Writer, f Format, t Table) error {
	rw, err := NewWriter(w, f, t)
	if err != nil {
		return err
	}
	return rw.Close()
}

// ErrSchema means a table cannot be written as it is described: a column without a name, two
// columns of one name, or a column of a Type this package does not know.
var ErrSchema = errors.New("invalid table")

// ErrValue means a row does not fit its table: it has the wrong number of values, or a value is
// not of its column's Go type (an int where an Integer column wants int64), or is not valid for
// its Type (a Decimal that is not an exact decimal number, a JSON value that is not JSON).
var ErrValue = errors.New("invalid table row")

// types are the Types this package writes.
var types = []Type{Integer, String, Boolean, Decimal, Strings, JSON, Float}

// checkColumns reports why t's columns cannot be written, or nil.
func checkColumns(t Table) error {
	seen := make(map[string]bool, len(t.Columns))
	for i, c := range t.Columns {
		switch {
		case c.Name == "":
			return fmt.Errorf("%w: table %q: column %d has no name", ErrSchema, t.Name, i)
		case seen[c.Name]:
			return fmt.Errorf("%w: table %q: two columns are named %q", ErrSchema, t.Name, c.Name)
		case !slices.Contains(types, c.Type):
			return fmt.Errorf("%w: table %q: column %q: unknown type %q; valid types are %v", ErrSchema, t.Name, c.Name, c.Type, types)
		}
		seen[c.Name] = true
	}
	return nil
}

// rowError is the error for a row that does not fit: its table, its number (from 1) and why.
func rowError(t *Table, n int64, format string, args ...any) error {
	return fmt.Errorf("%w: table %q, row %d: %s", ErrValue, t.Name, n, fmt.Sprintf(format, args...))
}

// valueError is the error for one value of a row that is not what its column wants.
func valueError(t *Table, n int64, c Column, v any, want string) error {
	return rowError(t, n, "column %q (%s): got %T %v, want %s", c.Name, c.Type, v, v, want)
}

// decimalScale is how many decimal places a Decimal keeps: 12, a picodollar, the trace's unit of
// money (trace.DollarsOf), so every cost a trace holds is exact.
const decimalScale = 12

// parseDecimal reads an exact decimal number ("0.00045585", "-12", "3.5") as an integer number
// of 10^-12 units. It refuses what is not a plain decimal number (no exponent, no "+", no
// spaces), more than twelve decimal places (they would be rounded away), and numbers beyond an
// int64 of units (±9,223,372.036854775807): what a trace's picodollars can hold.
func parseDecimal(s string) (int64, error) {
	digits, neg := s, false
	if strings.HasPrefix(digits, "-") {
		digits, neg = digits[1:], true
	}
	whole, frac, hasPoint := strings.Cut(digits, ".")
	if whole == "" || (hasPoint && frac == "") || !allDigits(whole) || !allDigits(frac) {
		return 0, fmt.Errorf("%q is not a decimal number (digits, with an optional - and . and no exponent)", s)
	}
	if len(frac) > decimalScale {
		return 0, fmt.Errorf("%q has more than %d decimal places", s, decimalScale)
	}
	units := whole + frac + strings.Repeat("0", decimalScale-len(frac))
	v, err := strconv.ParseInt(units, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is beyond the ±9223372.036854775807 a decimal column holds", s)
	}
	if neg {
		v = -v
	}
	return v, nil
}

// allDigits reports whether s holds only the digits 0-9 ("" does).
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Description is a table without its rows, as JSON: what a Parquet file's metadata
// (ParquetMetadataKey) and an export's manifest say of each table, so a reader of CSV knows each
// column's Type.
type Description struct {
	Name    string              `json:"name"`
	Doc     string              `json:"doc,omitempty"`
	Columns []ColumnDescription `json:"columns"`
}

// ColumnDescription is a Column as JSON.
type ColumnDescription struct {
	Name string `json:"name"`
	Type Type   `json:"type"`
	Doc  string `json:"doc,omitempty"`
}

// DescribeTable returns t's name, doc and columns.
func DescribeTable(t Table) Description {
	d := Description{Name: t.Name, Doc: t.Doc, Columns: make([]ColumnDescription, len(t.Columns))}
	for i, c := range t.Columns {
		d.Columns[i] = ColumnDescription(c)
	}
	return d
}

// Check reports why t cannot be written, or nil: the checks every format makes of its columns
// (ErrSchema) and of each row (ErrValue), without writing it anywhere, so that a table given to
// an export is refused before the export starts rather than halfway through.
func Check(t Table) error { return Write(io.Discard, CSV, t) }
