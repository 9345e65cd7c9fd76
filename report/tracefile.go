package report

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"strconv"

	"github.com/valyala/fastjson"

	"github.com/warrenhq/warren/trace"
)

// stageKey names a stage of a blueprint.
type stageKey struct {
	Blueprint, Stage string
}

// traceStats is what the report takes from a trace, read once, line by line, keeping counters
// and never an event line: so a 60 MB trace costs its parse, not its size in memory.
type traceStats struct {
	header trace.Header
	// notes say what the trace lacks (no end event, a cut last line).
	notes []string
	// end is the end event's own fields in written order, when the trace has one.
	end []keyValue

	lastTick int64
	// edges counts the edges agents took: the transition events, those that end an agent (to
	// "", end done or failed) included.
	edges map[edgeKey]int
	// otherEnds counts, by blueprint and status, the agents that ended on no edge of their graph
	// (killed, out of turns, a failed condition).
	otherEnds map[[2]string]int
	// enters counts stage_enter events; stageOrder lists the stages in the order first entered.
	enters     map[stageKey]int
	stageOrder []stageKey
	// eventsAt and finishedAt count the events and the terminal events of each tick.
	eventsAt, finishedAt map[int64]int64
	// models is the token spend of each model that reported tokens, by name.
	models []*modelSpend
	// costAt is the cost of each tick's model turns, summed exactly.
	costAt map[int64]*decimalSum
}

// modelSpend is one model's live turns: their count, their tokens and their cost.
type modelSpend struct {
	Model                                    string
	Turns, Prompt, Completion, Read, Written int64
	Cost                                     decimalSum
	// tokensAt is prompt plus completion tokens by tick.
	tokensAt map[int64]int64
}

// readTrace reads the trace at path: a version 5 header (checked by package trace), then one JSON
// object a line. A last line cut mid-line is set aside with a note, as trace.Read does; any other
// bad line is an error naming it.
func readTrace(path string) (*traceStats, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, badWrap(err, "%s", path)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 256<<10)
	first, err := br.ReadBytes('\n')
	if err != nil && err != io.EOF {
		return nil, badWrap(err, "%s", path)
	}
	t, err := trace.Read(bytes.NewReader(first))
	if err != nil {
		return nil, badWrap(err, "%s", path)
	}
	ts := &traceStats{header: t.Header, edges: map[edgeKey]int{}, otherEnds: map[[2]string]int{},
		enters: map[stageKey]int{}, eventsAt: map[int64]int64{}, finishedAt: map[int64]int64{}, costAt: map[int64]*decimalSum{}}
	blueprints := map[int64]string{}
	ended := map[int64]bool{} // agents a transition ended, whose terminal event it explains
	modelIdx := map[string]int{}
	var p fastjson.Parser
	lastKind := ""
	for line := 2; ; line++ {
		raw, err := br.ReadBytes('\n')
		if err == io.EOF && len(raw) == 0 {
			break
		}
		if err != nil && err != io.EOF {
			return nil, badWrap(err, "%s", path)
		}
		whole := err == nil
		raw = bytes.TrimSuffix(raw, []byte{'\n'})
		v, perr := p.ParseBytes(raw)
		if perr != nil && !whole {
			ts.notes = append(ts.notes, "line "+strconv.Itoa(line)+" of the trace was cut mid-line: read the whole events before it")
			break
		}
		if perr != nil || v.Type() != fastjson.TypeObject {
			return nil, badf("%s:%d: not a JSON object; every line after the header is one event", path, line)
		}
		kind, err := ts.observe(v, blueprints, ended, modelIdx)
		if err != nil {
			return nil, badf("%s:%d: %v", path, line, err)
		}
		lastKind = kind
	}
	if lastKind != trace.KindEnd {
		ts.notes = append([]string{"the trace is incomplete: it has no end event (the run was killed, or is still running)"}, ts.notes...)
	}
	return ts, nil
}

// observe counts one event; it returns the event's kind.
func (ts *traceStats) observe(v *fastjson.Value, blueprints map[int64]string, ended map[int64]bool, modelIdx map[string]int) (string, error) {
	kind := string(v.GetStringBytes("kind"))
	tickV := v.Get("tick")
	if kind == "" || tickV == nil {
		return "", errors.New(`an event needs its "tick" and "kind"`)
	}
	tick, err := tickV.Int64()
	if err != nil || tick < 0 {
		return "", errors.New(`"tick" must be a whole number, 0 or more`)
	}
	ts.lastTick = max(ts.lastTick, tick)
	ts.eventsAt[tick]++
	agent := v.GetInt64("agent")
	str := func(name string) string { return string(v.GetStringBytes(name)) }
	bpOf := func() (string, error) {
		bp, ok := blueprints[agent]
		if !ok {
			return "", errors.New("a " + kind + " event of agent " + strconv.FormatInt(agent, 10) + " before its spawn")
		}
		return bp, nil
	}
	switch kind {
	case trace.KindSpawn:
		blueprints[agent] = str("blueprint")
	case trace.KindStageEnter:
		bp, err := bpOf()
		if err != nil {
			return "", err
		}
		k := stageKey{bp, str("stage")}
		if ts.enters[k] == 0 {
			ts.stageOrder = append(ts.stageOrder, k)
		}
		ts.enters[k]++
	case trace.KindTransition:
		bp, err := bpOf()
		if err != nil {
			return "", err
		}
		end := str("end")
		ts.edges[edgeKey{Blueprint: bp, From: str("from"), To: str("to"), On: str("on"), When: str("when"), End: end}]++
		if end != "" {
			ended[agent] = true
		}
	case trace.KindTerminal:
		bp, err := bpOf()
		if err != nil {
			return "", err
		}
		ts.finishedAt[tick]++
		if !ended[agent] {
			// Killed, out of turns, a condition that failed: no edge of its graph ended it.
			ts.otherEnds[[2]string{bp, str("status")}]++
		}
		delete(ended, agent)
	case trace.KindModelTurn:
		return kind, ts.observeTurn(v, tick, modelIdx)
	case trace.KindEnd:
		ts.end = ts.end[:0]
		v.GetObject().Visit(func(key []byte, f *fastjson.Value) {
			switch k := string(key); k {
			case "tick", "seq", "agent", "name", "kind":
			default:
				val := f.String()
				if f.Type() == fastjson.TypeString {
					val = string(f.GetStringBytes())
				}
				ts.end = append(ts.end, keyValue{Key: k, Value: val})
			}
		})
	}
	return kind, nil
}

// observeTurn adds a model turn's tokens and cost, when it reported any, to its model's spend.
func (ts *traceStats) observeTurn(v *fastjson.Value, tick int64, modelIdx map[string]int) error {
	if v.Get("prompt_tokens") == nil && v.Get("completion_tokens") == nil && v.Get("cost_usd") == nil {
		return nil
	}
	name := string(v.GetStringBytes("model"))
	i, ok := modelIdx[name]
	if !ok {
		i = len(ts.models)
		modelIdx[name] = i
		ts.models = append(ts.models, &modelSpend{Model: name, tokensAt: map[int64]int64{}})
	}
	m := ts.models[i]
	m.Turns++
	prompt, completion := v.GetInt64("prompt_tokens"), v.GetInt64("completion_tokens")
	m.Prompt += prompt
	m.Completion += completion
	m.Read += v.GetInt64("cache_read_tokens")
	m.Written += v.GetInt64("cache_write_tokens")
	m.tokensAt[tick] += prompt + completion
	if c := v.Get("cost_usd"); c != nil {
		s := string(c.GetStringBytes())
		if !m.Cost.add(s) {
			return errors.New(`"cost_usd" must be a decimal number of dollars written as a string ("0.0000225"), not ` + c.String())
		}
		if ts.costAt[tick] == nil {
			ts.costAt[tick] = &decimalSum{}
		}
		ts.costAt[tick].add(s)
	}
	return nil
}
