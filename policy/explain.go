package policy

import (
	"strconv"
	"strings"
	"text/tabwriter"
)

// Step is one layer's contribution to a decision, for `host explain`. Layer is one of the
// Layer* names, or "result" (the verdict of one key, which opens that key's steps; Effect then
// holds the deciding layer and reason) or "coverage" (a key no safe key or grant covers, or
// one that needs none); Key is the entry, flag or key the step is about; Value the verdict it
// holds ("" when the layer says nothing); Effect what it did to the decision, in words.
type Step struct {
	Layer, Key, Value, Effect string
}

// Pseudo-layers that appear only in explanations.
const (
	stepResult   = "result"
	stepCoverage = "coverage"
)

// Explanation is a decision together with every layer's contribution to it, key by key.
type Explanation struct {
	// Decision is what the gate would decide: Decide followed by Cover.
	Decision Decision
	// Steps hold, for each key, a "result" step and then the layers in precedence order (host,
	// blueprint, default, launch); then the redirect rule; then the coverage of asking keys.
	Steps []Step
}

// Explain walks c through every layer and reports what each one said and did, together with
// the final decision (Decide followed by Cover with safe and g). It builds strings freely: it is
// for people, not for the hot path.
func (r *Resolver) Explain(c Call, safe Coverer, g *Grants) Explanation {
	return r.ExplainUnder(c, safe, g, nil)
}

// ExplainUnder is Explain for an agent whose ancestors set ceilings (nearest first): the agent's
// own layers, then what each ancestor holds for the call in its spawn-time stage, then the
// coverage under them all. Its Decision is CoverUnder after DecideUnder, what the gate decides.
func (r *Resolver) ExplainUnder(c Call, safe Coverer, g *Grants, ceilings []Ceiling) Explanation {
	d := r.DecideUnder(c, ceilings)
	x := Explanation{Decision: r.CoverUnder(c, d, safe, g, ceilings)}
	st := r.stageSlot(c.Stage)
	switch {
	case c.Tool != ShellTool:
		e := r.eval(c.Tool, c.Tool, [3]string{c.Tool}, 1, st, DefaultVerdict(c.Tool), defaultReason(c.Tool))
		r.applyLaunch(&e, true, "")
		x.Steps = r.keySteps(e, [3]string{c.Tool}, 1, st)
	case !c.Parsed:
		x.Steps = r.unparsedSteps(st)
	default:
		x.Steps = r.shellSteps(c, st)
	}
	for i := range ceilings {
		x.Steps = append(x.Steps, ceilings[i].step(c))
	}
	x.Steps = append(x.Steps, r.coverSteps(c, d, safe, g, ceilings)...)
	return x
}

// step reports what the ancestor holds for c in its spawn-time stage.
func (ceil *Ceiling) step(c Call) Step {
	if ceil.Resolver == nil {
		d := ceil.noResolver(c)
		return Step{Layer: LayerParent, Key: d.Key, Value: d.Verdict.String(), Effect: d.Reason}
	}
	at := c
	at.Stage = ceil.Stage
	d := ceil.Resolver.Decide(at)
	return Step{Layer: LayerParent, Key: d.Key, Value: d.Verdict.String(), Effect: ceil.who() + ": " + d.Layer + ": " + d.Reason}
}

// keySteps reports the key's result, then the host, blueprint, default and launch layers that
// led to it.
func (r *Resolver) keySteps(e keyEval, names [3]string, n, st int) []Step {
	steps := []Step{resultStep(e.key, e.decision())}
	steps = append(steps, r.layerSteps(e, names, n, st)...)
	return append(steps, r.launchSteps(e)...)
}

// resultStep opens the steps of one key with the verdict they lead to.
func resultStep(key string, d Decision) Step {
	return Step{Layer: stepResult, Key: key, Value: d.Verdict.String(), Effect: d.Layer + ": " + d.Reason}
}

// layerSteps reports what each host and blueprint layer holds for the key (the most specific
// name present in that layer alone) and what became of it, then the built-in default.
func (r *Resolver) layerSteps(e keyEval, names [3]string, n, st int) []Step {
	var global, perBlueprint, stage, agent *entry
	for _, name := range names[:n] {
		if s := r.slots[name]; s != nil {
			global = firstSet(global, s.global)
			perBlueprint = firstSet(perBlueprint, s.perBlueprint)
			stage = firstSet(stage, s.stage(st))
			agent = firstSet(agent, s.agent)
		}
	}
	steps := []Step{entryStep(LayerHost, e.key, global, e.ceiling, "ceiling")}
	if r.blueprint != "" {
		steps = append(steps, entryStep(r.hostBlueprintLayer, e.key, perBlueprint, e.ceiling, "ceiling"))
	}
	bpEffect := blueprintEffect(e)
	steps = append(steps,
		entryStep(LayerBlueprintStage, e.key, stage, e.blueprint, bpEffect),
		entryStep(LayerBlueprintAgent, e.key, agent, e.blueprint, bpEffect))
	effect := "applies"
	if e.baseLayer != LayerDefault {
		effect = "superseded by " + e.baseLayer
	}
	return append(steps, Step{Layer: LayerDefault, Key: e.tool, Value: e.dflt.String(), Effect: effect})
}

// entryStep describes the entry a layer holds: not set, overridden by the entry its merged layer
// chose instead, or chosen (with the given effect).
func entryStep(layer, key string, own, chosen *entry, effect string) Step {
	switch {
	case own == nil:
		return Step{Layer: layer, Key: key, Effect: "not set"}
	case own != chosen:
		effect = "overridden by " + chosen.layer + " entry " + chosen.name
	}
	return Step{Layer: layer, Key: own.name, Value: own.verdict.String(), Effect: effect}
}

// blueprintEffect describes what the blueprint's value did against the ceiling or the default.
func blueprintEffect(e keyEval) string {
	b, c := e.blueprint, e.ceiling
	if b == nil {
		return ""
	}
	switch {
	case c != nil && b.verdict > c.verdict:
		return "tightens the ceiling (" + c.verdict.String() + ")"
	case c != nil && b.verdict == c.verdict:
		return "agrees with the ceiling"
	case c != nil:
		return "ignored: a blueprint may not exceed the ceiling (" + c.verdict.String() + ")"
	case b.verdict > e.dflt:
		return "tightens the default (" + e.dflt.String() + ")"
	case b.verdict == e.dflt:
		return "agrees with the default"
	case b.mayLoosen:
		return "loosens the default (" + e.dflt.String() + "): " + b.loosenWhy
	default:
		return "ignored: may not loosen the default (" + e.dflt.String() + ") without [security] allow_blueprint_permissions"
	}
}

// launchSteps reports the launch flags that govern the key and --yolo, with what each did.
func (r *Resolver) launchSteps(e keyEval) []Step {
	var steps []Step
	for _, f := range []*flag{e.denyFlag, e.flag} {
		if f != nil {
			steps = append(steps, Step{Layer: f.layer, Key: f.name, Value: f.verdict.String(), Effect: flagEffect(e, f)})
		}
	}
	if r.yolo {
		steps = append(steps, Step{Layer: LayerLaunchYolo, Value: Allow.String(), Effect: yoloEffect(e)})
	}
	return steps
}

func flagEffect(e keyEval, f *flag) string {
	switch {
	case e.base == Deny:
		return "no effect: deny is terminal"
	case f.verdict == Deny:
		return "denies"
	case e.denyFlag != nil:
		return "no effect: --deny " + e.denyFlag.name + " denies the key, and deny is terminal"
	case e.layer == f.layer && f.verdict == Ask && e.base == Allow:
		return "turns allow into ask"
	case e.layer == f.layer && f.verdict == Ask:
		return "keeps ask despite --yolo"
	case e.layer == f.layer:
		return "turns ask into allow"
	case e.verdict == f.verdict:
		return "no change: already " + f.verdict.String()
	default:
		return "no effect: " + e.reason
	}
}

func yoloEffect(e keyEval) string {
	switch {
	case e.layer == LayerLaunchYolo:
		return "turns ask into allow"
	case e.verdict == Deny:
		return "no effect: deny is terminal"
	case e.flag != nil:
		return "no effect: the more specific " + e.flag.option + " " + e.flag.name + " decides"
	case e.verdict == Allow:
		return "no change: already allow"
	default:
		return "no effect: " + e.reason
	}
}

// shellSteps explains a parsed shell line key by key (an opaque key ends with its floor), then
// the redirect rule.
func (r *Resolver) shellSteps(c Call, st int) []Step {
	keys := c.Keys
	if len(keys) == 0 {
		keys = []string{ShellTool}
	}
	var steps []Step
	strictest, redirect := Verdict(0), ""
	for _, key := range keys {
		names, n := shellChain(key)
		e := r.evalShellKey(key, st)
		why := c.opacity(key)
		if why == "" {
			steps = append(steps, r.keySteps(e, names, n, st)...)
			strictest = max(strictest, e.verdict)
		} else {
			d := r.opaqueFloor(e, why, st)
			steps = append(steps, resultStep(key, d))
			steps = append(steps, r.layerSteps(e, names, n, st)...)
			steps = append(steps, r.launchSteps(e)...)
			steps = append(steps, Step{Layer: LayerOpaque, Key: key, Value: d.Verdict.String(), Effect: opaqueEffect(e, d, why)})
			strictest = max(strictest, d.Verdict)
		}
		if redirect == "" && IsRedirectKey(key) {
			redirect = key
		}
	}
	if redirect == "" {
		return steps
	}
	steps = append(steps, r.writeFileSteps(st)...)
	wf := r.writeFile[st].Verdict
	effect := "not stricter than the line's keys: no change"
	if wf > strictest {
		effect = "stricter than the line's keys: decides"
	}
	return append(steps, Step{Layer: LayerWriteFile, Key: redirect, Value: wf.String(), Effect: "the line redirects output; write_file's verdict is " + effect})
}

// opaqueEffect says what the opaque floor did to a key whose own decision is e's.
func opaqueEffect(e keyEval, d Decision, why string) string {
	switch {
	case d.Layer == LayerOpaque:
		return "denies: " + OpacityReason(e.key, why) + ", and a layer denies a shell key; name " + namesOf(e.key) + " in the host config to decide it"
	case e.verdict == Deny:
		return "no effect: already deny (" + OpacityReason(e.key, why) + ")"
	default:
		return "no effect: " + OpacityReason(e.key, why) + ", but no layer denies a shell key, or a permission names the key"
	}
}

// writeFileSteps explains write_file's own verdict, which the redirect rule borrows.
func (r *Resolver) writeFileSteps(st int) []Step {
	const tool = "write_file"
	e := r.eval(tool, tool, [3]string{tool}, 1, st, DefaultVerdict(tool), defaultReason(tool))
	r.applyLaunch(&e, true, "")
	return r.keySteps(e, [3]string{tool}, 1, st)
}

// unparsedSteps explains a line that could not be analysed.
func (r *Resolver) unparsedSteps(st int) []Step {
	out := r.decideUnparsed(st)
	bare := r.eval(ShellTool, ShellTool, [3]string{ShellTool}, 1, st, Ask, reasonShellToolDefault)
	steps := []Step{resultStep(ShellTool, out.decision),
		{Layer: LayerUnparsed, Key: ShellTool, Effect: "the line could not be analysed, so it has no keys and is judged as the tool shell"}}
	steps = append(steps, r.layerSteps(bare, [3]string{ShellTool}, 1, st)...)
	switch {
	case bare.base == Deny:
		return steps
	case out.floored:
		steps = append(steps, Step{Layer: LayerUnparsed, Key: ShellTool, Value: Ask.String(), Effect: "raises allow to ask: an unanalysable line is at least ask"})
	default:
		steps = append(steps, Step{Layer: LayerUnparsed, Key: ShellTool, Value: Ask.String(), Effect: "already at least ask"})
	}
	steps = append(steps, r.launchSteps(out.shell)...)
	if out.shell.verdict != Deny && out.deniedBy != "" {
		steps = append(steps, Step{Layer: LayerUnparsed, Key: out.deniedBy, Value: Deny.String(),
			Effect: "denies the line: it cannot be shown to avoid " + out.deniedBy})
	}
	if out.shell.verdict != Deny && out.deniedBy == "" {
		steps = append(steps, r.writeFileSteps(st)...)
		effect := "not stricter: no change"
		if out.writeFile {
			effect = "stricter: decides"
		}
		steps = append(steps, Step{Layer: LayerWriteFile, Key: ShellTool, Value: r.writeFile[st].Verdict.String(),
			Effect: "the line may redirect output; write_file's verdict is " + effect})
	}
	return steps
}

// coverSteps explains, for a call that asks, what covers each asking key (under ceilings, a
// safe key must be safe for every ancestor too).
func (r *Resolver) coverSteps(c Call, d Decision, safe Coverer, g *Grants, ceilings []Ceiling) []Step {
	if d.Verdict != Ask {
		return nil
	}
	if len(ceilings) > 0 {
		safe = safeUnder{own: safe, ceilings: ceilings}
	}
	if c.Tool == ShellTool && !c.Parsed {
		return []Step{{Layer: stepCoverage, Key: ShellTool, Value: "not covered", Effect: "a line that could not be analysed is never covered"}}
	}
	st := r.stageSlot(c.Stage)
	keys := c.Keys
	switch {
	case c.Tool != ShellTool:
		keys = []string{c.Tool}
	case len(keys) == 0:
		keys = []string{ShellTool}
	}
	var steps []Step
	for _, key := range keys {
		v, launchAsk := Ask, r.launchAsksUnder(key, ceilings)
		if c.Tool == ShellTool {
			v, launchAsk = r.keyVerdictUnder(key, c.opacity(key), st, ceilings)
		}
		if v == Allow {
			steps = append(steps, Step{Layer: stepCoverage, Key: key, Value: "not needed", Effect: "the key resolves to allow"})
			continue
		}
		layer, ok := coverKey(key, launchAsk, c.Stage, safe, g)
		switch {
		case ok:
			steps = append(steps, Step{Layer: layer, Key: key, Value: "covered", Effect: coverEffect(layer, c.Stage)})
		case safe != nil && safe.Covers(key) && IsRedirectKey(key):
			steps = append(steps, Step{Layer: stepCoverage, Key: key, Value: "not covered", Effect: "a redirect writes a file, so it is never safe; it needs a prompt"})
		case safe != nil && safe.Covers(key) && IsEnvKey(key):
			steps = append(steps, Step{Layer: stepCoverage, Key: key, Value: "not covered", Effect: "an environment assignment is never safe; it needs a prompt"})
		case safe != nil && safe.Covers(key) && launchAsk:
			steps = append(steps, Step{Layer: stepCoverage, Key: key, Value: "not covered", Effect: "--ask overrides the safe list; it needs a prompt"})
		default:
			steps = append(steps, Step{Layer: stepCoverage, Key: key, Value: "not covered", Effect: "no safe key or grant; it needs a prompt"})
		}
	}
	return steps
}

func coverEffect(layer string, stage int) string {
	switch layer {
	case LayerSafe:
		return "a safe key"
	case LayerGrantRun:
		return "granted for the rest of the run"
	default:
		return "granted for stage " + strconv.Itoa(stage)
	}
}

// String renders the explanation as a readable report: the decision, then for each key its
// verdict followed by one aligned line per layer, then the coverage of the asking keys.
func (e Explanation) String() string {
	var b strings.Builder
	d := e.Decision
	b.WriteString(d.Verdict.String() + " (" + d.Layer + ", key " + d.Key + "): " + d.Reason + "\n")
	w := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	inCoverage := false
	for _, s := range e.Steps {
		switch {
		case s.Layer == stepResult:
			// A line without tabs ends the aligned block, so each key is aligned on its own.
			_, _ = w.Write([]byte("  " + s.Key + " -> " + s.Value + " (" + s.Effect + ")\n"))
			continue
		case !inCoverage && isCoverageStep(s.Layer):
			inCoverage = true
			_, _ = w.Write([]byte("  coverage\n"))
		}
		value := s.Value
		if value == "" {
			value = "-"
		}
		key := s.Key
		if key == "" {
			key = "-"
		}
		// Writes to a strings.Builder cannot fail.
		_, _ = w.Write([]byte("    " + s.Layer + "\t" + key + "\t" + value + "\t" + s.Effect + "\n"))
	}
	_ = w.Flush()
	return b.String()
}

func isCoverageStep(layer string) bool {
	switch layer {
	case stepCoverage, LayerSafe, LayerGrantRun, LayerGrantStage:
		return true
	}
	return false
}
