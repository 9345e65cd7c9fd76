package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ErrMalformed means a trace line is not what the format allows; the error names the
// line.
var ErrMalformed = errors.New("malformed trace")

// headerLine is the header's JSON shape.
type headerLine struct {
	Format       string `json:"format"`
	Version      int    `json:"version"`
	Scenario     string `json:"scenario"`
	ScenarioHash string `json:"scenario_hash"`
	Seed         uint64 `json:"seed"`
	Clock        string `json:"clock"`
}

// ReadAll reads a whole trace: its header and every event line (without the trailing
// newline), checking that each event is a JSON object. A header of another format or
// version is an error wrapping ErrBadHeader; a bad event line, one wrapping
// ErrMalformed that names the line.
func ReadAll(r io.Reader) (Header, []json.RawMessage, error) {
	h, _, events, err := readTrace(r)
	return h, events, err
}

// readTrace is ReadAll that also returns the raw header line, for diff context.
func readTrace(r io.Reader) (Header, []byte, []json.RawMessage, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	first, err := readLine(br)
	if err == io.EOF {
		return Header{}, nil, nil, fmt.Errorf("%w: empty input, want a header line", ErrBadHeader)
	}
	if err != nil {
		return Header{}, nil, nil, err
	}
	h, err := parseHeader(first)
	if err != nil {
		return Header{}, nil, nil, err
	}
	var events []json.RawMessage
	for line := 2; ; line++ {
		raw, err := readLine(br)
		if err == io.EOF {
			return h, first, events, nil
		}
		if err != nil {
			return Header{}, nil, nil, err
		}
		if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
			return Header{}, nil, nil, fmt.Errorf("%w: line %d is not a JSON object: %s", ErrMalformed, line, clip(raw, 80))
		}
		events = append(events, raw)
	}
}

// readLine returns the next line without its "\n" (a last line may lack one), or
// io.EOF when nothing is left.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadBytes('\n')
	if err == io.EOF && len(line) > 0 {
		return line, nil
	}
	if err != nil {
		return nil, err
	}
	return line[:len(line)-1], nil
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
	return Header{Scenario: hl.Scenario, ScenarioHash: hl.ScenarioHash, Clock: hl.Clock, Seed: hl.Seed}, nil
}
