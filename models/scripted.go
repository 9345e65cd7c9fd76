package models

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// ScriptedCall is one tool call of a scripted turn, as written in a scenario (its toml tags
// are the keys of a [[models.<key>.turns.calls]] table).
type ScriptedCall struct {
	// Tool is the name of the tool to call.
	Tool string `toml:"tool"`
	// Args is the call's arguments as decoded from TOML: nested map[string]any and
	// []any holding strings, int64, float64 and bool. Every string leaf is a template.
	Args map[string]any `toml:"args"`
}

// ScriptedTurn is one model turn as written in a scenario (its toml tags are the keys of a
// [[models.<key>.turns]] table).
type ScriptedTurn struct {
	// Stage, when set, asserts the stage the agent must be in when this turn comes
	// up, so a scenario that drifts from its blueprint fails at the first wrong turn.
	Stage string `toml:"stage"`
	// Text is the reply's prose (a template).
	Text string `toml:"text"`
	// Calls is the tools the turn requests; none means the stage is done.
	Calls []ScriptedCall `toml:"calls"`
	// Error, when set, makes the turn a model failure with this message, to test how
	// a blueprint copes with a failing model. A constant Error excludes Text and Calls. An
	// Error with templates fails only the agents for which it renders non-empty; for the
	// others the turn's Text and Calls apply, so one script can fail some agents (say every
	// tenth fan-out item) and not others.
	Error string `toml:"error"`
	// Repeat uses the turn this many times in a row (0 and 1: once).
	Repeat int `toml:"repeat"`
	// Agent, when set, gives the turn to the agent of that name alone ("writers-3", as the trace
	// names it). Each agent walks, in file order, the turns that name no agent and the turns that
	// name it, so the agents sharing one model can each answer differently: what a recorded live
	// run, converted by host record to-scripted, needs. It is a name, not a template.
	Agent string `toml:"agent"`
}

// MaxRepeat bounds a turn's Repeat.
const MaxRepeat = 1_000_000

// WhenExhausted chooses what a scripted model does once every turn has been used (see
// the package documentation).
type WhenExhausted uint8

// The exhaustion policies.
const (
	// ExhaustedFail returns an error wrapping ErrScriptExhausted (the default, so an
	// under-scripted scenario fails loudly).
	ExhaustedFail WhenExhausted = iota
	// ExhaustedFinish returns an empty reply, ending the current stage as done.
	ExhaustedFinish
	// ExhaustedRepeatLast replays the last turn forever.
	ExhaustedRepeatLast
)

var whenExhaustedNames = [...]string{
	ExhaustedFail:       "fail",
	ExhaustedFinish:     "finish",
	ExhaustedRepeatLast: "repeat_last",
}

// String returns the scenario spelling of the policy ("fail", "finish", "repeat_last").
func (w WhenExhausted) String() string {
	if int(w) < len(whenExhaustedNames) {
		return whenExhaustedNames[w]
	}
	return "when_exhausted(" + strconv.Itoa(int(w)) + ")"
}

// ParseWhenExhausted reads the scenario spelling of a policy. An unknown value is an
// error wrapping ErrInvalidScript that lists the valid ones, never a silent default.
func ParseWhenExhausted(s string) (WhenExhausted, error) {
	for i, name := range whenExhaustedNames {
		if s == name {
			return WhenExhausted(i), nil
		}
	}
	return ExhaustedFail, fmt.Errorf("%w: unknown when_exhausted value %q (valid: \"fail\", \"finish\", \"repeat_last\")", ErrInvalidScript, s)
}

// UnmarshalText lets scenario decoders (TOML) read the policy directly, with
// ParseWhenExhausted's validation.
func (w *WhenExhausted) UnmarshalText(text []byte) error {
	v, err := ParseWhenExhausted(string(text))
	if err != nil {
		return err
	}
	*w = v
	return nil
}

// compiledTurn is a ScriptedTurn with its templates parsed and constants marshalled.
type compiledTurn struct {
	number  int // 1-based, for error messages
	stage   string
	text    textTemplate
	calls   []compiledCall
	failure error // a simulated model failure; excludes text and calls
	// failIf is a templated failure: the turn fails when it renders non-empty.
	failIf textTemplate
	// repeat is how many times in a row the turn is used.
	repeat int
	// templated is set when text or any call argument depends on the agent.
	templated bool
	// agent is the one agent the turn is for ("": every agent).
	agent string
}

type compiledCall struct {
	tool string
	args compiledArgs
}

// Scripted is the scripted model back end: it replays turns written in a scenario,
// rendering their templates for each agent. It is immutable after NewScripted and safe
// for concurrent use; each agent's position is its State.Cursor, an index into the sequence
// of turns that agent walks.
type Scripted struct {
	id string
	// turns is every turn in file order, a repeated one once per use: what Plan lists.
	turns []compiledTurn
	// shared is the sequence of an agent no turn names (every turn, when none names one).
	shared sequence
	// byAgent is the sequence of each agent some turn names: the turns naming no agent and
	// its own, in file order. nil when no turn names an agent, so Turn looks nothing up.
	byAgent map[string]*sequence
	when    WhenExhausted
}

// sequence is the turns one agent walks, in order.
type sequence struct {
	turns     []compiledTurn
	exhausted error // prebuilt, so running out costs nothing per call
}

var _ Model = (*Scripted)(nil)

// NewScripted compiles a script once for every agent that uses it. id is the stable
// back-end id recorded in traces (for example "scripted:worker"). Every problem (bad
// template, unknown template field, empty tool name, unsupported argument value, a
// failing turn that also has text or calls) is reported now, wrapping ErrInvalidScript
// and naming the 1-based turn and the key path, e.g.
// "turn 3: calls[0].args.path: template: ...".
func NewScripted(id string, turns []ScriptedTurn, when WhenExhausted) (*Scripted, error) {
	if id == "" {
		return nil, fmt.Errorf("%w: model id must not be empty", ErrInvalidScript)
	}
	if int(when) >= len(whenExhaustedNames) {
		return nil, fmt.Errorf("%w: %s", ErrInvalidScript, when)
	}
	if when == ExhaustedRepeatLast && len(turns) == 0 {
		return nil, fmt.Errorf("%w: when_exhausted \"repeat_last\" needs at least one turn", ErrInvalidScript)
	}
	s := &Scripted{
		id:    id,
		turns: make([]compiledTurn, 0, len(turns)),
		when:  when,
	}
	for i := range turns {
		ct, err := compileTurn(i+1, &turns[i])
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidScript, err)
		}
		// A repeated turn is stored once per use: the cursor stays a plain index, and turns
		// are small (their templates are shared).
		for range ct.repeat {
			s.turns = append(s.turns, ct)
		}
	}
	s.sequences()
	return s, nil
}

// sequences splits the turns into the sequences agents walk: one for every agent when no turn
// names an agent; otherwise one for each named agent and one for the agents no turn names.
func (s *Scripted) sequences() {
	var named []string
	for i := range s.turns {
		if a := s.turns[i].agent; a != "" && !slices.Contains(named, a) {
			named = append(named, a)
		}
	}
	if len(named) == 0 {
		s.shared = sequence{turns: s.turns, exhausted: fmt.Errorf("%w after %d", ErrScriptExhausted, len(s.turns))}
		return
	}
	pick := func(agent string) []compiledTurn {
		var out []compiledTurn
		for i := range s.turns {
			if a := s.turns[i].agent; a == "" || a == agent {
				out = append(out, s.turns[i])
			}
		}
		return out
	}
	shared := pick("")
	s.shared = sequence{turns: shared, exhausted: fmt.Errorf("%w after %d (the turns that name no agent: no turn names this agent)", ErrScriptExhausted, len(shared))}
	s.byAgent = make(map[string]*sequence, len(named))
	for _, a := range named {
		own := pick(a)
		s.byAgent[a] = &sequence{turns: own, exhausted: fmt.Errorf("%w after %d (agent %q's turns and those that name no agent)", ErrScriptExhausted, len(own), a)}
	}
}

// validAgent checks a turn's agent key: an agent's name as the host spells it, so a stray space
// or a template (which the key does not render) is an error rather than a turn no agent gets.
func validAgent(a string) error {
	switch {
	case strings.Contains(a, "{{"):
		return fmt.Errorf("%q is a template; agent takes an agent's name as written (\"writers-3\"), and a turn for every agent names none", a)
	case strings.TrimSpace(a) != a || strings.ContainsFunc(a, unicode.IsControl):
		return fmt.Errorf("%q: an agent's name has no leading or trailing space and no control characters", a)
	}
	return nil
}

func compileTurn(number int, t *ScriptedTurn) (compiledTurn, error) {
	ct := compiledTurn{number: number, stage: t.Stage, repeat: max(t.Repeat, 1), agent: t.Agent}
	if t.Repeat < 0 || t.Repeat > MaxRepeat {
		return ct, fmt.Errorf("turn %d: repeat: %d is out of range (0 to %d)", number, t.Repeat, MaxRepeat)
	}
	if err := validAgent(t.Agent); err != nil {
		return ct, fmt.Errorf("turn %d: agent: %w", number, err)
	}
	if t.Error != "" {
		failIf, err := compileTemplate(t.Error)
		if err != nil {
			return ct, fmt.Errorf("turn %d: error: %w", number, err)
		}
		if failIf.isConstant() {
			if t.Text != "" || len(t.Calls) != 0 {
				return ct, fmt.Errorf("turn %d: error: a failing turn cannot also have text or calls (a templated error may: it fails only the agents it renders non-empty for)", number)
			}
			ct.failure = fmt.Errorf("%w: %s", ErrScriptedFailure, t.Error)
			return ct, nil
		}
		ct.failIf = failIf
		ct.templated = true
	}
	text, err := compileTemplate(t.Text)
	if err != nil {
		return ct, fmt.Errorf("turn %d: text: %w", number, err)
	}
	ct.text = text
	ct.templated = ct.templated || !text.isConstant()
	ct.calls = make([]compiledCall, len(t.Calls))
	for i, call := range t.Calls {
		prefix := "calls[" + strconv.Itoa(i) + "]"
		if call.Tool == "" {
			return ct, fmt.Errorf("turn %d: %s.tool: must not be empty", number, prefix)
		}
		args, err := compileArgs(prefix+".args", call.Args)
		if err != nil {
			return ct, fmt.Errorf("turn %d: %w", number, err)
		}
		ct.calls[i] = compiledCall{tool: call.Tool, args: args}
		ct.templated = ct.templated || args.root != nil
	}
	return ct, nil
}

// ID returns the back-end id given to NewScripted.
func (s *Scripted) ID() string { return s.id }

// Inline reports that a scripted turn is cheap, pure memory work: the host decides it inside
// its dispatch system rather than on the model lane.
func (s *Scripted) Inline() bool { return true }

// Turn replays the turn at st.Cursor of the sequence the agent in v walks (the turns naming
// no agent and those naming it) and advances the cursor (see the package documentation for
// exhaustion). The returned calls carry deterministic ids
// "<agent>-t<turn>-c<index>"; their Args may share memory with other calls and must not
// be modified. A scripted turn is pure memory work that cannot block, so it ignores ctx.
func (s *Scripted) Turn(_ context.Context, st *State, v *View) (Reply, error) {
	if st == nil || v == nil {
		return Reply{}, errors.New("scripted model: Turn needs a state and a view")
	}
	if st.Cursor < 0 {
		return Reply{}, fmt.Errorf("scripted model %s: cursor %d is negative", s.id, st.Cursor)
	}
	seq := &s.shared
	if s.byAgent != nil {
		if own, ok := s.byAgent[v.Agent.Name]; ok {
			seq = own
		}
	}
	idx := int(st.Cursor)
	if idx >= len(seq.turns) {
		switch {
		case s.when == ExhaustedFinish:
			return Reply{}, nil
		case s.when == ExhaustedRepeatLast && len(seq.turns) > 0:
			idx = len(seq.turns) - 1
		default:
			return Reply{}, seq.exhausted
		}
	} else {
		st.Cursor++
	}
	t := &seq.turns[idx]
	if t.stage != "" && t.stage != v.Stage {
		return Reply{}, fmt.Errorf("turn %d: %w: the turn expects stage %q but agent %q is in stage %q",
			t.number, ErrStageMismatch, t.stage, v.Agent.Name, v.Stage)
	}
	if t.failure != nil {
		return Reply{}, t.failure
	}
	if !t.templated {
		return Reply{Text: t.text.literal, Calls: t.constantCalls(v)}, nil
	}
	return t.render(v)
}

// constantCalls builds the calls of a turn with no templates: only ids are per call.
func (t *compiledTurn) constantCalls(v *View) []ToolCall {
	if len(t.calls) == 0 {
		return nil
	}
	calls := make([]ToolCall, len(t.calls))
	t.assignIDs(calls, v)
	for i := range t.calls {
		calls[i].Name = t.calls[i].tool
		calls[i].Args = t.calls[i].args.constant
	}
	return calls
}

// render builds a turn whose text or arguments depend on the agent.
func (t *compiledTurn) render(v *View) (Reply, error) {
	d := newTemplateData(v)
	sc := scratchPool.Get().(*renderScratch)
	defer scratchPool.Put(sc)
	if !t.failIf.isConstant() {
		msg, err := t.failIf.renderString(&sc.text, &d)
		if err != nil {
			return Reply{}, fmt.Errorf("turn %d: error: %w", t.number, err)
		}
		if msg != "" {
			return Reply{}, fmt.Errorf("%w: %s", ErrScriptedFailure, msg)
		}
	}
	text, err := t.text.renderString(&sc.text, &d)
	if err != nil {
		return Reply{}, fmt.Errorf("turn %d: text: %w", t.number, err)
	}
	reply := Reply{Text: text}
	if len(t.calls) == 0 {
		return reply, nil
	}
	reply.Calls = make([]ToolCall, len(t.calls))
	t.assignIDs(reply.Calls, v)
	for i := range t.calls {
		c := &t.calls[i]
		reply.Calls[i].Name = c.tool
		if c.args.root == nil {
			reply.Calls[i].Args = c.args.constant
			continue
		}
		sc.json.Reset()
		if err := c.args.root.render(sc, &d); err != nil {
			return Reply{}, fmt.Errorf("turn %d: %w", t.number, err)
		}
		reply.Calls[i].Args = append([]byte(nil), sc.json.Bytes()...)
	}
	return reply, nil
}

// assignIDs gives calls their ids "<agent>-t<turn>-c<index>". All ids of a turn share
// one string allocation.
func (t *compiledTurn) assignIDs(calls []ToolCall, v *View) {
	var bufStack [128]byte
	var endStack [16]int
	buf, ends := bufStack[:0], endStack[:0]
	for i := range calls {
		buf = append(buf, v.Agent.Name...)
		buf = append(buf, "-t"...)
		buf = strconv.AppendInt(buf, int64(v.Turn), 10)
		buf = append(buf, "-c"...)
		buf = strconv.AppendInt(buf, int64(i), 10)
		ends = append(ends, len(buf))
	}
	all := string(buf)
	start := 0
	for i, end := range ends {
		calls[i].ID = all[start:end]
		start = end
	}
}
