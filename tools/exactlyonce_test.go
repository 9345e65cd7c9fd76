package tools

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// crashJournal is an EffectRecorder that keeps what a call journals and can stop the call's
// goroutine where a SIGKILL of the host would cut it off: once its intent is journaled
// ("intent"), or between the temporary file's write and its rename ("write").
type crashJournal struct {
	expects []Expectation
	crashAt string
}

func (j *crashJournal) Expect(x Expectation) error {
	j.expects = append(j.expects, x)
	if j.crashAt == "intent" {
		runtime.Goexit()
	}
	return nil
}

func (j *crashJournal) Applying() {
	if j.crashAt == "write" {
		runtime.Goexit()
	}
}

// runCut runs tool on its own goroutine under journal j and reports whether the call returned
// (false: j cut it off), with its result.
func runCut(t *testing.T, tool Tool, ec *ExecContext, args string, j *crashJournal) (string, bool) {
	t.Helper()
	ec.Journal = j
	defer func() { ec.Journal = nil }()
	var out string
	returned := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, err := run(t, tool, ec, args)
		returned = true
		if err != nil {
			out = err.Error()
		} else {
			out = res.Content
		}
	}()
	<-done
	return out, returned
}

// TestExactlyOnceOutcomes is the resume's three answers for each file tool, from what the target
// holds when the host comes back: the call happened (the journaled result is the one the call
// returned), it did not (cut off once journaled, or between the temporary file's write and the
// rename: the target is as it was, the temporary file is removed, and running the call now gives
// the uninterrupted result and content), or something else changed the target (unknown: the
// answer is "interrupted").
func TestExactlyOnceOutcomes(t *testing.T) {
	type op struct {
		name    string
		tool    Tool
		initial map[string]string
		args    string
		target  string
	}
	ops := []op{
		{"write_file new", WriteFile{}, nil, `{"path":"notes/a.md","content":"# A\n"}`, "notes/a.md"},
		{"write_file replace", WriteFile{}, map[string]string{"a.md": "old\n"}, `{"path":"a.md","content":"new\n"}`, "a.md"},
		{"edit_file", EditFile{}, map[string]string{"a.md": "one two\n"}, `{"path":"a.md","old_string":"two","new_string":"three"}`, "a.md"},
	}
	for _, o := range ops {
		// The uninterrupted call, without a journal: its result and the file it leaves.
		ref, refDir := newWorkdirEC(t)
		writeFiles(t, refDir, o.initial)
		wantResult := mustRun(t, o.tool, ref, o.args)
		wantContent := readBack(t, filepath.Join(refDir, o.target))

		for _, c := range []struct {
			crashAt, change string
			want            EffectOutcome
		}{
			{"", "", EffectHappened},
			{"intent", "", EffectNotHappened},
			{"write", "", EffectNotHappened},
			{"intent", "someone else's\n", EffectUnknown},
			{"", "someone else's\n", EffectUnknown},
		} {
			t.Run(o.name+"/"+c.crashAt+"/"+c.want.String(), func(t *testing.T) {
				ec, dir := newWorkdirEC(t)
				writeFiles(t, dir, o.initial)
				j := &crashJournal{crashAt: c.crashAt}
				got, returned := runCut(t, o.tool, ec, o.args, j)
				if returned != (c.crashAt == "") || len(j.expects) != 1 {
					t.Fatalf("returned %v (%q), %d expectations journaled", returned, got, len(j.expects))
				}
				x := j.expects[0]
				if x.Result != wantResult || x.Target != o.target {
					t.Fatalf("journaled %+v, want the result %q and the target %q", x, wantResult, o.target)
				}
				if returned && got != wantResult {
					t.Fatalf("result %q, want %q", got, wantResult)
				}
				if c.crashAt == "write" {
					if _, err := os.Lstat(filepath.Join(dir, x.Temp)); err != nil {
						t.Fatalf("cut off mid-write, the temporary file %s is not there: %v", x.Temp, err)
					}
				}
				if c.change != "" {
					writeFiles(t, dir, map[string]string{o.target: c.change})
				}
				if outcome := CheckEffect(dir, x); outcome != c.want {
					t.Fatalf("CheckEffect: %s, want %s", outcome, c.want)
				}
				if x.Temp != "" {
					if _, err := os.Lstat(filepath.Join(dir, x.Temp)); !errors.Is(err, os.ErrNotExist) {
						t.Fatalf("the temporary file is still there after the check: %v", err)
					}
				}
				if c.want == EffectNotHappened {
					// Run now, as the resume does: the uninterrupted result and content.
					if got := mustRun(t, o.tool, ec, o.args); got != wantResult {
						t.Fatalf("run again: %q, want %q", got, wantResult)
					}
				}
				if c.want != EffectUnknown {
					if got := readBack(t, filepath.Join(dir, o.target)); got != wantContent {
						t.Fatalf("the file holds %q, want %q", got, wantContent)
					}
				}
				entries, _ := os.ReadDir(filepath.Join(dir, filepath.Dir(o.target)))
				for _, e := range entries {
					if strings.HasPrefix(e.Name(), ".warren-") {
						t.Fatalf("a temporary file is left: %s", e.Name())
					}
				}
			})
		}
	}
}

// TestExactlyOnceThroughALink: a write to a symbolic link inside the workdir goes to its target,
// in place, as it always did (a rename would replace the link): it journals no temporary file,
// and the check reads through the link.
func TestExactlyOnceThroughALink(t *testing.T) {
	ec, dir := newWorkdirEC(t)
	writeFiles(t, dir, map[string]string{"real.md": "old"})
	if err := os.Symlink("real.md", filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	j := &crashJournal{}
	if got, _ := runCut(t, WriteFile{}, ec, `{"path":"link.md","content":"new"}`, j); got != `Wrote 3 bytes to "link.md" (replaced the previous content)` {
		t.Fatalf("result %q", got)
	}
	if info, err := os.Lstat(filepath.Join(dir, "link.md")); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("link.md is no longer a link: %v %v", info, err)
	}
	if got := readBack(t, filepath.Join(dir, "real.md")); got != "new" {
		t.Fatalf("real.md holds %q", got)
	}
	if x := j.expects[0]; x.Temp != "" || CheckEffect(dir, x) != EffectHappened {
		t.Fatalf("journaled %+v, checked %s", x, CheckEffect(dir, x))
	}
}

// TestCheckEffectRemovesOnlyItsOwnTemp: the journal is input a person can edit; a Temp that is
// not a name the file tools make is never removed, and a Target out of the workdir reads as
// unknown.
func TestCheckEffectRemovesOnlyItsOwnTemp(t *testing.T) {
	_, dir := newWorkdirEC(t)
	writeFiles(t, dir, map[string]string{"keep.md": "precious", "a.md": "x"})
	x := Expectation{Target: "a.md", Next: ContentHash([]byte("x")), Temp: "keep.md"}
	if got := CheckEffect(dir, x); got != EffectHappened {
		t.Fatalf("CheckEffect: %s", got)
	}
	if got := readBack(t, filepath.Join(dir, "keep.md")); got != "precious" {
		t.Fatalf("keep.md: %q", got)
	}
	x = Expectation{Target: "../outside.md", Next: ContentHash(nil)}
	if got := CheckEffect(dir, x); got != EffectUnknown {
		t.Fatalf("a target out of the workdir: %s, want unknown", got)
	}
	// A workdir not made yet holds no file: an expectation of a new file did not happen.
	x = Expectation{Target: "new.md", Next: ContentHash([]byte("n"))}
	if got := CheckEffect(filepath.Join(dir, "missing"), x); got != EffectNotHappened {
		t.Fatalf("no workdir: %s, want not happened", got)
	}
}

// TestFileToolsRefuseALinkedPlanFile: while a plan is drafted, write_file and edit_file, like the
// shell, refuse a plan file that is a symbolic or hard link to another workdir file, which keeps
// its content.
func TestFileToolsRefuseALinkedPlanFile(t *testing.T) {
	for _, link := range []struct {
		name string
		make func(workdir string) error
	}{
		{"symbolic link", func(w string) error { return os.Symlink("main.go", filepath.Join(w, "PLAN.md")) }},
		{"hard link", func(w string) error { return os.Link(filepath.Join(w, "main.go"), filepath.Join(w, "PLAN.md")) }},
	} {
		for _, call := range []struct {
			tool Tool
			args string
		}{
			{WriteFile{}, `{"path":"PLAN.md","content":"plan"}`},
			{EditFile{}, `{"path":"PLAN.md","old_string":"package","new_string":"plan"}`},
		} {
			t.Run(link.name+"/"+call.tool.Spec().Name, func(t *testing.T) {
				ec, dir := newWorkdirEC(t)
				writeFiles(t, dir, map[string]string{"main.go": "package main\n"})
				if err := link.make(dir); err != nil {
					t.Fatal(err)
				}
				ec.PlanFile = "PLAN.md"
				_, err := run(t, call.tool, ec, call.args)
				wantError(t, err, ErrPlanFileNotPlain, link.name)
				if got := readBack(t, filepath.Join(dir, "main.go")); got != "package main\n" {
					t.Fatalf("main.go is now %q", got)
				}
			})
		}
	}
	// A plain plan file is written.
	ec, dir := newWorkdirEC(t)
	ec.PlanFile = "PLAN.md"
	mustRun(t, WriteFile{}, ec, `{"path":"PLAN.md","content":"1. read"}`)
	mustRun(t, EditFile{}, ec, `{"path":"PLAN.md","old_string":"read","new_string":"write"}`)
	if got := readBack(t, filepath.Join(dir, "PLAN.md")); got != "1. write" {
		t.Fatalf("PLAN.md: %q", got)
	}
}
