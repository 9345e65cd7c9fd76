package state

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func newDir(t *testing.T) (*Dir, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run")
	d, err := Create(path, Meta{Host: "test", Scenario: "s", ScenarioHash: "h", Launch: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, path
}

// TestCreateOpen: a created directory opens with its description; a second Create is refused, a
// second Open while one is open is busy, and a folder without state.db is not a state directory.
func TestCreateOpen(t *testing.T) {
	d, path := newDir(t)
	if _, err := Create(path, Meta{}); !errors.Is(err, ErrExists) {
		t.Errorf("a second Create: %v, want ErrExists", err)
	}
	if _, _, err := Open(path); !errors.Is(err, ErrBusy) {
		t.Errorf("Open while open: %v, want ErrBusy", err)
	}
	d.Close()
	d2, m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	if m.Format != Format || m.Version != Version || m.Status != StatusRunning || m.Scenario != "s" || m.Started.IsZero() {
		t.Errorf("meta %+v", m)
	}
	if _, _, err := Open(t.TempDir()); !errors.Is(err, ErrNotState) {
		t.Errorf("Open of an empty folder: %v, want ErrNotState", err)
	}
}

// TestCreateInterrupted: a host killed inside Create, before the run's description was written,
// leaves no state.db, only the database under its temporary name (here one made and left without
// a description, and an empty one, as a kill right after the file was made leaves it): the folder
// is no state directory (resume says so), and the next Create takes it.
func TestCreateInterrupted(t *testing.T) {
	for name, leftover := range map[string]func(t *testing.T, path string){
		"undescribed": func(t *testing.T, path string) {
			d, err := open(path, newDBFile, nil)
			if err != nil {
				t.Fatal(err)
			}
			d.Close()
		},
		"empty": func(t *testing.T, path string) {
			if err := os.WriteFile(filepath.Join(path, newDBFile), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			path := t.TempDir()
			leftover(t, path)
			if _, _, err := Open(path); !errors.Is(err, ErrNotState) {
				t.Fatalf("Open after an interrupted Create: %v, want ErrNotState", err)
			}
			d, err := Create(path, Meta{Scenario: "again"})
			if err != nil {
				t.Fatalf("Create after an interrupted one: %v", err)
			}
			d.Close()
			d, m, err := Open(path)
			if err != nil || m.Scenario != "again" {
				t.Fatalf("Open: %v, scenario %q", err, m.Scenario)
			}
			d.Close()
			if _, err := os.Lstat(filepath.Join(path, newDBFile)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the temporary database is still there: %v", err)
			}
		})
	}
}

// TestCommitAndEffects: intents and results are journaled, a commit records the boundary and
// drops the effects it names, and what is left reads back.
func TestCommitAndEffects(t *testing.T) {
	d, _ := newDir(t)
	if _, ok, err := d.LastCommit(); ok || err != nil {
		t.Fatalf("a fresh directory has a commit (%v, %v)", ok, err)
	}
	if err := d.PutEffects([]KeyedEffect{{"a", Effect{Tick: 3}}, {"b", Effect{Tick: 3}}, {"c", Effect{Tick: 3}}}); err != nil {
		t.Fatal(err)
	}
	if err := d.PutEffects([]KeyedEffect{{"b", Effect{Tick: 3, Done: true, Result: []byte(`{"ok":true}`)}}}); err != nil {
		t.Fatal(err)
	}
	if err := d.Commit(Commit{Ticks: 4, TraceBytes: 10, RecordingBytes: 20, Phases: map[string]int{"entering": 2}}, []string{"a"}); err != nil {
		t.Fatal(err)
	}
	c, ok, err := d.LastCommit()
	if err != nil || !ok || c.Ticks != 4 || c.TraceBytes != 10 || c.RecordingBytes != 20 || c.Phases["entering"] != 2 {
		t.Errorf("commit %+v %v %v", c, ok, err)
	}
	eff, err := d.Effects()
	if err != nil {
		t.Fatal(err)
	}
	if len(eff) != 2 || eff["b"].Done != true || string(eff["b"].Result) != `{"ok":true}` || eff["c"].Done || eff["c"].Tick != 3 {
		t.Errorf("effects %+v", eff)
	}
}

// TestAppender: a fresh appender writes; one over committed bytes checks the bytes given again
// against them, writes nothing until they are caught up, then appends; a difference is
// ErrDiverged naming the byte and line, and the file keeps its committed part.
func TestAppender(t *testing.T) {
	d, path := newDir(t)
	a, err := d.Appender("f", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Write([]byte("one\ntwo\nthr")); err != nil {
		t.Fatal(err)
	}
	a.Close()
	// Committed: "one\ntwo\n" (8 bytes); "thr" was written after the commit.
	a, err = d.Appender("f", 8)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"on", "e\ntw", "o\nthree\n"} {
		if _, err := a.Write([]byte(p)); err != nil {
			t.Fatalf("write %q: %v", p, err)
		}
	}
	if !a.Caught() || a.Len() != 14 {
		t.Errorf("caught %v, len %d", a.Caught(), a.Len())
	}
	a.Close()
	if got, _ := os.ReadFile(filepath.Join(path, "f")); string(got) != "one\ntwo\nthree\n" {
		t.Errorf("file %q", got)
	}
	a, err = d.Appender("f", 14)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, err = a.Write([]byte("one\ntwo\nthrEE\n"))
	if !errors.Is(err, ErrDiverged) || !strings.Contains(err.Error(), "differs at byte 11 (line 3)") {
		t.Errorf("a diverging rewrite: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(path, "f")); string(got) != "one\ntwo\nthree\n" {
		t.Errorf("the diverging rewrite changed the file: %q", got)
	}
	if _, err := d.Appender("f", 100); !errors.Is(err, ErrNotState) {
		t.Errorf("an appender past the file's end: %v", err)
	}
}

// BenchmarkCommit is the world's pause at a commit: the trace's and the recording's new bytes
// (64 KiB and 16 KiB, a busy tick's) synced, and the commit's transaction, dropping 100 filed
// effects.
func BenchmarkCommit(b *testing.B) {
	path := filepath.Join(b.TempDir(), "run")
	d, err := Create(path, Meta{Host: "bench", Launch: []byte(`{}`)})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	tr, err := d.Appender(TraceFile, 0)
	if err != nil {
		b.Fatal(err)
	}
	rec, err := d.Appender(RecordingFile, 0)
	if err != nil {
		b.Fatal(err)
	}
	traceBytes, recBytes := make([]byte, 64<<10), make([]byte, 16<<10)
	filed := make([]string, 100)
	for i := range filed {
		filed[i] = "tool\x00agent\x00call-" + strings.Repeat("x", i%7)
	}
	tick := uint64(0)
	for b.Loop() {
		tick++
		if _, err := tr.Write(traceBytes); err != nil {
			b.Fatal(err)
		}
		if _, err := rec.Write(recBytes); err != nil {
			b.Fatal(err)
		}
		if err := tr.Sync(); err != nil {
			b.Fatal(err)
		}
		if err := rec.Sync(); err != nil {
			b.Fatal(err)
		}
		if err := d.Commit(Commit{Ticks: tick, TraceBytes: tr.Len(), RecordingBytes: rec.Len()}, filed); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPutEffects is one group of intents written and synced: 1, 8 and 64 at once.
func BenchmarkPutEffects(b *testing.B) {
	for _, n := range []int{1, 8, 64} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			d, err := Create(filepath.Join(b.TempDir(), "run"), Meta{Host: "bench", Launch: []byte(`{}`)})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			group := make([]KeyedEffect, n)
			i := 0
			for b.Loop() {
				for k := range group {
					i++
					group[k] = KeyedEffect{Key: "tool\x00agent-" + strconv.Itoa(i) + "\x00c1", Effect: Effect{Tick: uint64(i)}}
				}
				if err := d.PutEffects(group); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
