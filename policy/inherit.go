package policy

import (
	"slices"
	"strconv"
)

// LayerParent names decisions where an ancestor's permission was stricter than the agent's own.
// Like the other layer names it is stable: traces carry it and tools that read traces match on it.
const LayerParent = "parent"

// Ceiling is one ancestor's permission as it stood when it spawned the line below it: its
// resolver, the stage it was in, its safe keys, and names for reasons. Its grants are
// deliberately absent: grants are answers a human gave to that ancestor, in its context, and are
// never inherited. A child's ceilings are its parent's ceiling followed by the parent's own
// ceilings, nearest first, so every ancestor is captured at the moment the line below it began.
type Ceiling struct {
	// Resolver decides the ancestor's calls. A nil Resolver cannot show anything allowed, so it
	// denies every call (fail closed) rather than being skipped.
	Resolver *Resolver
	// Stage is the ancestor's stage index when it spawned the line below it; later stage
	// changes of the ancestor do not move it.
	Stage int
	// Safe is the ancestor's safe-key set; nil covers nothing, so no key is safe under it.
	Safe Coverer
	// Agent and StageName name the ancestor and that stage in reasons; an empty StageName is
	// reported by the stage index.
	Agent, StageName string
}

// Inherited returns the launch overrides a child agent's own Resolver is built with: --yolo,
// --ask and --deny carry over to the whole tree, --allow does not, because it answered asks
// the user foresaw for the agents launched, not for whatever blueprints those agents spawn.
func (l Launch) Inherited() Launch {
	return Launch{Yolo: l.Yolo, Ask: slices.Clone(l.Ask), Deny: slices.Clone(l.Deny)}
}

// DecideUnder is Decide for an agent whose ancestors set ceilings (nearest first): the strictest
// of its own base verdict and each ancestor's base verdict for the same call in the ancestor's
// spawn-time stage. When an ancestor is strictly stricter the Decision has Layer LayerParent,
// the ancestor's deciding key, and a reason naming the ancestor, its stage, and the ancestor's
// own layer and reason; a tie keeps the agent's own decision (or the nearer ancestor's). Since
// every resolver's verdict for a shell call is the strictest of its keys, the verdict is the
// strictest key's over own and every ceiling. With no ceilings it equals Decide. It allocates
// nothing for tools other than shell unless an ancestor decides, when the reason is built.
func (r *Resolver) DecideUnder(c Call, ceilings []Ceiling) Decision {
	best := r.Decide(c)
	for i := range ceilings {
		if best.Verdict == Deny {
			return best // nothing is stricter, and a tie keeps what decided first
		}
		ceil := &ceilings[i]
		if ceil.Resolver == nil {
			return ceil.noResolver(c)
		}
		at := c
		at.Stage = ceil.Stage
		if d := ceil.Resolver.Decide(at); d.Verdict > best.Verdict {
			best = ceil.decided(d)
		}
	}
	return best
}

// decided wraps the ancestor's own decision as the agent's, naming the ancestor.
func (ceil *Ceiling) decided(d Decision) Decision {
	return Decision{Verdict: d.Verdict, Layer: LayerParent, Key: d.Key,
		Reason: ceil.who() + " holds " + d.Verdict.String() + " for " + d.Key + " (layer " + d.Layer + "): " + d.Reason}
}

// noResolver is the fail-closed decision for a ceiling recorded without a resolver.
func (ceil *Ceiling) noResolver(c Call) Decision {
	return Decision{Verdict: Deny, Layer: LayerParent, Key: c.Tool,
		Reason: ceil.who() + " has no resolver recorded, so nothing can be shown to be within its permission"}
}

// who names the ancestor and its spawn-time stage.
func (ceil *Ceiling) who() string {
	agent := "an ancestor"
	if ceil.Agent != "" {
		agent = "agent " + ceil.Agent
	}
	stage := strconv.Itoa(ceil.Stage)
	if ceil.StageName != "" {
		stage = strconv.Quote(ceil.StageName)
	}
	return agent + " (stage " + stage + " when it spawned this agent's line)"
}

// CoverUnder is Cover under ceilings: an ask is turned into allow only when every key that asks
// (under own or any ceiling) is covered, by the agent's own grants g or by a safe key that the
// agent's safe set and every ceiling's Safe cover (nil Safe covers nothing). Never-safe keys
// (redirects, assignments) and keys under an --ask of the agent or any ancestor are never
// covered by safe keys, exactly as in Cover. A key denied by own or any ceiling gives back
// DecideUnder's deny, so a stale or forged ask cannot cover it. With no ceilings it equals
// Cover. safe and g may be nil.
func (r *Resolver) CoverUnder(c Call, d Decision, safe Coverer, g *Grants, ceilings []Ceiling) Decision {
	return r.cover(c, d, safe, g, ceilings)
}

// keyVerdictUnder is keyVerdict under ceilings: the strictest of the agent's own verdict for key
// (opaque when why is set) in stage slot st and each ancestor's in its spawn-time stage, and
// whether an --ask of the agent or of any ancestor governs the key. A ceiling without a resolver
// denies.
func (r *Resolver) keyVerdictUnder(key, why string, st int, ceilings []Ceiling) (Verdict, bool) {
	v, f := r.keyVerdict(key, why, st)
	launchAsk := f != nil && f.verdict == Ask
	for i := range ceilings {
		cr := ceilings[i].Resolver
		if cr == nil {
			return Deny, launchAsk
		}
		cv, cf := cr.keyVerdict(key, why, cr.stageSlot(ceilings[i].Stage))
		v = max(v, cv)
		launchAsk = launchAsk || cf != nil && cf.verdict == Ask
	}
	return v, launchAsk
}

// launchAsksUnder reports whether an --ask of the agent or of any ancestor governs the tool.
func (r *Resolver) launchAsksUnder(tool string, ceilings []Ceiling) bool {
	if r.launchAsks(tool) {
		return true
	}
	for i := range ceilings {
		if cr := ceilings[i].Resolver; cr != nil && cr.launchAsks(tool) {
			return true
		}
	}
	return false
}

// SafeUnder returns a Coverer that covers a key only when own and every ceiling's Safe cover it,
// so a safe command a child's blueprint adds cannot reach past what its ancestors treat as safe
// (used to build a child's read-only floor checks). It returns nil, which callers treat as
// covering nothing, when own or any ceiling's Safe is nil; with no ceilings it returns own. The
// ceilings are copied, so the caller may reuse its slice.
func SafeUnder(own Coverer, ceilings []Ceiling) Coverer {
	if own == nil {
		return nil
	}
	if len(ceilings) == 0 {
		return own
	}
	for i := range ceilings {
		if ceilings[i].Safe == nil {
			return nil
		}
	}
	return safeUnder{own: own, ceilings: slices.Clone(ceilings)}
}

// safeUnder is the intersection of the agent's safe set and its ancestors'.
type safeUnder struct {
	own      Coverer
	ceilings []Ceiling
}

var _ Coverer = safeUnder{}

// Covers reports whether key is safe for the agent and for every ancestor; a nil set anywhere
// covers nothing.
func (s safeUnder) Covers(key string) bool {
	if s.own == nil || !s.own.Covers(key) {
		return false
	}
	for i := range s.ceilings {
		if safe := s.ceilings[i].Safe; safe == nil || !safe.Covers(key) {
			return false
		}
	}
	return true
}
