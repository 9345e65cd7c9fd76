package resources

import (
	"encoding/json"
	"slices"
	"strconv"
)

// EffectJournal journals a run's side-effecting calls for a resume (host run --state): the
// intent of each before it runs, synced, so that a call whose intent is missing after a crash
// certainly never ran, and its result when it returns, so that a resume gives back a result the
// run got but had not filed yet instead of running the call again.
//
// Intent is called by the lane worker as the call is about to run and returns once the intent
// is on disk (the intents of the workers that ask at once share one synced transaction). Done is
// called by the worker once the call returned, after every Intent that succeeded, with a nil
// result when the result must not count (the run's own stop cut the call off); it does not wait
// for the disk. Filed is called on the world's goroutine once the call's result is in the
// recording.
//
// expect, given with the intent of an exactly-once tool's call (tools.ExactlyOnce), is what its
// effect will be, encoded (a tools.Expectation), kept for a resume to check; nil for the others.
// Applying is called by such a call between preparing its effect and making it visible (a
// durability test's kill switch sits there).
type EffectJournal interface {
	Intent(key string, tick uint64, expect []byte) error
	Done(key string, tick uint64, result []byte)
	Filed(key string)
	Applying()
	// Keep writes an entry that is no call (what calls in flight caused: MCP session events) and
	// returns once it is on disk, even while the host waits to be killed.
	Keep(key string, tick uint64, payload []byte) error
}

// Resume is what a resumed run (host resume) found of the run it goes on from: the effect journal
// of the calls that had started and not been filed at the last commit, and what it did with
// each, for the state directory's account of the resume.
type Resume struct {
	// Effects holds the journaled calls by key (ToolEffect, ModelEffect).
	Effects map[string]ResumedEffect
	// Retry reports whether a side-effecting tool may run again when its call was cut off
	// (retry_on_resume).
	Retry func(tool string) bool
	// Interrupted and Retried name the calls answered as interrupted and those run again;
	// Served counts the journaled results given back.
	Interrupted, Retried []string
	Served               int
}

// ResumedEffect is one journaled call.
type ResumedEffect struct {
	// Done is set when the call returned; Result is then what it returned.
	Done   bool
	Result json.RawMessage
	// Expect is what the call's effect was to be, when its tool journaled it (an exactly-once
	// tool's call): a resume checks it when the call had not returned.
	Expect json.RawMessage
}

// ResumeAction is what a resumed run does with a call its tape does not have.
type ResumeAction uint8

const (
	// RunLive: the call never ran (no intent was journaled), or changes nothing; run it.
	RunLive ResumeAction = iota
	// RunAgain: the call was running when the host stopped and its tool is retry_on_resume; run
	// it again (a resume note says so).
	RunAgain
	// ServeJournaled: the call returned before the crash; give back its journaled result.
	ServeJournaled
	// AnswerInterrupted: the call was running when the host stopped; it may or may not have
	// happened, and it is not run again.
	AnswerInterrupted
	// CheckEffect: the call was running when the host stopped, and its tool journaled what its
	// effect would be (the journaled expectation is returned): the caller looks at the target
	// and settles the call with Checked.
	CheckEffect
)

// Interrupted is what an agent is told of a side-effecting call that was running when its host
// stopped.
const Interrupted = "interrupted: the host stopped while this call was running, so it may or may not have happened; it was not run again"

// ToolEffect is the journal key of an agent's tool call.
func ToolEffect(agent, callID string) string { return "tool\x00" + agent + "\x00" + callID }

// ModelEffect is the journal key of an attempt at an agent's live model turn.
func ModelEffect(agent string, turn uint64, attempt uint32) string {
	return "model\x00" + agent + "\x00" + strconv.FormatUint(turn, 10) + "\x00" + strconv.FormatUint(uint64(attempt), 10)
}

// Kept is what the run before the resume journaled with the intents of the keys that match
// (MCP session events, leases.IsEffectKey), by key; nil for a nil Resume (not a resume).
func (r *Resume) Kept(match func(key string) bool) map[string]json.RawMessage {
	if r == nil {
		return nil
	}
	out := map[string]json.RawMessage{}
	for key, e := range r.Effects {
		if match(key) && len(e.Expect) > 0 {
			out[key] = e.Expect
		}
	}
	return out
}

// Decide says what to do with the journaled call key (what names it for the account;
// sideEffects says whether it may change anything, retry whether it may run again when the stop
// cut it off), and notes it for the resume's account. A nil Resume runs everything live.
func (r *Resume) Decide(key, what string, sideEffects, retry bool) (ResumeAction, json.RawMessage) {
	if r == nil {
		return RunLive, nil
	}
	e, ok := r.Effects[key]
	switch {
	case !ok:
		return RunLive, nil
	case e.Done:
		r.Served++
		return ServeJournaled, e.Result
	case !sideEffects:
		return RunLive, nil
	case len(e.Expect) > 0:
		return CheckEffect, e.Expect
	case retry:
		r.Retried = append(r.Retried, what)
		return RunAgain, nil
	}
	if !slices.Contains(r.Interrupted, what) {
		r.Interrupted = append(r.Interrupted, what)
	}
	return AnswerInterrupted, nil
}

// Checked settles a call Decide answered with CheckEffect, once the caller looked at its target,
// and notes it for the resume's account: happened, it is served its journaled result
// (ServeJournaled); unchanged (the target is as it was before the call), it never took effect and
// runs now (RunLive); neither, it is answered as interrupted (AnswerInterrupted).
func (r *Resume) Checked(what string, happened, unchanged bool) ResumeAction {
	switch {
	case happened:
		r.Served++
		return ServeJournaled
	case unchanged:
		return RunLive
	}
	if !slices.Contains(r.Interrupted, what) {
		r.Interrupted = append(r.Interrupted, what)
	}
	return AnswerInterrupted
}
