package table

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// CSVWriter writes a table as CSV (RFC 4180, as encoding/csv writes it): a header row of the
// column names, then one record a row. CSV has no types, so each value is written as the text
// every CSV reader takes back for its Type:
//
//   - Integer: decimal digits ("42", "-7");
//   - String: the string;
//   - Boolean: true or false;
//   - Decimal: the exact decimal number as it was given ("0.00045585"), never rounded through a
//     float;
//   - Strings: the list as a JSON array (["write_file","/tmp"]), so that an empty list ([]) and
//     one holding "" ([""]) stay apart;
//   - JSON: the JSON text;
//   - Float: the shortest text that reads back as the same float64 ("0.25", "1e+21", "NaN",
//     "+Inf", "-Inf").
//
// A null (nil) is an empty field. So is an empty String, which CSV cannot tell from a null; a
// reader that must tell them apart reads the Parquet format, which keeps both. (A row of a
// one-column table whose field is empty is written "", since an empty line is skipped by every
// reader.)
type CSVWriter struct {
	t   Table
	buf *bufio.Writer
	csv *csv.Writer
	rec []string
	n   int64 // rows written
}

var _ RowWriter = (*CSVWriter)(nil)

// NewCSVWriter writes the header row of t's columns to w, then t's rows, and returns the writer
// of any more. An invalid table is an error wrapping ErrSchema, a row that does not fit one
// wrapping ErrValue.
func NewCSVWriter(w io.Writer, t Table) (*CSVWriter, error) {
	if err := checkColumns(t); err != nil {
		return nil, err
	}
	buf := bufio.NewWriterSize(w, 64<<10)
	cw := &CSVWriter{t: Table{Name: t.Name, Doc: t.Doc, Columns: t.Columns}, buf: buf, csv: csv.NewWriter(buf), rec: make([]string, len(t.Columns))}
	for i, c := range t.Columns {
		cw.rec[i] = c.Name
	}
	if err := cw.csv.Write(cw.rec); err != nil {
		return nil, fmt.Errorf("table %q: %w", t.Name, err)
	}
	for _, row := range t.Rows {
		if err := cw.WriteRow(row); err != nil {
			return nil, err
		}
	}
	return cw, nil
}

// WriteRow writes one row as a CSV record.
func (cw *CSVWriter) WriteRow(row []any) error {
	n := cw.n + 1
	if len(row) != len(cw.t.Columns) {
		return rowError(&cw.t, n, "%d values for %d columns", len(row), len(cw.t.Columns))
	}
	for i, v := range row {
		s, err := cw.text(n, cw.t.Columns[i], v)
		if err != nil {
			return err
		}
		cw.rec[i] = s
	}
	if err := cw.write(); err != nil {
		return err
	}
	cw.n = n
	return nil
}

// write writes the record in cw.rec. A record of one empty field is written as "" (quoted): CSV
// writes it as an empty line otherwise, which every reader skips, and the row would be lost.
func (cw *CSVWriter) write() error {
	if len(cw.rec) == 1 && cw.rec[0] == "" {
		cw.csv.Flush()
		if _, err := cw.buf.WriteString("\"\"\n"); err != nil {
			return fmt.Errorf("table %q: %w", cw.t.Name, err)
		}
		return nil
	}
	if err := cw.csv.Write(cw.rec); err != nil {
		return fmt.Errorf("table %q: %w", cw.t.Name, err)
	}
	return nil
}

// text is v as the field of a column of c's type (see CSVWriter).
func (cw *CSVWriter) text(n int64, c Column, v any) (string, error) {
	if v == nil {
		return "", nil
	}
	switch c.Type {
	case Integer:
		if x, ok := v.(int64); ok {
			return strconv.FormatInt(x, 10), nil
		}
		return "", valueError(&cw.t, n, c, v, "int64")
	case String:
		if x, ok := v.(string); ok {
			return x, nil
		}
		return "", valueError(&cw.t, n, c, v, "string")
	case Boolean:
		if x, ok := v.(bool); ok {
			return strconv.FormatBool(x), nil
		}
		return "", valueError(&cw.t, n, c, v, "bool")
	case Decimal:
		x, ok := v.(string)
		if !ok {
			return "", valueError(&cw.t, n, c, v, "a decimal number as a string")
		}
		if _, err := parseDecimal(x); err != nil {
			return "", rowError(&cw.t, n, "column %q (%s): %v", c.Name, c.Type, err)
		}
		return x, nil
	case Strings:
		x, ok := v.([]string)
		if !ok {
			return "", valueError(&cw.t, n, c, v, "[]string")
		}
		if x == nil {
			x = []string{}
		}
		b, err := json.Marshal(x)
		if err != nil {
			return "", rowError(&cw.t, n, "column %q: %v", c.Name, err)
		}
		return string(b), nil
	case JSON:
		x, ok := v.(string)
		if !ok || !json.Valid([]byte(x)) {
			return "", valueError(&cw.t, n, c, v, "a JSON document's text as a string")
		}
		return x, nil
	case Float:
		if x, ok := v.(float64); ok {
			return strconv.FormatFloat(x, 'g', -1, 64), nil
		}
		return "", valueError(&cw.t, n, c, v, "float64")
	}
	return "", rowError(&cw.t, n, "column %q: unknown type %q", c.Name, c.Type)
}

// Close flushes the buffered records to the underlying writer.
func (cw *CSVWriter) Close() error {
	cw.csv.Flush()
	if err := cw.csv.Error(); err != nil {
		return fmt.Errorf("table %q: %w", cw.t.Name, err)
	}
	if err := cw.buf.Flush(); err != nil {
		return fmt.Errorf("table %q: %w", cw.t.Name, err)
	}
	return nil
}
