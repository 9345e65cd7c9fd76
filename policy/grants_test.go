package policy

import (
	"errors"
	"testing"
)

func TestGrantScopes(t *testing.T) {
	type check struct {
		key   string
		scope Scope
		ok    bool
	}
	tests := []struct {
		name   string
		grants func(g *Grants)
		checks []check
	}{
		{
			name:   "once records nothing",
			grants: func(g *Grants) { g.Grant([]string{"write_file"}, ScopeOnce, 0) },
			checks: []check{{"write_file", 0, false}},
		},
		{
			name:   "run covers every granted key exactly",
			grants: func(g *Grants) { g.Grant([]string{"shell:git push", "write_file"}, ScopeRun, 0) },
			checks: []check{{"shell:git push", ScopeRun, true}, {"write_file", ScopeRun, true}, {"shell:git", 0, false}, {"shell:git push --force", 0, false}},
		},
		{
			name:   "stage covers in its stage",
			grants: func(g *Grants) { g.Grant([]string{"edit_file"}, ScopeStage, 2) },
			checks: []check{{"edit_file", ScopeStage, true}},
		},
		{
			name: "re-entering the same stage keeps stage grants",
			grants: func(g *Grants) {
				g.Grant([]string{"edit_file"}, ScopeStage, 2)
				g.EnterStage(2)
			},
			checks: []check{{"edit_file", ScopeStage, true}},
		},
		{
			name: "entering a different stage drops stage grants",
			grants: func(g *Grants) {
				g.Grant([]string{"edit_file"}, ScopeStage, 2)
				g.EnterStage(3)
			},
			checks: []check{{"edit_file", 0, false}},
		},
		{
			name: "returning to the old stage does not restore dropped grants",
			grants: func(g *Grants) {
				g.Grant([]string{"edit_file"}, ScopeStage, 2)
				g.EnterStage(3)
				g.EnterStage(2)
			},
			checks: []check{{"edit_file", 0, false}},
		},
		{
			name: "entering a stage keeps run grants",
			grants: func(g *Grants) {
				g.Grant([]string{"write_file"}, ScopeRun, 0)
				g.Grant([]string{"edit_file"}, ScopeStage, 0)
				g.EnterStage(1)
			},
			checks: []check{{"write_file", ScopeRun, true}, {"edit_file", 0, false}},
		},
		{
			name: "a stage grant in a new stage replaces the old stage's grants",
			grants: func(g *Grants) {
				g.Grant([]string{"edit_file"}, ScopeStage, 0)
				g.Grant([]string{"write_file"}, ScopeStage, 1)
			},
			checks: []check{{"edit_file", 0, false}, {"write_file", ScopeStage, true}},
		},
		{
			name: "stage grants in the same stage accumulate",
			grants: func(g *Grants) {
				g.Grant([]string{"edit_file"}, ScopeStage, 1)
				g.Grant([]string{"write_file"}, ScopeStage, 1)
			},
			checks: []check{{"edit_file", ScopeStage, true}, {"write_file", ScopeStage, true}},
		},
		{
			name: "a run grant outranks a stage grant of the same key",
			grants: func(g *Grants) {
				g.Grant([]string{"write_file"}, ScopeStage, 0)
				g.Grant([]string{"write_file"}, ScopeRun, 0)
			},
			checks: []check{{"write_file", ScopeRun, true}},
		},
		{
			name:   "an invalid scope records nothing",
			grants: func(g *Grants) { g.Grant([]string{"write_file"}, Scope(9), 0) },
			checks: []check{{"write_file", 0, false}},
		},
		{
			name:   "no keys records nothing",
			grants: func(g *Grants) { g.Grant(nil, ScopeRun, 0) },
			checks: []check{{"", 0, false}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := new(Grants)
			tt.grants(g)
			for _, c := range tt.checks {
				scope, ok := g.Covers(c.key)
				if scope != c.scope || ok != c.ok {
					t.Errorf("Covers(%q) = %v, %v; want %v, %v", c.key, scope, ok, c.scope, c.ok)
				}
			}
		})
	}
}

func TestGrantNilIsValidToRead(t *testing.T) {
	var g *Grants
	g.EnterStage(3)
	g.Grant([]string{"write_file"}, ScopeRun, 0)
	if scope, ok := g.Covers("write_file"); ok || scope != 0 {
		t.Fatalf("nil Grants covers write_file: %v, %v", scope, ok)
	}
	r, err := NewResolver(HostLayer{}, BlueprintLayer{}, Launch{})
	if err != nil {
		t.Fatal(err)
	}
	call := Call{Tool: "write_file"}
	if d := r.Cover(call, r.Decide(call), nil, g); d.Verdict != Ask {
		t.Fatalf("Cover with nil grants and nil safe keys = %+v, want ask", d)
	}
}

// TestGrantStageCoverNeedsTheGrantStage shows that Cover, unlike Covers, will not carry a stage
// grant into another stage even when nobody called EnterStage (as after a resumed run).
func TestGrantStageCoverNeedsTheGrantStage(t *testing.T) {
	r, err := NewResolver(HostLayer{}, BlueprintLayer{Stages: []map[string]Verdict{nil, nil}}, Launch{})
	if err != nil {
		t.Fatal(err)
	}
	g := new(Grants)
	g.Grant([]string{"write_file"}, ScopeStage, 0)
	if _, ok := g.Covers("write_file"); !ok {
		t.Fatal("the stage grant should be recorded")
	}
	for stage, want := range []Verdict{Allow, Ask} {
		call := Call{Stage: stage, Tool: "write_file"}
		if d := r.Cover(call, r.Decide(call), nil, g); d.Verdict != want {
			t.Errorf("stage %d: %+v, want %v", stage, d, want)
		}
	}
}

func TestGrantParseScope(t *testing.T) {
	for _, s := range []Scope{ScopeOnce, ScopeStage, ScopeRun} {
		got, err := ParseScope(s.String())
		if err != nil || got != s {
			t.Errorf("ParseScope(%q) = %v, %v; want %v", s.String(), got, err, s)
		}
	}
	for _, bad := range []string{"", "Run", "forever", " once"} {
		got, err := ParseScope(bad)
		if got != 0 || !errors.Is(err, ErrBadScope) {
			t.Errorf("ParseScope(%q) = %v, %v; want an ErrBadScope", bad, got, err)
		}
	}
	if _, err := ParseScope("forever"); err.Error() != `invalid grant scope "forever"; valid scopes: once, stage, run` {
		t.Errorf("message: %v", err)
	}
	if got := Scope(0).String(); got != "Scope(0)" {
		t.Errorf("Scope(0).String() = %q", got)
	}
}

func TestGrantsCloneIsASnapshot(t *testing.T) {
	var nilGrants *Grants
	if nilGrants.Clone() != nil {
		t.Fatal("the clone of nil grants is not nil")
	}
	g := &Grants{}
	g.Grant([]string{"write_file"}, ScopeRun, 0)
	g.Grant([]string{"shell:ls"}, ScopeStage, 2)
	c := g.Clone()
	g.Grant([]string{"edit_file"}, ScopeRun, 2)
	g.EnterStage(3)
	if _, ok := c.Covers("edit_file"); ok {
		t.Error("a grant given after the clone shows in it")
	}
	if scope, ok := c.coversIn("shell:ls", 2); !ok || scope != ScopeStage {
		t.Error("the clone lost the stage grant its original dropped later")
	}
	if scope, ok := c.Covers("write_file"); !ok || scope != ScopeRun {
		t.Error("the clone lost the run grant")
	}
}

func TestGrantsImageRestoresWhatTheyCover(t *testing.T) {
	g := &Grants{}
	g.Grant([]string{"shell:git status", "shell:ls"}, ScopeRun, 0)
	g.Grant([]string{"write:/notes.md"}, ScopeStage, 2)
	back := RestoreGrants(g.Image())
	for _, tc := range []struct {
		key   string
		stage int
	}{{"shell:git status", 2}, {"shell:ls", 0}, {"write:/notes.md", 2}, {"write:/notes.md", 1}, {"shell:rm", 2}} {
		ws, wok := g.coversIn(tc.key, tc.stage)
		gs, gok := back.coversIn(tc.key, tc.stage)
		if ws != gs || wok != gok {
			t.Errorf("%s in stage %d: restored covers %v %v, the original %v %v", tc.key, tc.stage, gs, gok, ws, wok)
		}
	}
	// Moving on drops the stage grants in both.
	g.EnterStage(3)
	back.EnterStage(3)
	if _, ok := back.Covers("write:/notes.md"); ok {
		t.Error("a restored stage grant outlived its stage")
	}
	if RestoreGrants(nil) != nil || (*Grants)(nil).Image() != nil {
		t.Error("nil grants do not round-trip as nil")
	}
}
