package runview

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/warrenhq/warren/trace"
)

// allFields is a struct with one field per trace column, built from trace.Columns: what
// encoding/json would decode a line into if the View used it, since a log keeps every field.
var allFields = func() reflect.Type {
	var fields []reflect.StructField
	for _, c := range columns {
		var t reflect.Type
		switch c.Type {
		case trace.TypeInteger:
			t = reflect.TypeFor[int64]()
		case trace.TypeBoolean:
			t = reflect.TypeFor[bool]()
		case trace.TypeStrings:
			t = reflect.TypeFor[[]string]()
		case trace.TypeJSON:
			t = reflect.TypeFor[json.RawMessage]()
		default:
			t = reflect.TypeFor[string]()
		}
		name := strings.ReplaceAll(strings.Title(strings.ReplaceAll(c.Name, "_", " ")), " ", "") //nolint:staticcheck // ASCII names
		fields = append(fields, reflect.StructField{Name: name, Type: t, Tag: reflect.StructTag(`json:"` + c.Name + `"`)})
	}
	return reflect.StructOf(fields)
}()

// benchLines reads a golden trace's event lines.
func benchLines(b *testing.B, name string) [][]byte {
	data, err := os.ReadFile("../scenarios/testdata/golden/" + name + ".jsonl")
	if err != nil {
		b.Fatal(err)
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		out = append(out, bytes.Clone(sc.Bytes()))
	}
	return out[1:]
}

// BenchmarkDecode compares decoding a line with the View's decoder (fastjson, checked against
// the schema) and with encoding/json into a struct of every column, over a real trace's lines:
// the measurement that chose fastjson. One op is one line.
//
//	go test ./runview/ -run '^$' -bench BenchmarkDecode -benchmem -count 3
func BenchmarkDecode(b *testing.B) {
	for _, name := range []string{"gossip", "quickstart"} {
		lines := benchLines(b, name)
		b.Run(name+"/fastjson", func(b *testing.B) {
			d := newDecoder()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := d.decode(lines[i%len(lines)]); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/encoding-json", func(b *testing.B) {
			p := reflect.New(allFields)
			zero := reflect.Zero(allFields)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				p.Elem().Set(zero)
				if err := json.Unmarshal(lines[i%len(lines)], p.Interface()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestDecodeAgreesWithEncodingJSON checks the comparison is fair: both decoders read the same
// values from every line of a trace.
func TestDecodeAgreesWithEncodingJSON(t *testing.T) {
	data, err := os.ReadFile("../scenarios/testdata/golden/review.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	d := newDecoder()
	for i, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n"))[1:] {
		if err := d.decode(l); err != nil {
			t.Fatalf("line %d: %v", i+2, err)
		}
		p := reflect.New(allFields)
		if err := json.Unmarshal(l, p.Interface()); err != nil {
			t.Fatal(err)
		}
		s := p.Elem()
		if s.Field(int(cSeq)).Int() != d.ev.seq || s.Field(int(cKind)).String() != d.ev.kind.name {
			t.Fatalf("line %d: seq or kind differ", i+2)
		}
		for _, f := range d.ev.vals {
			want := s.Field(int(f.col))
			var got any
			switch columns[f.col].Type {
			case trace.TypeInteger:
				got = f.num
			case trace.TypeBoolean:
				got = f.flag
			case trace.TypeStrings:
				l := []string{}
				for _, x := range f.list {
					l = append(l, string(x))
				}
				got = l
			case trace.TypeJSON:
				got = json.RawMessage(bytes.Clone(f.str))
			default:
				got = string(f.str)
			}
			if !reflect.DeepEqual(got, want.Interface()) {
				t.Fatalf("line %d, %s: %#v, encoding/json says %#v", i+2, columns[f.col].Name, got, want.Interface())
			}
		}
	}
}
