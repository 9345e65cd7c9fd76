package scenarios_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenhq/warren"
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/scenarios"
	"github.com/warrenhq/warren/scripting"
	"github.com/warrenhq/warren/trace"
)

// policyEvent is what the JavaScript policy tests read of a trace event.
type policyEvent struct {
	Tick      uint64 `json:"tick"`
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Iteration int    `json:"iteration"`
	Text      string `json:"text"`
	Calls     int    `json:"calls"`
	Err       string `json:"error"`
	Model     string `json:"model"`
}

// policyEvents decodes a trace for the policy tests.
func policyEvents(t *testing.T, tr []byte) []policyEvent {
	t.Helper()
	_, raw, err := trace.ReadAll(bytes.NewReader(tr))
	if err != nil {
		t.Fatalf("the trace does not read back: %v", err)
	}
	events := make([]policyEvent, len(raw))
	for i, line := range raw {
		if err := json.Unmarshal(line, &events[i]); err != nil {
			t.Fatalf("event %d: %v", i+1, err)
		}
	}
	return events
}

// TestGossipScenario runs the shipped gossip example at 400 voters and checks what a researcher
// would: every voter voted, the files agree with what the trace says each voter said, the whole
// population moved in lockstep (the precondition of a deterministic run: no round's reads race
// its writes), and majority rule did its work: neighbours agree far more in the vote than in
// the first opinions, which were drawn at random.
func TestGossipScenario(t *testing.T) {
	const voters = 400
	root := t.TempDir()
	sum, tr := runTraced(t, filepath.Join("examples", "gossip.toml"), warren.Options{Agents: voters, WorkRoot: root})
	if len(sum.Failures) > 0 {
		t.Fatalf("expectations failed:\n%s", strings.Join(sum.Failures, "\n"))
	}
	if sum.ByStatus[components.Done] != voters {
		t.Fatalf("%d voters done, want %d", sum.ByStatus[components.Done], voters)
	}

	read := func(round string, i int) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(root, "voters", round, fmt.Sprintf("voters-%03d.txt", i)))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	first, votes := make([]string, voters), make([]string, voters)
	tally := map[string]int{}
	for i := range voters {
		first[i], votes[i] = read("opinions/r0", i), read("votes", i)
		tally[votes[i]]++
	}
	if tally["red"]+tally["blue"] != voters {
		t.Fatalf("votes are not all red or blue: %v", tally)
	}

	// What each voter said it voted is what its vote file holds; the turns of one iteration all
	// ran at the same tick.
	said := map[string]string{}
	ticks := map[int]map[uint64]bool{}
	for _, e := range policyEvents(t, tr) {
		switch e.Kind {
		case trace.KindSpawn:
			if e.Model != "js:voter" {
				t.Fatalf("%s runs model %q, want js:voter", e.Name, e.Model)
			}
		case trace.KindModelTurn:
			if ticks[e.Iteration] == nil {
				ticks[e.Iteration] = map[uint64]bool{}
			}
			ticks[e.Iteration][e.Tick] = true
			if vote, ok := strings.CutPrefix(e.Text, e.Name+" voted "); ok {
				said[e.Name] = strings.TrimSuffix(vote, ".")
			}
		}
	}
	for i := range voters {
		if name := fmt.Sprintf("voters-%03d", i); said[name] != votes[i] {
			t.Errorf("%s says it voted %q, its vote file holds %q", name, said[name], votes[i])
		}
	}
	for iteration, at := range ticks {
		if len(at) != 1 {
			t.Errorf("turn %d ran at ticks %v: the voters are not in lockstep", iteration, at)
		}
	}

	agreement := func(opinions []string) float64 {
		same := 0
		for i := 1; i < len(opinions); i++ {
			if opinions[i] == opinions[i-1] {
				same++
			}
		}
		return float64(same) / float64(len(opinions)-1)
	}
	before, after := agreement(first), agreement(votes)
	t.Logf("neighbours agreeing: %.2f in the first opinions, %.2f in the votes; tally %v", before, after, tally)
	if before < 0.4 || before > 0.6 {
		t.Errorf("neighbours agree %.2f of the time in the first opinions, want about half (a fair coin each)", before)
	}
	if after < before+0.2 {
		t.Errorf("neighbours agree %.2f of the time in the votes, want well above the %.2f of the first opinions", after, before)
	}
}

// writePolicyFiles writes a scenario and its files into a temporary folder and returns its path.
func writePolicyFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "s.toml")
}

// policyBlueprint is a one-stage blueprint for the policy tests.
const policyBlueprint = `name = "p"
[tool_permissions]
write_file = "allow"
[[stages]]
name = "work"
available_tools = ["read_file", "write_file"]
max_iterations = 4
`

// policyScenario is a scenario of count agents running the js model whose table is model.
func policyScenario(model string, count int) string {
	return fmt.Sprintf(`name = "policy-test"
[blueprints]
p = "p.toml"
[models.m]
%s
[[groups]]
name = "g"
blueprint = "p"
model = "m"
count = %d
`, model, count)
}

func TestJSModelLoadErrors(t *testing.T) {
	tests := []struct {
		name   string
		model  string
		policy string
		want   []string
	}{
		{"no file", `kind = "js"`, "", []string{
			`models.m: missing file: a js model names its policy, e.g. file = "policies/voter.js"`}},
		{"turns on a js model", "kind = \"js\"\nfile = \"p.js\"\n[[models.m.turns]]\ntext = \"x\"", "definePolicy(function () {});", []string{
			`s.toml:7:12: models.m.turns: unknown key; valid keys here: file, kind, turn_timeout (turns is a key of kind "scripted")`}},
		{"a file on a scripted model", "kind = \"scripted\"\nfile = \"p.js\"", "", []string{
			`s.toml:6:1: models.m.file: unknown key; valid keys here: kind, turns, when_exhausted (file is a key of kind "js")`}},
		{"a missing file", "kind = \"js\"\nfile = \"policies/none.js\"", "", []string{
			`models.m.file: "policies/none.js" cannot be read: `}},
		{"a syntax error", "kind = \"js\"\nfile = \"p.js\"", "definePolicy(function (obs) {\n  return 1 +;\n});", []string{
			"models.m.file: the policy does not load:", "p.js:2:13: Unexpected token ;"}},
		{"no definePolicy", "kind = \"js\"\nfile = \"p.js\"", "const x = 1;", []string{
			"p.js:1:1: the file never calls definePolicy(function decide(obs) {...})"}},
		{"a turn_timeout on a scripted model", "kind = \"scripted\"\nturn_timeout = \"1s\"", "", []string{
			`models.m.turn_timeout: unknown key; valid keys here: kind, turns, when_exhausted (turn_timeout is a key of kind "js")`}},
		{"a turn_timeout that is no duration", "kind = \"js\"\nfile = \"p.js\"\nturn_timeout = \"fast\"", "definePolicy(function () {});", []string{
			`models.m.turn_timeout: "fast" is not a duration from 1ms to 10s (e.g. "250ms")`}},
		{"a turn_timeout over the cap", "kind = \"js\"\nfile = \"p.js\"\nturn_timeout = \"1m\"", "definePolicy(function () {});", []string{
			`models.m.turn_timeout: "1m" is not a duration from 1ms to 10s`}},
		{"an unknown kind", `kind = "python"`, "", []string{
			`models.m.kind: "python": valid kinds: anthropic, js, openai, scripted`}},
		{"no kind", `file = "p.js"`, "", []string{
			`models.m: missing kind; valid kinds: anthropic, js, openai, scripted`}},
		{"a kind that is no string", `kind = 3`, "", []string{
			`s.toml:5:1: models.m.kind: 3 is not a kind: name one as a string; valid kinds: anthropic, js, openai, scripted`}},
		{"a kind's id for its name", `kind = "models.js"`, "", []string{
			`models.m.kind: "models.js": valid kinds: anthropic, js, openai, scripted`}},
		{"a misspelled key of a scripted turn", "kind = \"scripted\"\n[[models.m.turns]]\ntext = \"x\"\n[[models.m.turns]]\ntxet = \"y\"", "", []string{
			`s.toml:9:1: models.m.turns[1].txet: unknown key; valid keys here: agent, calls, error, repeat, stage, text`}},
		{"a key differing in case", "kind = \"js\"\nFile = \"p.js\"", "", []string{
			`s.toml:6:1: models.m.File: unknown key (keys are case-sensitive); valid keys here: file, kind, turn_timeout`}},
		{"a value of the wrong type, with the rest of the file still checked", "kind = \"scripted\"\nwhen_exhausted = 1\n[[groups]]\nname = \"h\"\nblueprint = \"nope\"\nmodel = \"m\"\ncount = 1", "", []string{
			`s.toml:6:18: models.m.when_exhausted: expected string, got integer`,
			`s.toml:9:1: groups[0].blueprint: unknown blueprint "nope"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"s.toml": policyScenario(tc.model, 1), "p.toml": policyBlueprint}
			if tc.policy != "" {
				files["p.js"] = tc.policy
			}
			_, err := scenarios.Load(writePolicyFiles(t, files), scenarios.KnownTools())
			if err == nil {
				t.Fatal("the scenario loads")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error:\n%v\nwant it to contain %q", err, want)
				}
			}
		})
	}
}

func TestJSModelCompiledOnce(t *testing.T) {
	file := writePolicyFiles(t, map[string]string{
		"s.toml":          policyScenario("kind = \"js\"\nfile = \"policies/p.js\"", 2),
		"p.toml":          policyBlueprint,
		"policies/p.js":   "definePolicy(function (obs) { return { text: obs.agent.name }; });",
		"policies/unused": "not a policy",
	})
	sc, err := scenarios.Load(file, scenarios.KnownTools())
	if err != nil {
		t.Fatal(err)
	}
	p, ok := sc.Groups[0].Model.(*scripting.Policy)
	if !ok {
		t.Fatalf("the group's model is %T, want *scripting.Policy", sc.Groups[0].Model)
	}
	if p.ID() != "js:m" || p.File() != "policies/p.js" {
		t.Errorf("ID %q, File %q; want js:m named policies/p.js (as the scenario writes it)", p.ID(), p.File())
	}
}

// TestJSPolicyFailuresStayWithTheAgent: a policy that throws fails its agent's stage with the
// file, line and column in the reason; one that runs away is interrupted at its budget; the
// other agents finish normally.
func TestJSPolicyFailuresStayWithTheAgent(t *testing.T) {
	policy := `definePolicy(function decide(obs) {
  if (obs.agent.index === 1) {
    throw new Error("agent " + obs.agent.name + " is broken");
  }
  if (obs.agent.index === 2) {
    for (;;) {}
  }
  return { text: "fine" };
});`
	file := writePolicyFiles(t, map[string]string{
		"s.toml": policyScenario("kind = \"js\"\nfile = \"p.js\"", 3),
		"p.toml": policyBlueprint,
		"p.js":   policy,
	})
	sum, tr := runTraced(t, file, warren.Options{WorkRoot: t.TempDir()})
	byName := map[string]components.FinalRecord{}
	for _, r := range sum.Records {
		byName[r.Name] = r
	}
	for name, want := range map[string]struct {
		status components.StatusKind
		reason string
	}{
		"g-0": {components.Done, ""},
		"g-1": {components.Failed, "model error: p.js:3:11: Error: agent g-1 is broken"},
		"g-2": {components.Failed, "model error: p.js: script ran past its 100ms CPU budget"},
	} {
		r := byName[name]
		if r.Status != want.status || r.Reason != want.reason {
			t.Errorf("%s: status %v, reason %q; want %v, %q", name, r.Status, r.Reason, want.status, want.reason)
		}
	}
	errs := 0
	for _, e := range policyEvents(t, tr) {
		if e.Kind == trace.KindModelTurn && e.Err != "" {
			errs++
		}
	}
	if errs != 2 {
		t.Errorf("%d model turns failed in the trace, want 2", errs)
	}
	if sum.ByStatus[components.Done] != 1 {
		t.Errorf("done: %d, want 1", sum.ByStatus[components.Done])
	}
}

func TestJSPolicyTurnTimeout(t *testing.T) {
	file := writePolicyFiles(t, map[string]string{
		"s.toml": policyScenario("kind = \"js\"\nfile = \"p.js\"\nturn_timeout = \"30ms\"", 1),
		"p.toml": policyBlueprint,
		"p.js":   `definePolicy(function decide(obs) { for (;;) {} });`,
	})
	sum, _ := runTraced(t, file, warren.Options{WorkRoot: t.TempDir()})
	if len(sum.Records) != 1 || sum.Records[0].Reason != "model error: p.js: script ran past its 30ms CPU budget" {
		t.Errorf("records = %+v, want the 30ms budget's failure", sum.Records)
	}
}

// TestHostMemoryBudgetReachesScriptsAndPolicies: the host's [scripting] max_memory bounds a js
// model's turn and a script tool's call of the run, not only the default budget.
func TestHostMemoryBudgetReachesScriptsAndPolicies(t *testing.T) {
	// Each builds a 4 MiB string (8 MiB at 2 bytes a character): within the 64 MiB default,
	// past a 1 MiB budget.
	const bigPolicy = `definePolicy(function decide(obs) {
  if (obs.turn > 0) { return {text: "done"}; }
  return {text: String("x".repeat(4 << 20).length)};
});`
	const callingPolicy = `definePolicy(function decide(obs) {
  if (obs.turn > 0) { return {text: "done"}; }
  return {calls: [{tool: "big", args: {}}]};
});`
	const tool = `defineTool({name: "big", description: "builds a big string", parameters: {type: "object"},
  run: function (args) { return String("y".repeat(4 << 20).length); }});`
	const budget = "[host.scripting]\nmax_memory = \"1MiB\"\n"
	for _, tc := range []struct {
		name, host, policy string
		// wantFail is a substring of the agent's failure ("" when it ends done); wantResult one
		// of the tool's result ("" when the tool is not called).
		wantFail, wantResult string
	}{
		{"a policy under the default budget", "", bigPolicy, "", ""},
		{"a policy under a 1 MiB budget", budget, bigPolicy, "memory budget", ""},
		{"a script tool under the default budget", "", callingPolicy, "", `"content":"4194304"`},
		{"a script tool under a 1 MiB budget", budget, callingPolicy, "", "memory budget"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{
				// A ten-second turn budget: only memory may stop the policy, however slow the
				// machine (the race pass is about ten times slower).
				"s.toml":       policyScenario("kind = \"js\"\nfile = \"p.js\"\nturn_timeout = \"10s\"", 1) + tc.host + "[host.tool_permissions]\nbig = \"allow\"\n",
				"p.toml":       strings.Replace(policyBlueprint, `available_tools = ["read_file", "write_file"]`, `available_tools = ["read_file", "write_file", "big"]`, 1),
				"p.js":         tc.policy,
				"tools/big.js": tool,
			}
			sum, tr := runTraced(t, writePolicyFiles(t, files), warren.Options{WorkRoot: t.TempDir()})
			r := sum.Records[0]
			switch {
			case tc.wantFail == "" && r.Status != components.Done:
				t.Errorf("the agent ended %s (%s), want done", r.Status, r.Reason)
			case tc.wantFail != "" && (r.Status != components.Failed || !strings.Contains(r.Reason, tc.wantFail)):
				t.Errorf("the agent ended %s (%s), want failed by the %s", r.Status, r.Reason, tc.wantFail)
			}
			var result string
			for _, line := range strings.Split(string(tr), "\n") {
				if strings.Contains(line, `"kind":"tool_result"`) {
					result = line
				}
			}
			if tc.wantResult != "" && !strings.Contains(result, tc.wantResult) {
				t.Errorf("the tool's result %s, want it to contain %s", result, tc.wantResult)
			}
		})
	}
}
