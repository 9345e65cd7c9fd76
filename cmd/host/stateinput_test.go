package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/state"
)

// outsideFiles is every file and folder of tmp outside the state directory (skip), with what
// would show a write: its content's hash, its size, its mode and its modification time.
func outsideFiles(t *testing.T, tmp, skip string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(tmp, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == skip {
			return filepath.SkipDir
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		sum := ""
		if info.Mode().IsRegular() {
			raw, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum = fmt.Sprintf("%x", sha256.Sum256(raw))
		}
		if info.IsDir() {
			// A folder's size and time change as the state directory inside it is remade; what
			// it holds is walked.
			out[p] = info.Mode().String()
			return nil
		}
		out[p] = fmt.Sprintf("%s %d %s %s", info.Mode(), info.Size(), info.ModTime().Format(time.RFC3339Nano), sum)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// copyStateTree copies the folder src to dst (made anew), links as links.
func copyStateTree(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.RemoveAll(dst); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case info.IsDir():
			return os.MkdirAll(to, info.Mode().Perm())
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, raw, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// editLaunch changes a key of the run's launch (the JSON state.db's meta keeps it in).
func editLaunch(t *testing.T, dir, key string, value any) {
	t.Helper()
	editMeta(t, dir, func(m *state.Meta) {
		var launch map[string]json.RawMessage
		if err := json.Unmarshal(m.Launch, &launch); err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(value)
		launch[key] = raw
		m.Launch, _ = json.Marshal(launch)
	})
}

// editHeader changes a key of the recording's header (line 1 of recording.jsonl) and the
// committed lengths that count it, as someone who edits the directory with care would.
func editHeader(t *testing.T, dir, key string, value any) {
	t.Helper()
	p := filepath.Join(dir, state.RecordingFile)
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	line, rest, _ := bytes.Cut(raw, []byte("\n"))
	var h map[string]json.RawMessage
	if err := json.Unmarshal(line, &h); err != nil {
		t.Fatal(err)
	}
	v, _ := json.Marshal(value)
	h[key] = v
	edited, _ := json.Marshal(h)
	delta := int64(len(edited) - len(line))
	if err := os.WriteFile(p, append(append(edited, '\n'), rest...), 0o644); err != nil {
		t.Fatal(err)
	}
	editEntry(t, dir, "meta", []byte("commit"), func(c *state.Commit) { c.RecordingBytes += delta })
}

// TestResumeRefusesEditedPaths is issue 31's "state directories are input too", as an attack:
// a run killed with its state in tmp/state, whose directory is then edited (state.db's trace and
// work root, the recording's header, a snapshot's index entry) to name tmp/victim/precious.log,
// a path climbing out of the directory, or one elsewhere, or given links planted to lead out of
// it. Every resume is refused with exit 2 and an error naming the key and the value, and
// nothing outside the state directory changes: precious.log keeps its content and modification
// time, and no file appears beside it. The unedited directory then resumes.
func TestResumeRefusesEditedPaths(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "state")
	victim := filepath.Join(tmp, "victim")
	precious := filepath.Join(victim, "precious.log")
	if err := os.MkdirAll(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(precious, []byte(strings.Repeat("precious bytes\n", 4000)), 0o644); err != nil {
		t.Fatal(err)
	}
	past := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(precious, past, past); err != nil {
		t.Fatal(err)
	}
	scenario := filepath.Join("cmd", "host", "testdata", "state", "stricter.toml")
	if code, out, errOut := stateRun(t, "run", scenario, "--state", dir, "--snapshot-every", "1", "--crash-after-tick", "3"); code != -int(syscall.SIGKILL) {
		t.Fatalf("exit %d, want killed\n%s\n%s", code, out, errOut)
	}
	info, err := warren.InspectState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Snapshots) == 0 {
		t.Fatal("the killed run took no snapshot")
	}
	last := info.Snapshots[0]
	pristine := filepath.Join(t.TempDir(), "pristine")
	copyStateTree(t, dir, pristine)
	before := outsideFiles(t, tmp, dir)

	for _, c := range []struct {
		name  string
		edit  func()
		flags []string
		want  []string
	}{
		{"state.db trace climbing out", func() { editMeta(t, dir, func(m *state.Meta) { m.Trace = "../victim/precious.log" }) }, nil,
			[]string{`state.db meta trace is "../victim/precious.log" in ` + dir + `: a relative path there may only be "trace.jsonl"`}},
		{"state.db trace elsewhere", func() { editMeta(t, dir, func(m *state.Meta) { m.Trace = precious }) }, nil,
			[]string{"state.db meta trace is " + precious + ", outside the state directory " + dir, "add --trace " + precious}},
		{"state.db trace elsewhere, another --trace given", func() { editMeta(t, dir, func(m *state.Meta) { m.Trace = precious }) },
			[]string{"--trace", filepath.Join(tmp, "mine.jsonl")}, []string{"--trace " + filepath.Join(tmp, "mine.jsonl") + " given, but state.db meta trace in " + dir + " is " + precious}},
		{"state.db trace another file of the directory", func() { editMeta(t, dir, func(m *state.Meta) { m.Trace = "state.db" }) }, nil,
			[]string{`state.db meta trace is "state.db"`}},
		{"state.db work root climbing out", func() { editLaunch(t, dir, "work_root", "../victim") }, nil,
			[]string{`state.db meta launch work_root is "../victim" in ` + dir}},
		{"state.db work root elsewhere", func() { editLaunch(t, dir, "work_root", victim) }, nil,
			[]string{"state.db meta launch work_root is " + victim + ", outside the state directory", "add --workdir " + victim}},
		{"recording header trace_file", func() { editHeader(t, dir, "trace_file", "../victim/precious.log") }, nil,
			[]string{`recording.jsonl line 1 (the header) trace_file is "../victim/precious.log", but state.db names the trace ` + filepath.Join(dir, "trace.jsonl")}},
		{"recording header recording", func() { editHeader(t, dir, "recording", "../victim/precious.log") }, nil,
			[]string{`recording.jsonl line 1 (the header) recording is "../victim/precious.log"`}},
		{"snapshot index file", func() {
			editSnapshot(t, dir, last.Done, func(s *state.Snapshot) { s.File = "../../victim/precious.log" })
		}, nil, []string{fmt.Sprintf(`state.db snapshots[%d] file is "../../victim/precious.log"; the file of that snapshot can only be %q`, last.Done, state.SnapshotFile(last.Done))}},
		{"a link planted for the work root", func() {
			if err := os.RemoveAll(filepath.Join(dir, "work")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(victim, filepath.Join(dir, "work")); err != nil {
				t.Fatal(err)
			}
		}, nil, []string{"the work root work in " + dir}},
		{"a link planted for the trace", func() {
			if err := os.Remove(filepath.Join(dir, "trace.jsonl")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("../victim/precious.log", filepath.Join(dir, "trace.jsonl")); err != nil {
				t.Fatal(err)
			}
		}, nil, []string{"trace: state directory: openat trace.jsonl: path escapes from parent"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			copyStateTree(t, pristine, dir)
			c.edit()
			code, out, errOut := stateRun(t, append([]string{"resume", dir, "--no-progress"}, c.flags...)...)
			if code != 2 || !strings.Contains(errOut, "host: resume "+dir+": ") || !strings.Contains(errOut, "the state directory names a path a resume may not use") && c.name != "a link planted for the trace" {
				t.Errorf("exit %d, want 2 with the refusal\n%s\n%s", code, out, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr does not say %q:\n%s", w, errOut)
				}
			}
			after := outsideFiles(t, tmp, dir)
			for p, was := range before {
				if after[p] != was {
					t.Errorf("%s changed: %s, was %s", p, after[p], was)
				}
			}
			for p := range after {
				if _, ok := before[p]; !ok {
					t.Errorf("the refused resume made %s, outside the state directory", p)
				}
			}
		})
	}
	copyStateTree(t, pristine, dir)
	if code, out, errOut := stateRun(t, "resume", dir, "--no-progress", "--scenario", scenario); code != 0 {
		t.Fatalf("the unedited directory's resume exited %d\n%s\n%s", code, out, errOut)
	}
}

// TestResumeOutsidePaths: a run given its trace and its workdir root outside its state
// directory resumes only when both are given again, the same: without them, or with others, it
// is refused with exit 2 saying what to add, and nothing is written; so is a resume pinned to
// another scenario (--scenario).
func TestResumeOutsidePaths(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "state")
	tr := filepath.Join(tmp, "out", "trace.jsonl")
	work := filepath.Join(tmp, "work")
	if err := os.MkdirAll(filepath.Dir(tr), 0o755); err != nil {
		t.Fatal(err)
	}
	scenario := filepath.Join("cmd", "host", "testdata", "state", "stricter.toml")
	if code, out, errOut := stateRun(t, "run", scenario, "--state", dir, "--trace", tr, "--workdir", work, "--crash-after-tick", "3"); code != -int(syscall.SIGKILL) {
		t.Fatalf("exit %d, want killed\n%s\n%s", code, out, errOut)
	}
	code, out, errOut := stateRun(t, "state", "inspect", dir)
	if code != 0 || !strings.Contains(out, "trace        "+tr+"\n") {
		t.Fatalf("state inspect exited %d:\n%s%s", code, out, errOut)
	}
	traceBefore, err := os.ReadFile(tr)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(tmp, "other.jsonl")
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{nil, "add --trace " + tr},
		{[]string{"--trace", tr}, "add --workdir " + work},
		{[]string{"--trace", other, "--workdir", work}, "--trace " + other + " given, but state.db meta trace in " + dir + " is " + tr},
		{[]string{"--trace", tr, "--workdir", tmp}, "--workdir " + tmp + " given, but state.db meta launch work_root in " + dir + " is " + work},
		{[]string{"--trace", tr, "--workdir", work, "--scenario", filepath.Join("cmd", "host", "testdata", "state", "guarded.toml")}, "--scenario cmd/host/testdata/state/guarded.toml given, but the run in " + dir + " is of "},
	} {
		code, out, errOut := stateRun(t, append([]string{"resume", dir, "--no-progress"}, c.flags...)...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("resume %v: exit %d, want 2 and %q\n%s%s", c.flags, code, c.want, out, errOut)
		}
		if got, _ := os.ReadFile(tr); !bytes.Equal(got, traceBefore) {
			t.Errorf("resume %v: a refused resume changed the trace", c.flags)
		}
		if _, err := os.Stat(other); err == nil {
			t.Errorf("resume %v: a refused resume made %s", c.flags, other)
		}
	}
	if code, out, errOut := stateRun(t, "resume", dir, "--no-progress", "--trace", tr, "--workdir", work); code != 0 {
		t.Fatalf("the resume given both again exited %d\n%s\n%s", code, out, errOut)
	}
	got, err := os.ReadFile(tr)
	if err != nil || !bytes.HasPrefix(got, traceBefore[:bytes.LastIndexByte(traceBefore[:len(traceBefore)-1], '\n')]) || !bytes.Contains(got, []byte(`"status":"finished"`)) {
		t.Errorf("the resumed trace %s does not go on from the killed run's to its end (%v)", tr, err)
	}
	if _, err := os.Stat(filepath.Join(work, "agents", "agents-0", "open.md")); err != nil {
		t.Errorf("the agent's workdir under --workdir: %v", err)
	}
}

// TestResumeOfDamagedStateDB: host resume of a state directory whose state.db had bytes of its
// pages overwritten (a seeded choice of page, place and bytes, in place, 40 times) ends with an
// exit code and a message, never a panic or a fault: bbolt trusts its pages, and one forged page
// made it read past its memory map, a fatal fault that killed the host before the check.
func TestResumeOfDamagedStateDB(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if code, out, errOut := stateRun(t, "run", filepath.Join("scenarios", "examples", "quickstart.toml"), "--agents", "10", "--state", dir, "--state-sync", "process", "--no-progress", "--crash-after-tick", "2"); code != -int(syscall.SIGKILL) {
		t.Fatalf("exit %d, want killed\n%s\n%s", code, out, errOut)
	}
	pristine := filepath.Join(t.TempDir(), "pristine")
	copyStateTree(t, dir, pristine)
	db, err := os.ReadFile(filepath.Join(pristine, state.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	var pages []int // the pages that hold anything
	for at := 0; at+4096 <= len(db); at += 4096 {
		if bytes.ContainsFunc(db[at:at+4096], func(r rune) bool { return r != 0 }) {
			pages = append(pages, at)
		}
	}
	rng := rand.New(rand.NewPCG(31, 7))
	damaged := 0
	for trial := range 40 {
		copyStateTree(t, pristine, dir)
		forged := bytes.Clone(db)
		page := pages[rng.IntN(len(pages))]
		span := 64 // a page's header and first elements, or anywhere in it
		if rng.IntN(2) == 0 {
			span = 4096
		}
		for range 1 + rng.IntN(8) {
			forged[page+rng.IntN(span)] = byte(rng.IntN(256))
		}
		if err := os.WriteFile(filepath.Join(dir, state.DBFile), forged, 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := stateRun(t, "resume", dir)
		for _, crash := range []string{"panic:", "fatal error", "goroutine "} {
			if strings.Contains(errOut, crash) {
				t.Fatalf("trial %d (page at %d): the resume crashed (exit %d):\n%.1500s", trial, page, code, errOut)
			}
		}
		if code != 0 && code != 1 && code != exitBadInput {
			t.Errorf("trial %d: exit %d, want 0, 1 or 2\n%s\n%s", trial, code, out, errOut)
		}
		if strings.Contains(errOut, "is damaged") {
			damaged++
		}
	}
	if damaged == 0 {
		t.Error("no forged page was reported as damage: the walk checked nothing")
	}
}
