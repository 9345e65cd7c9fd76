package systems

import (
	"cmp"
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

// How a prompt was settled, in answer events.
const (
	byScript     = "script"
	byTimeout    = "timeout"
	byUnanswered = "unanswered"
	byCancelled  = "cancelled"
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

// prompt is one open prompt: an agent parked on one call of its turn.
type prompt struct {
	entity   ecs.Entity
	agent    uint64
	name     string
	index    int
	tool     string
	keys     []string
	kind     PromptKind
	question tools.Question
	deadline uint64
	answer   string
	by       string
}

// Hub is the interaction hub: it holds every open prompt until its answer or its deadline, as
// data keyed by due tick, so parked agents cost nothing per tick. It is an ecs.Waiter: a world
// with open prompts is not at a fixed point. Prompts nobody can answer are denied on the next
// tick and reported as unanswered, so a scenario that forgot an answer fails instead of hanging.
type Hub struct {
	answerer Answerer
	queue    ecs.DueQueue[*prompt]
	buf      []*prompt
	failures []string
}

var _ ecs.Waiter = (*Hub)(nil)

// NewHub returns a hub that asks answerer (nil: nobody answers).
func NewHub(answerer Answerer) *Hub { return &Hub{answerer: answerer} }

// Pending implements ecs.Waiter.
func (h *Hub) Pending() bool { return h.queue.Len() > 0 }

// NextDue implements ecs.Waiter.
func (h *Hub) NextDue() (uint64, bool) { return h.queue.Next() }

// Open reports how many prompts are open.
func (h *Hub) Open() int { return h.queue.Len() }

// Unanswered lists the prompts nobody answered, one readable line each, in the order they
// opened.
func (h *Hub) Unanswered() []string { return h.failures }

// open registers p at tick now with the given timeout and schedules its settlement.
func (h *Hub) open(now, timeout uint64, group string, p *prompt) {
	p.deadline = now + max(timeout, 1)
	req := PromptRequest{Agent: p.name, Group: group, Tool: p.tool, Keys: p.keys, Kind: p.kind, Question: p.question}
	var answer string
	var delay uint64
	ok := false
	if h.answerer != nil {
		answer, delay, ok = h.answerer.Answer(&req)
	}
	at := now + 1
	switch {
	case !ok:
		p.by = byUnanswered
		what := p.tool
		if p.kind == PromptQuestion {
			what += " question " + fmt.Sprintf("%q", p.question.Text)
		} else {
			what += " (keys " + strings.Join(p.keys, ", ") + ")"
		}
		h.failures = append(h.failures, fmt.Sprintf("agent %s asked about %s at tick %d and nothing answers it (add an [[interactions]] entry); it was refused", p.name, what, now))
	case now+max(delay, 1) >= p.deadline:
		p.by = byTimeout
		at = p.deadline
	default:
		p.by, p.answer = byScript, answer
		at = now + max(delay, 1)
	}
	h.queue.Push(at, p)
}

// cancel closes every open prompt of agent (it was killed), returning them in due order. The
// returned slice is the hub's scratch, valid until the next call.
func (h *Hub) cancel(agent uint64) []*prompt {
	clear(h.buf)
	h.buf = h.queue.Remove(func(p *prompt) bool { return p.agent == agent }, h.buf[:0])
	return h.buf
}

// due returns the prompts settled at tick now, in canonical order (agent id, call index).
func (h *Hub) due(now uint64) []*prompt {
	clear(h.buf)
	h.buf = h.queue.PopDue(now, h.buf[:0])
	slices.SortFunc(h.buf, func(a, b *prompt) int {
		return cmp.Or(cmp.Compare(a.agent, b.agent), cmp.Compare(a.index, b.index))
	})
	return h.buf
}
