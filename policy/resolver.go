package policy

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Layer names a Decision may carry. They are stable: they go into traces, and tools that read
// traces match on them. A per-blueprint host entry reports "host:<blueprint name>".
const (
	LayerHost           = "host"            // host [tool_permissions]
	LayerBlueprintStage = "blueprint:stage" // the current stage's tool_permissions
	LayerBlueprintAgent = "blueprint:agent" // the blueprint's agent-level tool_permissions
	LayerDefault        = "default"         // the built-in default
	LayerLaunchDeny     = "launch:deny"     // --deny
	LayerLaunchAsk      = "launch:ask"      // --ask
	LayerLaunchAllow    = "launch:allow"    // --allow
	LayerLaunchYolo     = "launch:yolo"     // --yolo
	LayerWriteFile      = "write_file"      // a shell redirect took write_file's verdict
	LayerUnparsed       = "unparsed"        // the shell line could not be analysed
	LayerOpaque         = "opaque"          // a key runs code the line does not show, and a shell key is denied
	LayerSafe           = "safe"            // every asking key is a safe key
	LayerGrantStage     = "grant:stage"     // covered with the help of a stage grant
	LayerGrantRun       = "grant:run"       // covered with the help of a run grant
)

// hostBlueprintLayerPrefix starts the layer name of a host [agent_tool_permissions.<name>] entry.
const hostBlueprintLayerPrefix = "host:"

// ErrBadEntry reports a permission entry with an empty name, which could never match a call and
// so can only be a mistake in the config or blueprint it came from.
var ErrBadEntry = errors.New("invalid permission entry")

// HostLayer is the user's ceiling, from the host config. A blueprint may never exceed it.
type HostLayer struct {
	// Global is [tool_permissions]: tool or key name -> verdict.
	Global map[string]Verdict
	// PerBlueprint is [agent_tool_permissions.<blueprint name>]; an entry there wins over the
	// Global entry of the same name for agents of that blueprint.
	PerBlueprint map[string]map[string]Verdict
	// AllowBlueprintPermissions is [security] allow_blueprint_permissions: whether a blueprint
	// may loosen a built-in default for a tool the ceiling says nothing about.
	AllowBlueprintPermissions bool
}

// BlueprintLayer is what one blueprint says about permissions. It may only tighten the ceiling.
type BlueprintLayer struct {
	// Name selects the host's [agent_tool_permissions.<Name>] section.
	Name string
	// Agent is the blueprint's agent-level tool_permissions, used where the stage is silent.
	Agent map[string]Verdict
	// Stages holds each stage's tool_permissions, by stage index; a nil map says nothing.
	Stages []map[string]Verdict
	// StageNames names the stages, by index, for reasons ("blueprint stage \"draft\" sets
	// ..."); a stage without a name is called by its index.
	StageNames []string
}

// Call is one tool call as the permission gate sees it.
type Call struct {
	// Stage is the agent's current stage index. An index the blueprint does not have is
	// treated as a stage without tool_permissions.
	Stage int
	// Tool is the tool's name.
	Tool string
	// Keys are the shell keys of a shell call (see keys.go); other tools' keys are their names
	// and this field is ignored for them. A shell call with Parsed set and no keys is judged as
	// the bare tool "shell".
	Keys []string
	// Parsed reports whether the shell parser could analyse the line; ignored for other tools.
	Parsed bool
	// Opaque are the keys of Keys whose programs run code the line does not show (see
	// AnalyzeShell); ignored for other tools.
	Opaque []Opacity
}

// Decision is the outcome of the gate, with the layer that decided it and why, so that every
// decision in a trace can be explained.
type Decision struct {
	Verdict Verdict
	// Layer is one of the Layer* names, or "host:<blueprint>".
	Layer string
	// Reason is a readable sentence naming the entry or flag that decided.
	Reason string
	// Key is the key of the call that decided (the tool name for tools other than shell).
	Key string
}

// Coverer is a set of safe keys: keys that need no prompt. The safe-key list implements it;
// accepting the interface keeps the resolver independent of how safe keys are matched.
type Coverer interface {
	// Covers reports whether key is safe.
	Covers(key string) bool
}

// entry is one permission entry of one layer, with every reason it can give prebuilt so that a
// decision never builds a string.
type entry struct {
	name    string
	verdict Verdict
	layer   string
	says    string // "host [tool_permissions] sets shell:rm = deny"

	// Reasons of a ceiling entry.
	capsBlueprint string // the blueprint tried to exceed it

	// Reasons of a blueprint entry.
	tightensCeiling string // stricter than the ceiling
	mayLoosen       bool   // it may loosen the built-in default
	loosenWhy       string // why it may
	loosens         string // it loosened the default
	ignored         string // it tried to loosen the default and may not
}

// flag is one --allow, --ask or --deny name, with its reasons prebuilt.
type flag struct {
	name     string
	verdict  Verdict
	layer    string
	option   string // "--ask"
	reason   string // the change it makes
	keepsAsk string // an --ask holding its ask against --yolo
}

// slot gathers every layer's entry for one name.
type slot struct {
	global, perBlueprint, agent *entry
	stages                      []*entry // by stage index; nil when no stage names it
	flag                        *flag
}

func (s *slot) stage(i int) *entry {
	if i < len(s.stages) {
		return s.stages[i]
	}
	return nil
}

// unparsedRule is what a stage needs to judge a shell line that could not be analysed, and an
// opaque key.
type unparsedRule struct {
	deny       *entry // the first effective shell-key deny among the host and blueprint layers
	denyFlag   *flag  // the first --deny of a shell key, reported when no entry denies
	keyEntries bool   // some layer names a shell key, so --yolo and --allow cannot lift the line
	// userDeny: the host or a launch flag denies a shell key (not only a blueprint), so only the
	// host or a launch flag naming an opaque key can lift its floor.
	userDeny bool
}

// Resolver decides tool calls for every agent of one (host, blueprint, launch). It is built once,
// never changes, and is safe for concurrent use. Decisions for tools other than shell are
// precomputed per stage, so deciding one is a map lookup.
type Resolver struct {
	blueprint          string
	hostBlueprintLayer string
	mayLoosenAll       bool
	loosenable         map[string]bool
	yolo               bool
	stages             int // len(BlueprintLayer.Stages); stage slot `stages` is "no stage"

	slots map[string]*slot

	tools          map[string][]Decision // by stage slot
	unknown        Decision              // any tool no layer names and no default knows
	shellBare      []Decision            // a parsed shell line without keys
	unparsed       []Decision
	writeFile      []Decision
	redirectReason []string
	unparsedRules  []unparsedRule
}

// Reasons that name no entry.
const (
	reasonYolo             = "--yolo turns every ask into allow"
	reasonUnknownDefault   = "no layer names this tool; tools without a built-in default ask"
	reasonShellKeyDefault  = "no layer sets this key, its program or shell; the built-in default for shell is ask"
	reasonShellToolDefault = "no layer sets shell; its built-in default is ask"
)

// NewResolver validates the launch flags and every entry of the layers, then precomputes the
// decision of every non-shell tool named anywhere (and of every tool with a built-in default) in
// every stage. A conflicting launch wraps ErrConflictingFlags; an invalid verdict wraps
// ErrBadVerdict and an empty name ErrBadEntry, each naming the layer and entry.
func NewResolver(h HostLayer, b BlueprintLayer, l Launch) (*Resolver, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	r := &Resolver{
		blueprint:    b.Name,
		mayLoosenAll: h.AllowBlueprintPermissions,
		loosenable:   make(map[string]bool, len(Loosenable)),
		yolo:         l.Yolo,
		stages:       len(b.Stages),
		slots:        map[string]*slot{},
		tools:        map[string][]Decision{},
	}
	r.hostBlueprintLayer = hostBlueprintLayerPrefix + b.Name
	for _, tool := range Loosenable {
		r.loosenable[tool] = true
	}
	if err := r.addLayers(h, b); err != nil {
		return nil, err
	}
	r.addFlags(l)
	r.precompute()
	return r, nil
}

// addLayers files every host and blueprint entry into its slot.
func (r *Resolver) addLayers(h HostLayer, b BlueprintLayer) error {
	err := r.addMap(h.Global, LayerHost, "host [tool_permissions]", func(s *slot, e *entry) { s.global = e })
	if err != nil {
		return err
	}
	if b.Name != "" {
		source := "host [agent_tool_permissions." + b.Name + "]"
		err = r.addMap(h.PerBlueprint[b.Name], r.hostBlueprintLayer, source, func(s *slot, e *entry) { s.perBlueprint = e })
		if err != nil {
			return err
		}
	}
	err = r.addMap(b.Agent, LayerBlueprintAgent, "blueprint [tool_permissions]", func(s *slot, e *entry) { s.agent = e })
	if err != nil {
		return err
	}
	for i, stage := range b.Stages {
		name := strconv.Itoa(i)
		if i < len(b.StageNames) && b.StageNames[i] != "" {
			name = strconv.Quote(b.StageNames[i])
		}
		err = r.addMap(stage, LayerBlueprintStage, "blueprint stage "+name, func(s *slot, e *entry) {
			if s.stages == nil {
				s.stages = make([]*entry, r.stages)
			}
			s.stages[i] = e
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// addMap validates the entries of one layer map, in sorted order so errors are deterministic,
// and places each into its slot.
func (r *Resolver) addMap(m map[string]Verdict, layer, source string, place func(*slot, *entry)) error {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		v := m[name]
		if name == "" {
			return fmt.Errorf("%s: %w: an entry has an empty name", source, ErrBadEntry)
		}
		if v < Allow || v > Deny {
			return fmt.Errorf("%s entry %q: %w %v", source, name, ErrBadVerdict, v)
		}
		place(r.slot(name), r.newEntry(name, v, layer, source))
	}
	return nil
}

func (r *Resolver) slot(name string) *slot {
	s := r.slots[name]
	if s == nil {
		s = &slot{}
		r.slots[name] = s
	}
	return s
}

// toolOf is the tool a permission name belongs to: shell for shell keys, else the name itself.
func toolOf(name string) string {
	if IsShellKey(name) {
		return ShellTool
	}
	return name
}

func (r *Resolver) newEntry(name string, v Verdict, layer, source string) *entry {
	tool := toolOf(name)
	dflt := DefaultVerdict(tool).String()
	e := &entry{name: name, verdict: v, layer: layer}
	e.says = source + " sets " + name + " = " + v.String()
	e.capsBlueprint = e.says + ", and a blueprint may only tighten the ceiling"
	e.tightensCeiling = e.says + ", tightening the host ceiling"
	switch {
	case r.loosenable[tool]:
		e.mayLoosen, e.loosenWhy = true, tool+" is on the loosenable list"
	case r.mayLoosenAll:
		e.mayLoosen, e.loosenWhy = true, "[security] allow_blueprint_permissions = true"
	}
	if e.mayLoosen {
		e.loosens = e.says + ", loosening the built-in default " + dflt + " (" + e.loosenWhy + ")"
	} else {
		e.ignored = e.says + ", but may not loosen the built-in default " + dflt + " without [security] allow_blueprint_permissions"
	}
	return e
}

// addFlags files the launch flags into their slots. Validate has ruled out a name in two flags.
func (r *Resolver) addFlags(l Launch) {
	for _, group := range []struct {
		names   []string
		verdict Verdict
		option  string
		layer   string
	}{
		{l.Allow, Allow, "--allow", LayerLaunchAllow},
		{l.Ask, Ask, "--ask", LayerLaunchAsk},
		{l.Deny, Deny, "--deny", LayerLaunchDeny},
	} {
		for _, name := range group.names {
			f := &flag{name: name, verdict: group.verdict, layer: group.layer, option: group.option}
			prefix := "launch flag " + group.option + " " + name
			switch group.verdict {
			case Allow:
				f.reason = prefix + " turns ask into allow"
			case Ask:
				f.reason = prefix + " turns allow into ask"
				f.keepsAsk = prefix + " keeps it ask despite --yolo"
			case Deny:
				f.reason = prefix + " denies it"
			}
			r.slot(name).flag = f
		}
	}
}

// precompute fills the per-stage decisions of every non-shell tool, the bare and unparsed shell
// line, and the write_file verdict the redirect rule borrows.
func (r *Resolver) precompute() {
	names := defaultToolNames()
	names = append(names, Loosenable...)
	for name := range r.slots {
		names = append(names, name)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	slots := r.stages + 1
	for _, name := range names {
		if IsShellKey(name) || name == ShellTool {
			continue
		}
		ds := make([]Decision, slots)
		for st := range ds {
			e := r.eval(name, name, [3]string{name}, 1, st, DefaultVerdict(name), defaultReason(name))
			r.applyLaunch(&e, true, "")
			ds[st] = e.decision()
		}
		r.tools[name] = ds
	}
	r.unknown = Decision{Verdict: Ask, Layer: LayerDefault, Reason: reasonUnknownDefault}
	if r.yolo {
		r.unknown = Decision{Verdict: Allow, Layer: LayerLaunchYolo, Reason: reasonYolo}
	}
	r.writeFile = r.tools["write_file"]
	r.shellBare = make([]Decision, slots)
	r.unparsed = make([]Decision, slots)
	r.redirectReason = make([]string, slots)
	r.unparsedRules = make([]unparsedRule, slots)
	for st := range slots {
		e := r.evalShellKey(ShellTool, st)
		r.shellBare[st] = e.decision()
		r.redirectReason[st] = "the line redirects output, so it also takes write_file's verdict: " + r.writeFile[st].Reason
		r.unparsedRules[st] = r.unparsedRuleFor(st)
		r.unparsed[st] = r.decideUnparsed(st).decision
	}
}

func defaultReason(tool string) string {
	if v, ok := builtinDefaults[tool]; ok {
		return "no layer sets " + tool + "; its built-in default is " + v.String()
	}
	return "no layer sets " + tool + "; tools without a built-in default ask"
}

// unparsedRuleFor finds, for stage slot st, the shell-key deny that condemns an unanalysable
// line and whether any layer names a shell key at all. Host and blueprint entries count as
// their layer resolves them (a per-blueprint entry over a global one, a stage entry over an
// agent-level one); names are visited in sorted order so the reported deny is stable.
func (r *Resolver) unparsedRuleFor(st int) unparsedRule {
	names := make([]string, 0, len(r.slots))
	for name := range r.slots {
		if IsShellKey(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	var rule unparsedRule
	var hostDeny, blueprintDeny *entry
	for _, name := range names {
		s := r.slots[name]
		host := firstSet(s.perBlueprint, s.global)
		blueprint := firstSet(s.stage(st), s.agent)
		if host != nil || blueprint != nil || s.flag != nil {
			rule.keyEntries = true
		}
		if hostDeny == nil && host != nil && host.verdict == Deny {
			hostDeny = host
		}
		if blueprintDeny == nil && blueprint != nil && blueprint.verdict == Deny {
			blueprintDeny = blueprint
		}
		if rule.denyFlag == nil && s.flag != nil && s.flag.verdict == Deny {
			rule.denyFlag = s.flag
		}
	}
	rule.deny = firstSet(hostDeny, blueprintDeny)
	rule.userDeny = hostDeny != nil || rule.denyFlag != nil
	return rule
}

// firstSet returns a unless it is nil, else b: the first layer (or name) that says something.
func firstSet[T any](a, b *T) *T {
	if a != nil {
		return a
	}
	return b
}

// keyEval is one key's walk through the layers: the entries it met, its verdict before the
// launch flags (base) and after them.
type keyEval struct {
	key, tool          string
	dflt               Verdict
	ceiling, blueprint *entry
	denyFlag           *flag // the most specific --deny naming the key, its program or its tool
	flag               *flag // the most specific --allow or --ask
	base               Verdict
	baseLayer          string
	baseReason         string
	verdict            Verdict
	layer, reason      string
}

func (e *keyEval) decision() Decision {
	return Decision{Verdict: e.verdict, Layer: e.layer, Reason: e.reason, Key: e.key}
}

// shellChain lists the names a shell key is looked up by, most specific first: the key, its
// program key (for "shell:git push", "shell:git"), then the tool. A key that is not a shell key
// is judged as the bare tool.
func shellChain(key string) (names [3]string, n int) {
	if IsShellKey(key) {
		names[n] = key
		n++
		if program := KeyProgram(key); program != "" {
			if programKey := key[:len(shellPrefix)+len(program)]; programKey != key {
				names[n] = programKey
				n++
			}
		}
	}
	names[n] = ShellTool
	return names, n + 1
}

// eval resolves key through the host and blueprint layers and the built-in default, and finds
// the launch flag that applies. In each layer the most specific name present wins; within the
// host layer a per-blueprint entry wins over a global one of the same name, within the blueprint
// layer a stage entry over an agent-level one.
func (r *Resolver) eval(key, tool string, names [3]string, n, st int, dflt Verdict, dfltReason string) keyEval {
	e := keyEval{key: key, tool: tool, dflt: dflt}
	for _, name := range names[:n] {
		s := r.slots[name]
		if s == nil {
			continue
		}
		if e.ceiling == nil {
			e.ceiling = firstSet(s.perBlueprint, s.global)
		}
		if e.blueprint == nil {
			e.blueprint = firstSet(s.stage(st), s.agent)
		}
		switch f := s.flag; {
		case f == nil:
		case f.verdict == Deny:
			e.denyFlag = firstSet(e.denyFlag, f)
		default:
			e.flag = firstSet(e.flag, f)
		}
	}
	e.base, e.baseLayer, e.baseReason = combine(e.ceiling, e.blueprint, dflt, dfltReason)
	return e
}

// combine applies the ceiling rule: a blueprint value may tighten the ceiling but never exceed
// it; where there is no ceiling it may tighten the default, and loosen it only when permitted.
// On a tie the ceiling is reported, since the blueprint changed nothing.
func combine(c, b *entry, dflt Verdict, dfltReason string) (Verdict, string, string) {
	switch {
	case c != nil && b != nil && b.verdict > c.verdict:
		return b.verdict, b.layer, b.tightensCeiling
	case c != nil && b != nil && b.verdict < c.verdict:
		return c.verdict, c.layer, c.capsBlueprint
	case c != nil:
		return c.verdict, c.layer, c.says
	case b == nil:
		return dflt, LayerDefault, dfltReason
	case b.verdict >= dflt:
		return b.verdict, b.layer, b.says
	case b.mayLoosen:
		return b.verdict, b.layer, b.loosens
	default:
		return dflt, LayerDefault, b.ignored
	}
}

// applyLaunch applies the launch flags to a key's base verdict. Deny is terminal, whichever
// layer says it: a --deny of the key, its program or its tool denies it even where a more
// specific --allow names the key. Otherwise the most specific --allow or --ask decides, and
// without one --yolo lifts an ask. When liftable is false (an unanalysable line while shell
// keys are configured) nothing lifts an ask, and unliftable says why.
func (r *Resolver) applyLaunch(e *keyEval, liftable bool, unliftable string) {
	e.verdict, e.layer, e.reason = e.base, e.baseLayer, e.baseReason
	f := e.flag
	switch {
	case e.base == Deny:
	case e.denyFlag != nil:
		e.verdict, e.layer, e.reason = Deny, e.denyFlag.layer, e.denyFlag.reason
	case f != nil && f.verdict == Ask:
		if e.base == Allow {
			e.verdict, e.layer, e.reason = Ask, f.layer, f.reason
		} else if r.yolo {
			e.layer, e.reason = f.layer, f.keepsAsk
		}
	case e.base == Allow:
	case f == nil && !r.yolo:
	case !liftable:
		e.layer, e.reason = LayerUnparsed, unliftable
	case f != nil:
		e.verdict, e.layer, e.reason = Allow, f.layer, f.reason
	default:
		e.verdict, e.layer, e.reason = Allow, LayerLaunchYolo, reasonYolo
	}
}

func (r *Resolver) evalShellKey(key string, st int) keyEval {
	names, n := shellChain(key)
	dfltReason := reasonShellKeyDefault
	if key == ShellTool {
		dfltReason = reasonShellToolDefault
	}
	e := r.eval(key, ShellTool, names, n, st, Ask, dfltReason)
	r.applyLaunch(&e, true, "")
	return e
}

// unparsedOutcome is the decision on an unanalysable line, with the walk that led to it.
type unparsedOutcome struct {
	decision   Decision
	shell      keyEval // the bare tool, floored at ask
	deniedBy   string  // the shell-key deny that condemned the line, if any
	floored    bool    // the bare tool allowed and the floor raised it to ask
	writeFile  bool    // write_file's verdict decided
	unliftable string
}

// decideUnparsed judges a shell line that could not be analysed (no keys). A deny of the bare
// tool stands; a deny of any shell key denies the line, since it cannot be shown to avoid the
// denied program; otherwise it is at least ask, and --yolo or --allow shell lift that ask only
// when no layer names any shell key (with key-level entries the line might be exactly what
// they govern). The line may redirect output, so write_file's verdict applies as well.
func (r *Resolver) decideUnparsed(st int) unparsedOutcome {
	rule := r.unparsedRules[st]
	out := unparsedOutcome{}
	e := r.eval(ShellTool, ShellTool, [3]string{ShellTool}, 1, st, Ask, reasonShellToolDefault)
	if e.base == Allow {
		e.base, e.baseLayer = Ask, LayerUnparsed
		e.baseReason = "the line could not be analysed, so it is asked about although " + e.baseReason
		out.floored = true
	}
	lifter := "--yolo"
	if e.flag != nil && e.flag.verdict == Allow {
		lifter = e.flag.option + " " + e.flag.name
	}
	out.unliftable = "the line could not be analysed and some layer sets shell keys, so " + lifter + " cannot lift its ask"
	r.applyLaunch(&e, !rule.keyEntries, out.unliftable)
	out.shell = e
	out.decision = e.decision()
	if e.verdict == Deny {
		return out
	}
	const cannotShow = "the line could not be analysed, so it cannot be shown to avoid denied programs ("
	switch {
	case rule.deny != nil:
		out.deniedBy = rule.deny.name
		out.decision = Decision{Verdict: Deny, Layer: LayerUnparsed, Reason: cannotShow + rule.deny.says + ")", Key: ShellTool}
		return out
	case rule.denyFlag != nil:
		out.deniedBy = rule.denyFlag.name
		out.decision = Decision{Verdict: Deny, Layer: LayerUnparsed, Reason: cannotShow + "launch flag --deny " + rule.denyFlag.name + ")", Key: ShellTool}
		return out
	}
	if wf := r.writeFile[st]; wf.Verdict > out.decision.Verdict {
		out.writeFile = true
		out.decision = Decision{Verdict: wf.Verdict, Layer: LayerWriteFile, Key: ShellTool,
			Reason: "the line could not be analysed, so it may redirect output, and write_file's verdict applies: " + wf.Reason}
	}
	return out
}

// stageSlot maps a stage index to its precomputed slot; an index the blueprint does not have
// gets the extra slot of a stage without tool_permissions.
func (r *Resolver) stageSlot(stage int) int {
	if stage >= 0 && stage < r.stages {
		return stage
	}
	return r.stages
}

// Decide returns the base verdict of c: every layer and launch flag, no safe keys or grants
// (see Cover). For a tool other than shell it is a lookup that allocates nothing. For shell
// each key is resolved and the strictest verdict wins (the first such key is reported); a line
// that redirects output also takes write_file's verdict when that is stricter.
func (r *Resolver) Decide(c Call) Decision {
	st := r.stageSlot(c.Stage)
	if c.Tool != ShellTool {
		if ds, ok := r.tools[c.Tool]; ok {
			return ds[st]
		}
		d := r.unknown
		d.Key = c.Tool
		return d
	}
	switch {
	case !c.Parsed:
		return r.unparsed[st]
	case len(c.Keys) == 0:
		return r.shellBare[st]
	}
	var best Decision
	redirect := ""
	for _, key := range c.Keys {
		if redirect == "" && IsRedirectKey(key) {
			redirect = key
		}
		e := r.evalShellKey(key, st)
		d := e.decision()
		if why := c.opacity(key); why != "" {
			d = r.opaqueFloor(e, why, st)
		}
		if d.Verdict > best.Verdict {
			best = d
			if best.Verdict == Deny {
				return best
			}
		}
	}
	if wf := r.writeFile[st]; redirect != "" && wf.Verdict > best.Verdict {
		return Decision{Verdict: wf.Verdict, Layer: LayerWriteFile, Reason: r.redirectReason[st], Key: redirect}
	}
	return best
}

// keyVerdict is one key's own verdict, the redirect rule and the opaque floor included; Cover
// needs it to know which keys ask. why is the key's opacity in the call ("" when none).
func (r *Resolver) keyVerdict(key, why string, st int) (Verdict, *flag) {
	e := r.evalShellKey(key, st)
	v := e.verdict
	if why != "" {
		v = r.opaqueFloor(e, why, st).Verdict
	}
	if IsRedirectKey(key) {
		return max(v, r.writeFile[st].Verdict), e.flag
	}
	return v, e.flag
}

// coverRank orders the coverage layers from the weakest (narrowest) to the strongest.
func coverRank(layer string) int {
	switch layer {
	case LayerGrantStage:
		return 0
	case LayerGrantRun:
		return 1
	}
	return 2
}

// coverKey finds what covers one asking key: a safe key first, then a run grant, then a grant
// for the call's stage. A redirect (it writes a file) and an environment assignment (it can
// change what any program does) are never safe, whatever the safe list says, and a key the user
// put under --ask is not silenced by the standing safe list; a grant, being an answer the user
// gave in this run, still covers all three.
func coverKey(key string, launchAsk bool, stage int, safe Coverer, g *Grants) (string, bool) {
	if safe != nil && !neverSafe(key) && !launchAsk && safe.Covers(key) {
		return LayerSafe, true
	}
	switch scope, ok := g.coversIn(key, stage); {
	case !ok:
		return "", false
	case scope == ScopeRun:
		return LayerGrantRun, true
	default:
		return LayerGrantStage, true
	}
}

// neverSafe reports the keys no safe list may cover: redirects and environment assignments.
func neverSafe(key string) bool { return IsRedirectKey(key) || IsEnvKey(key) }

// Cover turns an ask into allow when every key of c that asks is covered by a safe key or a
// grant (keys that resolve to allow on their own need no cover). The result names the weakest
// coverage used ("grant:stage" before "grant:run" before "safe") and the key it covered; any
// other decision, an uncovered key or a line that could not be analysed leaves d unchanged.
// Cover resolves each key again, so a stale or forged ask can never cover a denied key: it gets
// the deny back. safe and g may be nil.
func (r *Resolver) Cover(c Call, d Decision, safe Coverer, g *Grants) Decision {
	return r.cover(c, d, safe, g, nil)
}

// cover is Cover under the ceilings of the agent's ancestors (see CoverUnder); with none it is
// Cover itself. A key's verdict is the strictest over own and every ceiling, and a safe key must
// be safe for the agent and every ancestor.
func (r *Resolver) cover(c Call, d Decision, safe Coverer, g *Grants, ceilings []Ceiling) Decision {
	if d.Verdict != Ask {
		return d
	}
	if len(ceilings) > 0 {
		safe = safeUnder{own: safe, ceilings: ceilings}
	}
	st := r.stageSlot(c.Stage)
	if c.Tool != ShellTool {
		if own := r.DecideUnder(c, ceilings); own.Verdict == Deny {
			return own
		}
		layer, ok := coverKey(c.Tool, r.launchAsksUnder(c.Tool, ceilings), c.Stage, safe, g)
		if !ok {
			return d
		}
		return Decision{Verdict: Allow, Layer: layer, Key: c.Tool, Reason: "every asking key is covered: " + c.Tool + " (" + layer + ")"}
	}
	if !c.Parsed {
		return d
	}
	keys := c.Keys
	if len(keys) == 0 {
		keys = []string{ShellTool}
	}
	out := Decision{Verdict: Allow, Layer: LayerSafe}
	var covered strings.Builder
	for _, key := range keys {
		v, launchAsk := r.keyVerdictUnder(key, c.opacity(key), st, ceilings)
		switch v {
		case Allow:
			continue
		case Deny:
			return r.DecideUnder(c, ceilings)
		}
		layer, ok := coverKey(key, launchAsk, c.Stage, safe, g)
		if !ok {
			return d
		}
		if out.Key == "" || coverRank(layer) < coverRank(out.Layer) {
			out.Layer, out.Key = layer, key
		}
		if covered.Len() > 0 {
			covered.WriteString(", ")
		}
		covered.WriteString(key + " (" + layer + ")")
	}
	if out.Key == "" {
		return d // nothing asks; d did not come from this call
	}
	out.Reason = "every asking key is covered: " + covered.String()
	return out
}

// launchAsks reports whether an --ask flag governs the tool name.
func (r *Resolver) launchAsks(tool string) bool {
	s := r.slots[tool]
	return s != nil && s.flag != nil && s.flag.verdict == Ask
}
