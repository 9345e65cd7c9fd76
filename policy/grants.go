package policy

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// ErrBadScope reports an approval scope that is not one of once, stage or run. Scripted answers
// and the approval API wrap it, so a misspelled scope is an error instead of a silent "once".
var ErrBadScope = errors.New("invalid grant scope")

// Scope is how long a human's approval lasts. The zero value is not a valid scope.
type Scope uint8

// The scopes an approval can be given for, from narrowest to widest.
const (
	// ScopeOnce covers only the call that was asked about; nothing is recorded.
	ScopeOnce Scope = iota + 1
	// ScopeStage covers the same keys until the agent moves to a different stage index.
	ScopeStage
	// ScopeRun covers the same keys for the rest of the run.
	ScopeRun
)

// scopeNames is indexed by Scope; index 0 is the invalid zero value.
var scopeNames = [...]string{ScopeOnce: "once", ScopeStage: "stage", ScopeRun: "run"}

// String returns the spelling ParseScope accepts, so scopes round-trip through scenarios and
// traces; an invalid value prints as Scope(n).
func (s Scope) String() string {
	if s >= ScopeOnce && s <= ScopeRun {
		return scopeNames[s]
	}
	return fmt.Sprintf("Scope(%d)", uint8(s))
}

// ParseScope converts "once", "stage" or "run" into a Scope. Anything else is an error wrapping
// ErrBadScope that lists the valid values.
func ParseScope(s string) (Scope, error) {
	switch s {
	case "once":
		return ScopeOnce, nil
	case "stage":
		return ScopeStage, nil
	case "run":
		return ScopeRun, nil
	}
	return 0, fmt.Errorf("%w %q; valid scopes: once, stage, run", ErrBadScope, s)
}

// Grants are the approvals one agent has collected from a human, keyed exactly (a grant for
// "shell:git push" covers nothing else; matching by program is what safe keys are for). Most
// agents are never asked anything, so an agent holds a nil *Grants until its first grant: a nil
// *Grants covers nothing and every read of it is valid. The zero value is ready to use. A Grants
// belongs to one agent and is not safe for concurrent use.
type Grants struct {
	run        map[string]struct{}
	stage      map[string]struct{}
	stageIndex int // the stage index the stage grants were given in
}

// Grant records an approval of keys for scope, given while the agent was in stage. A once
// approval records nothing, because it covers only the call that was being asked about; so does
// an invalid scope, the narrowest reading. A stage approval given in a different stage than the
// recorded stage grants replaces them, since those could no longer apply. Granting on a nil
// *Grants records nothing: allocate the agent's Grants (new(Grants)) before its first grant.
func (g *Grants) Grant(keys []string, scope Scope, stage int) {
	if g == nil || len(keys) == 0 {
		return
	}
	switch scope {
	case ScopeRun:
		if g.run == nil {
			g.run = make(map[string]struct{}, len(keys))
		}
		for _, k := range keys {
			g.run[k] = struct{}{}
		}
	case ScopeStage:
		g.EnterStage(stage)
		if g.stage == nil {
			g.stage = make(map[string]struct{}, len(keys))
		}
		for _, k := range keys {
			g.stage[k] = struct{}{}
		}
	}
}

// Clone returns an independent copy (nil for nil): a snapshot that another goroutine may read
// while the agent's own grants change.
func (g *Grants) Clone() *Grants {
	if g == nil {
		return nil
	}
	c := &Grants{stageIndex: g.stageIndex}
	if len(g.run) > 0 {
		c.run = maps.Clone(g.run)
	}
	if len(g.stage) > 0 {
		c.stage = maps.Clone(g.stage)
	}
	return c
}

// EnterStage tells the grants that the agent is now in stage. Moving to a different index
// drops the stage grants; re-entering the index they were given in (a plan -> plan revision
// loop) keeps them. Run grants are never touched. A nil *Grants has nothing to drop.
func (g *Grants) EnterStage(stage int) {
	if g == nil || stage == g.stageIndex {
		return
	}
	clear(g.stage)
	g.stageIndex = stage
}

// Covers reports whether key is granted, and for how long: ScopeRun when a run grant holds it,
// else ScopeStage when a stage grant does. Matching is exact.
func (g *Grants) Covers(key string) (Scope, bool) {
	if g == nil {
		return 0, false
	}
	if _, ok := g.run[key]; ok {
		return ScopeRun, true
	}
	if _, ok := g.stage[key]; ok {
		return ScopeStage, true
	}
	return 0, false
}

// coversIn is Covers for a call made in stage: a stage grant counts only in the stage index it
// was given in, so a caller that forgot EnterStage (a resumed run, say) still cannot carry a
// stage grant into another stage.
func (g *Grants) coversIn(key string, stage int) (Scope, bool) {
	scope, ok := g.Covers(key)
	if ok && scope == ScopeStage && g.stageIndex != stage {
		return 0, false
	}
	return scope, ok
}

// GrantsImage is Grants as data, for a snapshot of the world: the keys of each scope, sorted,
// and the stage the stage grants were given in.
type GrantsImage struct {
	Run, Stage []string
	StageIndex int
}

// Image returns the grants as data (nil for nil).
func (g *Grants) Image() *GrantsImage {
	if g == nil {
		return nil
	}
	return &GrantsImage{Run: slices.Sorted(maps.Keys(g.run)), Stage: slices.Sorted(maps.Keys(g.stage)), StageIndex: g.stageIndex}
}

// RestoreGrants returns the grants img holds (nil for nil).
func RestoreGrants(img *GrantsImage) *Grants {
	if img == nil {
		return nil
	}
	g := &Grants{stageIndex: img.StageIndex}
	if len(img.Run) > 0 {
		g.run = make(map[string]struct{}, len(img.Run))
		for _, k := range img.Run {
			g.run[k] = struct{}{}
		}
	}
	if len(img.Stage) > 0 {
		g.stage = make(map[string]struct{}, len(img.Stage))
		for _, k := range img.Stage {
			g.stage[k] = struct{}{}
		}
	}
	return g
}
