package mcp

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReplyWatcherBound: what the watcher hands mcp-go of a stdio server's lines over a 64-byte
// bound, whole or one byte at a time: a reply over it becomes an error reply to the same id and
// the session goes on; one with no id in its first 64 bytes, or running past 16 times the bound,
// breaks the session; a request from the server over it is dropped.
func TestReplyWatcherBound(t *testing.T) {
	const bound = 64
	good := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"
	long := strings.Repeat("x", 200)
	tooLarge := `{"jsonrpc":"2.0","id":7,"error":{"code":-32099,"message":"the server's reply was more than 64 bytes (max_reply_bytes) and was discarded"}}` + "\n"
	tests := []struct {
		name, stream, want string
		// broken is the start of the session's end reason, "" when it goes on.
		broken string
	}{
		{name: "under the bound", stream: good + good, want: good + good},
		{name: "a reply over the bound", stream: `{"jsonrpc":"2.0","id":7,"result":"` + long + `"}` + "\n" + good, want: tooLarge + good},
		{name: "a string id", stream: `{"id":"a\"b","result":"` + long + "\"}\n", want: strings.Replace(tooLarge, `"id":7`, `"id":"a\"b"`, 1)},
		{name: "the id after a nested value", stream: `{"result":{"a":[1,{"b":2}]},"id":7,"x":"` + long + "\"}\n", want: tooLarge},
		{name: "the id past the bound", stream: `{"jsonrpc":"2.0","result":"` + long + `","id":7}` + "\n" + good, broken: "reply of more than 64 bytes (max_reply_bytes) with no id"},
		{name: "a request from the server over the bound", stream: `{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":"` + long + `"}` + "\n" + good, want: good},
		{name: "an array over the bound", stream: `[` + strings.Repeat(`{"id":1},`, 20) + "{}]\n" + good, broken: "reply of more than 64 bytes (max_reply_bytes) with no id"},
		{name: "past 16 times the bound", stream: good + `{"id":7,"result":"` + strings.Repeat("x", 16*bound) + "\"}\n" + good, want: good, broken: "reply of more than 1024 bytes (16 times max_reply_bytes)"},
		{name: "malformed after a long one", stream: `{"id":7,"result":"` + long + "\"}\nnot json\n" + good, want: tooLarge, broken: malformedPrefix},
		{name: "a line cut by the end", stream: good + `{"id":7,"res`, want: good},
	}
	for _, tc := range tests {
		for _, split := range []bool{false, true} {
			name := tc.name
			var r io.Reader = strings.NewReader(tc.stream)
			if split {
				name += "/one byte at a time"
				r = iotest.OneByteReader(r)
			}
			t.Run(name, func(t *testing.T) {
				sess := newTestSession()
				sess.maxReply = bound
				w := &replyWatcher{r: r, session: sess, max: bound}
				passed, err := io.ReadAll(w)
				if err != nil {
					t.Fatal(err)
				}
				if string(passed) != tc.want {
					t.Errorf("passed\n%q\nwant\n%q", passed, tc.want)
				}
				if tc.broken == "" && sess.isEnded() || !strings.HasPrefix(sess.endReason, tc.broken) {
					t.Errorf("session ended %v (%q), want %q", sess.isEnded(), sess.endReason, tc.broken)
				}
			})
		}
	}
}

// FuzzReplyWatcher: whatever a server writes, the watcher hands mcp-go only complete lines, each
// well formed and within the bound (or the short error reply that stands for one that was not),
// and never panics.
func FuzzReplyWatcher(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"))
	f.Add([]byte(`{"id":7,"result":"` + strings.Repeat("x", 300) + "\"}\n{\"id\":2}\n"))
	f.Add([]byte(`{"result":"` + strings.Repeat("y", 100) + `","id":1}` + "\n"))
	f.Add([]byte(`{"id":{"a":1},"result":"` + strings.Repeat("z", 100) + "\"}\n"))
	f.Add([]byte(`{"id":"` + strings.Repeat("i", 100) + "\"}\n"))
	f.Add([]byte("garbage\n{}\n"))
	f.Add([]byte(strings.Repeat("x", 5000)))
	f.Fuzz(func(t *testing.T, stream []byte) {
		const bound = 64
		sess := newTestSession()
		sess.maxReply = bound
		w := &replyWatcher{r: iotest.HalfReader(bytes.NewReader(stream)), session: sess, max: bound}
		passed, err := io.ReadAll(w)
		if err != nil {
			t.Fatal(err)
		}
		if len(passed) > 0 && passed[len(passed)-1] != '\n' {
			t.Fatalf("a partial line was passed: %q", passed)
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(passed, []byte("\n")), []byte("\n")) {
			if !wellFormed(line) {
				t.Fatalf("passed a malformed line %q", line)
			}
			if len(line) > bound && !bytes.Contains(line, []byte(`"code":-32099`)) {
				t.Fatalf("passed a line of %d bytes over the bound: %q", len(line), line)
			}
		}
	})
}
