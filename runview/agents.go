package runview

import (
	"sort"
	"strings"

	"github.com/warrenhq/warren/trace"
)

// Paging limits of Agents and Tree: a page holds DefaultLimit items unless the query asks for
// another number, and never more than MaxLimit, so one request cannot copy 10^5 agents.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// AgentSummary is one agent as a list shows it: identity, where it stands and its counters.
// ParentID is 0 for a top-level agent. Stage is the stage it is in (or ended in); Phase is the
// phase the trace shows (PhaseNames); Status is StatusRunning until its terminal event.
type AgentSummary struct {
	ID         int64  `json:"id"`
	Name       string `json:"name"`
	Group      string `json:"group"`
	Blueprint  string `json:"blueprint"`
	Model      string `json:"model"`
	Stage      string `json:"stage"`
	Status     string `json:"status"`
	Phase      string `json:"phase"`
	ParentID   int64  `json:"parent_id,omitempty"`
	Depth      int    `json:"depth"`
	Children   int    `json:"children"`
	ModelTurns int64  `json:"model_turns"`
	ToolCalls  int64  `json:"tool_calls"`
	ToolErrors int64  `json:"tool_errors"`
	Tokens     int64  `json:"tokens"`
}

// AgentDetail is one agent in full, for its own page: the summary, its parent's name, its task
// and final reason (cut like log values), its subtree's size, cost, open prompts, whether it was
// reaped, and its log: its last Options.MaxEntries events in seq order, LogDropped counting the
// older ones no longer kept.
type AgentDetail struct {
	AgentSummary
	ParentName  string  `json:"parent_name,omitempty"`
	Task        string  `json:"task"`
	Reason      string  `json:"reason,omitempty"`
	Descendants int     `json:"descendants"`
	CostUSD     string  `json:"cost_usd"`
	PromptsOpen int     `json:"prompts_open"`
	Reaped      bool    `json:"reaped"`
	Log         []Entry `json:"log"`
	LogDropped  int64   `json:"log_dropped"`
}

// AgentQuery selects and pages agents. Phase, Group, Status and NamePrefix filter when set, all
// of them at once; After is the cursor (the id of the last agent of the previous page, 0 for the
// first page) and Limit the page size (DefaultLimit when 0 or less, at most MaxLimit).
type AgentQuery struct {
	Phase      string `json:"phase,omitempty"`
	Group      string `json:"group,omitempty"`
	Status     string `json:"status,omitempty"`
	NamePrefix string `json:"name_prefix,omitempty"`
	After      int64  `json:"after,omitempty"`
	Limit      int    `json:"limit,omitempty"`
}

// AgentPage is one page of agents in id order: Total counts every agent the filters match (on
// every page), and Next is the After of the next page, 0 when this page is the last.
type AgentPage struct {
	Items []AgentSummary `json:"items"`
	Total int            `json:"total"`
	Next  int64          `json:"next,omitempty"`
}

// limit is a query's page size.
func limit(n int) int {
	if n <= 0 {
		return DefaultLimit
	}
	return min(n, MaxLimit)
}

// filter is an AgentQuery resolved to interned ids (-1: not filtered on).
type filter struct {
	phase, group, status int64
	prefix               string
	none                 bool // a filter names something the run never had: nothing matches
}

func (v *View) filter(q AgentQuery) filter {
	f := filter{phase: -1, group: -1, status: -1, prefix: q.NamePrefix}
	if q.Phase != "" {
		f.none = true
		for p, n := range PhaseNames {
			if n == q.Phase {
				f.phase, f.none = int64(p), false
			}
		}
	}
	for _, s := range []struct {
		name string
		to   *int64
	}{{q.Group, &f.group}, {q.Status, &f.status}} {
		if s.name == "" {
			continue
		}
		id, ok := v.strs.lookup(s.name)
		if !ok {
			f.none = true
		}
		*s.to = int64(id)
	}
	return f
}

func (f *filter) match(a *agent) bool {
	return (f.phase < 0 || int64(a.phase) == f.phase) && (f.group < 0 || int64(a.group) == f.group) &&
		(f.status < 0 || int64(a.status) == f.status) && strings.HasPrefix(a.name, f.prefix)
}

// total counts the matches from the View's counters when one filter alone is set, which saves
// walking every agent for the common page views (all agents, one phase, one status, one group).
func (v *View) total(f filter) (int, bool) {
	set := 0
	for _, x := range []int64{f.phase, f.group, f.status} {
		if x >= 0 {
			set++
		}
	}
	switch {
	case f.prefix != "" || set > 1:
		return 0, false
	case f.phase >= 0:
		return v.phaseN[f.phase], true
	case f.status >= 0:
		return v.statusN[uint32(f.status)], true
	case f.group >= 0:
		if g, ok := v.groupAt[uint32(f.group)]; ok {
			return v.groupN[g], true
		}
		return 0, true
	}
	return len(v.agents), true
}

// Agents returns one page of the agents the query matches, in id order: the only way to list
// agents, a bounded page at a time, so that a request never copies 10^5 of them.
func (v *View) Agents(q AgentQuery) AgentPage {
	v.mu.RLock()
	defer v.mu.RUnlock()
	page := AgentPage{Items: []AgentSummary{}}
	f := v.filter(q)
	if f.none {
		return page
	}
	n := limit(q.Limit)
	total, counted := v.total(f)
	from := sort.Search(len(v.agents), func(i int) bool { return v.agents[i].id > q.After })
	more := false
	for i := from; i < len(v.agents); i++ {
		a := &v.agents[i]
		if !f.match(a) {
			continue
		}
		if len(page.Items) == n {
			more = true
			if counted {
				break
			}
		} else {
			page.Items = append(page.Items, v.summary(a))
		}
		if !counted {
			total++
		}
	}
	if !counted {
		// The agents before the cursor match too; count them.
		for i := range from {
			if f.match(&v.agents[i]) {
				total++
			}
		}
	}
	page.Total = total
	if more {
		page.Next = page.Items[len(page.Items)-1].ID
	}
	return page
}

// summary is a's AgentSummary.
func (v *View) summary(a *agent) AgentSummary {
	s := v.strs.str
	out := AgentSummary{ID: a.id, Name: a.name, Group: s(a.group), Blueprint: s(a.blueprint), Model: s(a.model),
		Stage: s(a.stage), Status: s(a.status), Phase: PhaseNames[a.phase], Depth: int(a.depth),
		Children: len(a.children), ModelTurns: int64(a.turns), ToolCalls: int64(a.toolCalls),
		ToolErrors: int64(a.toolErrs), Tokens: a.tokens}
	if a.parent >= 0 {
		out.ParentID = v.agents[a.parent].id
	}
	return out
}

// Agent returns the agent called name in full, its log decoded, for the one agent a page
// inspects; false when the trace has no such agent.
func (v *View) Agent(name string) (AgentDetail, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	i, ok := v.byName[name]
	if !ok {
		return AgentDetail{}, false
	}
	return v.detail(&v.agents[i]), true
}

// AgentByID is Agent by the agent's id, for links built from a page's ids.
func (v *View) AgentByID(id int64) (AgentDetail, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	i, ok := v.index(id)
	if !ok {
		return AgentDetail{}, false
	}
	return v.detail(&v.agents[i]), true
}

func (v *View) detail(a *agent) AgentDetail {
	d := AgentDetail{AgentSummary: v.summary(a), Task: a.task, Reason: a.reason, Descendants: int(a.descendants),
		CostUSD: trace.DollarsOf(a.cost), PromptsOpen: int(a.prompts), Reaped: a.reaped,
		Log: make([]Entry, 0, a.log.n), LogDropped: int64(a.log.dropped)}
	if a.parent >= 0 {
		d.ParentName = v.agents[a.parent].name
	}
	a.log.each(func(b []byte) { d.Log = append(d.Log, v.decodeEntry(b, a.name)) })
	return d
}

// TreeQuery pages one level of the sub-agent tree: Parent "" lists the top-level agents, else
// the children of the agent called Parent; After and Limit page them as in AgentQuery, so that a
// node with 10^4 children stays usable.
type TreeQuery struct {
	Parent string `json:"parent,omitempty"`
	After  int64  `json:"after,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

// TreeNode is one agent in the tree: enough to draw it and to know whether to expand it.
type TreeNode struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Status      string `json:"status"`
	Phase       string `json:"phase"`
	Children    int    `json:"children"`
	Descendants int    `json:"descendants"`
}

// TreePage is one page of a level of the tree, in id (spawn) order: Parent is the node whose
// children these are (nil for the top level), Total how many there are, Next the After of the
// next page (0: none).
type TreePage struct {
	Parent *TreeNode  `json:"parent,omitempty"`
	Items  []TreeNode `json:"items"`
	Total  int        `json:"total"`
	Next   int64      `json:"next,omitempty"`
}

// Tree returns one page of one level of the sub-agent tree, and false when Parent names no
// agent.
func (v *View) Tree(q TreeQuery) (TreePage, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	level := v.roots
	page := TreePage{Items: []TreeNode{}}
	if q.Parent != "" {
		i, ok := v.byName[q.Parent]
		if !ok {
			return TreePage{}, false
		}
		node := v.node(&v.agents[i])
		page.Parent = &node
		level = v.agents[i].children
	}
	page.Total = len(level)
	from := sort.Search(len(level), func(i int) bool { return v.agents[level[i]].id > q.After })
	to := min(len(level), from+limit(q.Limit))
	for _, i := range level[from:to] {
		page.Items = append(page.Items, v.node(&v.agents[i]))
	}
	if to < len(level) && to > from {
		page.Next = page.Items[len(page.Items)-1].ID
	}
	return page, true
}

func (v *View) node(a *agent) TreeNode {
	return TreeNode{ID: a.id, Name: a.name, Status: v.strs.str(a.status), Phase: PhaseNames[a.phase],
		Children: len(a.children), Descendants: int(a.descendants)}
}
