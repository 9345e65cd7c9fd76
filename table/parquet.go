package table

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// ParquetMetadataKey is the key of the Parquet file's key-value metadata under which
// ParquetWriter stores the table's name, doc and columns (with their Types and docs) as JSON, so
// that a file copied away from its export still says what it holds: DuckDB shows it with
// parquet_kv_metadata('file.parquet').
const ParquetMetadataKey = "warren.table"

// RowGroupRows is how many rows a Parquet row group holds at most. The writer holds one row group
// of each open table in memory (compressed), so this bounds an export's memory; DuckDB reads row
// groups in parallel, and 128 Ki rows is about the size it writes itself (122,880).
const RowGroupRows = 128 << 10

// zstdCodec compresses every Parquet page: zstd at its fastest level, shared by every writer so
// that its pool of encoders (a few MB each) is made once, not once a table. Measured on the
// 10,000-agent quickstart trace (50 MB of JSON Lines), it writes 3.0% of the trace's size, as
// zstd's default level does, in 60% of the time, and 5x smaller than Snappy at the same speed
// (docs/decisions.md).
var zstdCodec = &zstd.Codec{Level: zstd.SpeedFastest}

// batchRows is how many rows ParquetWriter collects before it hands them to parquet-go, whose
// per-call cost is then shared.
const batchRows = 256

// ParquetWriter writes a table as a Parquet file, compressed with zstd (zstdCodec), in row groups of
// RowGroupRows rows. Every column is OPTIONAL (nullable: nil is a null) and its type is:
//
//   - Integer: INT64 (logical type INT(64, signed));
//   - String: BYTE_ARRAY, STRING;
//   - Boolean: BOOLEAN;
//   - Decimal: FIXED_LEN_BYTE_ARRAY(16), DECIMAL(38, 12): exact to a picodollar, the trace's
//     unit of money, over the whole range of a trace's int64 picodollars (±9,223,372.036854775807);
//     DuckDB reads DECIMAL(38,12), pandas (pyarrow) decimal.Decimal;
//   - Strings: LIST of required STRING elements (an empty list is not a null);
//   - JSON: BYTE_ARRAY, JSON: DuckDB reads it as its JSON type, other readers as a string;
//   - Float: DOUBLE.
//
// The columns keep the table's order, and the file's key-value metadata holds the table's docs
// under ParquetMetadataKey.
type ParquetWriter struct {
	t    Table
	w    *parquet.Writer
	rows []parquet.Row   // collected, not yet handed to w
	vals []parquet.Value // backs rows
	n    int64           // rows accepted
}

var _ RowWriter = (*ParquetWriter)(nil)

// NewParquetWriter starts a Parquet file of t's columns on w, writes t's rows, and returns the
// writer of any more. Nothing reaches w before the first row group is full or Close is called.
// An invalid table is an error wrapping ErrSchema, a row that does not fit one wrapping ErrValue.
func NewParquetWriter(w io.Writer, t Table) (*ParquetWriter, error) {
	if err := checkColumns(t); err != nil {
		return nil, err
	}
	meta, err := json.Marshal(DescribeTable(t))
	if err != nil {
		return nil, fmt.Errorf("table %q: %w", t.Name, err)
	}
	schema := parquet.NewSchema(t.Name, parquetGroup(t.Columns))
	pw := &ParquetWriter{
		t: Table{Name: t.Name, Doc: t.Doc, Columns: t.Columns},
		w: parquet.NewWriter(w, schema,
			parquet.Compression(zstdCodec),
			parquet.MaxRowsPerRowGroup(RowGroupRows),
			parquet.KeyValueMetadata(ParquetMetadataKey, string(meta))),
	}
	for _, row := range t.Rows {
		if err := pw.WriteRow(row); err != nil {
			return nil, err
		}
	}
	return pw, nil
}

// orderedGroup is a Parquet group whose fields keep the table's column order: parquet.Group, a
// map, gives them sorted by name, and a reader's SELECT * should show the columns as the table
// lists them (tick, seq, agent, name, kind, then the kind's fields).
type orderedGroup struct {
	parquet.Group
	fields []parquet.Field
}

var _ parquet.Node = orderedGroup{}

// Fields returns the fields in column order.
func (g orderedGroup) Fields() []parquet.Field { return g.fields }

// String prints the group as a Parquet schema, in column order.
func (g orderedGroup) String() string {
	var b strings.Builder
	if err := parquet.PrintSchema(&b, "", g); err != nil {
		return err.Error()
	}
	return b.String()
}

// parquetGroup is the Parquet group of the columns, each an optional field of its type's node.
func parquetGroup(cols []Column) parquet.Node {
	g := make(parquet.Group, len(cols))
	order := make(map[string]int, len(cols))
	for i, c := range cols {
		g[c.Name] = parquet.Optional(parquetNode(c.Type))
		order[c.Name] = i
	}
	fields := slices.Clone(g.Fields())
	slices.SortFunc(fields, func(a, b parquet.Field) int { return order[a.Name()] - order[b.Name()] })
	return orderedGroup{Group: g, fields: fields}
}

// parquetNode is the Parquet node of a column of type t (see ParquetWriter); checkColumns has
// refused every other type.
func parquetNode(t Type) parquet.Node {
	switch t {
	case Integer:
		return parquet.Int(64)
	case Boolean:
		return parquet.Leaf(parquet.BooleanType)
	case Decimal:
		return parquet.Decimal(decimalScale, 38, parquet.FixedLenByteArrayType(16))
	case Strings:
		return parquet.List(parquet.String())
	case JSON:
		return parquet.JSON()
	case Float:
		return parquet.Leaf(parquet.DoubleType)
	}
	return parquet.String()
}

// The definition levels of a value: a null, a present value, and a list's element (the list is
// optional and repeated, so an element is one level deeper; a present, empty list is defPresent).
const (
	defNull    = 0
	defPresent = 1
	defElement = 2
)

// WriteRow adds one row; rows reach the file in batches, and in row groups of RowGroupRows.
func (pw *ParquetWriter) WriteRow(row []any) error {
	n := pw.n + 1
	if len(row) != len(pw.t.Columns) {
		return rowError(&pw.t, n, "%d values for %d columns", len(row), len(pw.t.Columns))
	}
	start := len(pw.vals)
	for i, v := range row {
		if err := pw.appendValue(n, i, v); err != nil {
			pw.vals = pw.vals[:start]
			return err
		}
	}
	pw.rows = append(pw.rows, pw.vals[start:len(pw.vals):len(pw.vals)])
	pw.n = n
	if len(pw.rows) == batchRows {
		return pw.flush()
	}
	return nil
}

// appendValue appends the Parquet values of v, the value of column i in row n.
func (pw *ParquetWriter) appendValue(n int64, i int, v any) error {
	c := pw.t.Columns[i]
	if v == nil {
		pw.vals = append(pw.vals, parquet.NullValue().Level(0, defNull, i))
		return nil
	}
	var pv parquet.Value
	switch c.Type {
	case Integer:
		x, ok := v.(int64)
		if !ok {
			return valueError(&pw.t, n, c, v, "int64")
		}
		pv = parquet.Int64Value(x)
	case String:
		x, ok := v.(string)
		if !ok {
			return valueError(&pw.t, n, c, v, "string")
		}
		pv = parquet.ValueOf(x)
	case Boolean:
		x, ok := v.(bool)
		if !ok {
			return valueError(&pw.t, n, c, v, "bool")
		}
		pv = parquet.BooleanValue(x)
	case Decimal:
		x, ok := v.(string)
		if !ok {
			return valueError(&pw.t, n, c, v, "a decimal number as a string")
		}
		units, err := parseDecimal(x)
		if err != nil {
			return rowError(&pw.t, n, "column %q (%s): %v", c.Name, c.Type, err)
		}
		pv = parquet.FixedLenByteArrayValue(decimalBytes(units))
	case Strings:
		x, ok := v.([]string)
		if !ok {
			return valueError(&pw.t, n, c, v, "[]string")
		}
		if len(x) == 0 {
			pw.vals = append(pw.vals, parquet.NullValue().Level(0, defPresent, i))
			return nil
		}
		for j, s := range x {
			pw.vals = append(pw.vals, parquet.ValueOf(s).Level(min(j, 1), defElement, i))
		}
		return nil
	case JSON:
		x, ok := v.(string)
		if !ok || !json.Valid([]byte(x)) {
			return valueError(&pw.t, n, c, v, "a JSON document's text as a string")
		}
		pv = parquet.ValueOf(x)
	case Float:
		x, ok := v.(float64)
		if !ok {
			return valueError(&pw.t, n, c, v, "float64")
		}
		pv = parquet.DoubleValue(x)
	}
	pw.vals = append(pw.vals, pv.Level(0, defPresent, i))
	return nil
}

// decimalBytes is units as DECIMAL's 16-byte big-endian two's complement.
func decimalBytes(units int64) []byte {
	b := make([]byte, 16)
	if units < 0 {
		for i := range 8 {
			b[i] = 0xff
		}
	}
	binary.BigEndian.PutUint64(b[8:], uint64(units))
	return b
}

// flush hands the collected rows to parquet-go.
func (pw *ParquetWriter) flush() error {
	if len(pw.rows) == 0 {
		return nil
	}
	if _, err := pw.w.WriteRows(pw.rows); err != nil {
		return fmt.Errorf("table %q: %w", pw.t.Name, err)
	}
	pw.rows, pw.vals = pw.rows[:0], pw.vals[:0]
	return nil
}

// Close writes the last rows and the Parquet footer.
func (pw *ParquetWriter) Close() error {
	if err := pw.flush(); err != nil {
		return err
	}
	if err := pw.w.Close(); err != nil {
		return fmt.Errorf("table %q: %w", pw.t.Name, err)
	}
	return nil
}
