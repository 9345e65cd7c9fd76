package runview_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/warrenhq/warren/runview"
)

// field returns an entry's field, failing when it has none of that name.
func field(t *testing.T, e runview.Entry, name string) runview.Field {
	t.Helper()
	f, ok := e.Get(name)
	if !ok {
		t.Fatalf("%s entry %d has no %q", e.Kind, e.Seq, name)
	}
	return f
}

// TestTruncation checks that long values are cut to MaxContent with the marker and the count
// of bytes cut: a tool call's 10 KB args (fanout), a gate's reason (a value the log interns),
// a kill's cascade list, a multi-byte text cut on a character boundary, and the task, reason and
// prompt text kept outside the log.
func TestTruncation(t *testing.T) {
	t.Run("args", func(t *testing.T) {
		lines := golden(t, "fanout")
		var raw struct{ Args json.RawMessage }
		if err := json.Unmarshal(lines[4], &raw); err != nil {
			t.Fatal(err)
		}
		var args bytes.Buffer
		if err := json.Compact(&args, raw.Args); err != nil || args.Len() < 10000 {
			t.Fatalf("fixture: line 4 should be the 10 KB write_file call (%d bytes)", args.Len())
		}
		v := feed(t, runview.Options{MaxContent: 100, MaxEntries: 5000}, lines)
		d, _ := v.Agent("splitters-0")
		f := field(t, d.Log[3], "args")
		want := args.String()[:100] + fmt.Sprintf(" …[truncated %d bytes]", args.Len()-100)
		if f.Value != want || f.Cut != args.Len()-100 {
			t.Errorf("args %q (cut %d),\nwant %q", f.Value, f.Cut, want)
		}
	})
	t.Run("an interned reason", func(t *testing.T) {
		v := feed(t, runview.Options{MaxContent: 12}, golden(t, "gated"))
		d, _ := v.Agent("editors-0")
		const reason = "no layer sets ask_user_choice; its built-in default is allow"
		f := field(t, d.Log[3], "reason")
		if f.Value != reason[:12]+fmt.Sprintf(" …[truncated %d bytes]", len(reason)-12) || f.Cut != len(reason)-12 {
			t.Errorf("reason %q cut %d", f.Value, f.Cut)
		}
		if f := field(t, d.Log[3], "verdict"); f.Value != "allow" || f.Cut != 0 {
			t.Errorf("a short value was cut: %+v", f)
		}
		// A call id starts with the agent's name, which the log stores once for all its values.
		if f := field(t, d.Log[3], "call_id"); f.Value != "editors-0-t0 …[truncated 3 bytes]" || f.Cut != 3 {
			t.Errorf("call_id %+v", f)
		}
	})
	t.Run("a cascade", func(t *testing.T) {
		v := feed(t, runview.Options{MaxContent: 12}, golden(t, "kill_tree"))
		d, _ := v.Agent("root-0/1")
		var kill runview.Entry
		for _, e := range d.Log {
			if e.Kind == "kill" {
				kill = e
			}
		}
		f := field(t, kill, "cascade")
		if !reflect.DeepEqual(f.Value, []string{"root-0/1", "…[2 more]"}) || f.More != 2 {
			t.Errorf("cascade %#v more %d", f.Value, f.More)
		}
	})
	t.Run("multi-byte text and the state outside the log", func(t *testing.T) {
		text := strings.Repeat("é", 50) // 100 bytes
		b := newBuilder(t)
		b.event(0, 1, "a", "spawn", "group", "g", "index", 0, "blueprint", "bp", "model", "m", "task", text).
			event(0, 1, "a", "message", "sender", 0, "sender_name", "host", "via", "send", "text", text).
			event(0, 1, "a", "prompt", "stage", "s", "call_id", "c", "tool", "ask_user", "prompt", "question",
				"keys", []string{"ask_user"}, "text", text, "deadline", 9).
			event(1, 1, "a", "terminal", "status", "failed", "reason", text, "stage", "s")
		v := feed(t, runview.Options{MaxContent: 11}, b.lines[:4])
		wantText := strings.Repeat("é", 5) + " …[truncated 90 bytes]" // 11 bytes would split a character
		if p := v.Prompts(); len(p) != 1 || p[0].Text != wantText {
			t.Errorf("prompt text %q, want %q", p[0].Text, wantText)
		}
		v = feed(t, runview.Options{MaxContent: 11}, b.lines)
		d, _ := v.Agent("a")
		f := field(t, d.Log[1], "text")
		if f.Value != wantText || f.Cut != 90 || !utf8.ValidString(f.Value.(string)) {
			t.Errorf("text %q cut %d", f.Value, f.Cut)
		}
		if d.Task != wantText || d.Reason != wantText {
			t.Errorf("task %q reason %q, want %q", d.Task, d.Reason, wantText)
		}
	})
}

// TestMaxEntries checks that a log keeps the agent's last MaxEntries events, in seq order, and
// counts the ones it dropped.
func TestMaxEntries(t *testing.T) {
	lines := golden(t, "gated")
	var seqs []int64
	for _, e := range decodeAll(t, lines) {
		if e.str("name") == "editors-0" {
			seqs = append(seqs, e.num("seq"))
		}
	}
	for _, max := range []int{1, 2, 5, len(seqs) - 1, len(seqs), 1000} {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			v := feed(t, runview.Options{MaxEntries: max}, lines)
			d, _ := v.Agent("editors-0")
			keep := min(max, len(seqs))
			var got []int64
			for _, e := range d.Log {
				got = append(got, e.Seq)
			}
			if !reflect.DeepEqual(got, seqs[len(seqs)-keep:]) || d.LogDropped != int64(len(seqs)-keep) {
				t.Errorf("seqs %v dropped %d, want %v dropped %d", got, d.LogDropped, seqs[len(seqs)-keep:], len(seqs)-keep)
			}
			if last := d.Log[len(d.Log)-1]; last.Kind != "reap" || field(t, last, "model_turns").Value != int64(8) {
				t.Errorf("last entry %+v, want the reap with 8 model turns", last)
			}
		})
	}
}

// TestSeries checks the per-tick samples: one per tick with events, each the state at the end
// of its tick (gated, whose 17 ticks fit), and, past MaxSeries, halved resolution that keeps the
// last value of each merged pair, even spacing and the bound.
func TestSeries(t *testing.T) {
	t.Run("every tick", func(t *testing.T) {
		lines := golden(t, "gated")
		v := feed(t, runview.Options{}, lines)
		eventsBy := map[int64]int64{}
		var ticks []int64
		for _, e := range decodeAll(t, lines) {
			if len(ticks) == 0 || ticks[len(ticks)-1] != e.num("tick") {
				ticks = append(ticks, e.num("tick"))
			}
			eventsBy[e.num("tick")]++
		}
		s := v.Series()
		if len(s) != len(ticks) {
			t.Fatalf("%d samples, want %d (one per tick with events)", len(s), len(ticks))
		}
		var events int64
		for i, smp := range s {
			events += eventsBy[ticks[i]]
			sum := 0
			for _, n := range smp.Phases {
				sum += n
			}
			if smp.Tick != ticks[i] || smp.Events != events || sum != smp.Agents {
				t.Errorf("sample %d: %+v, want tick %d, %d events, phases adding up to agents", i, smp, ticks[i], events)
			}
		}
		c, last := v.Counts(), s[len(s)-1]
		if last.ModelTurns != c.ModelTurns || last.ToolCalls != c.ToolCalls || last.Agents != c.Agents ||
			last.Phases[len(last.Phases)-1] != c.Agents {
			t.Errorf("last sample %+v, counts %+v", last, c)
		}
	})
	for _, tt := range []struct {
		ticks, maxSeries int
		end              bool
	}{{100, 8, false}, {100, 8, true}, {1000, 7, true}, {5000, 2048, false}, {37, 2, true}, {5, 8, true}} {
		t.Run(fmt.Sprintf("%d ticks into %d points, end %v", tt.ticks, tt.maxSeries, tt.end), func(t *testing.T) {
			b := newBuilder(t).spawn(0, 1, "a", 0, "")
			for tick := range tt.ticks {
				b.event(int64(tick), 1, "a", "message", "sender", 0, "sender_name", "host", "via", "send", "text", "x")
			}
			if tt.end {
				last := int64(tt.ticks - 1)
				b.event(last, 0, "", "end", "status", "finished", "ticks", last+1, "agents", 1, "events", b.seq,
					"model_turns", 0, "tool_calls", 0, "tool_errors", 0)
			}
			s := feed(t, runview.Options{MaxSeries: tt.maxSeries}, b.lines).Series()
			if len(s) > tt.maxSeries || len(s) < tt.maxSeries/2 && tt.ticks > tt.maxSeries {
				t.Fatalf("%d samples for a bound of %d", len(s), tt.maxSeries)
			}
			for i, smp := range s {
				// Each tick t has one message, after the spawn at tick 0: the state at its end is
				// t+2 events (the end event adds one to the last tick).
				want := smp.Tick + 2
				if tt.end && i == len(s)-1 {
					want++
				}
				if smp.Events != want {
					t.Fatalf("sample %d (tick %d): %d events, want %d: a merged sample keeps its last tick's values",
						i, smp.Tick, smp.Events, want)
				}
				if i > 0 && smp.Tick <= s[i-1].Tick {
					t.Fatalf("ticks out of order: %d after %d", smp.Tick, s[i-1].Tick)
				}
			}
			if s[len(s)-1].Tick != int64(tt.ticks-1) {
				t.Errorf("the last sample is tick %d, want the last tick %d", s[len(s)-1].Tick, tt.ticks-1)
			}
			// All but the last two points (the partly filled one and the open tick's) are evenly spaced.
			for i := 2; i < len(s)-2; i++ {
				if d0, d := s[1].Tick-s[0].Tick, s[i].Tick-s[i-1].Tick; d != d0 {
					t.Fatalf("spacing %d at sample %d, %d at the start: %v", d, i, d0, s)
				}
			}
		})
	}
}
