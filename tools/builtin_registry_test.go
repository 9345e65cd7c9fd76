package tools

import (
	"slices"
	"strings"
	"testing"
)

// withEmptyBuiltins runs f against an empty built-in registry and restores the real one after,
// so a test can register made-up built-ins without leaking them into the other tests. Such a
// test must not run in parallel with one that reads the registry.
func withEmptyBuiltins(t *testing.T, f func()) {
	t.Helper()
	builtins.mu.Lock()
	byID, byName := builtins.byID, builtins.byName
	builtins.byID, builtins.byName = nil, nil
	builtins.mu.Unlock()
	defer func() {
		builtins.mu.Lock()
		builtins.byID, builtins.byName = byID, byName
		builtins.mu.Unlock()
	}()
	f()
}

// fakeInfo is a registration of a fakeTool named name under id.
func fakeInfo(id, name string) BuiltinInfo {
	return BuiltinInfo{ID: id, New: func() Tool { return newFake(name, id) }}
}

// TestBuiltinIDs checks the id scheme on every registered built-in of this package: the id is
// "tools." and the name the tool's Spec gives, LookupBuiltin finds it, Builtins lists the same
// tools in id order, and each declares its effects.
func TestBuiltinIDs(t *testing.T) {
	infos := BuiltinInfos(Namespace)
	if len(infos) == 0 {
		t.Fatal("no built-ins registered in namespace tools")
	}
	tools := Builtins()
	if len(tools) != len(infos) {
		t.Fatalf("Builtins has %d tools, BuiltinInfos %d", len(tools), len(infos))
	}
	for i, info := range infos {
		name := info.New().Spec().Name
		if info.ID != "tools."+name || info.Namespace() != Namespace || info.Name() != name {
			t.Errorf("%q: namespace %q, name %q, tool %q", info.ID, info.Namespace(), info.Name(), name)
		}
		if got, ok := LookupBuiltin(info.ID); !ok || got.ID != info.ID {
			t.Errorf("LookupBuiltin(%q) = %v, %v", info.ID, got.ID, ok)
		}
		if i > 0 && infos[i-1].ID >= info.ID {
			t.Errorf("BuiltinInfos not sorted by id: %q before %q", infos[i-1].ID, info.ID)
		}
		if got := tools[i].Spec().Name; got != name {
			t.Errorf("Builtins()[%d] is %q, want %q", i, got, name)
		}
		if !EffectsOf(tools[i]).Declared() {
			t.Errorf("%q declares no effects; every built-in must (Declarer), or the read-only floor refuses it", info.ID)
		}
	}
	if _, ok := LookupBuiltin("read_file"); ok {
		t.Error("LookupBuiltin found a bare tool name; ids are namespaced")
	}
	all := BuiltinInfos("")
	if !slices.IsSortedFunc(all, func(a, b BuiltinInfo) int { return strings.Compare(a.ID, b.ID) }) {
		t.Error(`BuiltinInfos("") is not sorted by id`)
	}
	for _, info := range infos {
		if !slices.ContainsFunc(all, func(x BuiltinInfo) bool { return x.ID == info.ID }) {
			t.Errorf(`BuiltinInfos("") lacks %q`, info.ID)
		}
	}
}

// TestRegisterBuiltinRefuses checks that every malformed or clashing registration panics with a
// message saying what is wrong, and registers nothing.
func TestRegisterBuiltinRefuses(t *testing.T) {
	cases := []struct {
		name string
		info BuiltinInfo
		want string
	}{
		{"no namespace", fakeInfo("read_file", "read_file"), "no namespace"},
		{"upper-case namespace", fakeInfo("Tools.x", "x"), `namespace label "Tools" must start with a lower-case letter`},
		{"empty label", fakeInfo("a..x", "x"), `namespace label ""`},
		{"bad label", fakeInfo("my-pkg.x", "x"), `namespace label "my-pkg" may contain only`},
		{"empty name", fakeInfo("tools.", ""), "tool name must be 1 to 64 characters long"},
		{"no constructor", BuiltinInfo{ID: "tools.x"}, "has no constructor"},
		{"nil tool", BuiltinInfo{ID: "tools.x", New: func() Tool { return nil }}, "the constructor returned nil"},
		{"name mismatch", fakeInfo("tools.x", "y"), `the tool's Spec names it "y"`},
		{"duplicate id", BuiltinInfo{ID: "tools.read_file", New: func() Tool { return ReadFile{} }}, `"tools.read_file" is already registered`},
		{"name taken by another namespace", fakeInfo("other.read_file", "read_file"), `the tool name "read_file" is already registered as "tools.read_file"`},
	}
	before := BuiltinInfos("")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				msg, _ := r.(string)
				if !strings.HasPrefix(msg, "tools.RegisterBuiltin: ") || !strings.Contains(msg, tc.want) {
					t.Fatalf("panic %v, want a message containing %q", r, tc.want)
				}
			}()
			RegisterBuiltin(tc.info)
		})
	}
	after := BuiltinInfos("")
	if !slices.EqualFunc(before, after, func(a, b BuiltinInfo) bool { return a.ID == b.ID }) {
		t.Fatal("a refused registration changed the registry")
	}
}

// TestRegisterBuiltinOrderDoesNotMatter registers the same built-ins in two orders and gets the
// same listings, sorted by id; a namespace is matched exactly (not its sub-namespaces), and
// RegisterBuiltinsIn stops at the first name the registry already holds.
func TestRegisterBuiltinOrderDoesNotMatter(t *testing.T) {
	regs := []BuiltinInfo{
		fakeInfo("zeta.b", "b"), fakeInfo("alpha.z", "z"), fakeInfo("alpha.a", "a"),
		fakeInfo("alpha.inner.m", "m"),
	}
	var listings [][]string
	for _, order := range [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}} {
		withEmptyBuiltins(t, func() {
			for _, i := range order {
				RegisterBuiltin(regs[i])
			}
			var ids []string
			for _, info := range BuiltinInfos("") {
				ids = append(ids, info.ID)
			}
			listings = append(listings, ids)
			var alpha []string
			for _, tool := range BuiltinsIn("alpha") {
				alpha = append(alpha, tool.Spec().Name)
			}
			if want := []string{"a", "z"}; !slices.Equal(alpha, want) {
				t.Errorf(`BuiltinsIn("alpha") = %v, want %v`, alpha, want)
			}
			r := NewRegistry()
			if err := r.Register(newFake("z", "taken")); err != nil {
				t.Fatal(err)
			}
			err := RegisterBuiltinsIn(r, "alpha")
			wantError(t, err, ErrDuplicate, `"z"`)
			if got := r.Names(); !slices.Equal(got, []string{"a", "z"}) {
				t.Errorf("after the duplicate the registry holds %v, want [a z]", got)
			}
		})
	}
	want := []string{"alpha.a", "alpha.inner.m", "alpha.z", "zeta.b"}
	for _, got := range listings {
		if !slices.Equal(got, want) {
			t.Errorf("BuiltinInfos = %v, want %v", got, want)
		}
	}
	if len(BuiltinInfos("alpha")) != 0 || len(BuiltinInfos(Namespace)) == 0 {
		t.Error("withEmptyBuiltins did not restore the real registry")
	}
}
