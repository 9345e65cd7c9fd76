package mcp_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/warrenhq/warren/mcp"
)

// TestReplayedSessionReconnects: a resumed run's replayed events leave session 3 live but
// detached; the next call starts a process for it under number 3 with no event, and the last
// release stops it with session 3's stop event, as the run before the crash would have.
func TestReplayedSessionReconnects(t *testing.T) {
	m := newManager(t, mcp.Options{}, stdioConfig(t, "kv"))
	m.Lease("kv")
	m.Replayed("kv", mcp.EventStart, 1)
	m.Replayed("kv", mcp.EventExit, 1)
	m.Replayed("kv", mcp.EventRestart, 2)
	m.Replayed("kv", mcp.EventStop, 2)
	m.Replayed("kv", mcp.EventStart, 3)
	if st := m.Stats("kv"); st.Pid != 0 || st.Starts != 0 {
		t.Fatalf("a replayed event started a process: %+v", st)
	}
	res := call(t, toolOf(m, "kv", "echo"), `{"text":"x"}`)
	mustOK(t, res)
	if res.Notes[0].Text != "kv/echo session 3" {
		t.Errorf("the reconnected call's note: %+v", res.Notes[0])
	}
	if got := m.Drain(); len(got) != 0 {
		t.Errorf("the reconnect wrote events: %+v", got)
	}
	m.Release("kv")
	want := []string{"kv:stop:3:no agent holds a lease"}
	if got := eventKinds(m.Drain()); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events = %q, want %q", got, want)
	}
	// The next start after the stop is session 4, a start as any.
	m.Lease("kv")
	if res := call(t, toolOf(m, "kv", "echo"), `{"text":"y"}`); res.Notes[0].Text != "kv/echo session 4" {
		t.Errorf("after the stop: %+v", res.Notes[0])
	}
	if got := eventKinds(m.Drain()); fmt.Sprint(got) != fmt.Sprint([]string{"kv:start:4:"}) {
		t.Errorf("events = %q", got)
	}
}

// TestDetachedSessionStops: a detached session nobody called still stops with its own events:
// when its last lease goes, and at the world's end.
func TestDetachedSessionStops(t *testing.T) {
	m := newManager(t, mcp.Options{}, stdioConfig(t, "kv"))
	m.Lease("kv")
	m.Replayed("kv", mcp.EventStart, 5)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{"kv:stop:5:world ended"}
	if got := eventKinds(m.Drain()); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events = %q, want %q", got, want)
	}
}

// TestDataFolderOutlivesTheProcess: a stdio server gets a data folder of its own under the
// Manager's data root (WARREN_MCP_DATA); the demo's kv store kept there with --persist survives
// its process being killed, where the in-memory one does not.
func TestDataFolderOutlivesTheProcess(t *testing.T) {
	for _, persist := range []bool{true, false} {
		t.Run(fmt.Sprint("persist=", persist), func(t *testing.T) {
			cfg := stdioConfig(t, "kv")
			if persist {
				cfg.Args = append(cfg.Args, "--persist")
			}
			m := newManager(t, mcp.Options{}, cfg)
			root := t.TempDir()
			m.SetDataRoot(root)
			mustOK(t, call(t, toolOf(m, "kv", "kv_set"), `{"key":"k","value":"kept"}`))
			if !m.Crash("kv") {
				t.Fatal("no live session to crash")
			}
			res := call(t, toolOf(m, "kv", "kv_get"), `{"key":"k"}`)
			if persist && (res.IsError || res.Content != "kept") || !persist && !res.IsError {
				t.Errorf("after the restart: %+v", res)
			}
			if _, err := os.Stat(filepath.Join(root, "kv", "kv.jsonl")); (err == nil) != persist {
				t.Errorf("the store file: %v", err)
			}
		})
	}
}

// TestImageRestoresSessionsDetached: a manager's image holds each server's session numbers,
// leases and the session live then; a fresh manager restored from it carries the live session on
// detached, as a replayed resume does: the next call starts a process under its number with no
// event, and the last release stops it with its own stop event. Events not yet drained make the
// image wait (ErrImage).
func TestImageRestoresSessionsDetached(t *testing.T) {
	m := newManager(t, mcp.Options{}, stdioConfig(t, "kv"))
	m.Lease("kv")
	mustOK(t, call(t, toolOf(m, "kv", "echo"), `{"text":"x"}`))
	if _, err := m.Image(); !errors.Is(err, mcp.ErrImage) {
		t.Fatalf("Image with the start event not drained = %v, want ErrImage", err)
	}
	m.Drain()
	img, err := m.Image()
	if err != nil {
		t.Fatal(err)
	}
	if len(img) != 1 || img[0].Live != 1 || img[0].Sessions != 1 || img[0].Leases != 1 || !img[0].Leased {
		t.Fatalf("image %+v, want session 1 live with one lease", img)
	}
	back := newManager(t, mcp.Options{}, stdioConfig(t, "kv"))
	if err := back.Restore(img); err != nil {
		t.Fatal(err)
	}
	if err := back.Restore(img); !errors.Is(err, mcp.ErrImage) {
		t.Fatalf("a second Restore = %v, want ErrImage", err)
	}
	if res := call(t, toolOf(back, "kv", "echo"), `{"text":"y"}`); res.Notes[0].Text != "kv/echo session 1" {
		t.Errorf("the restored session's call: %+v", res.Notes[0])
	}
	if got := back.Drain(); len(got) != 0 {
		t.Errorf("the reconnect wrote events: %+v", got)
	}
	back.Release("kv")
	want := []string{"kv:stop:1:no agent holds a lease"}
	if got := eventKinds(back.Drain()); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events = %q, want %q", got, want)
	}
}
