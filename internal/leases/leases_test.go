package leases

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/warren/mcp"
	"github.com/warrenhq/warren/recording"
	"github.com/warrenhq/warren/trace"
)

// fakeServers records the calls leases makes; Drain hands over the queued events once, and Close
// queues one stop event per server it knows, as mcp.Manager leaves its stop events for a last
// Drain.
type fakeServers struct {
	calls    []string
	events   []mcp.Event
	closed   int
	closeErr error
	names    []string
}

func (f *fakeServers) Lease(server string)   { f.calls = append(f.calls, "lease "+server) }
func (f *fakeServers) Release(server string) { f.calls = append(f.calls, "release "+server) }

func (f *fakeServers) Drain() []mcp.Event {
	f.calls = append(f.calls, "drain")
	out := f.events
	f.events = nil
	return out
}

func (f *fakeServers) Replayed(server, kind string, session uint64) {
	f.calls = append(f.calls, "replayed "+kind+" "+server)
}
func (f *fakeServers) Crash(server string) bool {
	f.calls = append(f.calls, "crash "+server)
	f.events = append(f.events, mcp.Event{Server: server, Kind: mcp.EventExit, Session: 1, Transport: "stdio", Reason: "signal: killed"})
	return true
}

func (f *fakeServers) Close() error {
	f.calls = append(f.calls, "close")
	f.closed++
	for _, name := range f.names {
		f.events = append(f.events, mcp.Event{Server: name, Kind: mcp.EventStop, Session: 1, Transport: "stdio", Reason: "the world ended"})
	}
	return f.closeErr
}

var _ Servers = (*fakeServers)(nil)

// mcpLine is an mcp_server event as the trace holds it.
type mcpLine struct {
	Tick      uint64 `json:"tick"`
	Agent     uint64 `json:"agent"`
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Server    string `json:"server"`
	Event     string `json:"event"`
	Session   uint64 `json:"session"`
	Transport string `json:"transport"`
	Reason    string `json:"reason"`
}

// newTrace returns a trace writer on a buffer, and a function that closes it and reads its events
// back.
func newTrace(t *testing.T) (*trace.Writer, func() []mcpLine) {
	t.Helper()
	var buf bytes.Buffer
	tw, err := trace.NewWriter(&buf, trace.Header{Scenario: "leases", Clock: trace.ClockVirtual})
	if err != nil {
		t.Fatal(err)
	}
	return tw, func() []mcpLine {
		t.Helper()
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		_, raw, err := trace.ReadAll(&buf)
		if err != nil {
			t.Fatal(err)
		}
		lines := make([]mcpLine, len(raw))
		for i, r := range raw {
			if err := json.Unmarshal(r, &lines[i]); err != nil {
				t.Fatalf("event %d: %v: %s", i, err, r)
			}
		}
		return lines
	}
}

func TestLeaseAndRelease(t *testing.T) {
	for _, tc := range []struct {
		name   string
		names  []string
		agents int
		want   []string
	}{
		{name: "each server once per agent", names: []string{"kv", "search"}, agents: 3,
			want: []string{"lease kv", "lease kv", "lease kv", "lease search", "lease search", "lease search"}},
		{name: "one agent", names: []string{"kv"}, agents: 1, want: []string{"lease kv"}},
		{name: "no agents", names: []string{"kv"}, agents: 0},
		{name: "no servers", agents: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeServers{}
			New(f, nil).Lease(tc.names, tc.agents)
			if !slices.Equal(f.calls, tc.want) {
				t.Fatalf("Lease(%v, %d) made %q, want %q", tc.names, tc.agents, f.calls, tc.want)
			}
		})
	}
	t.Run("release gives one back per server", func(t *testing.T) {
		f := &fakeServers{}
		New(f, nil).Release([]string{"kv", "search"})
		if want := []string{"release kv", "release search"}; !slices.Equal(f.calls, want) {
			t.Fatalf("Release made %q, want %q", f.calls, want)
		}
	})
}

func TestWriteEvents(t *testing.T) {
	f := &fakeServers{events: []mcp.Event{
		{Server: "kv", Kind: mcp.EventStart, Session: 1, Transport: "stdio"},
		{Server: "kv", Kind: mcp.EventExit, Session: 1, Transport: "stdio", Reason: "exit status 3"},
		{Server: "search", Kind: mcp.EventStart, Session: 1, Transport: "http"},
	}}
	tw, read := newTrace(t)
	l := New(f, tw)
	if n := l.WriteEvents(4); n != 3 {
		t.Fatalf("WriteEvents = %d, want 3", n)
	}
	if n := l.WriteEvents(5); n != 0 {
		t.Fatalf("second WriteEvents = %d, want 0 (the events were drained)", n)
	}
	f.events = []mcp.Event{{Server: "kv", Kind: mcp.EventRestart, Session: 2, Transport: "stdio", Reason: "exit status 3"}}
	if n := l.WriteEvents(6); n != 1 {
		t.Fatalf("third WriteEvents = %d, want 1", n)
	}
	want := []mcpLine{
		{Tick: 4, Kind: trace.KindMCPServer, Server: "kv", Event: mcp.EventStart, Session: 1, Transport: "stdio"},
		{Tick: 4, Kind: trace.KindMCPServer, Server: "kv", Event: mcp.EventExit, Session: 1, Transport: "stdio", Reason: "exit status 3"},
		{Tick: 4, Kind: trace.KindMCPServer, Server: "search", Event: mcp.EventStart, Session: 1, Transport: "http"},
		{Tick: 6, Kind: trace.KindMCPServer, Server: "kv", Event: mcp.EventRestart, Session: 2, Transport: "stdio", Reason: "exit status 3"},
	}
	if got := read(); !slices.Equal(got, want) {
		t.Fatalf("trace holds\n%+v\nwant\n%+v", got, want)
	}
}

func TestWriteEventsWithoutATrace(t *testing.T) {
	f := &fakeServers{events: []mcp.Event{{Server: "kv", Kind: mcp.EventStart, Session: 1}}}
	l := New(f, nil)
	if n := l.WriteEvents(1); n != 1 {
		t.Fatalf("WriteEvents = %d, want 1 (events are drained and counted without a trace)", n)
	}
	if len(f.events) != 0 {
		t.Fatal("events left undrained")
	}
}

func TestClose(t *testing.T) {
	boom := errors.New("kv did not stop")
	for _, tc := range []struct {
		name string
		err  error
	}{
		{name: "clean", err: nil},
		{name: "a server fails to stop", err: boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeServers{names: []string{"kv", "search"}, closeErr: tc.err}
			tw, read := newTrace(t)
			l := New(f, tw)
			if err := l.Close(17); !errors.Is(err, tc.err) {
				t.Fatalf("Close = %v, want %v", err, tc.err)
			}
			if f.closed != 1 {
				t.Fatalf("servers closed %d times, want once", f.closed)
			}
			// The stop events Close leaves behind are drained after it, so they reach the trace.
			if want := []string{"close", "drain"}; !slices.Equal(f.calls, want) {
				t.Fatalf("calls %q, want %q", f.calls, want)
			}
			want := []mcpLine{
				{Tick: 17, Kind: trace.KindMCPServer, Server: "kv", Event: mcp.EventStop, Session: 1, Transport: "stdio", Reason: "the world ended"},
				{Tick: 17, Kind: trace.KindMCPServer, Server: "search", Event: mcp.EventStop, Session: 1, Transport: "stdio", Reason: "the world ended"},
			}
			if got := read(); !slices.Equal(got, want) {
				t.Fatalf("trace holds\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

// TestNoServers: a nil *Leases and leases of no servers are a world without MCP servers: every
// method is a no-op, and nothing reaches the trace.
func TestNoServers(t *testing.T) {
	tw, read := newTrace(t)
	for _, tc := range []struct {
		name string
		l    *Leases
	}{
		{name: "nil leases", l: nil},
		{name: "no servers", l: New(nil, tw)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.l.Lease([]string{"kv"}, 3)
			tc.l.Release([]string{"kv"})
			if n := tc.l.WriteEvents(1); n != 0 {
				t.Fatalf("WriteEvents = %d, want 0", n)
			}
			if err := tc.l.Close(2); err != nil {
				t.Fatalf("Close = %v, want nil", err)
			}
		})
	}
	if got := read(); len(got) != 0 {
		t.Fatalf("trace holds %+v, want nothing", got)
	}
}

// TestCrashNext: a crash asked for during a tick happens at the start of the next, before its
// events are drained, once per server however many faults fell on it; a replay kills nothing.
func TestCrashNext(t *testing.T) {
	f := &fakeServers{}
	l := New(f, nil)
	l.CrashNext("kv")
	l.CrashNext("kv")
	if len(f.calls) != 0 {
		t.Fatalf("crashed before the tick's start: %q", f.calls)
	}
	if n := l.WriteEvents(3); n != 1 || strings.Join(f.calls, ",") != "crash kv,drain" {
		t.Fatalf("%d events, calls %q", n, f.calls)
	}
	if l.WriteEvents(4); strings.Join(f.calls, ",") != "crash kv,drain,drain" {
		t.Fatalf("a crash must happen once: %q", f.calls)
	}
	replay := &fakeServers{}
	r := New(replay, nil)
	r.Record(nil, &recording.Tape{})
	r.CrashNext("kv")
	r.WriteEvents(1)
	if slices.Contains(replay.calls, "crash kv") {
		t.Fatalf("a replay crashed a server: %q", replay.calls)
	}
}

// fakeJournal records what the leases journal, in order.
type fakeJournal struct{ calls []string }

func (j *fakeJournal) Keep(key string, tick uint64, payload []byte) error {
	j.calls = append(j.calls, "keep "+strings.ReplaceAll(key, "\x00", "/")+" "+string(payload))
	return nil
}
func (j *fakeJournal) Filed(key string) {
	j.calls = append(j.calls, "filed "+strings.ReplaceAll(key, "\x00", "/"))
}

// fakeSource is an EventSource whose hook the test calls, as a session's goroutine would.
type fakeSource struct{ hook func(mcp.Event) }

func (f *fakeSource) OnEvent(hook func(mcp.Event)) { f.hook = hook }

// TestJournaledEvents: with a journal, an event is journaled as it happens (keyed by its
// identity, with the tick that will write it) and each pass's batch before its trace line, each
// filed once written; a resumed run writes at a pass the batch the run before it kept there, or
// else the events kept as they happened for it, instead of the sessions' own events, applying
// them to the sessions' state, and writes each event once.
func TestJournaledEvents(t *testing.T) {
	start := mcp.Event{Server: "kv", Kind: mcp.EventStart, Session: 1, Transport: "stdio"}
	const event = `{"server":"kv","event":"start","session":1,"transport":"stdio","reason":""}`
	const batch = "[" + event + "]"
	const happenedKey = "mcp/ev/kv/1/b"
	t.Run("journaled as it happens and as written", func(t *testing.T) {
		f, j, src := &fakeServers{}, &fakeJournal{}, &fakeSource{}
		tw, read := newTrace(t)
		l := New(f, tw)
		l.Journal(j, src, nil)
		l.WriteEvents(0)
		src.hook(start) // during tick 0's lane work
		f.events = []mcp.Event{start}
		l.WriteEvents(1)
		l.WriteEvents(2)
		want := []string{
			"keep " + happenedKey + ` {"tick":1,"event":` + event + "}",
			"filed " + happenedKey,
			"keep mcp/1/0 " + batch, "filed mcp/1/0",
		}
		if !slices.Equal(j.calls, want) {
			t.Fatalf("journal calls\n%q\nwant\n%q", j.calls, want)
		}
		if lines := read(); len(lines) != 1 || lines[0].Event != "start" || lines[0].Tick != 1 {
			t.Fatalf("trace %+v, want the start at tick 1", lines)
		}
	})
	resumed := func(t *testing.T, kept map[string]json.RawMessage, report []mcp.Event) ([]mcpLine, *fakeServers) {
		t.Helper()
		f := &fakeServers{events: report}
		tw, read := newTrace(t)
		l := New(f, tw)
		l.Journal(&fakeJournal{}, nil, kept)
		l.WriteEvents(1)
		f.events = []mcp.Event{start} // a later pass: the resumed run's own sessions see it again
		l.WriteEvents(2)
		return read(), f
	}
	for name, kept := range map[string]map[string]json.RawMessage{
		"a resumed pass writes the batch kept for it": {"mcp\x001\x000": json.RawMessage(batch)},
		"a resumed pass writes the events kept as they happened for it": {
			"mcp\x00ev\x00kv\x001\x00b": json.RawMessage(`{"tick":1,"event":` + event + "}"),
		},
	} {
		t.Run(name, func(t *testing.T) {
			// The sessions report an unrelated event at tick 1 (the resumed run's own view of it):
			// what was kept is what the run before the crash wrote there, and it stands.
			lines, f := resumed(t, kept, []mcp.Event{{Server: "kv", Kind: mcp.EventStop, Session: 7}})
			if len(lines) != 1 || lines[0].Event != "start" || lines[0].Session != 1 || lines[0].Tick != 1 {
				t.Fatalf("trace %+v, want only the kept start of session 1 at tick 1", lines)
			}
			if !slices.Contains(f.calls, "replayed start kv") {
				t.Errorf("server calls %q, want the kept start applied to the sessions", f.calls)
			}
		})
	}
	t.Run("keys", func(t *testing.T) {
		if !IsEffectKey(EffectKey(3, 1, true)) || !IsEffectKey(idOf("kv", mcp.EventExit, 2).key()) || IsEffectKey("tool\x00a\x00c") {
			t.Fatal("IsEffectKey does not tell the leases' keys from a call's")
		}
		if EffectKey(3, 1, true) == EffectKey(3, 1, false) || EffectKey(3, 1, false) == EffectKey(3, 0, false) {
			t.Fatal("EffectKey does not separate passes and Close's batch")
		}
		if idOf("kv", mcp.EventStart, 2) != idOf("kv", mcp.EventRestart, 2) || idOf("kv", mcp.EventStop, 2) == idOf("kv", mcp.EventStart, 2) {
			t.Fatal("an event's identity is not its server, session and whether it ends it")
		}
	})
}
