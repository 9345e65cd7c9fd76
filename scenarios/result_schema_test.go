package scenarios_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/warrenhq/warren"
)

// gradeTool is a script tool that grades a draft, and throws (an error result) when the draft
// is missing: the shape of its result changes, as when a limit fires.
const gradeTool = `defineTool({
  name: "grade",
  description: "Grades a draft.",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  run: function (args, host) {
    const text = host.readFile(args.path);
    return { verdict: text.indexOf("## Limits") >= 0 ? "approve" : "revise", missing: [], words: text.length };
  }
});
`

// gradedBlueprint reviews with grade, declaring its result schema when schema is set.
func gradedBlueprint(schema bool) string {
	schemas := ""
	if schema {
		schemas = `
[result_schemas.grade]
type = "object"
required = ["verdict"]
properties = { verdict = { type = "string" }, missing = { type = "array", items = { type = "string" } }, words = { type = "integer" } }
`
	}
	return `name = "graded"
[tool_permissions]
write_file = "allow"
` + schemas + `
[[stages]]
name = "review"
available_tools = ["grade", "write_file"]
max_iterations = 4
  [[stages.transitions]]
  on = "done"
  when = 'tools.grade?.verdict == "approve"'
  end = "done"
  [[stages.transitions]]
  on = "done"
  end = "failed"
`
}

// TestConditionOverAChangedResult: a grade whose result is an error (its file is missing, as a
// limit firing would make it) reaches a condition checked against grade's result schema as nil,
// so tools.grade?.verdict == "approve" is false and the fallback ends the agent; without a
// schema the condition meets the error's text and fails the agent at run time (what issue 31
// saw under load: invalid operation: int(string)).
func TestConditionOverAChangedResult(t *testing.T) {
	model := func(key, path string) string {
		return fmt.Sprintf(`
[models.%s]
kind = "scripted"
  [[models.%s.turns]]
    [[models.%s.turns.calls]]
    tool = "write_file"
    args = { path = "ok.md", content = "## Limits\n" }
  [[models.%s.turns]]
    [[models.%s.turns.calls]]
    tool = "grade"
    args = { path = %q }
  [[models.%s.turns]]
  text = "Graded."
`, key, key, key, key, key, path, key)
	}
	turns := model("passes", "ok.md") + model("misses", "missing.md")
	tests := []struct {
		name   string
		schema bool
		// want is each agent's terminal event as "status: reason".
		want []string
	}{
		{name: "with a result schema", schema: true, want: []string{
			`done: stage "review" ended the agent done: on done when tools.grade?.verdict == "approve"`,
			`failed: stage "review" ended the agent failed: on done`,
		}},
		{name: "without one", want: []string{
			`done: stage "review" ended the agent done: on done when tools.grade?.verdict == "approve"`,
			`failed: condition failed: stages[0].transitions[0].when: tools.grade?.verdict == "approve": invalid operation: int(string)`,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writePolicyFiles(t, map[string]string{
				"graded.toml":    gradedBlueprint(tc.schema),
				"tools/grade.js": gradeTool,
				"s.toml": `name = "graded"
seed = 3
[blueprints]
graded = "graded.toml"
[host.tool_permissions]
grade = "allow"
` + turns + `
[[groups]]
name = "passing"
blueprint = "graded"
model = "passes"
count = 1

[[groups]]
name = "missing"
blueprint = "graded"
model = "misses"
count = 1
`,
			})
			_, tr := runTraced(t, path, warren.Options{})
			var got []string
			for _, line := range bytes.Split(tr, []byte("\n")) {
				var e struct{ Kind, Status, Reason string }
				if json.Unmarshal(line, &e) == nil && e.Kind == "terminal" {
					got = append(got, e.Status+": "+e.Reason)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("terminals %q, want %q", got, tc.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("agent %d: %q, want %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}
