package tools

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// ScopeID names one scope pushed on a ScopedToolRegistry. Ids are never reused within a registry,
// so a stale id can never pop or fill a newer scope.
type ScopeID uint64

// ScopedToolRegistry is a base Registry plus a LIFO stack of scopes with shadow-stack semantics:
// a tool registered in a higher scope shadows every tool of the same name in lower scopes and the
// base; popping a scope removes all its tools and so restores what they shadowed. A stage, a
// sub-task or a script can thus add (or override) tools for its lifetime without touching the
// shared base.
//
// The scope stack is guarded by a mutex so it can be pushed and popped through a shared pointer
// from several goroutines; the base is read without that lock (Registry reads are lock-free).
// Resolution — Get, Lookup, Execute — always runs from the top scope down to the base.
type ScopedToolRegistry struct {
	base   *Registry
	mu     sync.RWMutex
	scopes []toolScope // bottom first
	lastID ScopeID
}

// toolScope is one layer of the stack.
type toolScope struct {
	id     ScopeID
	byName map[string]*Handle
}

// NewScoped wraps base (the lowest resolution level) with an empty scope stack. A nil base is
// replaced by an empty Registry.
func NewScoped(base *Registry) *ScopedToolRegistry {
	if base == nil {
		base = NewRegistry()
	}
	return &ScopedToolRegistry{base: base}
}

// PushScope pushes a new empty scope and returns its id. Prefer PushScopeGuarded, which cannot
// forget the pop.
func (s *ScopedToolRegistry) PushScope() ScopeID {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastID++
	s.scopes = append(s.scopes, toolScope{id: s.lastID})
	return s.lastID
}

// PopScope removes the scope id together with all its tools. Only the topmost scope can be
// popped: for a lower scope, or an id that is not on the stack, it returns false and changes
// nothing, so scopes always unwind in LIFO order.
func (s *ScopedToolRegistry) PopScope(id ScopeID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	top := len(s.scopes) - 1
	if top < 0 || s.scopes[top].id != id {
		return false
	}
	s.scopes[top] = toolScope{} // drop the map so its tools can be collected
	s.scopes = s.scopes[:top]
	return true
}

// RegisterInScope compiles t's schema and registers it in scope id. If that scope already holds a
// tool of the same name, it is replaced and the old tool returned; tools of that name in other
// scopes or the base are not affected, only shadowed. An id not on the stack wraps ErrNoScope; a
// spec that does not compile wraps ErrInvalidSpec.
func (s *ScopedToolRegistry) RegisterInScope(id ScopeID, t Tool) (old Tool, err error) {
	h, err := NewHandle(t)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.scopes {
		sc := &s.scopes[i]
		if sc.id != id {
			continue
		}
		if prev, ok := sc.byName[h.Name()]; ok {
			old = prev.tool
		}
		if sc.byName == nil {
			sc.byName = make(map[string]*Handle, 4)
		}
		sc.byName[h.Name()] = h
		return old, nil
	}
	return nil, fmt.Errorf("register tool %q in scope %d: %w", h.Name(), id, ErrNoScope)
}

// Get returns the tool visible under name, searching from the top scope to the base.
func (s *ScopedToolRegistry) Get(name string) (Tool, bool) {
	h, ok := s.Lookup(name)
	if !ok {
		return nil, false
	}
	return h.tool, true
}

// Lookup returns the handle visible under name (top scope to base), with its compiled schema. It
// does not allocate.
func (s *ScopedToolRegistry) Lookup(name string) (*Handle, bool) {
	s.mu.RLock()
	for i := len(s.scopes) - 1; i >= 0; i-- {
		if h, ok := s.scopes[i].byName[name]; ok {
			s.mu.RUnlock()
			return h, true
		}
	}
	s.mu.RUnlock()
	return s.base.Lookup(name)
}

// visible merges base and scopes into one handle per unique name, higher layers shadowing lower.
func (s *ScopedToolRegistry) visible() map[string]*Handle {
	base := s.base.snapshot()
	s.mu.RLock()
	defer s.mu.RUnlock()
	merged := make(map[string]*Handle, len(base.sorted))
	for _, h := range base.sorted {
		merged[h.Name()] = h
	}
	for _, sc := range s.scopes {
		for name, h := range sc.byName {
			merged[name] = h
		}
	}
	return merged
}

// Specs returns one spec per unique visible name, sorted by name; where names collide the highest
// scope's tool wins. The sorted order keeps prompts byte-identical across turns and provider
// calls (prompt caching) and keeps traces deterministic.
func (s *ScopedToolRegistry) Specs() []Spec {
	s.mu.RLock()
	depth := len(s.scopes)
	s.mu.RUnlock()
	if depth == 0 {
		return s.base.Specs()
	}
	merged := s.visible()
	specs := make([]Spec, 0, len(merged))
	for _, h := range merged {
		specs = append(specs, h.spec)
	}
	slices.SortFunc(specs, func(a, b Spec) int { return strings.Compare(a.Name, b.Name) })
	return specs
}

// ScopeDepth returns the number of scopes on the stack.
func (s *ScopedToolRegistry) ScopeDepth() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.scopes)
}

// Base returns the base registry; registering into it (or unregistering from it) changes what
// every scope falls back to.
func (s *ScopedToolRegistry) Base() *Registry { return s.base }

// UnregisterFromBase removes a tool from the base registry by name and returns it. Scoped tools of
// the same name stay visible.
func (s *ScopedToolRegistry) UnregisterFromBase(name string) (Tool, bool) {
	return s.base.Unregister(name)
}

// Len returns the number of unique visible names across the base and all scopes: a scoped tool
// that shadows a base tool counts once.
func (s *ScopedToolRegistry) Len() int {
	s.mu.RLock()
	depth := len(s.scopes)
	s.mu.RUnlock()
	if depth == 0 {
		return s.base.Len()
	}
	return len(s.visible())
}

// IsEmpty reports whether no tool is visible at all.
func (s *ScopedToolRegistry) IsEmpty() bool {
	if s.base.Len() > 0 {
		return false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, sc := range s.scopes {
		if len(sc.byName) > 0 {
			return false
		}
	}
	return true
}

// Execute runs a call with the first tool named name from the top scope to the base, validating
// args against that tool's schema first. A name visible nowhere wraps ErrNotFound. Panics are not
// recovered (see Handle.Execute).
func (s *ScopedToolRegistry) Execute(ec *ExecContext, name string, args json.RawMessage) (Result, error) {
	h, ok := s.Lookup(name)
	if !ok {
		return Result{}, fmt.Errorf("%w: %q", ErrNotFound, name)
	}
	return h.Execute(ec, args)
}

// ScopeGuard owns one pushed scope and pops it on Release, the Go counterpart of an RAII guard:
// `g := reg.PushScopeGuarded(); defer g.Release()` cleans up on every return path, panics
// included.
type ScopeGuard struct {
	reg    *ScopedToolRegistry
	id     ScopeID
	mu     sync.Mutex
	popped bool
}

// PushScopeGuarded pushes a new scope and returns a guard that pops it on Release. This is the
// preferred way to manage scope lifetimes.
func (s *ScopedToolRegistry) PushScopeGuarded() *ScopeGuard {
	return &ScopeGuard{reg: s, id: s.PushScope()}
}

// ID returns the guarded scope's id, for RegisterInScope.
func (g *ScopeGuard) ID() ScopeID { return g.id }

// Release pops the guarded scope. It is idempotent: once the scope has been popped further calls do
// nothing. Like PopScope it only pops the top scope; if a scope pushed later is still on the stack,
// Release does nothing and may be called again after that scope is gone.
func (g *ScopeGuard) Release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.popped {
		g.popped = g.reg.PopScope(g.id)
	}
}
