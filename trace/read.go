package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// ErrMalformed means a trace line is not what the format allows; the error names the
// line.
var ErrMalformed = errors.New("malformed trace")

// NoteIncomplete is the note Read gives a trace whose last event is not the end event.
const NoteIncomplete = "trace incomplete: no end event"

// headerLine is the header's JSON shape.
type headerLine struct {
	Format       string          `json:"format"`
	Version      int             `json:"version"`
	HostVersion  string          `json:"host_version"`
	Scenario     string          `json:"scenario"`
	ScenarioHash string          `json:"scenario_hash"`
	Seed         uint64          `json:"seed"`
	Clock        string          `json:"clock"`
	Recording    string          `json:"recording"`
	Fields       json.RawMessage `json:"fields"`
}

// Trace is a trace read back by Read: its header, its whole event lines, and what it lacks.
type Trace struct {
	Header Header
	// Events are the event lines, without their newlines, the end event included.
	Events []json.RawMessage
	// Complete reports that the last event is the end event: the run that wrote the trace
	// closed it.
	Complete bool
	// Cut is the last line when it was cut mid-line (it has no newline and is not a JSON
	// object: the writer was stopped mid-write, or the disk filled); it is not in Events.
	Cut []byte
	// Notes say, in words, what the trace lacks: NoteIncomplete, and where a cut line was.
	Notes []string

	// headerLine is the raw header, for diff context.
	headerLine []byte
}

// Read reads a trace that may be incomplete, as a run that was killed or whose disk filled
// leaves it: a last line cut mid-line (no newline, not JSON) is set aside as Cut rather than
// refused, and a trace that does not end with the end event is read with NoteIncomplete among
// its Notes. Every whole line must still be valid: a header of another format or version is an
// error wrapping ErrBadHeader, a bad event line one wrapping ErrMalformed that names the line.
func Read(r io.Reader) (*Trace, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	first, whole, err := readLine(br)
	if err == io.EOF {
		return nil, fmt.Errorf("%w: empty input, want a header line", ErrBadHeader)
	}
	if err != nil {
		return nil, err
	}
	if !whole && !json.Valid(first) {
		return nil, fmt.Errorf("%w: line 1 was cut mid-line (%d bytes, no newline): the trace holds no whole header", ErrBadHeader, len(first))
	}
	h, err := parseHeader(first)
	if err != nil {
		return nil, err
	}
	t := &Trace{Header: h, headerLine: first}
	for line := 2; ; line++ {
		raw, whole, err := readLine(br)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if !whole && !json.Valid(raw) {
			t.Cut = raw
			t.Notes = append(t.Notes, "line "+strconv.Itoa(line)+" was cut mid-line ("+strconv.Itoa(len(raw))+
				" bytes, no newline): read the "+strconv.Itoa(len(t.Events))+" whole events before it")
			break
		}
		if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
			return nil, fmt.Errorf("%w: line %d is not a JSON object: %s", ErrMalformed, line, clip(raw, 80))
		}
		t.Events = append(t.Events, raw)
	}
	if n := len(t.Events); n > 0 && kindOf(t.Events[n-1]) == KindEnd {
		t.Complete = true
	} else {
		t.Notes = append([]string{NoteIncomplete}, t.Notes...)
	}
	return t, nil
}

// ReadAll reads a whole trace: its header and every event line (without the trailing
// newline), checking that each event is a JSON object. A header of another format or
// version is an error wrapping ErrBadHeader; a bad event line, or a last line cut mid-line,
// one wrapping ErrMalformed that names the line. It does not ask for the end event: use Read
// to read an incomplete trace and learn what it lacks.
func ReadAll(r io.Reader) (Header, []json.RawMessage, error) {
	t, err := Read(r)
	if err != nil {
		return Header{}, nil, err
	}
	if t.Cut != nil {
		return Header{}, nil, fmt.Errorf("%w: line %d was cut mid-line (no newline, not JSON): %s", ErrMalformed, len(t.Events)+2, clip(t.Cut, 80))
	}
	return t.Header, t.Events, nil
}

// kindOf returns an event line's kind, or "" when it has none.
func kindOf(raw []byte) string {
	var ev struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal(raw, &ev) != nil {
		return ""
	}
	return ev.Kind
}

// readLine returns the next line without its "\n", whether it had one (a last line may lack
// it), or io.EOF when nothing is left.
func readLine(br *bufio.Reader) ([]byte, bool, error) {
	line, err := br.ReadBytes('\n')
	if err == io.EOF && len(line) > 0 {
		return line, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return line[:len(line)-1], true, nil
}

func parseHeader(line []byte) (Header, error) {
	if !json.Valid(line) {
		return Header{}, fmt.Errorf("%w: line 1 is not JSON: %s", ErrBadHeader, clip(line, 80))
	}
	var hl headerLine
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&hl); err != nil {
		return Header{}, fmt.Errorf("%w: line 1: %w", ErrBadHeader, err)
	}
	if hl.Format != Format {
		return Header{}, fmt.Errorf("%w: line 1: format %q, want %q", ErrBadHeader, hl.Format, Format)
	}
	if hl.Version != Version {
		return Header{}, fmt.Errorf("%w: line 1: version %d, this build reads version %d", ErrBadHeader, hl.Version, Version)
	}
	fields, err := parseFieldTypes(hl.Fields)
	if err != nil {
		return Header{}, fmt.Errorf("%w: line 1: fields: %w", ErrBadHeader, err)
	}
	return Header{HostVersion: hl.HostVersion, Scenario: hl.Scenario, ScenarioHash: hl.ScenarioHash, Clock: hl.Clock,
		Seed: hl.Seed, Recording: hl.Recording, Fields: fields}, nil
}

// parseFieldTypes reads the header's "fields" object, in order: each event field's name and
// type. The common fields are marked required, the others optional, as Columns gives them.
func parseFieldTypes(raw json.RawMessage) ([]Field, error) {
	if len(raw) == 0 {
		return nil, errors.New("missing: a version 5 header lists every event field and its type")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not an object of field names and types")
	}
	common := map[string]bool{}
	for _, c := range commonFields {
		common[c.Name] = true
	}
	var out []Field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := tok.(string)
		var typ string
		if err := dec.Decode(&typ); err != nil {
			return nil, fmt.Errorf("%s: the type must be a string: %w", name, err)
		}
		out = append(out, Field{Name: name, Type: FieldType(typ), Optional: !common[name]})
	}
	return out, nil
}
