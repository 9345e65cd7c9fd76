package trace

import (
	"bytes"
	"strings"
	"testing"
)

func TestToolNote(t *testing.T) {
	var out bytes.Buffer
	w, err := NewWriter(&out, testHeader)
	if err != nil {
		t.Fatal(err)
	}
	a := AgentRef{ID: 3, Name: "writer-2"}
	w.ToolNote(4, a, "draft", "writer-2-t1-c0", "word_count", "read_file", "notes.md", true, "")
	w.ToolNote(4, a, "draft", "writer-2-t1-c0", "word_count", "http_get", "https://example.com/", false, "http_get is not allowed")
	w.ToolNote(4, a, "draft", "writer-2-t1-c0", "word_count", "log", strings.Repeat("x", MaxContentBytes+5), true, "")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")[1:]
	want := []string{
		`{"tick":4,"seq":1,"agent":3,"name":"writer-2","kind":"tool_note","stage":"draft","call_id":"writer-2-t1-c0","tool":"word_count","fn":"read_file","text":"notes.md","ok":true,"err":""}`,
		`{"tick":4,"seq":2,"agent":3,"name":"writer-2","kind":"tool_note","stage":"draft","call_id":"writer-2-t1-c0","tool":"word_count","fn":"http_get","text":"https://example.com/","ok":false,"err":"http_get is not allowed"}`,
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d:\n got %s\nwant %s", i, lines[i], w)
		}
	}
	if !strings.Contains(lines[2], "…[truncated 5 bytes]") {
		t.Errorf("a long log line is not truncated: %.120s…", lines[2])
	}
	var nilWriter *Writer
	nilWriter.ToolNote(1, a, "s", "c", "t", "log", "x", true, "") // a disabled trace ignores it
}
