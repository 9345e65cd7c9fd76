package gate_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/warren/gate"
	"github.com/warrenhq/warren/internal/gobtest"
	"github.com/warrenhq/warren/tools"
)

// reply is one answer a fakeAnswerer gives.
type reply struct {
	answer string
	delay  uint64
}

// fakeAnswerer answers prompts by agent name (no entry: no answer) and records what it was asked.
type fakeAnswerer struct {
	replies map[string]reply
	asked   []gate.PromptRequest
}

func (f *fakeAnswerer) Answer(req *gate.PromptRequest) (string, uint64, bool) {
	f.asked = append(f.asked, *req)
	r, ok := f.replies[req.Agent]
	return r.answer, r.delay, ok
}

// approval is an approval prompt of agent id (named "a<id>") for call index of write_file.
func approval(id uint64, index int) *gate.Prompt {
	return &gate.Prompt{Agent: id, Name: fmt.Sprintf("a%d", id), Index: index, Tool: "write_file",
		Keys: []string{"write_file"}, Kind: gate.PromptApproval}
}

// TestHubSettles: Add decides, when a prompt opens, how and when it is settled: an answer before
// the deadline at now+delay (a delay of 0 counts as 1), an answer at or after the deadline (or a
// timeout of 0, which counts as 1, leaving no tick for an answer) at the deadline, and no answer
// on the next tick. Due hands the prompt over at that tick and not before.
func TestHubSettles(t *testing.T) {
	cases := []struct {
		name     string
		timeout  uint64
		reply    *reply // nil: no answer
		by       string
		answer   string
		due      uint64 // the tick Due hands it over (the prompt opens at tick 10)
		deadline uint64
	}{
		{name: "answer before the deadline", timeout: 5, reply: &reply{"once", 3}, by: gate.ByScript, answer: "once", due: 13, deadline: 15},
		{name: "delay 0 counts as 1", timeout: 5, reply: &reply{"run", 0}, by: gate.ByScript, answer: "run", due: 11, deadline: 15},
		{name: "answer one tick before the deadline", timeout: 5, reply: &reply{"stage", 4}, by: gate.ByScript, answer: "stage", due: 14, deadline: 15},
		{name: "answer at the deadline times out", timeout: 5, reply: &reply{"once", 5}, by: gate.ByTimeout, due: 15, deadline: 15},
		{name: "answer after the deadline times out at it", timeout: 5, reply: &reply{"once", 50}, by: gate.ByTimeout, due: 15, deadline: 15},
		{name: "timeout 0 counts as 1", timeout: 0, reply: &reply{"once", 0}, by: gate.ByTimeout, due: 11, deadline: 11},
		{name: "no answer is refused on the next tick", timeout: 5, by: gate.ByUnanswered, due: 11, deadline: 15},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ans := &fakeAnswerer{replies: map[string]reply{}}
			if tc.reply != nil {
				ans.replies["a1"] = *tc.reply
			}
			h := gate.NewHub(ans)
			p := approval(1, 0)
			h.Add(10, tc.timeout, "writers", p)
			if p.By != tc.by || p.Answer != tc.answer || p.Deadline != tc.deadline {
				t.Errorf("settled by %q with %q, deadline %d; want by %q with %q, deadline %d", p.By, p.Answer, p.Deadline, tc.by, tc.answer, tc.deadline)
			}
			if next, ok := h.NextDue(); !ok || next != tc.due {
				t.Errorf("NextDue = %d, %v; want %d, true", next, ok, tc.due)
			}
			if got := h.Due(tc.due - 1); len(got) != 0 {
				t.Errorf("Due(%d) = %d prompts, want none before the settling tick", tc.due-1, len(got))
			}
			if got := h.Due(tc.due); len(got) != 1 || got[0] != p {
				t.Errorf("Due(%d) = %v, want the prompt", tc.due, got)
			}
			if h.Pending() || h.Open() != 0 {
				t.Errorf("after Due: Pending %v, Open %d; want false, 0", h.Pending(), h.Open())
			}
			if unanswered := len(h.Unanswered()) > 0; unanswered != (tc.by == gate.ByUnanswered) {
				t.Errorf("Unanswered() = %q for a prompt settled by %s", h.Unanswered(), tc.by)
			}
		})
	}
}

// TestHubUnanswered: a prompt nothing answers (no answerer at all, or one without an answer) is
// listed, in the order prompts opened, by a line that names the agent, what it asked and the tick.
func TestHubUnanswered(t *testing.T) {
	question := &gate.Prompt{Agent: 2, Name: "writer-1", Index: 1, Tool: "ask_user_text", Kind: gate.PromptQuestion,
		Question: tools.Question{Text: "which file?"}}
	approve := &gate.Prompt{Agent: 1, Name: "writer-0", Tool: "shell", Keys: []string{"shell:ls", "shell:rm"}, Kind: gate.PromptApproval}
	for _, tc := range []struct {
		name string
		hub  *gate.Hub
	}{
		{name: "no answerer", hub: gate.NewHub(nil)},
		{name: "an answerer without an answer", hub: gate.NewHub(&fakeAnswerer{})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, a := *question, *approve
			tc.hub.Add(7, 100, "writers", &q)
			tc.hub.Add(9, 100, "writers", &a)
			want := []string{
				`agent writer-1 asked about ask_user_text question "which file?" at tick 7 and nothing answers it (add an [[interactions]] entry, or give it to people: host run --interactive, host serve); it was refused`,
				`agent writer-0 asked about shell (keys shell:ls, shell:rm) at tick 9 and nothing answers it (add an [[interactions]] entry, or give it to people: host run --interactive, host serve); it was refused`,
			}
			if got := tc.hub.Unanswered(); !slices.Equal(got, want) {
				t.Errorf("Unanswered() =\n%q\nwant\n%q", got, want)
			}
			if q.By != gate.ByUnanswered || a.By != gate.ByUnanswered {
				t.Errorf("settled by %q and %q, want %q", q.By, a.By, gate.ByUnanswered)
			}
			if got := tc.hub.Due(8); len(got) != 1 || got[0].Name != "writer-1" {
				t.Errorf("Due(8) = %v, want the question alone (refused the tick after it opened)", got)
			}
		})
	}
}

// TestHubAnswererSeesTheRequest: the answerer is asked once per prompt, with the agent's name, the
// group, the tool, the keys, the kind and the question.
func TestHubAnswererSeesTheRequest(t *testing.T) {
	ans := &fakeAnswerer{}
	h := gate.NewHub(ans)
	q := tools.Question{Kind: tools.QuestionText, Text: "name the output file"}
	h.Add(0, 10, "planners", &gate.Prompt{Agent: 4, Name: "planner-3", Tool: "ask_user_text", Kind: gate.PromptQuestion, Question: q})
	h.Add(0, 10, "writers", &gate.Prompt{Agent: 5, Name: "writer-0", Tool: "shell", Keys: []string{"shell:make"}, Kind: gate.PromptApproval})
	if len(ans.asked) != 2 {
		t.Fatalf("answerer asked %d times, want 2", len(ans.asked))
	}
	got, want := ans.asked[0], gate.PromptRequest{Agent: "planner-3", Group: "planners", Tool: "ask_user_text", Kind: gate.PromptQuestion, Question: q}
	if got.Agent != want.Agent || got.Group != want.Group || got.Tool != want.Tool || got.Kind != want.Kind ||
		got.Question.Text != want.Question.Text || got.Question.Kind != want.Question.Kind || len(got.Keys) != 0 {
		t.Errorf("question request = %+v, want %+v", got, want)
	}
	got = ans.asked[1]
	if got.Agent != "writer-0" || got.Group != "writers" || got.Tool != "shell" || !slices.Equal(got.Keys, []string{"shell:make"}) ||
		got.Kind != gate.PromptApproval || got.Question.Text != "" {
		t.Errorf("approval request = %+v", got)
	}
	if gate.PromptApproval.String() != "approval" || gate.PromptQuestion.String() != "question" {
		t.Errorf("kinds spell %q and %q", gate.PromptApproval, gate.PromptQuestion)
	}
}

// key is a prompt's canonical place: (agent, call index).
type key struct {
	agent uint64
	index int
}

func keysOf(ps []*gate.Prompt) []key {
	out := make([]key, len(ps))
	for i, p := range ps {
		out[i] = key{p.Agent, p.Index}
	}
	return out
}

// TestHubDueOrder: prompts settled at one tick come out in (agent, index) order, whatever order
// they were added in and however they were settled.
func TestHubDueOrder(t *testing.T) {
	want := []key{{1, 0}, {1, 2}, {2, 0}, {2, 1}, {3, 5}}
	orders := map[string][]key{
		"reversed": {{3, 5}, {2, 1}, {2, 0}, {1, 2}, {1, 0}},
		"shuffled": {{2, 1}, {1, 2}, {3, 5}, {1, 0}, {2, 0}},
		"sorted":   want,
	}
	for name, order := range orders {
		t.Run(name, func(t *testing.T) {
			// Agent 2 answers on the next tick, the others have no answer: all settle at tick 1.
			h := gate.NewHub(&fakeAnswerer{replies: map[string]reply{"a2": {"once", 1}}})
			for _, k := range order {
				h.Add(0, 10, "g", approval(k.agent, k.index))
			}
			if got := keysOf(h.Due(1)); !slices.Equal(got, want) {
				t.Errorf("Due(1) = %v, want %v", got, want)
			}
		})
	}
}

// TestHubQueue: Pending, NextDue and Open follow the queue as prompts open, come due and are
// cancelled; Cancel closes only the given agent's prompts, in due order.
func TestHubQueue(t *testing.T) {
	h := gate.NewHub(&fakeAnswerer{replies: map[string]reply{"a1": {"once", 5}, "a2": {"deny", 2}, "a3": {"run", 8}}})
	if h.Pending() || h.Open() != 0 {
		t.Fatalf("empty hub: Pending %v, Open %d", h.Pending(), h.Open())
	}
	if _, ok := h.NextDue(); ok {
		t.Fatal("empty hub has a next due tick")
	}
	h.Add(0, 100, "g", approval(1, 0)) // due 5
	h.Add(0, 100, "g", approval(2, 0)) // due 2
	h.Add(0, 100, "g", approval(3, 0)) // due 8
	h.Add(1, 100, "g", approval(1, 1)) // due 6
	if !h.Pending() || h.Open() != 4 {
		t.Fatalf("four open: Pending %v, Open %d", h.Pending(), h.Open())
	}
	if next, ok := h.NextDue(); !ok || next != 2 {
		t.Fatalf("NextDue = %d, %v; want 2", next, ok)
	}
	cancelled := h.Cancel(1)
	if got := keysOf(cancelled); !slices.Equal(got, []key{{1, 0}, {1, 1}}) {
		t.Fatalf("Cancel(1) = %v, want agent 1's two prompts in due order", got)
	}
	if h.Open() != 2 {
		t.Fatalf("Open = %d after cancelling agent 1, want 2", h.Open())
	}
	if got := h.Cancel(9); len(got) != 0 || h.Open() != 2 {
		t.Fatalf("Cancel of an agent with no prompts returned %v, Open %d", got, h.Open())
	}
	if got := keysOf(h.Due(7)); !slices.Equal(got, []key{{2, 0}}) {
		t.Fatalf("Due(7) = %v, want agent 2's prompt alone (agent 1's were cancelled)", got)
	}
	if next, ok := h.NextDue(); !ok || next != 8 || h.Open() != 1 {
		t.Fatalf("NextDue = %d, %v, Open %d; want 8, true, 1", next, ok, h.Open())
	}
	if got := keysOf(h.Due(8)); !slices.Equal(got, []key{{3, 0}}) {
		t.Fatalf("Due(8) = %v, want agent 3's prompt", got)
	}
	if h.Pending() || h.Open() != 0 {
		t.Fatalf("drained hub: Pending %v, Open %d", h.Pending(), h.Open())
	}
	if _, ok := h.NextDue(); ok {
		t.Fatal("drained hub has a next due tick")
	}
	if got := strings.Join(h.Unanswered(), "\n"); got != "" {
		t.Fatalf("answered prompts reported unanswered: %s", got)
	}
}

// settled lists what Due hands over from tick from to tick to, one line per prompt.
func settled(h *gate.Hub, from, to uint64) []string {
	var out []string
	for tick := from; tick <= to; tick++ {
		for _, p := range h.Due(tick) {
			out = append(out, fmt.Sprintf("%d %s/%d %s %q deadline %d", tick, p.Name, p.Index, p.By, p.Answer, p.Deadline))
		}
	}
	return out
}

func TestHubImageSettlesAlike(t *testing.T) {
	ans := &fakeAnswerer{replies: map[string]reply{"a1": {"once", 3}, "a3": {"run", 9}, "a2": {"stage", 3}, "a5": {"b", 4}}}
	h := gate.NewHub(ans)
	h.Add(10, 5, "w", approval(1, 0))
	h.Add(10, 5, "w", approval(3, 1))
	h.Add(10, 5, "w", approval(2, 0))
	h.Add(11, 5, "w", approval(4, 2)) // nobody answers a4
	q := approval(5, 0)
	q.Kind, q.Question = gate.PromptQuestion, tools.Question{Text: "which?", Choices: []string{"a", "b"}}
	h.Add(11, 20, "w", q)
	img := h.Image()
	back := gate.NewHub(nil) // the answers are fixed in the prompts: the restored hub needs no answerer
	if err := back.Restore(&img); err != nil {
		t.Fatal(err)
	}
	if back.Open() != 5 || !slices.Equal(back.Unanswered(), h.Unanswered()) || len(back.Unanswered()) != 1 {
		t.Fatalf("restored %d open, unanswered %q; the original %d, %q", back.Open(), back.Unanswered(), h.Open(), h.Unanswered())
	}
	want, got := settled(h, 11, 40), settled(back, 11, 40)
	if len(want) != 5 || !slices.Equal(got, want) {
		t.Fatalf("restored hub settles\n%q\nthe original\n%q", got, want)
	}
	if err := h.Restore(&img); err == nil {
		t.Fatal("a hub with failures accepted an image")
	}
}

// TestPromptImageMirrorsEveryField fails when a prompt gains a field its image does not keep.
func TestPromptImageMirrorsEveryField(t *testing.T) {
	gobtest.Mirrors[gate.Prompt, gate.PromptImage](t)
}

// people is a gate.People that logs what it was told.
type people struct{ log []string }

func (p *people) Opened(pr *gate.Prompt, tick uint64, group string) {
	p.log = append(p.log, fmt.Sprintf("opened %s %s at %d in %s", pr.Name, pr.CallID, tick, group))
}
func (p *people) Closed(pr *gate.Prompt) { p.log = append(p.log, "closed "+pr.CallID) }

// TestHubPeople: with people, a prompt nothing scripted answers waits with no deadline and no due
// tick (the world waits outside); Settle hands it to the interact system at that tick, answered by
// the person or refused by a timeout; Cancel closes a waiting one; a snapshot keeps waiting ones.
func TestHubPeople(t *testing.T) {
	ppl := &people{}
	h := gate.NewHub(&fakeAnswerer{replies: map[string]reply{"a9": {"once", 1}}})
	h.SetPeople(ppl)
	for id, call := range map[uint64]string{1: "c1", 2: "c2"} {
		p := approval(id, 0)
		p.CallID = call
		h.Add(3, 5, "writers", p)
	}
	scripted := approval(9, 0)
	h.Add(3, 5, "writers", scripted)
	if got := h.Waiting(); len(got) != 2 || got[0].Deadline != 0 || got[0].By != gate.ByWaiting {
		t.Fatalf("waiting %v", got)
	}
	if !h.Pending() || !h.WaitsOutside() || h.Open() != 3 {
		t.Fatalf("pending %v, waits outside %v, open %d", h.Pending(), h.WaitsOutside(), h.Open())
	}
	if due, ok := h.NextDue(); !ok || due != 4 {
		t.Fatalf("next due %d %v: only the scripted answer has a due tick", due, ok)
	}
	if _, err := h.Settle(4, "a1", "nope", "once", gate.ByPerson, "ann"); err == nil {
		t.Error("settled a call that does not wait")
	}
	if _, err := h.Settle(4, "a1", "c1", "once", gate.ByScript, "ann"); err == nil {
		t.Error("settled as the script")
	}
	img := h.Image()
	if len(img.Prompts) != 3 || img.Prompts[2].By != gate.ByWaiting {
		t.Fatalf("image %+v", img.Prompts)
	}
	if _, err := h.Settle(4, "a1", "c1", "stage", gate.ByPerson, "ann"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Settle(4, "a1", "c1", "once", gate.ByPerson, "ann"); err == nil {
		t.Error("settled the same call twice")
	}
	due := h.Due(4)
	if len(due) != 2 || due[0].CallID != "c1" || due[0].Settler() != "person:ann" || !due[0].Answered() || due[0].Answer != "stage" {
		t.Fatalf("due at 4: %+v", due)
	}
	if len(h.Cancel(2)) != 1 || h.Pending() || h.WaitsOutside() {
		t.Fatalf("after cancelling agent 2: pending %v, waits outside %v", h.Pending(), h.WaitsOutside())
	}
	want := []string{"opened a1 c1 at 3 in writers", "opened a2 c2 at 3 in writers", "closed c1", "closed c2"}
	slices.Sort(ppl.log[:2])
	if !slices.Equal(ppl.log, want) {
		t.Errorf("people heard %q, want %q", ppl.log, want)
	}

	// The image restores the waiting prompts as waiting; a hub without people refuses them.
	restored := gate.NewHub(nil)
	restored.SetPeople(&people{})
	if err := restored.Restore(&img); err != nil || len(restored.Waiting()) != 2 {
		t.Fatalf("restore: %v, waiting %d", err, len(restored.Waiting()))
	}
	if err := gate.NewHub(nil).Restore(&img); err == nil || !strings.Contains(err.Error(), "waits for a person") {
		t.Errorf("restore without people: %v", err)
	}
	timedOut, err := restored.Settle(7, "a2", "c2", "", gate.ByTimeout, "")
	if err != nil || timedOut.Answered() || timedOut.Settler() != gate.ByTimeout {
		t.Fatalf("timeout: %v %+v", err, timedOut)
	}
}
