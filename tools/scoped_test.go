package tools

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// scopedWithBase returns a scoped registry whose base holds the given fake tools.
func scopedWithBase(t *testing.T, tools ...*fakeTool) *ScopedToolRegistry {
	t.Helper()
	base := NewRegistry()
	for _, tool := range tools {
		if err := base.Register(tool); err != nil {
			t.Fatal(err)
		}
	}
	return NewScoped(base)
}

// label executes name and returns what the resolved tool answered.
func label(t *testing.T, s *ScopedToolRegistry, name string) string {
	t.Helper()
	res, err := s.Execute(nil, name, nil)
	if err != nil {
		t.Fatalf("Execute(%s): %v", name, err)
	}
	return res.Content
}

func specNames(specs []Spec) []string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return names
}

func TestScopedBaseOnlyResolvesFromBase(t *testing.T) {
	s := scopedWithBase(t, newFake("read", "base"))
	if s.ScopeDepth() != 0 {
		t.Fatalf("new registry has depth %d", s.ScopeDepth())
	}
	if got := label(t, s, "read"); got != "base" {
		t.Fatalf("resolved %q, want the base tool", got)
	}
	if s.Base() == nil || s.Base().Len() != 1 {
		t.Fatal("Base() does not return the wrapped registry")
	}
}

func TestScopedNilBaseIsEmpty(t *testing.T) {
	s := NewScoped(nil)
	if !s.IsEmpty() || s.Len() != 0 || s.Base() == nil {
		t.Fatal("NewScoped(nil) should wrap an empty base")
	}
}

func TestScopedPushIsLIFOAndDepthCounts(t *testing.T) {
	s := NewScoped(nil)
	a, b, c := s.PushScope(), s.PushScope(), s.PushScope()
	if s.ScopeDepth() != 3 {
		t.Fatalf("depth %d, want 3", s.ScopeDepth())
	}
	if a == b || b == c || a == c {
		t.Fatalf("scope ids not unique: %d %d %d", a, b, c)
	}
	for i, id := range []ScopeID{c, b, a} {
		if !s.PopScope(id) {
			t.Fatalf("pop #%d (%d) failed", i, id)
		}
	}
	if s.ScopeDepth() != 0 {
		t.Fatalf("depth %d after popping all", s.ScopeDepth())
	}
}

func TestScopedOnlyTopScopeCanBePopped(t *testing.T) {
	s := scopedWithBase(t)
	lower, upper := s.PushScope(), s.PushScope()
	if _, err := s.RegisterInScope(lower, newFake("t", "lower")); err != nil {
		t.Fatal(err)
	}
	if s.PopScope(lower) {
		t.Fatal("popping a non-top scope succeeded")
	}
	if s.ScopeDepth() != 2 || label(t, s, "t") != "lower" {
		t.Fatal("a refused pop changed the stack")
	}
	if s.PopScope(ScopeID(999)) {
		t.Fatal("popping an unknown scope succeeded")
	}
	if !s.PopScope(upper) || !s.PopScope(lower) {
		t.Fatal("LIFO pops failed")
	}
	if s.PopScope(lower) {
		t.Fatal("popping an already popped scope succeeded")
	}
	if s.PopScope(ScopeID(0)) {
		t.Fatal("popping on an empty stack succeeded")
	}
}

func TestScopedHigherScopeShadowsByName(t *testing.T) {
	s := scopedWithBase(t, newFake("read", "base"), newFake("list", "base-list"))
	lower := s.PushScope()
	if _, err := s.RegisterInScope(lower, newFake("read", "lower")); err != nil {
		t.Fatal(err)
	}
	upper := s.PushScope()
	if _, err := s.RegisterInScope(upper, newFake("read", "upper")); err != nil {
		t.Fatal(err)
	}
	if got := label(t, s, "read"); got != "upper" {
		t.Fatalf("resolved %q, want the top scope's tool", got)
	}
	if got := label(t, s, "list"); got != "base-list" {
		t.Fatalf("unshadowed name resolved %q, want the base tool", got)
	}
	if tool, _ := s.Get("read"); tool.Spec().Description != "fake upper" {
		t.Fatalf("Get resolved %q", tool.Spec().Description)
	}
}

func TestScopedPopRestoresShadowedTools(t *testing.T) {
	s := scopedWithBase(t, newFake("read", "base"))
	lower := s.PushScope()
	if _, err := s.RegisterInScope(lower, newFake("read", "lower")); err != nil {
		t.Fatal(err)
	}
	upper := s.PushScope()
	if _, err := s.RegisterInScope(upper, newFake("read", "upper")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RegisterInScope(upper, newFake("extra", "upper-only")); err != nil {
		t.Fatal(err)
	}
	s.PopScope(upper)
	if got := label(t, s, "read"); got != "lower" {
		t.Fatalf("after popping upper resolved %q, want lower", got)
	}
	if _, ok := s.Get("extra"); ok {
		t.Fatal("a popped scope's tool is still visible")
	}
	s.PopScope(lower)
	if got := label(t, s, "read"); got != "base" {
		t.Fatalf("after popping all resolved %q, want base", got)
	}
}

func TestScopedReplaceInSameScopeReturnsOldTool(t *testing.T) {
	s := scopedWithBase(t, newFake("read", "base"))
	id := s.PushScope()
	first := newFake("read", "first")
	old, err := s.RegisterInScope(id, first)
	if err != nil || old != nil {
		t.Fatalf("first registration returned old=%v err=%v; want nil, nil (the base tool is shadowed, not replaced)", old, err)
	}
	old, err = s.RegisterInScope(id, newFake("read", "second"))
	if err != nil || old != first {
		t.Fatalf("replacement returned old=%v err=%v; want the first tool", old, err)
	}
	if got := label(t, s, "read"); got != "second" {
		t.Fatalf("resolved %q, want the replacement", got)
	}
	if got, _ := s.Base().Get("read"); got.Spec().Description != "fake base" {
		t.Fatal("replacing in a scope touched the base")
	}
	s.PopScope(id)
	if got := label(t, s, "read"); got != "base" {
		t.Fatalf("after pop resolved %q, want base", got)
	}
}

func TestScopedRegisterInScopeErrors(t *testing.T) {
	s := NewScoped(nil)
	cases := []struct {
		name     string
		scope    func() ScopeID
		tool     Tool
		sentinel error
	}{
		{"never pushed", func() ScopeID { return 42 }, newFake("t", "x"), ErrNoScope},
		{"already popped", func() ScopeID { id := s.PushScope(); s.PopScope(id); return id }, newFake("t", "x"), ErrNoScope},
		{"bad schema", func() ScopeID { return s.PushScope() }, &fakeTool{name: "t", schema: `{"type":1}`}, ErrInvalidSpec},
		{"nil tool", func() ScopeID { return s.PushScope() }, nil, ErrInvalidSpec},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old, err := s.RegisterInScope(tc.scope(), tc.tool)
			wantError(t, err, tc.sentinel)
			if old != nil {
				t.Fatalf("old = %v on error", old)
			}
		})
	}
}

func TestScopedGuardPopsOnRelease(t *testing.T) {
	s := scopedWithBase(t, newFake("read", "base"))
	func() {
		g := s.PushScopeGuarded()
		defer g.Release()
		if _, err := s.RegisterInScope(g.ID(), newFake("read", "guarded")); err != nil {
			t.Fatal(err)
		}
		if got := label(t, s, "read"); got != "guarded" {
			t.Fatalf("inside the guard resolved %q", got)
		}
	}()
	if s.ScopeDepth() != 0 || label(t, s, "read") != "base" {
		t.Fatal("the guard did not pop its scope on release")
	}
}

func TestScopedGuardReleaseIsIdempotent(t *testing.T) {
	s := NewScoped(nil)
	outer := s.PushScope()
	g := s.PushScopeGuarded()
	g.Release()
	g.Release()
	if s.ScopeDepth() != 1 {
		t.Fatalf("depth %d; a second Release popped a scope it does not own", s.ScopeDepth())
	}
	if !s.PopScope(outer) {
		t.Fatal("the outer scope was disturbed")
	}
}

func TestScopedGuardPopsOnPanic(t *testing.T) {
	s := NewScoped(nil)
	func() {
		defer func() { _ = recover() }()
		g := s.PushScopeGuarded()
		defer g.Release()
		panic("tool blew up")
	}()
	if s.ScopeDepth() != 0 {
		t.Fatal("the guard did not pop during a panic")
	}
}

func TestScopedGuardUnderOpenScopeWaitsForIt(t *testing.T) {
	s := NewScoped(nil)
	g := s.PushScopeGuarded()
	inner := s.PushScope()
	g.Release()
	if s.ScopeDepth() != 2 {
		t.Fatal("Release popped a scope that was not on top")
	}
	s.PopScope(inner)
	g.Release()
	if s.ScopeDepth() != 0 {
		t.Fatal("a later Release did not pop the guarded scope once it was on top")
	}
}

func TestScopedSpecsMergedSortedAndShadowed(t *testing.T) {
	s := scopedWithBase(t, newFake("read", "base"), newFake("write", "base"))
	lower := s.PushScope()
	for _, tool := range []*fakeTool{newFake("zzz", "lower"), newFake("read", "lower")} {
		if _, err := s.RegisterInScope(lower, tool); err != nil {
			t.Fatal(err)
		}
	}
	upper := s.PushScope()
	for _, tool := range []*fakeTool{newFake("aaa", "upper"), newFake("read", "upper")} {
		if _, err := s.RegisterInScope(upper, tool); err != nil {
			t.Fatal(err)
		}
	}
	specs := s.Specs()
	if got, want := specNames(specs), []string{"aaa", "read", "write", "zzz"}; !slices.Equal(got, want) {
		t.Fatalf("Specs names = %v, want %v", got, want)
	}
	if specs[1].Description != "fake upper" {
		t.Fatalf("read spec came from %q, want the top scope", specs[1].Description)
	}
	s.PopScope(upper)
	if got, want := specNames(s.Specs()), []string{"read", "write", "zzz"}; !slices.Equal(got, want) {
		t.Fatalf("after pop Specs names = %v, want %v", got, want)
	}
	if s.Specs()[0].Description != "fake lower" {
		t.Fatal("after pop the read spec did not fall back to the lower scope")
	}
}

func TestScopedExecuteTopToBase(t *testing.T) {
	baseTool, scopedTool := newFake("run", "base"), newFake("run", "scoped")
	s := scopedWithBase(t, baseTool)
	id := s.PushScope()
	if _, err := s.RegisterInScope(id, scopedTool); err != nil {
		t.Fatal(err)
	}
	if got := label(t, s, "run"); got != "scoped" {
		t.Fatalf("Execute resolved %q", got)
	}
	if baseTool.calls.Load() != 0 || scopedTool.calls.Load() != 1 {
		t.Fatal("Execute ran the shadowed tool")
	}
	if _, err := s.Execute(nil, "run", []byte(`{"unexpected":1}`)); !errors.Is(err, ErrInvalidArguments) {
		t.Fatalf("Execute did not validate against the resolved tool's schema: %v", err)
	}
}

func TestScopedExecuteNotFound(t *testing.T) {
	s := scopedWithBase(t, newFake("read", "base"))
	s.PushScope()
	_, err := s.Execute(nil, "missing", nil)
	wantError(t, err, ErrNotFound, `"missing"`)
	if _, ok := s.Lookup("missing"); ok {
		t.Fatal("Lookup found a missing tool")
	}
}

func TestScopedLenCountsUniqueVisibleNames(t *testing.T) {
	s := scopedWithBase(t, newFake("read", "base"), newFake("write", "base"))
	if s.Len() != 2 {
		t.Fatalf("Len = %d, want 2", s.Len())
	}
	a := s.PushScope()
	b := s.PushScope()
	for _, reg := range []struct {
		id   ScopeID
		name string
	}{{a, "read"}, {a, "grep"}, {b, "read"}, {b, "grep"}, {b, "new"}} {
		if _, err := s.RegisterInScope(reg.id, newFake(reg.name, "x")); err != nil {
			t.Fatal(err)
		}
	}
	if s.Len() != 4 { // read, write, grep, new
		t.Fatalf("Len = %d, want 4 unique names", s.Len())
	}
	if s.Len() != len(s.Specs()) {
		t.Fatal("Len disagrees with Specs")
	}
}

func TestScopedIsEmpty(t *testing.T) {
	s := NewScoped(nil)
	id := s.PushScope()
	if !s.IsEmpty() {
		t.Fatal("an empty scope made the registry non-empty")
	}
	if _, err := s.RegisterInScope(id, newFake("t", "x")); err != nil {
		t.Fatal(err)
	}
	if s.IsEmpty() {
		t.Fatal("IsEmpty with a scoped tool")
	}
	s.PopScope(id)
	if err := s.Base().Register(newFake("b", "x")); err != nil {
		t.Fatal(err)
	}
	if s.IsEmpty() {
		t.Fatal("IsEmpty with a base tool")
	}
}

func TestScopedUnregisterFromBase(t *testing.T) {
	baseTool := newFake("read", "base")
	s := scopedWithBase(t, baseTool)
	id := s.PushScope()
	if _, err := s.RegisterInScope(id, newFake("read", "scoped")); err != nil {
		t.Fatal(err)
	}
	got, ok := s.UnregisterFromBase("read")
	if !ok || got != baseTool {
		t.Fatalf("UnregisterFromBase = %v, %v", got, ok)
	}
	if label(t, s, "read") != "scoped" {
		t.Fatal("the scoped tool disappeared with the base one")
	}
	s.PopScope(id)
	if _, ok := s.Get("read"); ok {
		t.Fatal("an unregistered base tool is still visible")
	}
	if _, ok := s.UnregisterFromBase("read"); ok {
		t.Fatal("unregistering twice succeeded")
	}
}

// TestScopedConcurrentPushGetExecute hammers one registry from many goroutines; run with -race.
func TestScopedConcurrentPushGetExecute(t *testing.T) {
	s := scopedWithBase(t, newFake("base_tool", "base"))
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 200 {
				g := s.PushScopeGuarded()
				if _, err := s.RegisterInScope(g.ID(), newFake(fmt.Sprintf("w%d", w), "scoped")); err != nil && !errors.Is(err, ErrNoScope) {
					t.Error(err)
				}
				if _, ok := s.Get("base_tool"); !ok {
					t.Error("base tool not visible")
				}
				if res, err := s.Execute(nil, "base_tool", nil); err != nil || res.Content != "base" {
					t.Errorf("Execute = %+v, %v", res, err)
				}
				if i%10 == 0 {
					if !slices.IsSortedFunc(s.Specs(), func(a, b Spec) int { return strings.Compare(a.Name, b.Name) }) {
						t.Error("Specs not sorted")
					}
					_ = s.Len()
				}
				g.Release()
			}
		})
	}
	wg.Wait()
	// Guards may fail to pop while another goroutine's scope is on top; whatever remains must
	// still unwind top-down.
	for s.ScopeDepth() > 0 {
		s.mu.RLock()
		top := s.scopes[len(s.scopes)-1].id
		s.mu.RUnlock()
		if !s.PopScope(top) {
			t.Fatal("could not pop the top scope")
		}
	}
	if s.Len() != 1 {
		t.Fatalf("Len = %d after unwinding, want only the base tool", s.Len())
	}
}
