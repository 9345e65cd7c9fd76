package mcp

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

func TestChildEnv(t *testing.T) {
	host := map[string]string{
		"PATH": "/usr/bin", "HOME": "/home/w", "LANG": "C.UTF-8",
		"WARREN_SECRET_TEST": "hunter2", "AWS_SECRET_ACCESS_KEY": "x",
	}
	lookup := func(key string) (string, bool) { v, ok := host[key]; return v, ok }
	tests := []struct {
		name  string
		extra map[string]string
		want  []string
	}{
		{name: "only the four inherited variables, TZ absent", want: []string{"HOME=/home/w", "LANG=C.UTF-8", "PATH=/usr/bin"}},
		{name: "entry env is added, sorted, and wins", extra: map[string]string{"ZED": "1", "API_TOKEN": "t", "PATH": "/opt/bin"},
			want: []string{"API_TOKEN=t", "HOME=/home/w", "LANG=C.UTF-8", "PATH=/opt/bin", "ZED=1"}},
		{name: "a secret passes only when named", extra: map[string]string{"WARREN_SECRET_TEST": "given"},
			want: []string{"HOME=/home/w", "LANG=C.UTF-8", "PATH=/usr/bin", "WARREN_SECRET_TEST=given"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := childEnv(lookup, tc.extra)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("env = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCut(t *testing.T) {
	tests := []struct {
		name, text string
		max        int
		want       string
	}{
		{name: "short text untouched", text: "abc", max: 3, want: "abc"},
		{name: "ascii cut", text: "abcdef", max: 4, want: "abcd\n[cut: the result was 6 bytes; max_result_bytes is 4]"},
		{name: "never splits a rune", text: "aé€", max: 4, want: "aé\n[cut: the result was 6 bytes; max_result_bytes is 4]"},
		{name: "rune at the edge", text: "€€", max: 2, want: "\n[cut: the result was 6 bytes; max_result_bytes is 2]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := cut(tc.text, tc.max); got != tc.want {
				t.Fatalf("cut = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestMalformedCorpus feeds every line of testdata/malformed through the reply watcher, after a
// valid message and split into one-byte reads, and expects the session broken with the line
// quoted, and the valid message passed through.
func TestMalformedCorpus(t *testing.T) {
	files, err := filepath.Glob("testdata/malformed/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("corpus: %v (%d files)", err, len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			bad, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			good := "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\r\n"
			sess := newTestSession()
			w := &replyWatcher{r: iotest.OneByteReader(strings.NewReader(good + string(bad) + good)), session: sess}
			passed, err := io.ReadAll(w)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(passed, []byte(good)) || bytes.Contains(passed[len(good):], []byte("\n")) {
				t.Fatalf("passed %q", passed)
			}
			if !sess.isEnded() || !strings.HasPrefix(sess.endReason, malformedPrefix) {
				t.Fatalf("session not broken: %q", sess.endReason)
			}
		})
	}
}

func TestWellFormedPassesReplies(t *testing.T) {
	stream := "{\"a\":1}\n[{\"b\":2}]\n\n  \n{\"big\":\"" + strings.Repeat("x", 100_000) + "\"}\n"
	sess := newTestSession()
	w := &replyWatcher{r: strings.NewReader(stream), session: sess}
	passed, err := io.ReadAll(w)
	if err != nil || string(passed) != stream || sess.isEnded() {
		t.Fatalf("err %v, passed %d of %d bytes, ended %v", err, len(passed), len(stream), sess.isEnded())
	}
}

// newTestSession is a session with no transport, for the reply watcher.
func newTestSession() *session {
	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan struct{})
	close(exited) // nothing to kill
	return &session{server: "kv", ctx: ctx, cancel: cancel, ended: make(chan struct{}), exited: exited}
}
