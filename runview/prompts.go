package runview

import "slices"

// Prompt is an open prompt: a call or question put to the interaction hub that no answer has
// settled yet and whose agent has not ended. Kind is the prompt event's "prompt" field
// (approval or question); Opened is the tick it opened at and Deadline the tick it is denied at.
// A page lists these as what waits for a person.
type Prompt struct {
	CallID   string   `json:"call_id"`
	AgentID  int64    `json:"agent_id"`
	Agent    string   `json:"agent"`
	Group    string   `json:"group"`
	Stage    string   `json:"stage"`
	Tool     string   `json:"tool"`
	Kind     string   `json:"kind"`
	Text     string   `json:"text"`
	Keys     []string `json:"keys"`
	Deadline int64    `json:"deadline"`
	Opened   int64    `json:"opened"`
	Seq      int64    `json:"seq"`
}

// promptKey finds an open prompt: an agent's call (call ids are the agent's own).
type promptKey struct {
	agent  int32
	callID string
}

// openPrompt is a prompt as the View keeps it until it is settled.
type openPrompt struct {
	key                 promptKey
	stage, tool, kind   uint32
	keys                []uint32
	text                string
	deadline, tick, seq int64
	closed              bool
}

// promptSet keeps the open prompts in the order they opened. A settled prompt is marked closed
// and the list compacted once half of it is closed, so settling costs O(1) however many are
// open (a 10^4-agent run opens 10^4 in one tick).
type promptSet struct {
	list []openPrompt
	at   map[promptKey]int
	live int
}

func (s *promptSet) init() { s.at = map[promptKey]int{} }

// open adds ev's prompt for agent a; a prompt opened again for the same call replaces the old.
func (s *promptSet) open(v *View, a *agent, ev *event) {
	key := promptKey{agent: a.self, callID: string(ev.str(cCallID))}
	if i, ok := s.at[key]; ok {
		s.close(i)
		a.prompts--
	}
	p := openPrompt{key: key, stage: v.strs.intern(ev.str(cStage)), tool: v.strs.intern(ev.str(cTool)),
		kind: v.strs.intern(ev.str(cPrompt)), deadline: ev.num(cDeadline), tick: ev.tick, seq: ev.seq}
	p.text, _ = truncated(ev.str(cText), v.opts.MaxContent)
	for _, k := range ev.list(cKeys) {
		p.keys = append(p.keys, v.strs.intern(k))
	}
	s.at[key] = len(s.list)
	s.list = append(s.list, p)
	s.live++
}

// settle closes a's prompt for callID and reports whether it was open (an answer may come for
// a prompt the agent's end already closed).
func (s *promptSet) settle(a *agent, callID []byte) bool {
	i, ok := s.at[promptKey{agent: a.self, callID: string(callID)}]
	if !ok {
		return false
	}
	s.close(i)
	s.compact()
	return true
}

// closeAgent closes every prompt agent a has open.
func (s *promptSet) closeAgent(v *View, a *agent) {
	if a.prompts == 0 {
		return
	}
	for i := range s.list {
		if !s.list[i].closed && s.list[i].key.agent == a.self {
			s.close(i)
		}
	}
	a.prompts = 0
	if a.phase == phaseAwaitingPrompt {
		v.setPhase(a, a.afterWait())
	}
	s.compact()
}

func (s *promptSet) close(i int) {
	s.list[i].closed = true
	delete(s.at, s.list[i].key)
	s.live--
}

// compact drops the closed prompts once they are half the list.
func (s *promptSet) compact() {
	if len(s.list) < 64 || s.live*2 > len(s.list) {
		return
	}
	s.list = slices.DeleteFunc(s.list, func(p openPrompt) bool { return p.closed })
	for i := range s.list {
		s.at[s.list[i].key] = i
	}
}

// Prompts returns the open prompts in the order they opened: what waits for a person now, the
// longest waiting first.
func (v *View) Prompts() []Prompt {
	v.mu.RLock()
	defer v.mu.RUnlock()
	out := make([]Prompt, 0, v.prompts.live)
	for i := range v.prompts.list {
		p := &v.prompts.list[i]
		if p.closed {
			continue
		}
		a := &v.agents[p.key.agent]
		q := Prompt{CallID: p.key.callID, AgentID: a.id, Agent: a.name, Group: v.strs.str(a.group),
			Stage: v.strs.str(p.stage), Tool: v.strs.str(p.tool), Kind: v.strs.str(p.kind), Text: p.text,
			Keys: make([]string, len(p.keys)), Deadline: p.deadline, Opened: p.tick, Seq: p.seq}
		for j, k := range p.keys {
			q.Keys[j] = v.strs.str(k)
		}
		out = append(out, q)
	}
	return out
}

// Graph is the stage graph as the trace walked it: per stage (of a blueprint, since two
// blueprints may name a stage alike) the agents' entries into it, and per edge the transitions
// that took it, both in the order the trace first showed them. An edge out of the graph has To
// "" and End set (done, failed), as the trace writes it.
type Graph struct {
	Stages []GraphStage `json:"stages"`
	Edges  []GraphEdge  `json:"edges"`
}

// GraphStage is one stage and how many stage_enter events it had.
type GraphStage struct {
	Blueprint string `json:"blueprint"`
	Stage     string `json:"stage"`
	Visits    int64  `json:"visits"`
}

// GraphEdge is one edge (from, to, on, when, end) and how many transition events took it.
type GraphEdge struct {
	Blueprint string `json:"blueprint"`
	From      string `json:"from"`
	To        string `json:"to"`
	On        string `json:"on"`
	When      string `json:"when,omitempty"`
	End       string `json:"end,omitempty"`
	Count     int64  `json:"count"`
}

// edgeKey is an edge by interned names.
type edgeKey struct{ blueprint, from, to, on, when, end uint32 }

// graph counts stage visits and edges by interned names.
type graph struct {
	stages  [][2]uint32 // blueprint, stage
	visits  []int64
	stageAt map[[2]uint32]int
	edges   []edgeKey
	counts  []int64
	edgeAt  map[edgeKey]int
}

func (g *graph) init() {
	g.stageAt = map[[2]uint32]int{}
	g.edgeAt = map[edgeKey]int{}
}

func (g *graph) visit(blueprint, stage uint32) {
	k := [2]uint32{blueprint, stage}
	i, ok := g.stageAt[k]
	if !ok {
		i = len(g.stages)
		g.stageAt[k] = i
		g.stages = append(g.stages, k)
		g.visits = append(g.visits, 0)
	}
	g.visits[i]++
}

func (g *graph) edge(v *View, blueprint uint32, ev *event) {
	in := &v.strs
	k := edgeKey{blueprint: blueprint, from: in.intern(ev.str(cFrom)), to: in.intern(ev.str(cTo)),
		on: in.intern(ev.str(cOn)), when: in.intern(ev.str(cWhen)), end: in.intern(ev.str(cEnd))}
	i, ok := g.edgeAt[k]
	if !ok {
		i = len(g.edges)
		g.edgeAt[k] = i
		g.edges = append(g.edges, k)
		g.counts = append(g.counts, 0)
	}
	g.counts[i]++
}

// Graph returns the stage graph as traced so far, to draw the stages with how often each was
// entered and each edge taken.
func (v *View) Graph() Graph {
	v.mu.RLock()
	defer v.mu.RUnlock()
	g := &v.graph
	s := v.strs.str
	out := Graph{Stages: make([]GraphStage, len(g.stages)), Edges: make([]GraphEdge, len(g.edges))}
	for i, k := range g.stages {
		out.Stages[i] = GraphStage{Blueprint: s(k[0]), Stage: s(k[1]), Visits: g.visits[i]}
	}
	for i, k := range g.edges {
		out.Edges[i] = GraphEdge{Blueprint: s(k.blueprint), From: s(k.from), To: s(k.to), On: s(k.on),
			When: s(k.when), End: s(k.end), Count: g.counts[i]}
	}
	return out
}
