package policy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/warrenhq/warren/internal/golden"
)

// resolveCase is one line of the corpus under testdata/resolve: the layers, the launch, the
// call, what covers it, and the expected decision. Verdicts are spelled as in configs.
type resolveCase struct {
	Name string `json:"name"`

	Host   map[string]string `json:"host"`     // [tool_permissions]
	HostBP map[string]string `json:"host_bp"`  // [agent_tool_permissions.reviewer]
	Other  map[string]string `json:"other_bp"` // [agent_tool_permissions.other], never this blueprint's
	Loosen bool              `json:"loosen"`   // [security] allow_blueprint_permissions

	Agent  map[string]string   `json:"agent"`
	Stages []map[string]string `json:"stages"`

	Yolo  bool     `json:"yolo"`
	Allow []string `json:"allow"`
	Ask   []string `json:"ask"`
	Deny  []string `json:"deny"`

	Stage    int      `json:"stage"`
	Tool     string   `json:"tool"`
	Keys     []string `json:"keys"`
	Unparsed bool     `json:"unparsed"`

	Safe   []string    `json:"safe"`
	Grants []grantSpec `json:"grants"`
	Enter  []int       `json:"enter"` // EnterStage calls, after the grants

	Base   string `json:"base"`   // Decide's verdict, when it differs from the final one
	Want   string `json:"want"`   // Cover(Decide)'s verdict
	Layer  string `json:"layer"`  // its layer
	Reason string `json:"reason"` // a substring of its reason
	Key    string `json:"key"`    // its key, when given
	Err    string `json:"err"`    // a substring of NewResolver's error; then nothing else is checked
}

type grantSpec struct {
	Keys  []string `json:"keys"`
	Scope string   `json:"scope"`
	Stage int      `json:"stage"`
}

// loadResolveCases reads every *.jsonl file under testdata/resolve. Blank lines and lines
// starting with # are comments; unknown fields are errors so a typo cannot pass silently.
func loadResolveCases(t *testing.T) []resolveCase {
	t.Helper()
	var cases []resolveCase
	names := map[string]string{}
	for _, path := range golden.Corpus(t, "resolve", "*.jsonl") {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for line := 1; sc.Scan(); line++ {
			text := strings.TrimSpace(sc.Text())
			if text == "" || strings.HasPrefix(text, "#") {
				continue
			}
			dec := json.NewDecoder(strings.NewReader(text))
			dec.DisallowUnknownFields()
			var c resolveCase
			if err := dec.Decode(&c); err != nil {
				t.Fatalf("%s:%d: %v", path, line, err)
			}
			where := filepath.Base(path) + ":" + strconv.Itoa(line)
			if c.Name == "" || (c.Want == "" && c.Err == "") {
				t.Fatalf("%s: a case needs a name and want or err", where)
			}
			if prev, dup := names[c.Name]; dup {
				t.Fatalf("%s: case name %q already used at %s", where, c.Name, prev)
			}
			names[c.Name] = where
			cases = append(cases, c)
		}
	}
	return cases
}

func verdictMap(t *testing.T, m map[string]string) map[string]Verdict {
	t.Helper()
	if m == nil {
		return nil
	}
	out := make(map[string]Verdict, len(m))
	for k, s := range m {
		v, err := ParseVerdict(s)
		if err != nil {
			t.Fatalf("entry %q: %v", k, err)
		}
		out[k] = v
	}
	return out
}

func (c resolveCase) layers(t *testing.T) (HostLayer, BlueprintLayer, Launch) {
	h := HostLayer{Global: verdictMap(t, c.Host), AllowBlueprintPermissions: c.Loosen,
		PerBlueprint: map[string]map[string]Verdict{"reviewer": verdictMap(t, c.HostBP), "other": verdictMap(t, c.Other)}}
	b := BlueprintLayer{Name: "reviewer", Agent: verdictMap(t, c.Agent)}
	for _, s := range c.Stages {
		b.Stages = append(b.Stages, verdictMap(t, s))
	}
	return h, b, Launch{Yolo: c.Yolo, Allow: c.Allow, Ask: c.Ask, Deny: c.Deny}
}

func (c resolveCase) grants(t *testing.T) *Grants {
	if len(c.Grants) == 0 && len(c.Enter) == 0 {
		return nil
	}
	g := new(Grants)
	for _, spec := range c.Grants {
		scope, err := ParseScope(spec.Scope)
		if err != nil {
			t.Fatal(err)
		}
		g.Grant(spec.Keys, scope, spec.Stage)
	}
	for _, stage := range c.Enter {
		g.EnterStage(stage)
	}
	return g
}

// safeSet is a test stand-in for the safe-key list: a key is safe when it or its program key is
// listed, as the real list matches.
type safeSet map[string]bool

var _ Coverer = safeSet(nil)

func (s safeSet) Covers(key string) bool {
	if s[key] {
		return true
	}
	p := KeyProgram(key)
	return p != "" && s[ProgramKey(p, "")]
}

func newSafeSet(keys []string) Coverer {
	if keys == nil {
		return nil
	}
	s := safeSet{}
	for _, k := range keys {
		s[k] = true
	}
	return s
}

func TestResolveCorpus(t *testing.T) {
	cases := loadResolveCases(t)
	if len(cases) < 220 {
		t.Fatalf("the corpus has %d cases; it must keep at least 220", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			h, b, l := c.layers(t)
			r, err := NewResolver(h, b, l)
			if c.Err != "" {
				if err == nil || !strings.Contains(err.Error(), c.Err) {
					t.Fatalf("NewResolver error = %v, want one containing %q", err, c.Err)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewResolver: %v", err)
			}
			call := Call{Stage: c.Stage, Tool: c.Tool, Keys: c.Keys, Parsed: !c.Unparsed}
			safe, g := newSafeSet(c.Safe), c.grants(t)
			base := r.Decide(call)
			got := r.Cover(call, base, safe, g)
			if c.Base != "" && base.Verdict.String() != c.Base {
				t.Errorf("Decide = %+v, want verdict %s", base, c.Base)
			}
			if got.Verdict.String() != c.Want || (c.Layer != "" && got.Layer != c.Layer) ||
				!strings.Contains(got.Reason, c.Reason) || (c.Key != "" && got.Key != c.Key) {
				t.Errorf("got %+v\nwant verdict %s layer %q key %q reason containing %q", got, c.Want, c.Layer, c.Key, c.Reason)
			}
			if x := r.Explain(call, safe, g); x.Decision != got {
				t.Errorf("Explain decided %+v, Decide+Cover %+v", x.Decision, got)
			}
		})
	}
}

func TestResolveRejectsBadLayers(t *testing.T) {
	tests := []struct {
		name    string
		h       HostLayer
		b       BlueprintLayer
		wantErr error
		wantMsg string
	}{
		{name: "zero verdict in host", h: HostLayer{Global: map[string]Verdict{"shell": 0}},
			wantErr: ErrBadVerdict, wantMsg: `host [tool_permissions] entry "shell": invalid permission verdict Verdict(0)`},
		{name: "out of range verdict in a stage", b: BlueprintLayer{Name: "bp", Stages: []map[string]Verdict{nil, {"write_file": 9}}},
			wantErr: ErrBadVerdict, wantMsg: `blueprint stage 1 entry "write_file"`},
		{name: "bad verdict in the per-blueprint section", b: BlueprintLayer{Name: "bp"},
			h:       HostLayer{PerBlueprint: map[string]map[string]Verdict{"bp": {"read_file": 4}}},
			wantErr: ErrBadVerdict, wantMsg: `host [agent_tool_permissions.bp] entry "read_file"`},
		{name: "empty name at agent level", b: BlueprintLayer{Agent: map[string]Verdict{"": Allow}},
			wantErr: ErrBadEntry, wantMsg: "blueprint [tool_permissions]: invalid permission entry: an entry has an empty name"},
		{name: "errors follow sorted names", h: HostLayer{Global: map[string]Verdict{"b": 7, "a": 8}},
			wantErr: ErrBadVerdict, wantMsg: `entry "a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewResolver(tt.h, tt.b, Launch{})
			if r != nil || !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("NewResolver = %v, %v; want nil and %v containing %q", r, err, tt.wantErr, tt.wantMsg)
			}
		})
	}
}

func TestResolveDefaultVerdicts(t *testing.T) {
	for _, tool := range []string{"read_file", "list_dir", "todo_add", "todo_done", "todo_list", "ask_user_text",
		"ask_user_choice", "ask_user_confirm", "spawn_agent", "check_agent", "wait_for_agent", "send_to_agent",
		"kill_agent", "list_agents", "fan_out"} {
		if got := DefaultVerdict(tool); got != Allow {
			t.Errorf("DefaultVerdict(%s) = %v, want allow", tool, got)
		}
	}
	for _, tool := range []string{"write_file", "edit_file", "shell", "github__create_issue", "my_script", ""} {
		if got := DefaultVerdict(tool); got != Ask {
			t.Errorf("DefaultVerdict(%q) = %v, want ask", tool, got)
		}
	}
}

func TestResolveLoosenableIsReadAtConstruction(t *testing.T) {
	saved := Loosenable
	t.Cleanup(func() { Loosenable = saved })
	b := BlueprintLayer{Agent: map[string]Verdict{"write_file": Allow, "mcp__x": Allow}}
	before, err := NewResolver(HostLayer{}, b, Launch{})
	if err != nil {
		t.Fatal(err)
	}
	Loosenable = []string{"mcp__x"}
	after, err := NewResolver(HostLayer{}, b, Launch{})
	if err != nil {
		t.Fatal(err)
	}
	Loosenable = saved
	for _, tc := range []struct {
		r    *Resolver
		tool string
		want Verdict
	}{{before, "write_file", Allow}, {before, "mcp__x", Ask}, {after, "write_file", Ask}, {after, "mcp__x", Allow}} {
		if got := tc.r.Decide(Call{Tool: tc.tool}); got.Verdict != tc.want {
			t.Errorf("%s: %+v, want %v", tc.tool, got, tc.want)
		}
	}
}

// TestResolveConcurrentDecide runs one resolver from many goroutines; under -race it proves
// that deciding never writes shared state.
func TestResolveConcurrentDecide(t *testing.T) {
	r, err := NewResolver(HostLayer{Global: map[string]Verdict{"shell:rm": Deny}},
		BlueprintLayer{Name: "bp", Stages: []map[string]Verdict{{"write_file": Allow}}}, Launch{Allow: []string{"shell:ls"}})
	if err != nil {
		t.Fatal(err)
	}
	calls := []Call{
		{Tool: "write_file"}, {Tool: "mcp__x"}, {Tool: "shell", Keys: []string{"shell:ls", "shell:>o"}, Parsed: true},
		{Tool: "shell"}, {Tool: "shell", Keys: []string{"shell:rm"}, Parsed: true}, {Stage: 7, Tool: "write_file"},
	}
	want := make([]Decision, len(calls))
	for i, c := range calls {
		want[i] = r.Decide(c)
	}
	done := make(chan struct{})
	for range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 200 {
				for i, c := range calls {
					if got := r.Decide(c); got != want[i] {
						t.Errorf("concurrent Decide(%+v) = %+v, want %+v", c, got, want[i])
						return
					}
				}
			}
		}()
	}
	for range 8 {
		<-done
	}
}

func TestExplainSteps(t *testing.T) {
	type want struct {
		step  Step
		index int // -1: anywhere
	}
	tests := []struct {
		name   string
		h      HostLayer
		b      BlueprintLayer
		l      Launch
		call   Call
		safe   Coverer
		grants func(*Grants)
		want   []want
	}{
		{name: "the ceiling", h: HostLayer{Global: map[string]Verdict{"write_file": Ask}}, call: Call{Tool: "write_file"},
			want: []want{{Step{Layer: stepResult, Key: "write_file", Value: "ask", Effect: "host: host [tool_permissions] sets write_file = ask"}, 0},
				{Step{Layer: LayerHost, Key: "write_file", Value: "ask", Effect: "ceiling"}, 1},
				{Step{Layer: LayerDefault, Key: "write_file", Value: "ask", Effect: "superseded by host"}, -1}}},
		{name: "an ignored loosening", b: BlueprintLayer{Name: "bp", Stages: []map[string]Verdict{{"shell": Allow}}},
			call: Call{Tool: "shell", Keys: []string{"shell:ls"}, Parsed: true},
			want: []want{{Step{Layer: LayerBlueprintStage, Key: "shell", Value: "allow", Effect: "ignored: may not loosen the default (ask) without [security] allow_blueprint_permissions"}, -1},
				{Step{Layer: LayerHost, Key: "shell:ls", Effect: "not set"}, 1},
				{Step{Layer: LayerDefault, Key: "shell", Value: "ask", Effect: "applies"}, -1}}},
		{name: "a permitted loosening", b: BlueprintLayer{Stages: []map[string]Verdict{{"write_file": Allow}}}, call: Call{Tool: "write_file"},
			want: []want{{Step{Layer: LayerBlueprintStage, Key: "write_file", Value: "allow", Effect: "loosens the default (ask): write_file is on the loosenable list"}, -1}}},
		{name: "a blueprint above the ceiling", h: HostLayer{Global: map[string]Verdict{"write_file": Ask}},
			b: BlueprintLayer{Agent: map[string]Verdict{"write_file": Allow}}, call: Call{Tool: "write_file"},
			want: []want{{Step{Layer: LayerBlueprintAgent, Key: "write_file", Value: "allow", Effect: "ignored: a blueprint may not exceed the ceiling (ask)"}, -1}}},
		{name: "a per-blueprint entry overrides the global one",
			h: HostLayer{Global: map[string]Verdict{"write_file": Deny}, PerBlueprint: map[string]map[string]Verdict{"bp": {"write_file": Allow}}},
			b: BlueprintLayer{Name: "bp"}, call: Call{Tool: "write_file"},
			want: []want{{Step{Layer: LayerHost, Key: "write_file", Value: "deny", Effect: "overridden by host:bp entry write_file"}, 1},
				{Step{Layer: "host:bp", Key: "write_file", Value: "allow", Effect: "ceiling"}, 2}}},
		{name: "yolo against a deny", h: HostLayer{Global: map[string]Verdict{"write_file": Deny}}, l: Launch{Yolo: true}, call: Call{Tool: "write_file"},
			want: []want{{Step{Layer: LayerLaunchYolo, Value: "allow", Effect: "no effect: deny is terminal"}, -1}}},
		{name: "an --allow under a --deny", l: Launch{Deny: []string{"shell"}, Allow: []string{"shell:ls"}},
			call: Call{Tool: "shell", Keys: []string{"shell:ls"}, Parsed: true},
			want: []want{{Step{Layer: LayerLaunchDeny, Key: "shell", Value: "deny", Effect: "denies"}, -1},
				{Step{Layer: LayerLaunchAllow, Key: "shell:ls", Value: "allow", Effect: "no effect: --deny shell denies the key, and deny is terminal"}, -1}}},
		{name: "an unanalysable line --allow cannot lift", b: BlueprintLayer{Agent: map[string]Verdict{"shell:ls": Ask}},
			l: Launch{Allow: []string{"shell"}}, call: Call{Tool: "shell"},
			want: []want{{Step{Layer: LayerLaunchAllow, Key: "shell", Value: "allow",
				Effect: "no effect: the line could not be analysed and some layer sets shell keys, so --allow shell cannot lift its ask"}, -1},
				{Step{Layer: stepCoverage, Key: "shell", Value: "not covered", Effect: "a line that could not be analysed is never covered"}, -1}}},
		{name: "an unanalysable line against a key deny", h: HostLayer{Global: map[string]Verdict{"shell:rm": Deny}}, call: Call{Tool: "shell"},
			want: []want{{Step{Layer: LayerUnparsed, Key: "shell:rm", Value: "deny", Effect: "denies the line: it cannot be shown to avoid shell:rm"}, -1}}},
		{name: "an environment assignment is never safe", safe: safeSet{"shell:FOO=": true},
			call: Call{Tool: "shell", Keys: []string{"shell:FOO="}, Parsed: true},
			want: []want{{Step{Layer: stepCoverage, Key: "shell:FOO=", Value: "not covered", Effect: "an environment assignment is never safe; it needs a prompt"}, -1}}},
		{name: "coverage key by key", safe: safeSet{"shell:ls": true, "shell:>o": true, "shell:cat": true}, l: Launch{Ask: []string{"shell:cat"}},
			h:      HostLayer{Global: map[string]Verdict{"shell:make": Allow}},
			grants: func(g *Grants) { g.Grant([]string{"shell:git push"}, ScopeStage, 0) },
			call:   Call{Tool: "shell", Keys: []string{"shell:ls", "shell:git push", "shell:rm", "shell:>o", "shell:cat", "shell:make"}, Parsed: true},
			want: []want{{Step{Layer: LayerSafe, Key: "shell:ls", Value: "covered", Effect: "a safe key"}, -1},
				{Step{Layer: LayerGrantStage, Key: "shell:git push", Value: "covered", Effect: "granted for stage 0"}, -1},
				{Step{Layer: stepCoverage, Key: "shell:rm", Value: "not covered", Effect: "no safe key or grant; it needs a prompt"}, -1},
				{Step{Layer: stepCoverage, Key: "shell:>o", Value: "not covered", Effect: "a redirect writes a file, so it is never safe; it needs a prompt"}, -1},
				{Step{Layer: stepCoverage, Key: "shell:cat", Value: "not covered", Effect: "--ask overrides the safe list; it needs a prompt"}, -1},
				{Step{Layer: stepCoverage, Key: "shell:make", Value: "not needed", Effect: "the key resolves to allow"}, -1},
				{Step{Layer: LayerWriteFile, Key: "shell:>o", Value: "ask", Effect: "the line redirects output; write_file's verdict is not stricter than the line's keys: no change"}, -1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewResolver(tt.h, tt.b, tt.l)
			if err != nil {
				t.Fatal(err)
			}
			var g *Grants
			if tt.grants != nil {
				g = new(Grants)
				tt.grants(g)
			}
			x := r.Explain(tt.call, tt.safe, g)
			for _, w := range tt.want {
				found := -1
				for i, s := range x.Steps {
					if s == w.step {
						found = i
						break
					}
				}
				if found < 0 || (w.index >= 0 && found != w.index) {
					t.Errorf("step %+v at %d, want at %d; steps:\n%s", w.step, found, w.index, x)
				}
			}
		})
	}
}

// TestExplainGolden pins the readable report of `host explain` for a set of calls against one
// configuration; run with -update to rewrite it after a deliberate change.
func TestExplainGolden(t *testing.T) {
	r, err := NewResolver(
		HostLayer{
			Global:       map[string]Verdict{"shell": Allow, "shell:rm": Deny, "write_file": Ask},
			PerBlueprint: map[string]map[string]Verdict{"reviewer": {"shell:git": Ask}},
		},
		BlueprintLayer{Name: "reviewer", Agent: map[string]Verdict{"mcp__x": Allow},
			Stages: []map[string]Verdict{{"shell:git push": Deny, "write_file": Allow}, {"read_file": Ask}}},
		Launch{Ask: []string{"shell:make"}})
	if err != nil {
		t.Fatal(err)
	}
	g := new(Grants)
	g.Grant([]string{"read_file"}, ScopeStage, 1)
	safe := safeSet{"shell:ls": true}
	var out strings.Builder
	for _, c := range []Call{
		{Tool: "write_file"},
		{Tool: "mcp__x"},
		{Stage: 1, Tool: "read_file"},
		{Tool: "shell", Keys: []string{"shell:ls", "shell:git push"}, Parsed: true},
		{Stage: 1, Tool: "shell", Keys: []string{"shell:ls", "shell:make", "shell:>o"}, Parsed: true},
		{Stage: 1, Tool: "shell"},
	} {
		out.WriteString(r.Explain(c, safe, g).String())
		out.WriteString("\n")
	}
	golden.Check(t, filepath.Join("testdata", "resolve", "explain.golden"), out.String())
}

// TestResolveCoverNeverAllowsADeniedKey hands Cover an ask that Decide would not have given: the deny
// comes back instead of a covered allow, so a stale decision cannot open a denied key.
func TestResolveCoverNeverAllowsADeniedKey(t *testing.T) {
	r, err := NewResolver(HostLayer{Global: map[string]Verdict{"shell:rm": Deny, "write_file": Deny}}, BlueprintLayer{}, Launch{})
	if err != nil {
		t.Fatal(err)
	}
	g := new(Grants)
	g.Grant([]string{"shell:rm", "shell:ls", "write_file"}, ScopeRun, 0)
	stale := Decision{Verdict: Ask, Layer: LayerDefault, Reason: "stale"}
	for _, c := range []Call{
		{Tool: "write_file"},
		{Tool: "shell", Keys: []string{"shell:ls", "shell:rm"}, Parsed: true},
		{Tool: "shell", Keys: []string{"shell:ls", "shell:>o"}, Parsed: true},
	} {
		got := r.Cover(c, stale, coverAll{}, g)
		if got.Verdict != Deny || got != r.Decide(c) {
			t.Errorf("Cover(%+v, stale ask) = %+v, want Decide's deny %+v", c, got, r.Decide(c))
		}
	}
}
