package serve

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/warren"
)

var quickstartFile = filepath.Join("..", "scenarios", "examples", "quickstart.toml")

// smallSendBuffers makes every accepted connection's kernel send buffer small, so that a client
// that reads nothing stalls the server's writes after kilobytes, not after the megabytes loopback
// would otherwise buffer: the test then needs a small run, not a huge one.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(8 << 10)
	}
	return c, err
}

// TestSlowWatcherIsCutOff: a run submitted paused gets two watchers, one that reads its events as
// they come and one that sends its request and then reads nothing. Resumed, the run finishes
// while the slow one still has read nothing (the world never waits for a watcher); the reader
// got every event, numbered in order, and the end; the slow one was cut off once a write waited
// WatcherTimeout, and what reached it is a prefix of the same stream, without the end.
func TestSlowWatcherIsCutOff(t *testing.T) {
	const timeout = 2 * time.Second // long enough for a reader on a loaded machine, under -race
	s, c := startServerWith(t, Config{StateRoot: t.TempDir(), WatcherTimeout: timeout, Policy: examplesPolicy(t)},
		func(l net.Listener) net.Listener { return smallSendBuffers{l} })

	var info RunInfo
	sub := Submission{File: quickstartFile, Launch: Launch{Agents: 500, Paused: true}}
	if code := c.do(http.MethodPost, APIPrefix+"/runs", sub, &info); code != http.StatusCreated {
		t.Fatalf("submit: %d", code)
	}
	if info.State != StatePaused {
		t.Fatalf("a run submitted paused is %q", info.State)
	}
	run := APIPrefix + "/runs/" + info.ID

	// The slow watcher: a bare connection with a small receive buffer that never reads.
	slow, err := net.Dial("tcp", strings.TrimPrefix(c.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	_ = slow.(*net.TCPConn).SetReadBuffer(4 << 10)
	fmt.Fprintf(slow, "GET %s/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n\r\n", run, s.Token())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan []sseEvent, 1)
	go func() {
		var all []sseEvent
		for e := range c.stream(ctx, info.ID, 0) {
			all = append(all, e)
		}
		got <- all
	}()
	waitWatchers(t, c, run, 2)
	if code := c.do(http.MethodPost, run+"/resume", nil, nil); code != http.StatusAccepted {
		t.Fatalf("resume: %d", code)
	}
	waitEnd(t, s, info.ID)

	var events []sseEvent
	select {
	case events = <-got:
	case <-time.After(time.Minute):
		t.Fatal("the reading watcher's stream did not end")
	}
	trace, err := os.ReadFile(filepath.Join(s.cfg.StateRoot, "runs", info.ID, warren.RunTraceFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimRight(trace, "\n"), []byte("\n"))
	if len(events) != len(lines)+1 || events[0].event != "header" || events[len(events)-1].event != "end" {
		t.Fatalf("the reader got %d events, want the header, %d trace events and the end", len(events), len(lines)-1)
	}
	for i, e := range events[1 : len(events)-1] {
		if e.event != "trace" || e.id != strconv.Itoa(i+1) || e.data != string(lines[i+1]) {
			t.Fatalf("the reader's event %d is %s %s, not trace event %d as the run's trace has it", i+1, e.event, e.id, i+1)
		}
	}

	// Nobody watches any more: the slow watcher was cut off, and the run had ended before.
	waitWatchers(t, c, run, 0)
	_ = slow.SetReadDeadline(time.Now().Add(time.Minute))
	rest, err := io.ReadAll(bufio.NewReader(slow))
	if err != nil && !errors.Is(err, net.ErrClosed) && !isReset(err) {
		t.Fatalf("reading what reached the slow watcher: %v", err)
	}
	body := rest[bytes.Index(rest, []byte("\r\n\r\n"))+4:]
	if bytes.Contains(body, []byte("event: end")) {
		t.Fatal("the slow watcher got the end of the stream: it was not cut off")
	}
	if !bytes.Contains(body, []byte("event: header")) {
		t.Fatalf("the slow watcher got no header: %.200q", rest)
	}
	// What reached it is the stream's beginning: its last whole event is the trace's.
	var last string
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, "id: ") {
			last = l[4:]
		}
	}
	n, _ := strconv.Atoi(last)
	if n == 0 || n >= len(lines)-1 {
		t.Fatalf("the slow watcher got up to event %q of %d", last, len(lines)-1)
	}
	t.Logf("the slow watcher was cut off after %d of %d events (%d bytes)", n, len(lines)-1, len(rest))
}

// waitWatchers polls the run until n clients watch it.
func waitWatchers(t testing.TB, c *client, run string, n int) {
	t.Helper()
	var info RunInfo
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		c.do(http.MethodGet, run, nil, &info)
		if info.Watchers == n {
			return
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("%d watchers, want %d", info.Watchers, n)
		}
	}
}

// isReset reports whether err is the peer resetting the connection.
func isReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}

// TestAnswersAreGzipped: a JSON answer is gzipped for a client that accepts it and decodes to
// what a plain request gets; the live events never are.
func TestAnswersAreGzipped(t *testing.T) {
	s, c := startServer(t)
	var info RunInfo
	if code := c.do(http.MethodPost, APIPrefix+"/runs", Submission{File: quickstartFile, Launch: Launch{Agents: 50}}, &info); code != http.StatusCreated {
		t.Fatalf("submit: %d", code)
	}
	waitEnd(t, s, info.ID)
	get := func(path, encoding string) (*http.Response, []byte) {
		req, err := http.NewRequest(http.MethodGet, c.url+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+c.token)
		req.Header.Set("Accept-Encoding", encoding) // set by hand: the transport does not decode
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, body
	}
	metrics := APIPrefix + "/runs/" + info.ID + "/metrics"
	plainResp, plain := get(metrics, "identity")
	gzResp, zipped := get(metrics, "gzip")
	if plainResp.Header.Get("Content-Encoding") != "" || gzResp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding %q plain, %q with gzip accepted", plainResp.Header.Get("Content-Encoding"), gzResp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(zipped))
	if err != nil {
		t.Fatal(err)
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(unzipped, plain) {
		t.Fatalf("the gzipped metrics (%d bytes) do not decode to the plain ones (%d bytes): %v", len(zipped), len(plain), err)
	}
	if len(zipped)*2 > len(plain) {
		t.Errorf("gzip made %d bytes of %d", len(zipped), len(plain))
	}
	evResp, _ := get(APIPrefix+"/runs/"+info.ID+"/events", "gzip")
	if evResp.Header.Get("Content-Encoding") != "" || evResp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %q, %q", evResp.Header.Get("Content-Encoding"), evResp.Header.Get("Content-Type"))
	}
}
