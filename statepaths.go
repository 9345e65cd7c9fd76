package warren

import (
	"fmt"
	"path/filepath"

	"github.com/warrenhq/warren/recording"
	"github.com/warrenhq/warren/state"
)

// resumePlaces are where a resume writes, as confineResume checked them: the trace and the
// workdirs' root, each the directory's own (opened through its root) or a place outside it the
// caller named again.
type resumePlaces struct {
	trace, work state.Place
}

// confineResume checks the paths the directory's run description names for the resume to write
// to, before anything is opened: a state directory is input, so each is the directory's own file
// or a place outside it that ro names again (state.Dir.Confine); the directory's own work root
// must be a folder of it, not a link planted to lead the agents' writes elsewhere.
func confineResume(d *state.Dir, meta state.Meta, launch stateLaunch, ro ResumeOptions) (resumePlaces, error) {
	var p resumePlaces
	var err error
	if p.trace, err = d.Confine("state.db meta trace", meta.Trace, state.TraceFile, "--trace", ro.Trace); err != nil {
		return p, err
	}
	if p.work, err = d.Confine("state.db meta launch work_root", launch.WorkRoot, state.WorkDir, "--workdir", ro.WorkRoot); err != nil {
		return p, err
	}
	if p.work.Inside() {
		if _, err := d.OwnDir("the work root", p.work.Rel); err != nil {
			return p, err
		}
	}
	if !p.trace.Inside() && traceInWorkRoot(p.trace.Abs, p.work.Abs) {
		return p, fmt.Errorf("%w: the trace %s lies inside the workdir root %s, where agents write", state.ErrUnsafePath, p.trace.Abs, p.work.Abs)
	}
	return p, nil
}

// traceInWorkRoot reports whether the trace at path lies under the work root (lexically).
func traceInWorkRoot(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && filepath.IsLocal(rel)
}

// checkResumeHeader checks that the committed recording's header, input like the rest of the
// directory, names the files the run description does: the recording itself, the trace where
// confineResume placed it, and the scenario the caller expects (ResumeOptions.Scenario) when it
// names one. h's paths are still as stored (relative to the directory).
func checkResumeHeader(d *state.Dir, h *recording.Header, places resumePlaces) error {
	const at = "recording.jsonl line 1 (the header)"
	if h.Recording != state.RecordingFile {
		return fmt.Errorf("%w: %s recording is %q; a state directory's recording names itself %q", state.ErrUnsafePath, at, h.Recording, state.RecordingFile)
	}
	want, err := filepath.Rel(d.Path(), places.trace.Abs)
	if err != nil {
		return err
	}
	if h.TraceFile != filepath.ToSlash(want) {
		return fmt.Errorf("%w: %s trace_file is %q, but state.db names the trace %s (%q from the directory)", state.ErrUnsafePath, at, h.TraceFile, places.trace.Abs, filepath.ToSlash(want))
	}
	return nil
}

// checkResumeScenario refuses a resume whose recorded scenario file (resolved) is not the one
// the caller named (ResumeOptions.Scenario, when set).
func checkResumeScenario(dir string, h *recording.Header, expect string) error {
	if expect == "" {
		return nil
	}
	want, err := filepath.Abs(expect)
	if err != nil {
		return err
	}
	if got := absPath(h.ScenarioFile); got != want {
		return fmt.Errorf("%w: --scenario %s given, but the run in %s is of %s (recording header scenario_file)", state.ErrUnsafePath, expect, dir, got)
	}
	return nil
}

// resolvedRoot is the work root as a run resolves it (workRoot: its links followed), which the
// workdirs a snapshot holds are under; as given when it does not exist yet.
func resolvedRoot(root string) string {
	if r, err := filepath.EvalSymlinks(root); err == nil {
		return r
	}
	return root
}
