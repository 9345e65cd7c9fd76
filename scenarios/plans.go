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

// driven is a blueprint a model drives, by its scenario key.
type driven struct {
	key string
	bp  *blueprint.Blueprint
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
// no_such_tool = 1 }).
func (c *compiler) plans() {
	uses := map[string][]driven{}
	add := func(model, key string, bp *blueprint.Blueprint) {
		if bp == nil || slices.ContainsFunc(uses[model], func(d driven) bool { return d.bp == bp }) {
			return
		}
		uses[model] = append(uses[model], driven{key, bp})
	}
	for i := range c.sc.Groups {
		g := &c.sc.Groups[i]
		add(g.ModelKey, g.BlueprintKey, g.Blueprint)
	}
	for _, key := range sortedKeys(c.sc.Spawn) {
		sp := c.sc.Spawn[key]
		add(sp.ModelKey, key, sp.Blueprint)
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
	for _, key := range sortedKeys(c.models) {
		planned, ok := c.models[key].(models.Planned)
		bps := uses[key]
		if !ok || len(bps) == 0 {
			continue
		}
		slices.SortFunc(bps, func(a, b driven) int { return strings.Compare(a.key, b.key) })
		path := tomlfile.JoinKey("models", key)
		for _, turn := range planned.Plan() {
			c.checkTurn(path, turn, bps, deliberate)
		}
	}
}

// checkTurn checks one planned turn of the model at path, which drives bps.
func (c *compiler) checkTurn(path string, turn models.PlannedTurn, bps []driven, deliberate map[string]bool) {
	// where lists the stages the turn may run in, in the blueprints that have them.
	type where struct {
		d     driven
		stage *blueprint.Stage
	}
	var in []where
	fanOut := ""
	for _, d := range bps {
		for i := range d.bp.Stages {
			st := &d.bp.Stages[i]
			switch {
			case turn.Stage != "" && st.Name != turn.Stage:
			case st.FanOut != nil:
				if turn.Stage != "" {
					fanOut = d.key
				}
			default:
				in = append(in, where{d, st})
			}
		}
	}
	if len(in) == 0 && turn.Stage == "" {
		return // every stage is a fan-out stage: the model is never asked, for this turn or any
	}
	if len(in) == 0 {
		key := path + "." + turn.Key + ".stage"
		if fanOut != "" {
			c.errorf(key, "stage %q of blueprint %q is a fan-out stage: its model is never asked, so this turn could never run; the stages whose model is asked: %s", turn.Stage, fanOut, modelStages(bps))
			return
		}
		c.errorf(key, "unknown stage %q: no blueprint this model drives has it, so this turn could never run (an agent reaching it fails with a stage mismatch); the stages whose model is asked: %s", turn.Stage, modelStages(bps))
		return
	}
	for _, call := range turn.Calls {
		if deliberate[call.Tool] {
			continue
		}
		offered, dynamic := false, false
		for _, w := range in {
			offered = offered || w.stage.Advertises(call.Tool)
			dynamic = dynamic || w.d.bp.DynamicTools
		}
		known := slices.Contains(c.known, call.Tool)
		if offered || dynamic && !known {
			continue
		}
		key := path + "." + call.Key
		var offers []string
		for _, w := range in {
			offers = append(offers, fmt.Sprintf("stage %q of blueprint %q offers: %s", w.stage.Name, w.d.key, named(w.stage.AvailableTools)))
		}
		if len(offers) > maxNamed {
			offers = append(offers[:maxNamed], fmt.Sprintf("… (%d more stages)", len(offers)-maxNamed))
		}
		problem := fmt.Sprintf("tool %q is not offered by stage %q", call.Tool, turn.Stage)
		switch {
		case !known:
			problem = fmt.Sprintf("unknown tool %q: the host has no such tool", call.Tool)
		case turn.Stage == "":
			problem = fmt.Sprintf("tool %q is offered by no stage this model's agents run in", call.Tool)
		}
		c.errorf(key, "%s, so the gate refuses every call of it; %s (to make such a call on purpose, count it in an [[expect]]: tool_calls = { %s = 1 })",
			problem, strings.Join(offers, "; "), tomlfile.JoinKey("", call.Tool))
	}
}

// modelStages lists, per blueprint, the stages whose model is asked, for messages.
func modelStages(bps []driven) string {
	var parts []string
	for _, d := range bps {
		var names []string
		for i := range d.bp.Stages {
			if d.bp.Stages[i].FanOut == nil {
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
