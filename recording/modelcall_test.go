package recording

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// providerArgs are tool call arguments as providers write them: compact (Go's encoders), with
// Python's spacing, indented over lines, with escapes left as the provider chose them, and a
// number in its own spelling.
var providerArgs = []string{
	`{"text":"item 1"}`,
	`{"text": "item 1"}`,
	"{\n  \"content\": \"x\\ty \\u00e9\",\n  \"path\": \"a.md\"\n}",
	`{ "n": 1.50e+2, "list": [ 1 , 2 ] }`,
	`{}`,
}

// TestModelCallsKeepProviderBytes: the arguments of a live model's calls come back from a
// recording byte for byte as the provider wrote them, through a recording file (Writer, Read) and
// through JSON (the effect journal's form), each on one line, with "args" compact for readers.
func TestModelCallsKeepProviderBytes(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Scenario: "s", Clock: "virtual"})
	if err != nil {
		t.Fatal(err)
	}
	turn := ModelTurn{Agent: "a-0", Model: "openai:live", Request: "sha256:x", Text: "t"}
	for i, a := range providerArgs {
		turn.Calls = append(turn.Calls, ModelCall{ID: "c" + string(rune('0'+i)), Name: "write_file", Args: json.RawMessage(a)})
	}
	w.Model(1, turn)
	if err := w.Close("finished", "fixed_point"); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(buf.Bytes(), []byte("\n")); n != 3 {
		t.Fatalf("the recording has %d lines, want 3 (header, entry, end):\n%s", n, buf.Bytes())
	}
	if !strings.Contains(buf.String(), `"args":{"text":"item 1"},"raw":"{\"text\": \"item 1\"}"`) ||
		strings.Count(buf.String(), `"raw":`) != 3 {
		t.Fatalf("want compact args, and raw for the three calls that are not compact:\n%s", buf.Bytes())
	}
	tape, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tape.Model(1, "a-0", 0, 1, "sha256:x")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var back ModelTurn
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	for i, a := range providerArgs {
		if string(got.Calls[i].Args) != a {
			t.Errorf("call %d read back as %s, want %s", i, got.Calls[i].Args, a)
		}
		if string(back.Calls[i].Args) != a {
			t.Errorf("call %d through JSON: %s, want %s", i, back.Calls[i].Args, a)
		}
	}
}

// TestModelCallRefusals: a tampered call is refused naming the line and the key.
func TestModelCallRefusals(t *testing.T) {
	head := `{"format":"warren-recording","version":2,"scenario":"s","scenario_file":"s.toml","scenario_hash":"h","clock":"virtual","seed":1,"launch":{}}` + "\n"
	entry := func(call string) string {
		return head + `{"kind":"model","tick":1,"agent":"a","turn":0,"request":"sha256:x","text":"","calls":[` + call + `]}` + "\n" +
			`{"kind":"end","entries":1,"status":"finished"}` + "\n"
	}
	for _, tc := range []struct{ name, call, want string }{
		{"raw of other arguments", `{"id":"c","name":"n","args":{"a":1},"raw":"{\"a\": 2}"}`, "line 2: calls: raw: not the arguments args holds"},
		{"raw already compact", `{"id":"c","name":"n","args":{"a":1},"raw":"{\"a\":1}"}`, "line 2: calls: raw: the arguments are already compact"},
		{"raw not a string", `{"id":"c","name":"n","args":{"a":1},"raw":{"a": 1}}`, "line 2: calls.raw: a JSON object, want a string"},
		{"no args", `{"id":"c","name":"n"}`, "line 2: calls: args: missing"},
		{"unknown key", `{"id":"c","name":"n","args":{},"argz":{}}`, `line 2: calls: unknown key "argz"; valid keys: args, id, name, raw`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(entry(tc.call)))
			if !errors.Is(err, ErrBadRecording) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrBadRecording with %q", err, tc.want)
			}
		})
	}
}

// TestReadsVersion1: a version 1 recording still reads; a version past this host's is refused
// saying which versions it reads.
func TestReadsVersion1(t *testing.T) {
	line := `{"format":"warren-recording","version":%d,"scenario":"s","scenario_file":"s.toml","scenario_hash":"h","clock":"virtual","seed":1,"launch":{}}` + "\n" +
		`{"kind":"model","tick":1,"agent":"a","turn":0,"request":"sha256:x","text":"","calls":[{"id":"c","name":"n","args":{"a":1}}]}` + "\n" +
		`{"kind":"end","entries":1,"status":"finished"}` + "\n"
	tape, err := Read(strings.NewReader(strings.Replace(line, "%d", "1", 1)))
	if err != nil || tape.Header.Version != 1 {
		t.Fatalf("a version 1 recording: %v", err)
	}
	if m, err := tape.Model(1, "a", 0, 1, "sha256:x"); err != nil || string(m.Calls[0].Args) != `{"a":1}` {
		t.Fatalf("its call: %+v, %v", m, err)
	}
	_, err = Read(strings.NewReader(strings.Replace(line, "%d", "3", 1)))
	if !errors.Is(err, ErrBadRecording) || !strings.Contains(err.Error(), `version 3; this host reads "warren-recording" versions 1 to 2`) {
		t.Fatalf("a version 3 recording: %v", err)
	}
}
