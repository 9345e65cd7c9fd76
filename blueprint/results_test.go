package blueprint

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/expr-lang/expr/vm"

	"github.com/warrenhq/warren/internal/tomlfile"
)

// gradeSchema is the result schema of a grade tool, as review/pipeline.toml declares it.
const gradeSchema = `
[result_schemas.grade]
type = "object"
required = ["verdict", "missing", "words"]
additionalProperties = false
  [result_schemas.grade.properties]
  verdict = { type = "string", enum = ["approve", "revise"] }
  missing = { type = "array", items = { type = "string" } }
  words = { type = "integer" }
`

// resultsBlueprint is a review stage offering grade and ask, whose first transition has the
// condition when and the set values set, with schemas as its [result_schemas].
func resultsBlueprint(schemas, when, set string) string {
	return fmt.Sprintf(`name = "review"
%s
[[stages]]
name = "review"
available_tools = ["grade", "ask"]
  [[stages.transitions]]
  on = "done"
  when = %q
  set = { %s }
  end = "done"
  [[stages.transitions]]
  on = "always"
  end = "failed"
`, schemas, when, set)
}

// resultsTools are the tools the results tests' host knows.
var resultsTools = []string{"grade", "ask"}

// TestResultSchemaTypes: a condition or set value over tools.<tool> is type-checked against the
// tool's declared result schema when the blueprint loads; a misuse is a load error at the
// transition's key, naming what is wrong and the schema. A tool with no declared schema is of
// any type, so only run time can find its misuse.
func TestResultSchemaTypes(t *testing.T) {
	tests := []struct {
		name, schemas, when, set string
		// key and says: the one problem expected ("" for none).
		key, says string
	}{
		{name: "the shipped condition", schemas: gradeSchema, when: `tools.grade?.verdict == "approve"`},
		{name: "the shipped set values", schemas: gradeSchema, when: "true",
			set: `verdict = "tools.grade.verdict", missing = 'join(tools.grade?.missing ?? ["a graded draft"], ", ")'`},
		{name: "a number compared", schemas: gradeSchema, when: `tools.grade?.words >= 20 && "approve" in tools.grade.missing`},
		{name: "a string compared with an int", schemas: gradeSchema, when: `tools.grade?.verdict == 1`,
			key: "stages[0].transitions[0].when", says: "invalid operation: == (mismatched types string and int) (line 1, column 22 of the expression), against the result schema the blueprint declares (result_schemas.grade)"},
		{name: "a field the schema does not declare", schemas: gradeSchema, when: `tools.grade.verdic == "approve"`,
			key: "stages[0].transitions[0].when", says: "unknown field verdic"},
		{name: "integer is a JSON number", schemas: gradeSchema, when: `tools.grade.words % 2 == 0`,
			key: "stages[0].transitions[0].when", says: "mismatched types float64 and int"},
		{name: "an element of the wrong type", schemas: gradeSchema, when: `tools.grade.missing[0] > 3`,
			key: "stages[0].transitions[0].when", says: "mismatched types string and int"},
		{name: "a set value misusing a type", schemas: gradeSchema, when: "true", set: `n = "tools.grade.verdict - 1"`,
			key: "stages[0].transitions[0].set.n", says: "mismatched types string and int"},
		{name: "a condition that is a string", schemas: gradeSchema, when: `tools.grade.verdict`,
			key: "stages[0].transitions[0].when", says: "expected bool, but got string"},
		{name: "a tool without a schema is of any type", schemas: gradeSchema, when: `tools.ask?.verdict == 1`},
		{name: "no schema at all", when: `tools.grade?.verdict == 1`},
		{name: "additionalProperties lets other keys in", when: `tools.grade?.extra == 1`,
			schemas: "[result_schemas.grade]\ntype = \"object\"\nproperties = { verdict = { type = \"string\" } }\nadditionalProperties = true\n"},
		{name: "additionalProperties types the other keys", when: `tools.grade?.extra == 1`,
			schemas: "[result_schemas.grade]\ntype = \"object\"\nadditionalProperties = { type = \"string\" }\n",
			key:     "stages[0].transitions[0].when", says: "mismatched types string and int"},
		{name: "a nullable string", when: `tools.grade?.verdict == "a" || tools.grade?.verdict == nil`,
			schemas: "[result_schemas.grade]\ntype = \"object\"\nproperties = { verdict = { type = [\"string\", \"null\"] } }\n"},
		{name: "a result that is a string", when: `tools.grade startsWith "ok"`, schemas: "[result_schemas.grade]\ntype = \"string\"\n"},
		{name: "a result that is an array", when: `tools.grade[0] + 1 > 2`, schemas: "[result_schemas.grade]\ntype = \"array\"\nitems = { type = \"boolean\" }\n",
			key: "stages[0].transitions[0].when", says: "mismatched types bool and int"},
		{name: "a schema for a tool no stage offers", schemas: "[result_schemas.write_file]\ntype = \"string\"\n", when: "true",
			key: "result_schemas.write_file", says: `invalid result schema: "write_file" is a tool no stage of the blueprint offers, so no condition reads its result; tools the stages offer: ask, grade`},
		{name: "a schema that does not compile", schemas: "[result_schemas.grade]\ntype = 5\n", when: "true",
			key: "result_schemas.grade", says: "invalid result schema: the schema does not compile"},
		{name: "an external reference", schemas: "[result_schemas.grade]\n\"$ref\" = \"https://example.com/s.json\"\n", when: "true",
			key: "result_schemas.grade", says: "must be self-contained"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bp, err := Parse("review.toml", []byte(resultsBlueprint(tc.schemas, tc.when, tc.set)), resultsTools)
			if tc.says == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			var errs tomlfile.Errors
			if !errors.As(err, &errs) || len(errs) != 1 {
				t.Fatalf("err = %v, want one problem", err)
			}
			e := errs[0]
			if e.File != "review.toml" || e.Line == 0 || e.Key != tc.key || !strings.Contains(e.Msg, tc.says) {
				t.Fatalf("problem %s:%d %s: %s\nwant at %s, saying %q", e.File, e.Line, e.Key, e.Msg, tc.key, tc.says)
			}
			if !errors.Is(e, ErrBadCondition) && !errors.Is(e, ErrBadResultSchema) {
				t.Errorf("%v wraps neither ErrBadCondition nor ErrBadResultSchema", e)
			}
			if bp != nil {
				t.Error("a blueprint came back with the error")
			}
		})
	}
}

// TestToolValue: at run time tools.<tool> is the tool's last result only when it matches the
// declared schema and is not an error result, else nil; so the shipped condition reads false
// (not a run-time error) when a limit or a failure changed the result's shape. A tool with no
// schema keeps whatever it returned.
func TestToolValue(t *testing.T) {
	bp, err := Parse("review.toml", []byte(resultsBlueprint(gradeSchema, `tools.grade?.verdict == "approve"`, "")), resultsTools)
	if err != nil {
		t.Fatal(err)
	}
	approve := map[string]any{"verdict": "approve", "missing": []any{}, "words": 31.0}
	tests := []struct {
		name, tool string
		value      any
		isError    bool
		want       any
		holds      bool
	}{
		{name: "a result of the schema's shape", tool: "grade", value: approve, want: approve, holds: true},
		{name: "an error result", tool: "grade", value: approve, isError: true},
		{name: "a limit's text in its place", tool: "grade", value: "grade: the script ran past its wall-clock limit"},
		{name: "a field of another type", tool: "grade", value: map[string]any{"verdict": 1.0, "missing": []any{}, "words": 3.0}},
		{name: "a field missing", tool: "grade", value: map[string]any{"verdict": "approve"}},
		{name: "a tool without a schema", tool: "ask", value: "anything", want: "anything"},
	}
	st := &bp.Stages[0]
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := bp.ToolValue(tc.tool, tc.value, tc.isError)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("ToolValue = %#v, want %#v", got, tc.want)
			}
			if tc.tool != "grade" {
				return
			}
			env := &ConditionEnv{Outcome: "done", Tools: map[string]any{}}
			if got != nil {
				env.Tools["grade"] = got
			}
			holds, err := st.Transitions[0].When.Holds(&vm.VM{}, env)
			if err != nil || holds != tc.holds {
				t.Fatalf("the condition holds %v (%v), want %v", holds, err, tc.holds)
			}
		})
	}
}

// TestConditionTypesMirrorEnv: the type checker's environment has every name ConditionEnv has,
// so checking against a result schema never refuses what the plain compile accepts.
func TestConditionTypesMirrorEnv(t *testing.T) {
	typed := conditionTypes(nil)
	var names []string
	env := reflect.TypeFor[ConditionEnv]()
	for i := range env.NumField() {
		name := env.Field(i).Tag.Get("expr")
		names = append(names, name)
		if _, ok := typed[name]; !ok {
			t.Errorf("conditionTypes lacks %s", name)
		}
	}
	for name := range typed {
		if !slices.Contains(names, name) {
			t.Errorf("conditionTypes has %s, which ConditionEnv has not", name)
		}
	}
}
