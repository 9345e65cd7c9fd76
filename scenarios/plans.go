package scenarios

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/warrenhq/warren/blueprint"
	"github.com/warrenhq/warren/internal/tomlfile"
	"github.com/warrenhq/warren/models"
)

// maxNamed bounds how many names one message of the plan check lists, so that a model driving a
// blueprint of thousands of stages costs no more to report than to load.
const maxNamed = 40

// driven is a blueprint a model drives, by its scenario key, and the stages it is asked in
// (asked[i] for stage i; nil: every stage).
type driven struct {
	key   string
	bp    *blueprint.Blueprint
	asked []bool
}

// drives reports whether the model is asked in stage i of the blueprint.
func (d driven) drives(i int) bool { return d.asked == nil || d.asked[i] }

// place is a stage a turn may run in: a stage of a blueprint the model drives whose model is
// asked.
type place struct {
	d     driven
	stage *blueprint.Stage
}

// reach indexes what a model's turns may meet in the blueprints it drives, built once per model
// so that checking a turn costs map lookups, whatever the blueprints' size.
type reach struct {
	bps []driven
	// byStage holds the places of each stage name; all every place, in blueprint then stage
	// order; fanOut names, per fan-out stage name, the first blueprint that has it.
	byStage map[string][]place
	all     []place
	fanOut  map[string]string
	// offered holds every tool some place offers; dynamic says some blueprint has dynamic_tools.
	offered map[string]bool
	dynamic bool
}

func newReach(bps []driven) *reach {
	r := &reach{bps: bps, byStage: map[string][]place{}, fanOut: map[string]string{}, offered: map[string]bool{}}
	for _, d := range bps {
		r.dynamic = r.dynamic || d.bp.DynamicTools
		for i := range d.bp.Stages {
			st := &d.bp.Stages[i]
			if !d.drives(i) {
				continue
			}
			if st.FanOut != nil {
				if _, ok := r.fanOut[st.Name]; !ok {
					r.fanOut[st.Name] = d.key
				}
				continue
			}
			p := place{d, st}
			r.byStage[st.Name] = append(r.byStage[st.Name], p)
			r.all = append(r.all, p)
			for _, tool := range st.AvailableTools {
				r.offered[tool] = true
			}
		}
	}
	return r
}

// plans checks what every model with a written plan (models.Planned: the scripted kind) asserts
// against the blueprints whose agents it drives (its groups' and its [spawn] entries'):
//
//   - a turn's stage must be a stage of one of them whose model is asked (not a fan-out stage),
//     or the turn could never run: every agent reaching it fails with a stage mismatch;
//   - a call's tool must be one such a stage offers (the turn's stage when it names one, any
//     stage otherwise), or the gate refuses the call every time.
//
// A call of a tool the host does not know is accepted when a blueprint it may run in has
// dynamic_tools (its agents may write the tool during the run), and any call is accepted when an
// expectation counts calls of its tool or checks its results: that is how a scenario says the
// refusal is the point (examples/bad_calls.toml calls no_such_tool, and expects tool_calls = {
// no_such_tool = 1 }). A model one of whose blueprints did not load is not checked: that
// blueprint's error is the one to fix, and its stages are unknown.
func (c *compiler) plans() {
	uses := map[string][]driven{}
	broken := map[string]bool{}
	// add notes that model is asked in the stages of bp that asked(i) says; the same model may
	// drive the same blueprint from several groups, in other stages.
	add := func(model, key string, bp *blueprint.Blueprint, asked func(i int) bool) {
		if bp == nil {
			broken[model] = true
			return
		}
		i := slices.IndexFunc(uses[model], func(d driven) bool { return d.bp == bp })
		if i < 0 {
			uses[model] = append(uses[model], driven{key: key, bp: bp, asked: make([]bool, len(bp.Stages))})
			i = len(uses[model]) - 1
		}
		for s := range bp.Stages {
			uses[model][i].asked[s] = uses[model][i].asked[s] || asked(s)
		}
	}
	addAll := func(modelKey, key string, bp *blueprint.Blueprint, stageModels []StageModel) {
		add(modelKey, key, bp, func(i int) bool {
			return !slices.ContainsFunc(stageModels, func(sm StageModel) bool { return sm.Index == i })
		})
		for _, sm := range stageModels {
			add(sm.ModelKey, key, bp, func(i int) bool { return i == sm.Index })
		}
	}
	for i := range c.sc.Groups {
		g := &c.sc.Groups[i]
		addAll(g.ModelKey, g.BlueprintKey, g.Blueprint, g.StageModels)
	}
	for _, key := range sortedKeys(c.sc.Spawn) {
		sp := c.sc.Spawn[key]
		addAll(sp.ModelKey, key, sp.Blueprint, sp.StageModels)
	}
	deliberate := map[string]bool{}
	for _, fe := range c.file.Expect {
		for tool := range fe.ToolCalls {
			deliberate[tool] = true
		}
		for _, r := range fe.Results {
			deliberate[r.Tool] = true
		}
	}
	known := make(map[string]bool, len(c.known))
	for _, name := range c.known {
		known[name] = true
	}
	for _, key := range sortedKeys(c.models) {
		planned, ok := c.models[key].(models.Planned)
		bps := uses[key]
		if !ok || len(bps) == 0 || broken[key] {
			continue
		}
		slices.SortFunc(bps, func(a, b driven) int { return strings.Compare(a.key, b.key) })
		r := newReach(bps)
		path := tomlfile.JoinKey("models", key)
		for _, turn := range planned.Plan() {
			c.checkTurn(path, turn, r, known, deliberate)
		}
	}
}

// checkTurn checks one planned turn of the model at path.
func (c *compiler) checkTurn(path string, turn models.PlannedTurn, r *reach, known, deliberate map[string]bool) {
	in := r.all
	if turn.Stage != "" {
		in = r.byStage[turn.Stage]
	}
	switch {
	case len(in) == 0 && turn.Stage == "":
		return // every stage is a fan-out stage: the model is never asked, for this turn or any
	case len(in) == 0:
		key := path + "." + turn.Key + ".stage"
		if bp, ok := r.fanOut[turn.Stage]; ok {
			c.errorf(key, "stage %q of blueprint %q is a fan-out stage: its model is never asked, so this turn could never run; the stages whose model is asked: %s", turn.Stage, bp, modelStages(r.bps))
			return
		}
		c.errorf(key, "unknown stage %q: no blueprint this model drives has it, so this turn could never run (an agent reaching it fails with a stage mismatch); the stages whose model is asked: %s", turn.Stage, modelStages(r.bps))
		return
	}
	dynamic := r.dynamic
	if turn.Stage != "" {
		dynamic = slices.ContainsFunc(in, func(p place) bool { return p.d.bp.DynamicTools })
	}
	for _, call := range turn.Calls {
		if deliberate[call.Tool] || dynamic && !known[call.Tool] {
			continue
		}
		if turn.Stage == "" && r.offered[call.Tool] || turn.Stage != "" && slices.ContainsFunc(in, func(p place) bool { return p.stage.Advertises(call.Tool) }) {
			continue
		}
		var offers []string
		for _, p := range in[:min(len(in), maxNamed)] {
			offers = append(offers, fmt.Sprintf("stage %q of blueprint %q offers: %s", p.stage.Name, p.d.key, named(p.stage.AvailableTools)))
		}
		if len(in) > maxNamed {
			offers = append(offers, fmt.Sprintf("… (%d more stages)", len(in)-maxNamed))
		}
		problem := fmt.Sprintf("tool %q is not offered by stage %q", call.Tool, turn.Stage)
		switch {
		case !known[call.Tool]:
			problem = fmt.Sprintf("unknown tool %q: the host has no such tool", call.Tool)
		case turn.Stage == "":
			problem = fmt.Sprintf("tool %q is offered by no stage this model's agents run in", call.Tool)
		}
		c.errorf(path+"."+call.Key, "%s, so the gate refuses every call of it; %s (to make such a call on purpose, count it in an [[expect]]: tool_calls = { %s = 1 })",
			problem, strings.Join(offers, "; "), tomlfile.JoinKey("", call.Tool))
	}
}

// modelStages lists, per blueprint, the stages whose model is asked, for messages.
func modelStages(bps []driven) string {
	var parts []string
	for _, d := range bps {
		var names []string
		for i := range d.bp.Stages {
			if d.bp.Stages[i].FanOut == nil && d.drives(i) {
				names = append(names, d.bp.Stages[i].Name)
			}
		}
		parts = append(parts, "blueprint "+strconv.Quote(d.key)+": "+named(names))
	}
	return strings.Join(parts, "; ")
}

// named joins names for a message, at most maxNamed of them.
func named(names []string) string {
	switch {
	case len(names) == 0:
		return "none"
	case len(names) > maxNamed:
		return strings.Join(names[:maxNamed], ", ") + fmt.Sprintf(", … (%d more)", len(names)-maxNamed)
	}
	return strings.Join(names, ", ")
}
