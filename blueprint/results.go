package blueprint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/expr-lang/expr/types"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/warrenhq/warren/internal/tomlfile"
)

// A blueprint's [result_schemas] declares, per tool its stages offer, the JSON Schema of the
// tool's result, so that a condition reading tools.<tool> is type-checked against it when the
// blueprint loads: tools.grade?.verdict == 1, where the schema says verdict is a string, is a
// load error at the condition's key, and so is a field the schema does not declare. At run time
// tools.<tool> is the tool's last result only when it matches the schema and is not an error
// result, else nil, so a condition never meets a result of another shape than the one it was
// checked against (a limit that fired, a failed call): `?.` and `??` handle nil.

// ErrBadResultSchema: a [result_schemas] entry names a tool no stage offers, or is not a JSON
// Schema that compiles.
var ErrBadResultSchema = errors.New("invalid result schema")

// maxSchemaDepth bounds how deep a result schema's nesting is followed for types; deeper values
// are of any type.
const maxSchemaDepth = 32

// resultSchema is one tool's declared result schema, compiled for validation and as the type its
// conditions are checked against.
type resultSchema struct {
	schema *jsonschema.Schema
	typ    types.Type
}

// resultSchemas compiles the blueprint's [result_schemas] against the tools its stages offer
// (offered, sorted), returning them by tool (nil when there are none).
func (c *compiler) resultSchemas(raw map[string]map[string]any, offered []string) map[string]*resultSchema {
	if len(raw) == 0 {
		return nil
	}
	out := make(map[string]*resultSchema, len(raw))
	for _, tool := range slices.Sorted(maps.Keys(raw)) {
		path := tomlfile.JoinKey("result_schemas", tool)
		if _, ok := slices.BinarySearch(offered, tool); !ok {
			c.errorf(path, "%w: %q is a tool no stage of the blueprint offers, so no condition reads its result; tools the stages offer: %s",
				ErrBadResultSchema, tool, listOrNone(offered))
			continue
		}
		rs, err := compileResultSchema(tool, raw[tool])
		if err != nil {
			c.errorf(path, "%w: %v", ErrBadResultSchema, err)
			continue
		}
		out[tool] = rs
	}
	return out
}

// compileResultSchema compiles one tool's schema, written as a TOML table.
func compileResultSchema(tool string, table map[string]any) (*resultSchema, error) {
	encoded, err := json.Marshal(table)
	if err != nil {
		return nil, fmt.Errorf("the schema does not encode as JSON: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(encoded))
	if err != nil {
		return nil, fmt.Errorf("the schema does not encode as JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	// No loader reaches a file or the network: a schema must be self-contained.
	c.UseLoader(noLoader{})
	url := "warren:result_schemas/" + tool
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	schema, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("the schema does not compile: %s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return &resultSchema{schema: schema, typ: schemaType(table, 0)}, nil
}

// noLoader refuses every external reference of a result schema.
type noLoader struct{}

// Load implements jsonschema.URLLoader.
func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s: a result schema must be self-contained (no external $ref)", url)
}

// schemaType is the type a condition sees a value of schema as. JSON's numbers are float64
// whatever the schema says (integer included), as a result's JSON decodes; an object with
// properties is a map whose keys are those alone (a key the schema does not declare is a load
// error) unless additionalProperties allows others; anything the schema does not pin down to
// one type (no type, anyOf, several types) is of any type.
func schemaType(schema map[string]any, depth int) types.Type {
	if depth >= maxSchemaDepth {
		return types.Any
	}
	switch t := schema["type"].(type) {
	case string:
		return namedType(t, schema, depth)
	case []any:
		var named []string
		for _, v := range t {
			if s, ok := v.(string); ok && s != "null" {
				named = append(named, s)
			}
		}
		if len(named) == 1 {
			return namedType(named[0], schema, depth) // nullable: nil compares with every type
		}
	case nil:
		if _, ok := schema["properties"]; ok {
			return objectType(schema, depth)
		}
	}
	return types.Any
}

// namedType is the type of a schema whose type is name.
func namedType(name string, schema map[string]any, depth int) types.Type {
	switch name {
	case "string":
		return types.String
	case "integer", "number":
		return types.Float64
	case "boolean":
		return types.Bool
	case "null":
		return types.Nil
	case "array":
		if items, ok := schema["items"].(map[string]any); ok {
			return types.Array(schemaType(items, depth+1))
		}
		return types.Array(types.Any)
	case "object":
		return objectType(schema, depth)
	}
	return types.Any
}

// objectType is the map type of an object schema.
func objectType(schema map[string]any, depth int) types.Type {
	props, _ := schema["properties"].(map[string]any)
	m := types.Map{}
	for name, sub := range props {
		if s, ok := sub.(map[string]any); ok {
			m[name] = schemaType(s, depth+1)
		} else {
			m[name] = types.Any
		}
	}
	switch extra := schema["additionalProperties"].(type) {
	case map[string]any:
		m[types.Extra] = schemaType(extra, depth+1)
	case bool:
		if extra || len(props) == 0 {
			m[types.Extra] = types.Any
		}
	default:
		if len(props) == 0 {
			m[types.Extra] = types.Any
		}
	}
	return m
}

// ToolValue is what a condition reads as tools.<tool>, given the tool's last result decoded as
// a condition sees it (value) and whether it was an error result: the value itself, unless the
// blueprint declares the tool's result schema, when it is nil for an error result and for a
// value that does not match the schema, so a condition checked against the schema never meets
// another shape.
func (b *Blueprint) ToolValue(tool string, value any, isError bool) any {
	rs := b.resultSchemas[tool]
	if rs == nil {
		return value
	}
	if isError || rs.schema.Validate(value) != nil {
		return nil
	}
	return value
}

// conditionTypes is ConditionEnv as the type checker sees it, with tools.<tool> of the declared
// result types (tools without one are of any type).
func conditionTypes(results map[string]*resultSchema) types.Map {
	tools := types.Map{types.Extra: types.Any}
	for tool, rs := range results {
		tools[tool] = rs.typ
	}
	return types.Map{
		"outcome":      types.String,
		"stage":        types.String,
		"visit":        types.Int,
		"iteration":    types.Int,
		"result":       types.Any,
		"result_error": types.Bool,
		"text":         types.String,
		"tools":        tools,
		"counters":     types.TypeOf(ConditionCounters{}),
		"inbox":        types.TypeOf([]string{}),
		"memory":       types.TypeOf(map[string]any{}),
		"name":         types.String,
		"group":        types.String,
		"index":        types.Int,
	}
}
