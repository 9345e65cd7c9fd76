package operator

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/tools"
)

func prompt(call string, kind gate.PromptKind, choices ...string) *gate.Prompt {
	return &gate.Prompt{CallID: call, Name: "a-" + call, Tool: "write_file", Kind: kind, Keys: []string{"write_file"},
		Question: tools.Question{Text: "which?", Choices: choices}}
}

// TestConsoleAnswers: what each kind of prompt takes, a second answer to one prompt, an answer
// to no prompt, and the commands in the order they came.
func TestConsoleAnswers(t *testing.T) {
	c := NewConsole(0)
	woken := 0
	c.SetWake(func() { woken++ })
	c.Opened(prompt("c1", gate.PromptApproval), 2, "g")
	c.Opened(prompt("c2", gate.PromptQuestion, "red", "blue"), 2, "g")
	c.Opened(prompt("c3", gate.PromptQuestion), 3, "g")
	for _, tc := range []struct {
		name, call, answer string
		want               error
	}{
		{"an approval takes a scope", "c1", "stage", nil},
		{"a second answer to the same prompt", "c1", "once", ErrNoPrompt},
		{"a call with no prompt", "c2x", "yes", ErrNoPrompt},
		{"a choice outside the offered ones", "c2", "green", ErrBadAnswer},
		{"an offered choice", "c2", "blue", nil},
		{"an empty reply", "c3", "  ", ErrBadAnswer},
		{"free text", "c3", "whatever you like", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := c.Answer("a-"+strings.TrimSuffix(tc.call, "x"), tc.call, tc.answer, "ann"); !errors.Is(err, tc.want) {
				t.Errorf("Answer(%s, %q) = %v, want %v", tc.call, tc.answer, err, tc.want)
			}
		})
	}
	c.Opened(prompt("c4", gate.PromptApproval), 4, "g")
	if err := c.Answer("a-c4", "c4", "always", ""); !errors.Is(err, ErrBadAnswer) {
		t.Errorf("an approval answered always: %v", err)
	}
	if err := c.Kill("a-c4", ""); err != nil {
		t.Fatal(err)
	}
	got := c.Take(nil)
	want := []Command{{Op: OpAnswer, Agent: "a-c1", CallID: "c1", Answer: "stage", By: "ann"}, {Op: OpAnswer, Agent: "a-c2", CallID: "c2", Answer: "blue", By: "ann"},
		{Op: OpAnswer, Agent: "a-c3", CallID: "c3", Answer: "whatever you like", By: "ann"}, {Op: OpKill, Agent: "a-c4", By: "person"}}
	if !slices.Equal(got, want) || woken != 4 {
		t.Fatalf("took %+v (woken %d), want %+v", got, woken, want)
	}
	if len(c.Take(nil)) != 0 {
		t.Error("Take twice gave the commands twice")
	}
	c.Closed(prompt("c1", gate.PromptApproval))
	if ps := c.Prompts(); len(ps) != 3 || ps[0].CallID != "c2" || ps[0].Choices[1] != "blue" || ps[0].Tick != 2 {
		t.Errorf("prompts %+v", ps)
	}
	c.End()
	for name, err := range map[string]error{"answer": c.Answer("a-c2", "c2", "red", ""), "kill": c.Kill("x", ""), "cancel": c.Cancel(""), "pause": c.Pause()} {
		if !errors.Is(err, ErrEnded) {
			t.Errorf("%s after the end: %v", name, err)
		}
	}
}

// TestConsoleTimeout: a prompt nobody answers in time becomes a timeout command; one answered or
// closed first does not.
func TestConsoleTimeout(t *testing.T) {
	c := NewConsole(10 * time.Millisecond)
	woke := make(chan struct{}, 4)
	c.SetWake(func() { woke <- struct{}{} })
	c.Opened(prompt("late", gate.PromptApproval), 1, "g")
	c.Opened(prompt("closed", gate.PromptApproval), 1, "g")
	c.Closed(prompt("closed", gate.PromptApproval))
	<-woke
	time.Sleep(30 * time.Millisecond) // the closed one's timer, had it run, would have fired by now
	if got := c.Take(nil); !slices.Equal(got, []Command{{Op: OpAnswer, Agent: "a-late", CallID: "late", By: gate.ByTimeout}}) {
		t.Fatalf("took %+v", got)
	}
}

// TestConsolePause: Hold blocks while paused, until Resume, a Cancel (which also queues the
// cancel) or the context's end.
func TestConsolePause(t *testing.T) {
	c := NewConsole(0)
	c.Hold(context.Background()) // not paused: returns at once
	if err := c.Pause(); err != nil || !c.Paused() {
		t.Fatal("not paused")
	}
	for name, release := range map[string]func(){
		"resume": func() { _ = c.Resume() },
		"cancel": func() { _ = c.Cancel("ann") },
	} {
		_ = c.Pause()
		held := make(chan struct{})
		go func() { c.Hold(context.Background()); close(held) }()
		select {
		case <-held:
			t.Fatalf("%s: Hold returned while paused", name)
		case <-time.After(20 * time.Millisecond):
		}
		release()
		<-held
	}
	if got := c.Take(nil); len(got) != 1 || got[0].Op != OpCancel {
		t.Errorf("took %+v, want the cancel", got)
	}
	_ = c.Pause()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c.Hold(ctx)
}
