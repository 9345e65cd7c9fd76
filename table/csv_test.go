package table

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"slices"
	"strconv"
	"testing"
)

// readCSV reads a CSV table back as encoding/csv reads it, converting each field by its column's
// Type; an empty field is nil.
func readCSV(t *testing.T, data []byte, cols []Column) [][]any {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatalf("the CSV does not read back: %v", err)
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	if len(recs) == 0 || !slices.Equal(recs[0], names) {
		t.Fatalf("the CSV's header row is %q, want %q", recs[:min(1, len(recs))], names)
	}
	var rows [][]any
	for _, rec := range recs[1:] {
		row := make([]any, len(cols))
		for i, field := range rec {
			row[i] = csvValue(t, cols[i].Type, field)
		}
		rows = append(rows, row)
	}
	return rows
}

// csvValue converts one CSV field back to the Go value of its column's type.
func csvValue(t *testing.T, typ Type, field string) any {
	t.Helper()
	if field == "" {
		return nil
	}
	var (
		v   any
		err error
	)
	switch typ {
	case Integer:
		v, err = strconv.ParseInt(field, 10, 64)
	case Boolean:
		v, err = strconv.ParseBool(field)
	case Float:
		v, err = strconv.ParseFloat(field, 64)
	case Strings:
		var list []string
		err = json.Unmarshal([]byte(field), &list)
		v = list
	default: // String, Decimal, JSON: the text itself
		v = field
	}
	if err != nil {
		t.Fatalf("CSV field %q of a %s column: %v", field, typ, err)
	}
	return v
}

// TestCSVText checks the text each type is written as, which docs/analysis.md describes: a CSV
// reader that knows the column types gets every value back.
func TestCSVText(t *testing.T) {
	var out bytes.Buffer
	if err := Write(&out, CSV, sample()); err != nil {
		t.Fatal(err)
	}
	want := `id,text,ok,cost_usd,keys,args,share
1,plain,true,0.00045585,"[""write_file"",""/tmp/x""]","{""path"":""a.txt"",""n"":[1,2.5,{""deep"":null}]}",0.25
-2,"a ""quoted"", multi
line text",false,-12,[],"""just a string""",-1e+21
3,,,,,,
9223372036854775807,,true,9223372.036854775807,"[""""]",null,0.1
`
	if out.String() != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestCSVEmptyStringIsNull pins the one thing CSV loses: an empty string reads back as a null.
func TestCSVEmptyStringIsNull(t *testing.T) {
	tb := Table{Name: "t", Columns: []Column{{Name: "s", Type: String}}, Rows: [][]any{{""}, {nil}}}
	var out bytes.Buffer
	if err := Write(&out, CSV, tb); err != nil {
		t.Fatal(err)
	}
	compareRows(t, readCSV(t, out.Bytes(), tb.Columns), [][]any{{nil}, {nil}})
}
