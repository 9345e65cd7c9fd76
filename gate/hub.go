package gate

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/tools"
)

// PromptKind says what a prompt asks for.
type PromptKind uint8

const (
	// PromptApproval asks whether a call may run; answers are deny, once, stage or run.
	PromptApproval PromptKind = iota + 1
	// PromptQuestion is an ask_user_* tool's question; the answer is the reply.
	PromptQuestion
)

// String returns "approval" or "question", the spelling used in traces.
func (k PromptKind) String() string {
	if k == PromptQuestion {
		return "question"
	}
	return "approval"
}

// How a prompt was settled, as answer events spell it (Prompt.By).
const (
	// ByScript: the answerer gave an answer before the deadline.
	ByScript = "script"
	// ByTimeout: the answer would arrive after the deadline (or none came in time).
	ByTimeout = "timeout"
	// ByUnanswered: nothing can answer the prompt; it is refused on the next tick.
	ByUnanswered = "unanswered"
	// ByCancelled: the agent ended (was killed) with the prompt open.
	ByCancelled = "cancelled"
	// ByPerson: a person answered (Prompt.Who says who; Settler spells it "person:<who>").
	ByPerson = "person"
	// ByWaiting: the prompt waits for a person (SetPeople); it has no deadline in ticks.
	ByWaiting = "waiting"
)

// PromptRequest is a prompt as an Answerer sees it.
type PromptRequest struct {
	Agent, Group, Tool string
	Keys               []string
	Kind               PromptKind
	Question           tools.Question
}

// Answerer answers prompts. Scenarios answer from their [[interactions]] script; a live host
// would answer from its API. ok is false when it has no answer at all.
type Answerer interface {
	// Answer returns the answer ("deny", "once", "stage", "run" for an approval; the reply for a
	// question), how many ticks after the prompt opens it arrives, and whether there is one.
	Answer(req *PromptRequest) (answer string, delay uint64, ok bool)
}

// KeptAnswerer is an Answerer whose state between prompts a world snapshot keeps: a scripted
// answerer's uses of each entry so far. An answerer without it has none, or cannot be saved.
type KeptAnswerer interface {
	Answerer
	// AnswererImage returns the state as data; RestoreAnswerer gives a fresh answerer that state.
	AnswererImage() []int
	RestoreAnswerer(img []int) error
}

// People is where a run people watch sends the prompts its answerers leave open (Hub.SetPeople):
// such a prompt waits, with no deadline in ticks, until Hub.Settle settles it with what a person
// answered (or with ByTimeout when the people's own timeout passed). Opened and Closed are called
// on the world's goroutine and must not block.
type People interface {
	// Opened: p waits for a person from tick on; group is its agent's group.
	Opened(p *Prompt, tick uint64, group string)
	// Closed: p no longer waits (settled, or its agent ended).
	Closed(p *Prompt)
}

// Prompt is one open prompt: an agent parked on one call of its turn. The dispatcher fills the
// call's fields before Add; Add sets Deadline, Answer and By, which the interact system reads
// when the prompt comes due.
type Prompt struct {
	// Entity and Agent are the parked agent; Name is its name (for the answerer and the failure
	// lines); Index is the call's place in the turn, Tool its tool and Keys its permission keys.
	Entity ecs.Entity
	Agent  uint64
	Name   string
	Index  int
	CallID string
	Tool   string
	Keys   []string
	// Kind says whether it asks for an approval or is an ask_user_* question (Question).
	Kind     PromptKind
	Question tools.Question
	// Deadline is the tick the prompt times out (0 for one that waits for a person); Answer is
	// the answer and By how it was settled (ByScript, ByPerson, ByTimeout, ByUnanswered, or
	// ByWaiting while a person has yet to); Who is the person who answered (ByPerson).
	Deadline uint64
	Answer   string
	By       string
	Who      string
}

// Settler spells who settled the prompt as the trace's answer events do: By, or "person:<who>".
func (p *Prompt) Settler() string {
	if p.By == ByPerson {
		return ByPerson + ":" + p.Who
	}
	return p.By
}

// Answered reports whether the prompt was answered (by the script or a person), rather than
// refused for want of an answer.
func (p *Prompt) Answered() bool { return p.By == ByScript || p.By == ByPerson }

// Hub is the interaction hub: it holds every open prompt until its answer or its deadline, as
// data keyed by due tick, so parked agents cost nothing per tick. It is an ecs.Waiter: a world
// with open prompts is not at a fixed point. Prompts nobody can answer are denied on the next
// tick and reported as unanswered, so a scenario that forgot an answer fails instead of hanging.
type Hub struct {
	answerer Answerer
	queue    ecs.DueQueue[*Prompt]
	buf      []*Prompt
	failures []string
	// people, when set, takes the prompts the answerer leaves open; waiting holds them, in the
	// order they opened, until Settle or Cancel.
	people  People
	waiting []*Prompt
}

var _ ecs.OutsideWaiter = (*Hub)(nil)

// NewHub returns a hub that asks answerer (nil: nobody answers).
func NewHub(answerer Answerer) *Hub { return &Hub{answerer: answerer} }

// SetPeople sends the prompts the answerer leaves open to people instead of refusing them (nil:
// refused, as unanswered). Set it before the first prompt opens.
func (h *Hub) SetPeople(p People) { h.people = p }

// Pending implements ecs.Waiter: a prompt waiting for a person is pending with no due tick, so a
// world with nothing else to do waits for the person (ecs.Scheduler.Wake) instead of ending.
func (h *Hub) Pending() bool { return h.queue.Len() > 0 || len(h.waiting) > 0 }

// NextDue implements ecs.Waiter.
func (h *Hub) NextDue() (uint64, bool) { return h.queue.Next() }

// WaitsOutside implements ecs.OutsideWaiter: some prompt waits for a person, and the people
// (SetPeople) do not say otherwise (a replay's stand-in for them has nobody to wait for).
func (h *Hub) WaitsOutside() bool {
	if len(h.waiting) == 0 {
		return false
	}
	if o, ok := h.people.(interface{ WaitsOutside() bool }); ok {
		return o.WaitsOutside()
	}
	return true
}

// Open reports how many prompts are open.
func (h *Hub) Open() int { return h.queue.Len() + len(h.waiting) }

// Waiting returns the prompts waiting for a person, in the order they opened. The slice is the
// hub's, valid until the next call that changes it.
func (h *Hub) Waiting() []*Prompt { return h.waiting }

// ErrNotWaiting: Settle found no prompt of that call waiting for a person.
var ErrNotWaiting = errors.New("no prompt of that call waits for a person")

// Settle settles the prompt of agent's call callID (call ids are unique per agent only) that
// waits for a person, at tick now: by a person (who) with answer, or, when by is ByTimeout,
// refused because nobody answered in time. The interact system applies it in the same tick.
func (h *Hub) Settle(now uint64, agent, callID, answer, by, who string) (*Prompt, error) {
	i := slices.IndexFunc(h.waiting, func(p *Prompt) bool { return p.Name == agent && p.CallID == callID })
	if i < 0 {
		return nil, fmt.Errorf("%w: %s's %q", ErrNotWaiting, agent, callID)
	}
	if by != ByPerson && by != ByTimeout {
		return nil, fmt.Errorf("settled by %q (valid: %s, %s)", by, ByPerson, ByTimeout)
	}
	p := h.waiting[i]
	h.waiting = slices.Delete(h.waiting, i, i+1)
	p.By, p.Who, p.Answer = by, who, answer
	if by == ByTimeout {
		p.Who, p.Answer = "", ""
	}
	h.queue.Push(now, p)
	if h.people != nil {
		h.people.Closed(p)
	}
	return p, nil
}

// Unanswered lists the prompts nobody answered, one readable line each, in the order they
// opened.
func (h *Hub) Unanswered() []string { return h.failures }

// Add registers p at tick now with the given timeout and schedules its settlement.
func (h *Hub) Add(now, timeout uint64, group string, p *Prompt) {
	p.Deadline = now + max(timeout, 1)
	req := PromptRequest{Agent: p.Name, Group: group, Tool: p.Tool, Keys: p.Keys, Kind: p.Kind, Question: p.Question}
	var answer string
	var delay uint64
	ok := false
	if h.answerer != nil {
		answer, delay, ok = h.answerer.Answer(&req)
	}
	at := now + 1
	switch {
	case !ok && h.people != nil:
		p.By, p.Deadline = ByWaiting, 0
		h.waiting = append(h.waiting, p)
		h.people.Opened(p, now, group)
		return
	case !ok:
		p.By = ByUnanswered
		what := p.Tool
		if p.Kind == PromptQuestion {
			what += " question " + fmt.Sprintf("%q", p.Question.Text)
		} else {
			what += " (keys " + strings.Join(p.Keys, ", ") + ")"
		}
		h.failures = append(h.failures, fmt.Sprintf("agent %s asked about %s at tick %d and nothing answers it (add an [[interactions]] entry, or give it to people: host run --interactive, host serve); it was refused", p.Name, what, now))
	case now+max(delay, 1) >= p.Deadline:
		p.By = ByTimeout
		at = p.Deadline
	default:
		p.By, p.Answer = ByScript, answer
		at = now + max(delay, 1)
	}
	h.queue.Push(at, p)
}

// Cancel closes every open prompt of agent (it was killed), returning them in due order. The
// returned slice is the hub's scratch, valid until the next call.
func (h *Hub) Cancel(agent uint64) []*Prompt {
	clear(h.buf)
	h.buf = h.queue.Remove(func(p *Prompt) bool { return p.Agent == agent }, h.buf[:0])
	h.waiting = slices.DeleteFunc(h.waiting, func(p *Prompt) bool {
		if p.Agent != agent {
			return false
		}
		h.buf = append(h.buf, p)
		if h.people != nil {
			h.people.Closed(p)
		}
		return true
	})
	return h.buf
}

// Due returns the prompts settled at tick now, in canonical order (agent id, call index).
func (h *Hub) Due(now uint64) []*Prompt {
	clear(h.buf)
	h.buf = h.queue.PopDue(now, h.buf[:0])
	slices.SortFunc(h.buf, func(a, b *Prompt) int {
		return cmp.Or(cmp.Compare(a.Agent, b.Agent), cmp.Compare(a.Index, b.Index))
	})
	return h.buf
}

// PromptImage is an open Prompt as data, for a snapshot of the world: the prompt, its entity as
// data, and the tick it is settled at (its answer's or its deadline's).
type PromptImage struct {
	Due      uint64
	Entity   ecs.EntityRef
	Agent    uint64
	Name     string
	Index    int
	CallID   string
	Tool     string
	Keys     []string
	Kind     PromptKind
	Question tools.Question
	Deadline uint64
	Answer   string
	By       string
	Who      string
}

// HubImage is the hub's state as data: its open prompts in the order it settles them (then those
// waiting for a person, By ByWaiting, in the order they opened) and the unanswered prompts it
// reports. The answerer's own state (which scripted answers were used) is
// the answerer's to save.
type HubImage struct {
	Prompts  []PromptImage
	Failures []string
}

// Image returns the hub's state as data, sharing nothing with it. Every answer is fixed when its
// prompt opens (Add), so an open prompt is data.
func (h *Hub) Image() HubImage {
	img := HubImage{Failures: slices.Clone(h.failures)}
	image := func(due uint64, p *Prompt) PromptImage {
		q := p.Question
		q.Choices = slices.Clone(q.Choices)
		return PromptImage{
			Due: due, Entity: ecs.RefOf(p.Entity), Agent: p.Agent, Name: p.Name, Index: p.Index, CallID: p.CallID,
			Tool: p.Tool, Keys: slices.Clone(p.Keys), Kind: p.Kind, Question: q, Deadline: p.Deadline,
			Answer: p.Answer, By: p.By, Who: p.Who,
		}
	}
	for _, held := range h.queue.Held(nil) {
		img.Prompts = append(img.Prompts, image(held.Tick, held.Item))
	}
	for _, p := range h.waiting {
		img.Prompts = append(img.Prompts, image(0, p))
	}
	return img
}

// Restore gives a hub with no open prompt and no failure the state img holds; the hub keeps its
// answerer.
func (h *Hub) Restore(img *HubImage) error {
	if h.queue.Len() > 0 || len(h.waiting) > 0 || len(h.failures) > 0 {
		return errors.New("hub image: the hub is in use")
	}
	h.failures = slices.Clone(img.Failures)
	for _, pi := range img.Prompts {
		p := &Prompt{
			Entity: pi.Entity.Entity(), Agent: pi.Agent, Name: pi.Name, Index: pi.Index, CallID: pi.CallID, Tool: pi.Tool,
			Keys: pi.Keys, Kind: pi.Kind, Question: pi.Question, Deadline: pi.Deadline, Answer: pi.Answer, By: pi.By, Who: pi.Who,
		}
		if p.By == ByWaiting {
			if h.people == nil {
				return fmt.Errorf("hub image: the prompt of %s's call %s waits for a person, and this run has none", p.Name, p.CallID)
			}
			h.waiting = append(h.waiting, p)
			continue
		}
		h.queue.Push(pi.Due, p)
	}
	return nil
}
