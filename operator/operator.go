// Package operator is how people act on a running world: they answer the prompts its scripted
// answers leave open, kill an agent or a subtree, pause, resume or cancel the run. A Console
// takes their commands from any goroutine (an HTTP handler, a terminal); the world's operator
// system takes them at the start of its next tick, applies them there, and records each in the
// run's recording and its trace, so a run people steered replays exactly: what a person did, and
// at which tick, is an input like a tool's result.
//
// A prompt that waits for a person has no deadline in ticks: the world goes on with its other
// agents, and when nothing else is left it waits (its virtual clock holds still) until a command
// comes. The Console's prompt timeout, in wall time, refuses a prompt nobody answered; that is an
// input too, recorded as a command settled "timeout".
package operator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/policy"
)

// Operations, a Command's Op.
const (
	// OpAnswer settles a prompt: a person's answer, or a timeout (By gate.ByTimeout).
	OpAnswer = "answer"
	// OpKill kills an agent and its live subtree, as its parent's kill_agent does.
	OpKill = "kill"
	// OpCancel stops the run at the tick it is applied in.
	OpCancel = "cancel"
)

// Errors a caller tests with errors.Is.
var (
	// ErrNoPrompt: no prompt of that call waits for a person (never opened, already answered, or
	// its agent ended).
	ErrNoPrompt = errors.New("no such prompt waits for an answer")
	// ErrBadAnswer: the answer does not fit the prompt (an approval takes deny, once, stage or
	// run; a question a non-empty reply).
	ErrBadAnswer = errors.New("invalid answer")
	// ErrEnded: the run ended; it takes no more commands.
	ErrEnded = errors.New("the run has ended")
	// ErrCancelled is the cause a run a person cancelled (OpCancel) ends with.
	ErrCancelled = errors.New("cancelled by a person")
)

// Command is one thing a person did, as the world applies and the recording keeps it.
type Command struct {
	// Op is OpAnswer, OpKill or OpCancel.
	Op string `json:"op"`
	// Agent is the agent whose prompt is answered (OpAnswer), or who to kill (OpKill).
	Agent string `json:"agent,omitempty"`
	// CallID and Answer: the prompt's call (call ids are unique per agent only) and its answer
	// (OpAnswer).
	CallID string `json:"call_id,omitempty"`
	Answer string `json:"answer,omitempty"`
	// By is the person who gave it, or gate.ByTimeout for a prompt nobody answered in time.
	By string `json:"by"`
}

// Prompt is a prompt waiting for a person, as people see it.
type Prompt struct {
	CallID string   `json:"call_id"`
	Agent  string   `json:"agent"`
	Group  string   `json:"group"`
	Tool   string   `json:"tool"`
	Kind   string   `json:"kind"`
	Text   string   `json:"text,omitempty"`
	Keys   []string `json:"keys,omitempty"`
	// Choices are a question's offered replies (any reply is taken when empty).
	Choices []string `json:"choices,omitempty"`
	// Tick is when it opened.
	Tick uint64 `json:"tick"`
}

// Console is a run's way in for people. Its methods are safe for concurrent use; Opened, Closed,
// Take and Hold are the world's (the operator system's) side.
type Console struct {
	mu      sync.Mutex
	queue   []Command
	open    []Prompt
	timers  map[promptKey]*time.Timer
	timeout time.Duration
	wake    func()
	paused  bool
	resumed chan struct{}
	ended   bool
	// changed is closed and replaced whenever the open prompts change (Changed).
	changed chan struct{}
}

var _ gate.People = (*Console)(nil)

// NewConsole returns a console whose prompts are refused when nobody answers them within
// timeout (0: they wait as long as the run does).
func NewConsole(timeout time.Duration) *Console {
	return &Console{timeout: timeout, timers: map[promptKey]*time.Timer{}, changed: make(chan struct{})}
}

// SetWake sets what wakes the world when a command arrives (the scheduler's Wake).
func (c *Console) SetWake(fn func()) {
	c.mu.Lock()
	c.wake = fn
	c.mu.Unlock()
}

// Answer answers the prompt of agent's call callID for person by. An approval takes "deny",
// "once", "stage" or "run"; a question takes its reply (one of its choices, when it offers some).
func (c *Console) Answer(agent, callID, answer, by string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return ErrEnded
	}
	i := slices.IndexFunc(c.open, func(p Prompt) bool { return p.Agent == agent && p.CallID == callID })
	if i < 0 {
		return fmt.Errorf("%w: %s's %q", ErrNoPrompt, agent, callID)
	}
	p := c.open[i]
	if err := checkAnswer(&p, answer); err != nil {
		return err
	}
	if slices.ContainsFunc(c.queue, func(q Command) bool { return q.Op == OpAnswer && q.Agent == agent && q.CallID == callID }) {
		return fmt.Errorf("%w: %s's %q was answered already", ErrNoPrompt, agent, callID)
	}
	c.push(Command{Op: OpAnswer, Agent: agent, CallID: callID, Answer: answer, By: person(by)})
	return nil
}

// checkAnswer says whether answer fits p.
func checkAnswer(p *Prompt, answer string) error {
	if p.Kind == gate.PromptApproval.String() {
		if answer == "deny" {
			return nil
		}
		if _, err := policy.ParseScope(answer); err != nil {
			return fmt.Errorf("%w: %q for an approval (valid: deny, once, stage, run)", ErrBadAnswer, answer)
		}
		return nil
	}
	switch {
	case strings.TrimSpace(answer) == "":
		return fmt.Errorf("%w: an empty reply to a question", ErrBadAnswer)
	case len(p.Choices) > 0 && !slices.Contains(p.Choices, answer):
		return fmt.Errorf("%w: %q (valid: %s)", ErrBadAnswer, answer, strings.Join(p.Choices, ", "))
	}
	return nil
}

// Kill kills agent and its live subtree at the world's next tick, as kill_agent does. An agent
// that does not exist or already ended by then is left alone.
func (c *Console) Kill(agent, by string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return ErrEnded
	}
	if agent == "" {
		return errors.New("kill: no agent named")
	}
	c.push(Command{Op: OpKill, Agent: agent, By: person(by)})
	return nil
}

// Cancel stops the run at the world's next tick (a paused run is resumed to stop).
func (c *Console) Cancel(by string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return ErrEnded
	}
	c.push(Command{Op: OpCancel, By: person(by)})
	c.resumeLocked()
	return nil
}

// Pause holds the world at its next tick until Resume (or Cancel). Nothing of it reaches the
// trace: a virtual clock does not move while the world is held.
func (c *Console) Pause() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return ErrEnded
	}
	if !c.paused {
		c.paused, c.resumed = true, make(chan struct{})
	}
	return nil
}

// Resume lets a paused world go on.
func (c *Console) Resume() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return ErrEnded
	}
	c.resumeLocked()
	return nil
}

func (c *Console) resumeLocked() {
	if c.paused {
		c.paused = false
		close(c.resumed)
	}
}

// Paused reports whether the world is held by Pause.
func (c *Console) Paused() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.paused
}

// Prompts returns the prompts waiting for a person, in the order they opened. The slice is the
// caller's.
func (c *Console) Prompts() []Prompt {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Prompt, len(c.open))
	for i, p := range c.open {
		p.Keys, p.Choices = slices.Clone(p.Keys), slices.Clone(p.Choices)
		out[i] = p
	}
	return out
}

// Changed returns a channel closed the next time the waiting prompts change: a watcher (a
// terminal asking a person) waits on it instead of polling.
func (c *Console) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// Opened implements gate.People: p waits for a person; its timeout, if any, starts now.
func (c *Console) Opened(p *gate.Prompt, tick uint64, group string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open = append(c.open, Prompt{CallID: p.CallID, Agent: p.Name, Group: group, Tool: p.Tool, Kind: p.Kind.String(),
		Text: p.Question.Text, Keys: slices.Clone(p.Keys), Choices: slices.Clone(p.Question.Choices), Tick: tick})
	if c.timeout > 0 && !c.ended {
		key := promptKey{p.Name, p.CallID}
		c.timers[key] = time.AfterFunc(c.timeout, func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if _, open := c.timers[key]; open && !c.ended {
				c.push(Command{Op: OpAnswer, Agent: key.agent, CallID: key.call, By: gate.ByTimeout})
			}
		})
	}
	c.notifyLocked()
}

// Closed implements gate.People: p no longer waits.
func (c *Console) Closed(p *gate.Prompt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open = slices.DeleteFunc(c.open, func(q Prompt) bool { return q.Agent == p.Name && q.CallID == p.CallID })
	key := promptKey{p.Name, p.CallID}
	if t, ok := c.timers[key]; ok {
		t.Stop()
		delete(c.timers, key)
	}
	c.notifyLocked()
}

func (c *Console) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Take moves the commands given so far into buf, in the order they came, for the world to apply.
func (c *Console) Take(buf []Command) []Command {
	c.mu.Lock()
	defer c.mu.Unlock()
	buf = append(buf, c.queue...)
	clear(c.queue)
	c.queue = c.queue[:0]
	return buf
}

// Hold blocks while the run is paused, until Resume, Cancel or ctx's end.
func (c *Console) Hold(ctx context.Context) {
	c.mu.Lock()
	paused, resumed := c.paused, c.resumed
	c.mu.Unlock()
	if !paused {
		return
	}
	select {
	case <-resumed:
	case <-ctx.Done():
	}
}

// End marks the run ended: later commands are refused with ErrEnded and the timeouts stop.
func (c *Console) End() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ended = true
	for id, t := range c.timers {
		t.Stop()
		delete(c.timers, id)
	}
	c.resumeLocked()
	c.open = nil
	c.notifyLocked()
}

// push queues cmd and wakes the world. The caller holds c.mu.
func (c *Console) push(cmd Command) {
	c.queue = append(c.queue, cmd)
	if c.wake != nil {
		c.wake()
	}
}

// promptKey is one prompt: call ids are unique per agent only.
type promptKey struct{ agent, call string }

// person is who a command came from: by, or "person" when nobody said.
func person(by string) string {
	if by = strings.TrimSpace(by); by == "" {
		return "person"
	}
	return by
}
