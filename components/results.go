package components

import (
	"strings"
	"unicode/utf8"
)

// ResultWant is which results of a tool a ResultWatch counts.
type ResultWant uint8

// The results a watch counts.
const (
	// AnyResult counts a success or an error.
	AnyResult ResultWant = iota
	// OKResult counts successes only.
	OKResult
	// ErrorResult counts error results only.
	ErrorResult
)

// ResultWatch is one result expectation of a scenario ([[expect.results]]) that the run watches
// for: whether some call of Tool returned a result containing Contains, of the kind Want. Only a
// scenario's result expectations need tool results after the fact, and an agent's conversation
// keeps only its latest messages, so the results are looked at as they are filed and each
// watch keeps one ResultSeen per agent. A profile's Watches are the watches its agents may
// concern; a profile with none (every run that asks nothing) pays one length check per turn.
type ResultWatch struct {
	// ID identifies the watch in the scenario, so a final record's ResultSeen finds its
	// expectation.
	ID int32
	// Agent, when set, limits the watch to the agent of that name (an expectation about one
	// agent; its group is not known before the run).
	Agent string
	// Tool is the tool whose results count; Contains, when set, must be in the result's content.
	Tool, Contains string
	Want           ResultWant
}

// ResultSeen is what one agent's results showed of one watch: whether one matched, and until
// one did, how many calls of the watch's tool there were and the start of the last one's result,
// for a failure message. It is bounded: ResultSnippet bytes of content, whatever the results.
type ResultSeen struct {
	ID      int32
	Matched bool
	// Calls counts the calls of the tool seen before one matched; Last is the start of the
	// last one's content and LastError whether it was an error result.
	Calls     uint32
	Last      string
	LastError bool
}

// ResultSnippet bounds ResultSeen.Last, in bytes.
const ResultSnippet = 120

// ResultsSeen is what one agent's results showed of its profile's watches: an entry per watch of
// a tool it called.
type ResultsSeen struct {
	List []ResultSeen
}

// WatchResult files one tool result of the agent under watches (its profile's): each watch of
// tool (and, if it names one, of this agent) gets the agent's ResultSeen, made on first use.
func (d *AgentData) WatchResult(watches []ResultWatch, tool, content string, isError bool) {
	for i := range watches {
		w := &watches[i]
		if w.Tool != tool || w.Agent != "" && w.Agent != d.Name {
			continue
		}
		if d.Seen == nil {
			d.Seen = &ResultsSeen{}
		}
		s := findSeen(&d.Seen.List, w.ID)
		if s.Matched {
			continue
		}
		kindOK := w.Want == AnyResult || (w.Want == ErrorResult) == isError
		if kindOK && strings.Contains(content, w.Contains) {
			*s = ResultSeen{ID: w.ID, Matched: true, Calls: s.Calls + 1}
			continue
		}
		s.Calls++
		s.Last, s.LastError = snippet(content), isError
	}
}

// findSeen returns the entry of watch id in *seen, adding it if there is none.
func findSeen(seen *[]ResultSeen, id int32) *ResultSeen {
	for i := range *seen {
		if (*seen)[i].ID == id {
			return &(*seen)[i]
		}
	}
	*seen = append(*seen, ResultSeen{ID: id})
	return &(*seen)[len(*seen)-1]
}

// snippet is the start of content, at most ResultSnippet bytes cut at a character boundary,
// copied so that it does not keep the whole result alive.
func snippet(content string) string {
	if len(content) <= ResultSnippet {
		return strings.Clone(content)
	}
	cut := ResultSnippet
	for cut > 0 && !utf8.RuneStart(content[cut]) {
		cut--
	}
	return strings.Clone(content[:cut]) + "…"
}

// Seen returns the record's entry for watch id, if the agent called the watch's tool.
func (r *FinalRecord) Seen(id int32) (ResultSeen, bool) {
	for _, s := range r.Results {
		if s.ID == id {
			return s, true
		}
	}
	return ResultSeen{}, false
}
