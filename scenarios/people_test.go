package scenarios_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/operator"
	"github.com/warrenhq/warren/recording"
)

// answerAll answers every prompt of console as it opens, with answer(prompt), until ctx ends;
// the prompts it answered, in order, come back on the returned channel when it stops.
func answerAll(ctx context.Context, t *testing.T, console *warren.Console, answer func(operator.Prompt) string) <-chan []string {
	out := make(chan []string, 1)
	go func() {
		var answered []string
		defer func() { out <- answered }()
		seen := map[string]bool{}
		for {
			changed := console.Changed()
			for _, p := range console.Prompts() {
				if seen[p.CallID+p.Agent] {
					continue
				}
				seen[p.CallID+p.Agent] = true
				if err := console.Answer(p.Agent, p.CallID, answer(p), "tester"); err != nil {
					t.Errorf("answering %s's %s: %v", p.Agent, p.CallID, err)
				}
				answered = append(answered, p.Agent+" "+p.Tool)
			}
			select {
			case <-changed:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// peopleScenario loads the shipped people example.
func peopleScenario(t *testing.T) *warren.Scenario {
	t.Helper()
	sc, err := warren.Load(filepath.Join("examples", "people.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestPeopleAnswer: in a run with a console, the prompts no [[interactions]] entry answers wait
// for people (the world waits with its clock still when nothing else is left) and go on with
// what a person answered; the trace says who, and the recording replays the run byte for byte
// with nobody there.
func TestPeopleAnswer(t *testing.T) {
	console := warren.NewConsole(0)
	ctx, stop := context.WithCancel(t.Context())
	done := answerAll(ctx, t, console, func(p operator.Prompt) string {
		if p.Kind == "question" {
			return "casual"
		}
		return "once"
	})
	tr, tape := recordRun(t, peopleScenario(t), warren.Options{Console: console})
	stop()
	answered := <-done
	if len(answered) != 6 {
		t.Fatalf("answered %v, want 2 editors x (a question and two writes)", answered)
	}
	answers := events(t, tr, "answer")
	if len(answers) != 6 {
		t.Fatalf("%d answer events, want 6", len(answers))
	}
	for _, a := range answers {
		if a["by"] != "person:tester" || a["verdict"] != "allow" {
			t.Errorf("answer %v, want by person:tester, allowed", a)
		}
	}
	if !tape.Header.People || len(tape.Operators) != 6 {
		t.Fatalf("recording: people %v, %d operator entries, want 6", tape.Header.People, len(tape.Operators))
	}
	// Every write ran: the editors published.
	for _, r := range events(t, tr, "tool_result") {
		if r["tool"] == "write_file" && r["ok"] != true {
			t.Errorf("a write approved by a person failed: %v", r)
		}
	}
	if err := console.Answer("x", "y", "once", "late"); !errors.Is(err, operator.ErrEnded) {
		t.Errorf("an answer after the run: %v, want ErrEnded", err)
	}
	replayed, sum, err := replayRun(t, tape, "")
	if err != nil || !bytes.Equal(tr, replayed) {
		t.Fatalf("replay: %v\n%s", err, traceDiff(t, tr, replayed))
	}
	if sum.ByStatus[components.Done] != 22 || len(sum.Failures) != 0 {
		t.Errorf("replayed summary: %v done, failures %v", sum.ByStatus, sum.Failures)
	}
}

// TestPeopleRefuse: a bad answer is refused with what would be valid and leaves the prompt open;
// a denial refuses the write; a kill ends the agent and its prompts; a cancel stops a world that
// waits for people, at the tick it is applied, and all of it replays.
func TestPeopleRefuse(t *testing.T) {
	console := warren.NewConsole(0)
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	go func() {
		answered := map[string]bool{}
		approvals := 0 // editors-0's
		for ctx.Err() == nil {
			changed := console.Changed()
			for _, p := range console.Prompts() {
				switch {
				case answered[p.CallID+p.Agent]:
				case p.Kind == "question":
					if err := console.Answer(p.Agent, p.CallID, "sarcastic", "tester"); !errors.Is(err, operator.ErrBadAnswer) || !strings.Contains(err.Error(), "formal, casual") {
						t.Errorf("an answer outside the choices: %v", err)
					}
					if err := console.Answer(p.Agent, p.CallID, "formal", "tester"); err != nil {
						t.Error(err)
					}
				case p.Agent == "editors-0" && approvals == 0:
					approvals++
					if err := console.Answer(p.Agent, p.CallID, "always", "tester"); !errors.Is(err, operator.ErrBadAnswer) {
						t.Errorf("an approval answered %q: %v", "always", err)
					}
					if err := console.Answer(p.Agent, p.CallID, "deny", "tester"); err != nil {
						t.Error(err)
					}
				case p.Agent == "editors-0":
					// Its publishing write: left waiting, and the run cancelled.
					if err := console.Cancel("tester"); err != nil {
						t.Error(err)
					}
					return
				default: // editors-1's write: killed while it waits
					if err := console.Kill(p.Agent, "tester"); err != nil {
						t.Error(err)
					}
				}
				answered[p.CallID+p.Agent] = true
			}
			select {
			case <-changed:
			case <-ctx.Done():
			}
		}
	}()
	var trBuf, rec bytes.Buffer
	sum, err := warren.Run(t.Context(), peopleScenario(t), warren.Options{Console: console, Trace: &trBuf, Record: &rec, TraceFile: "run.jsonl", RecordFile: "run.rec.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	tr := trBuf.Bytes()
	if sum.Status != warren.RunInterrupted || !errors.Is(sum.Err, operator.ErrCancelled) {
		t.Fatalf("status %s (%v), want interrupted by a person's cancel", sum.Status, sum.Err)
	}
	kills := events(t, tr, "kill")
	if len(kills) != 1 || kills[0]["name"] != "editors-1" || kills[0]["killer_name"] != "person:tester" {
		t.Fatalf("kills %v, want editors-1 killed by person:tester", kills)
	}
	var denied bool
	for _, a := range events(t, tr, "answer") {
		if a["name"] == "editors-0" && a["tool"] == "write_file" && a["verdict"] == "deny" && a["by"] == "person:tester" {
			denied = true
		}
	}
	if !denied {
		t.Error("no denied write of editors-0 in the trace")
	}
	tape, err := recording.Read(bytes.NewReader(rec.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	replayed, _, err := replayRun(t, tape, "")
	if !errors.Is(err, operator.ErrCancelled) && err != nil {
		t.Fatalf("replay: %v", err)
	}
	if !bytes.Equal(tr, replayed) {
		t.Fatalf("the replay differs:\n%s", traceDiff(t, tr, replayed))
	}
}

// TestPeopleTimeout: a prompt nobody answers within the console's timeout is refused, and the
// timeout, a limit in wall time, is recorded like an answer: the replay refuses it at the same
// tick.
func TestPeopleTimeout(t *testing.T) {
	console := warren.NewConsole(20 * time.Millisecond)
	tr, tape := recordRun(t, peopleScenario(t), warren.Options{Console: console})
	answers := events(t, tr, "answer")
	if len(answers) == 0 {
		t.Fatal("no answer events")
	}
	for _, a := range answers {
		if a["by"] != "timeout" || a["verdict"] != "deny" {
			t.Errorf("answer %v, want refused by timeout", a)
		}
	}
	if len(tape.Operators) != len(answers) {
		t.Errorf("%d operator entries for %d timeouts", len(tape.Operators), len(answers))
	}
	replayed, _, err := replayRun(t, tape, "")
	if err != nil || !bytes.Equal(tr, replayed) {
		t.Fatalf("replay: %v\n%s", err, traceDiff(t, tr, replayed))
	}
}
