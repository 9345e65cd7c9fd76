package serve

import (
	"fmt"
	"testing"
	"time"
)

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// TestEventLogFramesAndWakes: each event is kept as its Server-Sent Event with its seq; a waiting
// reader is woken at once by the wakeEvery-th event, by the timer after fewer, and by the end;
// past maxBytes the oldest events go and a reader behind them is told so.
func TestEventLogFramesAndWakes(t *testing.T) {
	l := newEventLog(1 << 20)
	_, _, grew, _, _ := l.read(0, 10)
	l.add([]byte(`{"kind":"spawn"}` + "\n"))
	if closed(grew) {
		t.Fatal("one event woke the reader at once: wake-ups are not coalesced")
	}
	select {
	case <-grew:
	case <-time.After(time.Minute):
		t.Fatal("the timer never woke the reader")
	}
	evs, next, grew, ended, behind := l.read(0, 10)
	if len(evs) != 1 || next != 1 || ended || behind {
		t.Fatalf("read %d events, next %d, ended %v, behind %v", len(evs), next, ended, behind)
	}
	if got, want := string(evs[0].frame), "id: 1\nevent: trace\ndata: {\"kind\":\"spawn\"}\n\n"; got != want {
		t.Fatalf("frame %q, want %q", got, want)
	}
	if got := string(evs[0].line()); got != `{"kind":"spawn"}` {
		t.Fatalf("line %q", got)
	}
	for i := range wakeEvery - 1 {
		l.add(fmt.Appendf(nil, `{"n":%d}`, i))
	}
	if closed(grew) {
		t.Fatal("woken before wakeEvery events")
	}
	l.add([]byte(`{"n":"last"}`))
	if !closed(grew) {
		t.Fatal("wakeEvery events did not wake the reader at once")
	}
	_, _, grew, _, _ = l.read(next, 0)
	l.end()
	if !closed(grew) {
		t.Fatal("the end did not wake the reader")
	}
	evs, next, _, ended, _ = l.read(next, 1000)
	if len(evs) != wakeEvery || next != wakeEvery+1 || !ended {
		t.Fatalf("after the end: %d events, next %d, ended %v", len(evs), next, ended)
	}
	l.wake() // a timer firing after the end does nothing

	small := newEventLog(100)
	for i := range 10 {
		small.add(fmt.Appendf(nil, `{"n":%d}`, i))
	}
	if first := small.firstKept(); first <= 1 || small.last() != 10 {
		t.Fatalf("kept %d to %d of 10 in 100 bytes", first, small.last())
	}
	if _, _, _, _, behind := small.read(0, 10); !behind {
		t.Fatal("a reader behind the dropped events was not told")
	}
}
