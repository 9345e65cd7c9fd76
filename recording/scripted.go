package recording

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/warrenhq/warren/trace"
)

// ErrNoLiveTurns is a recording without a single live model turn: a run of scripted or js models
// only, whose models are in its scenario already, so there is nothing to turn into a script.
var ErrNoLiveTurns = errors.New("the recording has no live model turns")

// Script is what host record to-scripted makes of a recording: for every live model the run
// asked, the turns that reproduce what it answered, each agent's own, so that the run can be
// run again, and edited by hand, without the provider. Tables and Splice write it as scripted
// model tables (kind = "scripted", one turn per recorded turn, each with agent = its agent).
type Script struct {
	// Source names the recording in the comments written (its path as the user gave it).
	Source string
	// Scenario, ScenarioFile and Seed are the recorded run's, from the header.
	Scenario, ScenarioFile string
	Seed                   uint64
	// Models are the live models, by key.
	Models []ScriptModel
	// Notes say what the script does not reproduce exactly, one line each: arguments TOML
	// cannot write, stages the trace could not tell.
	Notes []string

	scenarioHash string
}

// ScriptModel is one live model of the run, as a scripted model.
type ScriptModel struct {
	// ID is the model's id as recorded ("openai:live"); Kind and Key its two halves: the kind
	// its table had and the key of its table in the scenario ([models.live]).
	ID, Kind, Key string
	// Turns are the turns its agents had, by agent, then turn.
	Turns []ScriptTurn
	// Agents counts the agents among Turns.
	Agents int
}

// ScriptTurn is one live model turn as the run ended it: its final attempt's answer (the
// attempts before were failures the host retried).
type ScriptTurn struct {
	// Agent is the agent's name; Turn its 0-based model turn over the run.
	Agent string
	Turn  uint64
	// Attempts counts the attempts at the turn; Retried holds the errors of those before the
	// last, in order.
	Attempts uint32
	Retried  []string
	// Stage is the stage the agent was in, from the run's trace ("": not known).
	Stage string
	// Text is the answer's prose; Calls its tool calls; Err, when set, the error that failed
	// the final attempt (the script fails the turn with it).
	Text  string
	Calls []ScriptCall
	Err   string
}

// ScriptCall is one tool call of a turn, its arguments decoded for writing as a TOML table.
type ScriptCall struct {
	// Name is the tool.
	Name string
	// Args is the call's arguments as a JSON object decoded with json.Number, its nulls left
	// out (TOML has none); nil for none.
	Args map[string]any
	// Unwritable, when set, is the recorded arguments that are not a JSON object (not JSON,
	// an array, a string): the script calls the tool with none, and a comment shows them.
	Unwritable string
}

// Script gathers the recording's live model turns into scripted models, source naming the
// recording in what is written. Only a turn's final attempt counts; one that failed becomes a
// failing turn. A recording without live model turns is an error wrapping ErrNoLiveTurns, and
// one whose turns name no model (written before entries named theirs) is an error too.
func (t *Tape) Script(source string) (*Script, error) {
	s := &Script{Source: source, Scenario: t.Header.Scenario, ScenarioFile: t.Header.ScenarioFile,
		Seed: t.Header.Seed, scenarioHash: t.Header.ScenarioHash}
	attempts := t.Models()
	if len(attempts) == 0 {
		return nil, fmt.Errorf("%w: its run asked no model of a live kind (such as kind = \"openai\"); its models (scripted, js) are written in its scenario already, so there is nothing to script", ErrNoLiveTurns)
	}
	byID := map[string]*ScriptModel{}
	for i := 0; i < len(attempts); {
		// attempts are in agent, turn and attempt order: the last of a run of one turn is final.
		j := i
		for j+1 < len(attempts) && attempts[j+1].Agent == attempts[i].Agent && attempts[j+1].Turn == attempts[i].Turn {
			j++
		}
		final := &attempts[j]
		if final.Model == "" {
			return nil, fmt.Errorf("%w: agent %s's model turn %d names no model (the recording was written by a host that did not name them): record the run again", ErrBadRecording, final.Agent, final.Turn)
		}
		kind, key, ok := strings.Cut(final.Model, ":")
		if !ok || kind == "" || key == "" {
			return nil, fmt.Errorf("%w: agent %s's model turn %d names model %q, want <kind>:<key> (\"openai:live\")", ErrBadRecording, final.Agent, final.Turn, final.Model)
		}
		m := byID[final.Model]
		if m == nil {
			m = &ScriptModel{ID: final.Model, Kind: kind, Key: key}
			byID[final.Model] = m
		}
		st := ScriptTurn{Agent: final.Agent, Turn: final.Turn, Attempts: attemptOf(final.Attempt), Text: final.Text, Err: final.Err}
		for k := i; k < j; k++ {
			st.Retried = append(st.Retried, attempts[k].Err)
		}
		for c, call := range final.Calls {
			sc, notes := scriptCall(call)
			for _, n := range notes {
				s.note("agent %s, turn %d, call %d (%s): %s", final.Agent, final.Turn, c, call.Name, n)
			}
			st.Calls = append(st.Calls, sc)
		}
		if n := len(m.Turns); n == 0 || m.Turns[n-1].Agent != st.Agent {
			m.Agents++
		}
		m.Turns = append(m.Turns, st)
		i = j + 1
	}
	for _, m := range byID {
		s.Models = append(s.Models, *m)
	}
	slices.SortFunc(s.Models, func(a, b ScriptModel) int { return strings.Compare(a.Key, b.Key) })
	for i := 1; i < len(s.Models); i++ {
		if s.Models[i].Key == s.Models[i-1].Key {
			return nil, fmt.Errorf("%w: models %s and %s share the key %q", ErrBadRecording, s.Models[i-1].ID, s.Models[i].ID, s.Models[i].Key)
		}
	}
	return s, nil
}

// note adds one line to Notes.
func (s *Script) note(format string, args ...any) {
	s.Notes = append(s.Notes, fmt.Sprintf(format, args...))
}

// scriptCall decodes a recorded call's arguments, saying what of them a TOML table cannot hold.
func scriptCall(c ModelCall) (ScriptCall, []string) {
	sc := ScriptCall{Name: c.Name}
	raw := bytes.TrimSpace(c.Args)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return sc, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		sc.Unwritable = string(raw)
		return sc, []string{"its arguments are not JSON, so the script calls the tool with none ({})"}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		sc.Unwritable = string(raw)
		return sc, []string{"its arguments are not a JSON object, so the script calls the tool with none ({})"}
	}
	var notes []string
	sc.Args = dropNulls("args", obj, &notes).(map[string]any)
	if len(sc.Args) == 0 {
		sc.Args = nil
	}
	return sc, notes
}

// dropNulls returns v without its JSON nulls (members and elements), which TOML cannot write,
// noting each at its key path; a number TOML cannot write as one (out of float64's range)
// becomes its text.
func dropNulls(path string, v any, notes *[]string) any {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(v) {
			p := path + "." + k
			if v[k] == nil {
				*notes = append(*notes, p+" is null, which TOML cannot write: left out")
				delete(v, k)
				continue
			}
			v[k] = dropNulls(p, v[k], notes)
		}
		return v
	case []any:
		out := v[:0]
		for i, e := range v {
			p := path + "[" + strconv.Itoa(i) + "]"
			if e == nil {
				*notes = append(*notes, p+" is null, which TOML cannot write: left out")
				continue
			}
			out = append(out, dropNulls(p, e, notes))
		}
		return out
	case json.Number:
		if _, err := v.Int64(); err == nil {
			return v
		}
		if _, err := v.Float64(); err != nil {
			*notes = append(*notes, fmt.Sprintf("%s is %s, out of range for a TOML number: written as a string", path, v))
			return v.String()
		}
	}
	return v
}

// sortedKeys is m's keys in order, so that what is written does not depend on map order.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// traceTurn is what a trace's model_turn event says of a turn.
type traceTurn struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Stage string `json:"stage"`
	Text  string `json:"text"`
	Calls int    `json:"calls"`
	Error string `json:"error"`
}

// AddStages reads the recorded run's trace and sets the stage of every turn it can match: an
// agent's recorded turns are matched, in order, with its model_turn events by what they answered
// (text, number of calls, error), so the events of turns no live model answered (an injected
// fault, another model) are passed over. A trace of another run (its scenario hash differs) is
// an error and sets nothing; an agent whose turns stop matching keeps its stages so far, with a
// note.
func (s *Script) AddStages(r io.Reader) error {
	tr, err := trace.Read(r)
	if err != nil {
		return fmt.Errorf("reading the trace: %w", err)
	}
	if s.scenarioHash != "" && tr.Header.ScenarioHash != s.scenarioHash {
		return fmt.Errorf("the trace is of another run: its scenario hash is %s, the recording's %s", tr.Header.ScenarioHash, s.scenarioHash)
	}
	events := map[string][]traceTurn{}
	for _, line := range tr.Events {
		var ev traceTurn
		if json.Unmarshal(line, &ev) != nil || ev.Kind != trace.KindModelTurn {
			continue
		}
		events[ev.Name] = append(events[ev.Name], ev)
	}
	for mi := range s.Models {
		m := &s.Models[mi]
		next := map[string]int{}
		lost := map[string]bool{}
		for ti := range m.Turns {
			t := &m.Turns[ti]
			if lost[t.Agent] {
				continue
			}
			evs := events[t.Agent]
			j := next[t.Agent]
			for j < len(evs) && !t.matches(&evs[j]) {
				j++
			}
			if j == len(evs) {
				lost[t.Agent] = true
				s.note("agent %s: its turn %d has no matching model_turn in the trace, so it and the turns after it assert no stage", t.Agent, t.Turn)
				continue
			}
			t.Stage = evs[j].Stage
			next[t.Agent] = j + 1
		}
	}
	return nil
}

// matches reports whether a trace's model_turn event is this turn's.
func (t *ScriptTurn) matches(ev *traceTurn) bool {
	if t.Err != "" {
		return ev.Error == t.Err && ev.Text == t.Text
	}
	return ev.Error == "" && ev.Text == t.Text && ev.Calls == len(t.Calls)
}
