package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// ErrBadInput is wrapped by every error that is the input's fault: a directory that is neither
// a run nor a sweep, a file that does not parse, a column or value the contract does not allow.
// Each such error names the file, the line when there is one, and what would be valid; an
// error that does not wrap it (a failed write) is the output's fault.
var ErrBadInput = errors.New("bad report input")

// inputError is an ErrBadInput error: its message is the whole text (file:line: what), and it
// also wraps the cause, when there is one, for errors.Is and errors.As.
type inputError struct {
	msg   string
	cause error
}

func (e *inputError) Error() string { return e.msg }

// Unwrap lets errors.Is find ErrBadInput and the cause.
func (e *inputError) Unwrap() []error {
	if e.cause == nil {
		return []error{ErrBadInput}
	}
	return []error{ErrBadInput, e.cause}
}

// badf makes an ErrBadInput error from a message.
func badf(format string, args ...any) error {
	return &inputError{msg: fmt.Sprintf(format, args...)}
}

// badWrap makes an ErrBadInput error whose message ends with cause's and which wraps it.
func badWrap(cause error, format string, args ...any) error {
	return &inputError{msg: fmt.Sprintf(format, args...) + ": " + cause.Error(), cause: cause}
}

// exists reports whether path names an existing file or directory.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// readJSON decodes the JSON file at path into v, naming the line and column of a syntax or type
// error. Unknown keys are allowed: the writers may add fields the report does not draw.
func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return badWrap(err, "%s", path)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return jsonError(path, data, err)
	}
	return nil
}

// checkJSON checks that data is one valid JSON value, naming where it is not. (A json.Decoder's
// syntax errors give offsets that can be off by the whitespace it skipped; Unmarshal's are the
// byte's own.)
func checkJSON(path string, data []byte) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return jsonError(path, data, err)
	}
	return nil
}

// jsonError names the line and column where decoding data failed, and what was wrong there.
func jsonError(path string, data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := lineCol(data, syn.Offset-1) // Offset counts the bad byte
		return badWrap(err, "%s:%d:%d: not valid JSON", path, line, col)
	case errors.As(err, &typ):
		line, _ := lineCol(data, typ.Offset) // Offset is the end of the value: name only its line
		return badWrap(err, "%s:%d: %s holds a JSON %s", path, line, typ.Field, typ.Value)
	}
	return badWrap(err, "%s", path)
}

// lineCol turns the offset of a byte (the number of bytes before it) into its 1-based line and
// column.
func lineCol(data []byte, offset int64) (int, int) {
	offset = min(max(offset, 0), int64(len(data)))
	before := data[:offset]
	line := bytes.Count(before, []byte{'\n'}) + 1
	return line, int(offset) - bytes.LastIndexByte(before, '\n')
}

// csvRow is one data row of a CSV file, read by column name.
type csvRow struct {
	path   string
	line   int
	fields []string
	index  map[string]int
}

// get returns the row's value in column name ("" when the file has no such column).
func (r csvRow) get(name string) string {
	if i, ok := r.index[name]; ok {
		return r.fields[i]
	}
	return ""
}

// errf makes an error naming the row's file and line.
func (r csvRow) errf(format string, args ...any) error {
	return badf("%s:%d: %s", r.path, r.line, fmt.Sprintf(format, args...))
}

// integer returns the integer in column name; ok is false when it is empty.
func (r csvRow) integer(name string) (v int64, ok bool, err error) {
	s := r.get(name)
	if s == "" {
		return 0, false, nil
	}
	v, perr := strconv.ParseInt(s, 10, 64)
	if perr != nil {
		return 0, false, r.errf("column %s: %q is not an integer; want a whole number or nothing", name, s)
	}
	return v, true, nil
}

// number returns the number in column name; ok is false when it is empty.
func (r csvRow) number(name string) (v float64, ok bool, err error) {
	s := r.get(name)
	if s == "" {
		return 0, false, nil
	}
	v, ok = finite(s)
	if !ok {
		return 0, false, r.errf("column %s: %q is not a number; want a finite decimal number or nothing", name, s)
	}
	return v, true, nil
}

// finite parses a finite number: not NaN, not an infinity (which strconv reads, and JSON cannot
// hold).
func finite(s string) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil && !math.IsNaN(v) && !math.IsInf(v, 0)
}

// csvFile is a CSV file's header, for the callers that need its column order.
type csvFile struct {
	header []string
}

// eachCSVRow reads the CSV file at path, checks that its header has every column in need, and
// calls fn for each data row in order. Columns are found by name, so extra columns and another
// order are fine; a row with another number of fields than the header is an error naming its
// line.
func eachCSVRow(path string, need []string, fn func(csvRow) error) (csvFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return csvFile{}, badWrap(err, "%s", path)
	}
	defer f.Close()
	cr := csv.NewReader(f)
	header, err := cr.Read()
	if err == io.EOF {
		return csvFile{}, badf("%s:1: empty file; want a header line naming the columns (%s)", path, strings.Join(need, ","))
	}
	if err != nil {
		return csvFile{}, csvError(path, err)
	}
	if len(header) > 0 {
		header[0] = strings.TrimPrefix(header[0], "\ufeff")
	}
	index := make(map[string]int, len(header))
	for i, h := range header {
		if _, dup := index[h]; dup {
			return csvFile{}, badf("%s:1: column %q appears twice; every column name must be unique", path, h)
		}
		index[h] = i
	}
	var missing []string
	for _, n := range need {
		if _, ok := index[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return csvFile{}, badf("%s:1: missing column %s; the header has %s, and must have at least %s",
			path, strings.Join(missing, ", "), strings.Join(header, ","), strings.Join(need, ","))
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return csvFile{}, csvError(path, err)
		}
		line, _ := cr.FieldPos(0)
		if err := fn(csvRow{path: path, line: line, fields: rec, index: index}); err != nil {
			return csvFile{}, err
		}
	}
	return csvFile{header: header}, nil
}

// csvError names the file and line of a CSV syntax error.
func csvError(path string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			return badWrap(pe.Err, "%s:%d: a row must have as many fields as the header", path, pe.Line)
		}
		return badWrap(pe.Err, "%s:%d:%d: not valid CSV", path, pe.Line, pe.Column)
	}
	return badWrap(err, "%s", path)
}
