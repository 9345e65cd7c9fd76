package policy

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// agentSpec is one agent of a line: its blueprint, its launch, the stage it was in when it
// spawned the line below (ignored for the child itself) and its safe keys.
type agentSpec struct {
	name   string
	bp     BlueprintLayer
	launch Launch
	stage  int
	safe   Coverer
}

// newLine builds the child's resolver and its ceilings, nearest ancestor first, all under one
// host, the way the lead builds them at spawn.
func newLine(t testing.TB, host HostLayer, child agentSpec, ancestors ...agentSpec) (*Resolver, []Ceiling) {
	t.Helper()
	r, err := NewResolver(host, child.bp, child.launch)
	if err != nil {
		t.Fatalf("child %s: %v", child.name, err)
	}
	ceilings := make([]Ceiling, 0, len(ancestors))
	for _, a := range ancestors {
		ar, err := NewResolver(host, a.bp, a.launch)
		if err != nil {
			t.Fatalf("ancestor %s: %v", a.name, err)
		}
		ceil := Ceiling{Resolver: ar, Stage: a.stage, Safe: a.safe, Agent: a.name}
		if a.stage < len(a.bp.StageNames) {
			ceil.StageName = a.bp.StageNames[a.stage]
		}
		ceilings = append(ceilings, ceil)
	}
	return r, ceilings
}

func shellCall(keys ...string) Call { return Call{Tool: ShellTool, Keys: keys, Parsed: true} }

// loosenHost lets blueprints loosen defaults, so a child blueprint can try to allow itself what
// an ancestor does not have.
var loosenHost = HostLayer{AllowBlueprintPermissions: true}

func agentOnly(name string, m map[string]Verdict) BlueprintLayer {
	return BlueprintLayer{Name: name, Agent: m}
}

func TestDecideUnderAttacks(t *testing.T) {
	parentLaunch := Launch{Yolo: true, Allow: []string{"shell:git push"}, Ask: []string{"shell:cat"}, Deny: []string{"shell:curl"}}
	for _, tc := range []struct {
		name      string
		host      HostLayer
		child     agentSpec
		ancestors []agentSpec
		call      Call
		wantOwn   Verdict // the child's own Decide: the attack's premise
		want      Verdict
		layer     string
		key       string
		reason    string // exact when it names an ancestor, else a substring
	}{
		{
			name:      "child blueprint allows shell:rm the parent blueprint denies",
			host:      loosenHost,
			child:     agentSpec{name: "planner-0/1", bp: agentOnly("worker", map[string]Verdict{"shell": Allow})},
			ancestors: []agentSpec{{name: "planner-0", bp: agentOnly("planner", map[string]Verdict{"shell:rm": Deny})}},
			call:      shellCall("shell:rm"),
			wantOwn:   Allow, want: Deny, layer: LayerParent, key: "shell:rm",
			reason: "agent planner-0 (stage 0 when it spawned this agent's line) holds deny for shell:rm (layer blueprint:agent): " +
				"blueprint [tool_permissions] sets shell:rm = deny",
		},
		{
			name: "child blueprint allows write_file the host section of the parent's blueprint denies",
			host: HostLayer{PerBlueprint: map[string]map[string]Verdict{"planner": {"write_file": Deny}}},
			child: agentSpec{name: "planner-0/1", bp: BlueprintLayer{Name: "worker", StageNames: []string{"build"},
				Stages: []map[string]Verdict{{"write_file": Allow}}}},
			ancestors: []agentSpec{{name: "planner-0", bp: BlueprintLayer{Name: "planner", StageNames: []string{"plan"}, Stages: make([]map[string]Verdict, 1)}}},
			call:      Call{Tool: "write_file"},
			wantOwn:   Allow, want: Deny, layer: LayerParent, key: "write_file",
			reason: `agent planner-0 (stage "plan" when it spawned this agent's line) holds deny for write_file (layer host:planner): ` +
				"host [agent_tool_permissions.planner] sets write_file = deny",
		},
		{
			name:      "parent ask holds against a child blueprint loosening",
			host:      loosenHost,
			child:     agentSpec{name: "planner-0/1", bp: agentOnly("worker", map[string]Verdict{"shell:git push": Allow})},
			ancestors: []agentSpec{{name: "planner-0", bp: agentOnly("planner", nil)}},
			call:      shellCall("shell:git push"),
			wantOwn:   Allow, want: Ask, layer: LayerParent, key: "shell:git push",
			reason: "agent planner-0 (stage 0 when it spawned this agent's line) holds ask for shell:git push (layer default): " +
				reasonShellKeyDefault,
		},
		{
			name:      "host per-blueprint allow of an MCP tool for the child cannot pass the parent's ask",
			host:      HostLayer{PerBlueprint: map[string]map[string]Verdict{"worker": {"github__merge": Allow}}},
			child:     agentSpec{name: "lead/2", bp: agentOnly("worker", nil)},
			ancestors: []agentSpec{{name: "lead", bp: agentOnly("planner", nil)}},
			call:      Call{Tool: "github__merge"},
			wantOwn:   Allow, want: Ask, layer: LayerParent, key: "github__merge",
			reason: "agent lead (stage 0 when it spawned this agent's line) holds ask for github__merge (layer default): " + reasonUnknownDefault,
		},
		{
			name:  "grandparent deny reaches through a permissive parent",
			host:  loosenHost,
			child: agentSpec{name: "lead-0/1/1", bp: agentOnly("worker", map[string]Verdict{"shell": Allow})},
			ancestors: []agentSpec{
				{name: "lead-0/1", bp: agentOnly("planner", map[string]Verdict{"shell": Allow})},
				{name: "lead-0", stage: 1, bp: BlueprintLayer{Name: "lead", StageNames: []string{"think", "delegate"},
					Stages: []map[string]Verdict{nil, {"shell:rm": Deny}}}},
			},
			call:    shellCall("shell:ls", "shell:rm"),
			wantOwn: Allow, want: Deny, layer: LayerParent, key: "shell:rm",
			reason: `agent lead-0 (stage "delegate" when it spawned this agent's line) holds deny for shell:rm (layer blueprint:stage): ` +
				`blueprint stage "delegate" sets shell:rm = deny`,
		},
		{
			name:  "on a tie between ancestors the nearest is named",
			host:  loosenHost,
			child: agentSpec{name: "a/1/1", bp: agentOnly("worker", map[string]Verdict{"shell": Allow})},
			ancestors: []agentSpec{
				{name: "a/1", bp: agentOnly("planner", map[string]Verdict{"shell:rm": Deny})},
				{name: "a", bp: agentOnly("lead", map[string]Verdict{"shell:rm": Deny})},
			},
			call:    shellCall("shell:rm"),
			wantOwn: Allow, want: Deny, layer: LayerParent, key: "shell:rm",
			reason: "agent a/1 (stage 0 when it spawned this agent's line) holds deny",
		},
		{
			name:      "a tie with the parent keeps the child's own decision",
			host:      loosenHost,
			child:     agentSpec{name: "a/1", bp: agentOnly("worker", map[string]Verdict{"shell:rm": Deny})},
			ancestors: []agentSpec{{name: "a", bp: agentOnly("planner", map[string]Verdict{"shell:rm": Deny})}},
			call:      shellCall("shell:rm"),
			wantOwn:   Deny, want: Deny, layer: LayerBlueprintAgent, key: "shell:rm",
			reason: "blueprint [tool_permissions] sets shell:rm = deny",
		},
		{
			name:      "the strictest key over own and parent decides a multi-key line",
			host:      loosenHost,
			child:     agentSpec{name: "a/1", bp: agentOnly("worker", map[string]Verdict{"shell": Allow, "shell:git push": Deny})},
			ancestors: []agentSpec{{name: "a", bp: agentOnly("planner", map[string]Verdict{"shell": Allow, "shell:make": Ask})}},
			call:      shellCall("shell:ls", "shell:make test", "shell:go build"),
			wantOwn:   Allow, want: Ask, layer: LayerParent, key: "shell:make test",
			reason: "agent a (stage 0 when it spawned this agent's line) holds ask for shell:make test (layer blueprint:agent): " +
				"blueprint [tool_permissions] sets shell:make = ask",
		},
		{
			name:      "a redirect takes the parent's write_file deny",
			host:      loosenHost,
			child:     agentSpec{name: "a/1", bp: agentOnly("worker", map[string]Verdict{"shell": Allow, "write_file": Allow})},
			ancestors: []agentSpec{{name: "a", bp: agentOnly("planner", map[string]Verdict{"shell": Allow, "write_file": Deny})}},
			call:      shellCall("shell:echo", "shell:>notes.txt"),
			wantOwn:   Allow, want: Deny, layer: LayerParent, key: "shell:>notes.txt",
			reason: "holds deny for shell:>notes.txt (layer write_file): the line redirects output",
		},
		{
			name:      "an unanalysable line is denied when the parent denies any shell key",
			host:      loosenHost,
			child:     agentSpec{name: "a/1", bp: agentOnly("worker", map[string]Verdict{"shell": Allow})},
			ancestors: []agentSpec{{name: "a", bp: agentOnly("planner", map[string]Verdict{"shell": Allow, "shell:rm": Deny})}},
			call:      Call{Tool: ShellTool},
			wantOwn:   Ask, want: Deny, layer: LayerParent, key: ShellTool,
			reason: "holds deny for shell (layer unparsed): the line could not be analysed",
		},
		{
			name:      "--allow on the parent is not inherited",
			child:     agentSpec{name: "a/1", bp: agentOnly("worker", nil), launch: Launch{Allow: []string{"shell:git push"}}.Inherited()},
			ancestors: []agentSpec{{name: "a", bp: agentOnly("planner", nil), launch: Launch{Allow: []string{"shell:git push"}}}},
			call:      shellCall("shell:git push"),
			wantOwn:   Ask, want: Ask, layer: LayerDefault, key: "shell:git push",
			reason: reasonShellKeyDefault,
		},
		{
			name:      "--yolo is inherited",
			child:     agentSpec{name: "a/1", bp: agentOnly("worker", nil), launch: parentLaunch.Inherited()},
			ancestors: []agentSpec{{name: "a", bp: agentOnly("planner", nil), launch: parentLaunch}},
			call:      shellCall("shell:make test"),
			wantOwn:   Allow, want: Allow, layer: LayerLaunchYolo, key: "shell:make test",
			reason: reasonYolo,
		},
		{
			name:      "--deny is inherited",
			child:     agentSpec{name: "a/1", bp: agentOnly("worker", nil), launch: parentLaunch.Inherited()},
			ancestors: []agentSpec{{name: "a", bp: agentOnly("planner", nil), launch: parentLaunch}},
			call:      shellCall("shell:curl"),
			wantOwn:   Deny, want: Deny, layer: LayerLaunchDeny, key: "shell:curl",
			reason: "launch flag --deny shell:curl denies it",
		},
		{
			name:      "--ask is inherited and holds against --yolo",
			child:     agentSpec{name: "a/1", bp: agentOnly("worker", nil), launch: parentLaunch.Inherited()},
			ancestors: []agentSpec{{name: "a", bp: agentOnly("planner", nil), launch: parentLaunch}},
			call:      shellCall("shell:cat"),
			wantOwn:   Ask, want: Ask, layer: LayerLaunchAsk, key: "shell:cat",
			reason: "keeps it ask despite --yolo",
		},
		{
			name:      "a parent's looser stage cannot loosen the child",
			host:      HostLayer{Global: map[string]Verdict{"write_file": Ask}},
			child:     agentSpec{name: "a/1", bp: agentOnly("worker", map[string]Verdict{"write_file": Deny})},
			ancestors: []agentSpec{{name: "a", bp: agentOnly("planner", nil)}},
			call:      Call{Tool: "write_file"},
			wantOwn:   Deny, want: Deny, layer: LayerBlueprintAgent, key: "write_file",
			reason: "tightening the host ceiling",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, ceilings := newLine(t, tc.host, tc.child, tc.ancestors...)
			if own := r.Decide(tc.call); own.Verdict != tc.wantOwn {
				t.Fatalf("premise: the child's own Decide = %+v, want %v", own, tc.wantOwn)
			}
			got := r.DecideUnder(tc.call, ceilings)
			if got.Verdict != tc.want || got.Layer != tc.layer || got.Key != tc.key {
				t.Fatalf("DecideUnder = %+v\nwant %v layer %q key %q", got, tc.want, tc.layer, tc.key)
			}
			if tc.layer == LayerParent && strings.HasPrefix(tc.reason, "agent ") && !strings.HasPrefix(got.Reason, tc.reason) {
				t.Fatalf("reason = %q\nwant it to start %q", got.Reason, tc.reason)
			}
			if !strings.Contains(got.Reason, tc.reason) {
				t.Fatalf("reason = %q\nwant it to contain %q", got.Reason, tc.reason)
			}
		})
	}
}

// The ceiling is the parent's permission when it spawned the child: the parent moving on to a
// looser stage afterwards changes nothing for the child.
func TestDecideUnderKeepsSpawnTimeStage(t *testing.T) {
	planner := BlueprintLayer{Name: "planner", StageNames: []string{"plan", "build"},
		Stages: []map[string]Verdict{{"write_file": Deny, "shell:git": Deny}, {"write_file": Allow, "shell:git": Allow}}}
	child := agentSpec{name: "planner-0/1", bp: agentOnly("worker", map[string]Verdict{"write_file": Allow, "shell:git": Allow})}
	r, ceilings := newLine(t, loosenHost, child, agentSpec{name: "planner-0", bp: planner, stage: 0})
	parent := ceilings[0].Resolver
	for _, tc := range []struct {
		name string
		call Call
	}{
		{"write_file", Call{Stage: 1, Tool: "write_file"}},
		{"shell:git status", Call{Stage: 1, Tool: ShellTool, Keys: []string{"shell:git status"}, Parsed: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := tc.call // the child is in its stage 1, and the parent has since moved to "build"
			if d := parent.Decide(now); d.Verdict != Allow {
				t.Fatalf("premise: the parent now decides %+v, want allow", d)
			}
			got := r.DecideUnder(tc.call, ceilings)
			if got.Verdict != Deny || got.Layer != LayerParent || !strings.Contains(got.Reason, `stage "plan" when it spawned`) {
				t.Fatalf("DecideUnder = %+v, want the spawn-time stage \"plan\" to deny", got)
			}
		})
	}
}

// A ceiling recorded without a resolver can show nothing allowed, so it denies.
func TestDecideUnderNilResolverFailsClosed(t *testing.T) {
	r, err := NewResolver(HostLayer{}, agentOnly("worker", nil), Launch{Yolo: true})
	if err != nil {
		t.Fatal(err)
	}
	ceilings := []Ceiling{{Agent: "lost"}}
	for _, tc := range []struct {
		name string
		call Call
	}{
		{"read_file", Call{Tool: "read_file"}},
		{"shell", shellCall("shell:ls")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := r.DecideUnder(tc.call, ceilings)
			if got.Verdict != Deny || got.Layer != LayerParent || !strings.Contains(got.Reason, "agent lost") {
				t.Fatalf("DecideUnder = %+v, want a deny naming the ancestor", got)
			}
			if c := r.CoverUnder(tc.call, Decision{Verdict: Ask}, coverAll{}, allGranted(tc.call), ceilings); c.Verdict != Deny {
				t.Fatalf("CoverUnder = %+v, want deny", c)
			}
		})
	}
}

func mustSafeKeys(t *testing.T, lists ...[]string) *SafeKeys {
	t.Helper()
	s, err := NewSafeKeys(lists...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// allGranted grants every key of c for the run.
func allGranted(c Call) *Grants {
	g := new(Grants)
	g.Grant(append([]string{c.Tool, ShellTool}, c.Keys...), ScopeRun, 0)
	return g
}

// Without ceilings DecideUnder and CoverUnder are Decide and Cover, over the whole corpus.
func TestUnderWithoutCeilingsMatchesResolver(t *testing.T) {
	for _, c := range loadResolveCases(t) {
		if c.Err != "" {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			h, b, l := c.layers(t)
			r, err := NewResolver(h, b, l)
			if err != nil {
				t.Fatal(err)
			}
			call := Call{Stage: c.Stage, Tool: c.Tool, Keys: c.Keys, Parsed: !c.Unparsed}
			safe, g := newSafeSet(c.Safe), c.grants(t)
			d := r.Decide(call)
			for _, ceilings := range [][]Ceiling{nil, {}} {
				if got := r.DecideUnder(call, ceilings); got != d {
					t.Fatalf("DecideUnder(%v) = %+v, Decide = %+v", ceilings, got, d)
				}
				if got, want := r.CoverUnder(call, d, safe, g, ceilings), r.Cover(call, d, safe, g); got != want {
					t.Fatalf("CoverUnder(%v) = %+v, Cover = %+v", ceilings, got, want)
				}
			}
		})
	}
}

func TestCoverUnderAttacks(t *testing.T) {
	planner := agentOnly("planner", nil)
	worker := agentOnly("worker", nil)
	for _, tc := range []struct {
		name         string
		host         HostLayer
		child        agentSpec
		ancestors    []agentSpec
		call         Call
		childGrants  []grantSpec
		parentGrants []grantSpec // the parent's own grants: its own Cover must allow, the child's not
		forged       bool        // cover a forged ask instead of DecideUnder's decision
		want         Verdict
		layer        string
		key          string
	}{
		{
			name:         "the parent's run grant does not cover the child",
			child:        agentSpec{name: "a/1", bp: worker},
			ancestors:    []agentSpec{{name: "a", bp: planner}},
			call:         Call{Tool: "write_file"},
			parentGrants: []grantSpec{{Keys: []string{"write_file"}, Scope: "run"}},
			want:         Ask, layer: LayerDefault, key: "write_file",
		},
		{
			name:         "the parent's grant of a shell key does not cover the child",
			child:        agentSpec{name: "a/1", bp: worker},
			ancestors:    []agentSpec{{name: "a", bp: planner}},
			call:         shellCall("shell:git push"),
			parentGrants: []grantSpec{{Keys: []string{"shell:git push"}, Scope: "run"}},
			want:         Ask, layer: LayerDefault, key: "shell:git push",
		},
		{
			name:        "the child's own run grant covers an ask no ceiling denies",
			child:       agentSpec{name: "a/1", bp: worker},
			ancestors:   []agentSpec{{name: "a", bp: planner}},
			call:        Call{Tool: "write_file"},
			childGrants: []grantSpec{{Keys: []string{"write_file"}, Scope: "run"}},
			want:        Allow, layer: LayerGrantRun, key: "write_file",
		},
		{
			name:        "the child's own grant covers an ask only the parent raises",
			host:        loosenHost,
			child:       agentSpec{name: "a/1", bp: agentOnly("worker", map[string]Verdict{"shell:git push": Allow})},
			ancestors:   []agentSpec{{name: "a", bp: planner}},
			call:        shellCall("shell:ls", "shell:git push"),
			childGrants: []grantSpec{{Keys: []string{"shell:git push", "shell:ls"}, Scope: "stage"}},
			want:        Allow, layer: LayerGrantStage, key: "shell:ls",
		},
		{
			name:        "the child's own grant cannot cover what the parent denies",
			child:       agentSpec{name: "a/1", bp: worker},
			ancestors:   []agentSpec{{name: "a", bp: agentOnly("planner", map[string]Verdict{"write_file": Deny})}},
			call:        Call{Tool: "write_file"},
			childGrants: []grantSpec{{Keys: []string{"write_file"}, Scope: "run"}},
			want:        Deny, layer: LayerParent, key: "write_file",
		},
		{
			name:        "a forged ask for a shell key the grandparent denies gets the deny back",
			host:        loosenHost,
			child:       agentSpec{name: "a/1/1", bp: agentOnly("worker", map[string]Verdict{"shell": Allow}), safe: coverAll{}},
			ancestors:   []agentSpec{{name: "a/1", bp: planner, safe: coverAll{}}, {name: "a", bp: agentOnly("lead", map[string]Verdict{"shell:rm": Deny}), safe: coverAll{}}},
			call:        shellCall("shell:ls", "shell:rm"),
			childGrants: []grantSpec{{Keys: []string{"shell:ls", "shell:rm"}, Scope: "run"}},
			forged:      true,
			want:        Deny, layer: LayerParent, key: "shell:rm",
		},
		{
			name:      "a safe command only the child's blueprint adds does not cover",
			child:     agentSpec{name: "a/1", bp: worker, safe: mustSafeKeys(t, ShippedSafeCommands, []string{"git stash"})},
			ancestors: []agentSpec{{name: "a", bp: planner, safe: mustSafeKeys(t, ShippedSafeCommands)}},
			call:      shellCall("shell:ls", "shell:git stash"),
			want:      Ask, layer: LayerDefault, key: "shell:ls",
		},
		{
			name:      "a safe command every ancestor's list adds covers",
			child:     agentSpec{name: "a/1", bp: worker, safe: mustSafeKeys(t, ShippedSafeCommands, []string{"git stash"})},
			ancestors: []agentSpec{{name: "a", bp: planner, safe: mustSafeKeys(t, ShippedSafeCommands, []string{"git stash"})}},
			call:      shellCall("shell:ls", "shell:git stash"),
			want:      Allow, layer: LayerSafe, key: "shell:ls",
		},
		{
			name:      "a safe key every set holds covers",
			child:     agentSpec{name: "a/1", bp: worker, safe: safeSet{"shell:ls": true, "shell:git stash": true}},
			ancestors: []agentSpec{{name: "a", bp: planner, safe: safeSet{"shell:ls": true, "shell:git": true}}},
			call:      shellCall("shell:ls", "shell:git stash"),
			want:      Allow, layer: LayerSafe, key: "shell:ls",
		},
		{
			name:      "an ancestor without a safe set makes nothing safe",
			child:     agentSpec{name: "a/1/1", bp: worker, safe: coverAll{}},
			ancestors: []agentSpec{{name: "a/1", bp: planner, safe: coverAll{}}, {name: "a", bp: planner}},
			call:      shellCall("shell:ls"),
			want:      Ask, layer: LayerDefault, key: "shell:ls",
		},
		{
			name:      "a redirect is never safe, whatever every set says",
			child:     agentSpec{name: "a/1", bp: worker, safe: coverAll{}},
			ancestors: []agentSpec{{name: "a", bp: planner, safe: coverAll{}}},
			call:      shellCall("shell:ls", "shell:>out.txt"),
			want:      Ask, layer: LayerDefault, key: "shell:ls",
		},
		{
			name:      "an inherited --ask keeps a safe key asking",
			child:     agentSpec{name: "a/1", bp: worker, safe: coverAll{}, launch: Launch{Ask: []string{"shell:ls"}}.Inherited()},
			ancestors: []agentSpec{{name: "a", bp: planner, safe: coverAll{}, launch: Launch{Ask: []string{"shell:ls"}}}},
			call:      shellCall("shell:ls"),
			want:      Ask, layer: LayerDefault, key: "shell:ls",
		},
		{
			name:      "the parent's --ask keeps a safe key asking even if the child's launch lost it",
			host:      loosenHost,
			child:     agentSpec{name: "a/1", bp: agentOnly("worker", map[string]Verdict{"mcp__fetch": Ask}), safe: coverAll{}},
			ancestors: []agentSpec{{name: "a", bp: planner, safe: coverAll{}, launch: Launch{Ask: []string{"mcp__fetch"}}}},
			call:      Call{Tool: "mcp__fetch"},
			want:      Ask, layer: LayerBlueprintAgent, key: "mcp__fetch",
		},
		{
			name:      "the parent's --ask of a shell key keeps it asking even if the child's launch lost it",
			child:     agentSpec{name: "a/1", bp: worker, safe: coverAll{}},
			ancestors: []agentSpec{{name: "a", bp: planner, safe: coverAll{}, launch: Launch{Ask: []string{"shell:ls"}}}},
			call:      shellCall("shell:ls"),
			want:      Ask, layer: LayerDefault, key: "shell:ls",
		},
		{
			name:        "grant and safe keys together cover, reporting the weakest",
			child:       agentSpec{name: "a/1", bp: worker, safe: safeSet{"shell:ls": true}},
			ancestors:   []agentSpec{{name: "a", bp: planner, safe: safeSet{"shell:ls": true}}},
			call:        shellCall("shell:ls", "shell:>out.txt"),
			childGrants: []grantSpec{{Keys: []string{"shell:>out.txt"}, Scope: "run"}},
			want:        Allow, layer: LayerGrantRun, key: "shell:>out.txt",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, ceilings := newLine(t, tc.host, tc.child, tc.ancestors...)
			if len(tc.parentGrants) > 0 {
				parent := ceilings[0].Resolver
				pg := resolveCase{Grants: tc.parentGrants}.grants(t)
				if d := parent.Cover(tc.call, parent.Decide(tc.call), nil, pg); d.Verdict != Allow {
					t.Fatalf("premise: the parent's own grant leaves %+v", d)
				}
			}
			d := r.DecideUnder(tc.call, ceilings)
			if tc.forged {
				d = Decision{Verdict: Ask, Layer: LayerDefault, Key: tc.call.Tool}
			}
			g := resolveCase{Grants: tc.childGrants}.grants(t)
			got := r.CoverUnder(tc.call, d, tc.child.safe, g, ceilings)
			if got.Verdict != tc.want || got.Layer != tc.layer || got.Key != tc.key {
				t.Fatalf("CoverUnder = %+v\nwant %v layer %q key %q", got, tc.want, tc.layer, tc.key)
			}
			if tc.want == Deny && got != r.DecideUnder(tc.call, ceilings) {
				t.Fatalf("CoverUnder = %+v, want DecideUnder's deny %+v", got, r.DecideUnder(tc.call, ceilings))
			}
		})
	}
}

func TestSafeUnder(t *testing.T) {
	own := safeSet{"shell:ls": true, "shell:cat": true, "shell:git stash": true}
	for _, tc := range []struct {
		name     string
		own      Coverer
		ceilings []Ceiling
		covers   []string
		not      []string
		isNil    bool
	}{
		{name: "no ceilings is the own set", own: own, covers: []string{"shell:ls", "shell:git stash"}, not: []string{"shell:rm"}},
		{name: "no own set covers nothing", own: nil, ceilings: []Ceiling{{Safe: coverAll{}}}, isNil: true},
		{name: "an ancestor without a safe set covers nothing", own: own, ceilings: []Ceiling{{Safe: coverAll{}}, {}}, isNil: true},
		{
			name: "every ancestor must cover the key", own: own,
			ceilings: []Ceiling{{Safe: safeSet{"shell:ls": true, "shell:git": true}}, {Safe: safeSet{"shell:ls": true, "shell:git stash": true}}},
			covers:   []string{"shell:ls", "shell:git stash"}, not: []string{"shell:cat", "shell:git push", "shell:rm"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := SafeUnder(tc.own, tc.ceilings)
			if tc.isNil {
				if s != nil {
					t.Fatalf("SafeUnder = %v, want nil (covers nothing)", s)
				}
				return
			}
			for _, key := range tc.covers {
				if !s.Covers(key) {
					t.Errorf("%s not covered", key)
				}
			}
			for _, key := range tc.not {
				if s.Covers(key) {
					t.Errorf("%s covered", key)
				}
			}
		})
	}
}

// SafeUnder copies the ceilings: changing the caller's slice afterwards changes nothing.
func TestSafeUnderCopiesCeilings(t *testing.T) {
	ceilings := []Ceiling{{Safe: safeSet{"shell:ls": true}}}
	s := SafeUnder(coverAll{}, ceilings)
	ceilings[0].Safe = coverAll{}
	if s.Covers("shell:rm") {
		t.Fatal("a change to the caller's slice widened the safe set")
	}
	if !s.Covers("shell:ls") {
		t.Fatal("shell:ls no longer covered")
	}
}

func TestLaunchInherited(t *testing.T) {
	l := Launch{Yolo: true, Allow: []string{"shell:git push"}, Ask: []string{"shell:cat"}, Deny: []string{"shell:curl"}}
	got := l.Inherited()
	if !got.Yolo || got.Allow != nil || !slices.Equal(got.Ask, l.Ask) || !slices.Equal(got.Deny, l.Deny) {
		t.Fatalf("Inherited() = %+v", got)
	}
	got.Ask[0] = "changed"
	if l.Ask[0] != "shell:cat" {
		t.Fatal("Inherited shares the parent's --ask slice")
	}
}

// A child whose blueprint allows itself shell is held to its parent's deny of rm, and the
// decision names the parent and the stage it was in when it spawned the child.
func ExampleResolver_DecideUnder() {
	host := HostLayer{AllowBlueprintPermissions: true}
	parent, err := NewResolver(host, BlueprintLayer{Name: "planner", StageNames: []string{"plan"},
		Stages: []map[string]Verdict{{"shell": Allow, "shell:rm": Deny}}}, Launch{})
	if err != nil {
		fmt.Println(err)
		return
	}
	child, err := NewResolver(host, BlueprintLayer{Name: "worker", Agent: map[string]Verdict{"shell": Allow}}, Launch{})
	if err != nil {
		fmt.Println(err)
		return
	}
	ceilings := []Ceiling{{Resolver: parent, Stage: 0, StageName: "plan", Agent: "planner-0"}}
	for _, keys := range [][]string{{"shell:ls"}, {"shell:ls", "shell:rm"}} {
		d := child.DecideUnder(Call{Tool: ShellTool, Keys: keys, Parsed: true}, ceilings)
		fmt.Printf("%v: %s by %s: %s\n", keys, d.Verdict, d.Layer, d.Reason)
	}
	// Output:
	// [shell:ls]: allow by blueprint:agent: blueprint [tool_permissions] sets shell = allow, loosening the built-in default ask ([security] allow_blueprint_permissions = true)
	// [shell:ls shell:rm]: deny by parent: agent planner-0 (stage "plan" when it spawned this agent's line) holds deny for shell:rm (layer blueprint:stage): blueprint stage "plan" sets shell:rm = deny
}
