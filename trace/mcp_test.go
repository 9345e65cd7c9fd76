package trace

import (
	"bytes"
	"strings"
	"testing"
)

func TestMCPServer(t *testing.T) {
	var out bytes.Buffer
	w, err := NewWriter(&out, testHeader)
	if err != nil {
		t.Fatal(err)
	}
	w.MCPServer(2, "kv", "start", 1, "stdio", "")
	w.MCPServer(9, "kv", "exit", 1, "stdio", "exit status 3")
	w.MCPServer(10, "kv", "restart", 2, "stdio", "exit status 3")
	w.MCPServer(12, "kv", "stop", 2, "stdio", "no agent holds a lease")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")[1:]
	want := []string{
		`{"tick":2,"seq":1,"agent":0,"name":"","kind":"mcp_server","server":"kv","event":"start","session":1,"transport":"stdio","reason":""}`,
		`{"tick":9,"seq":2,"agent":0,"name":"","kind":"mcp_server","server":"kv","event":"exit","session":1,"transport":"stdio","reason":"exit status 3"}`,
		`{"tick":10,"seq":3,"agent":0,"name":"","kind":"mcp_server","server":"kv","event":"restart","session":2,"transport":"stdio","reason":"exit status 3"}`,
		`{"tick":12,"seq":4,"agent":0,"name":"","kind":"mcp_server","server":"kv","event":"stop","session":2,"transport":"stdio","reason":"no agent holds a lease"}`,
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d events, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i, lines[i], want[i])
		}
	}
	var nilWriter *Writer
	nilWriter.MCPServer(1, "kv", "start", 1, "stdio", "") // a disabled trace ignores it
}
