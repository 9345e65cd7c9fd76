package scripting

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/warrenhq/warren/tools"
)

// The wrapper turns a tool file into one function expression, so that every call runs the file's
// top level afresh in its own scope: top-level let/const/function declarations live in that
// scope, never in the (frozen, shared) global object, and nothing survives the call. The header
// sits on line 1 without a newline so line numbers stay the file's own; only columns on line 1
// shift, by len(wrapperHeader). The footer starts with a newline so a trailing line comment
// cannot swallow it.
const (
	wrapperHeader = "(function(defineTool){"
	wrapperFooter = "\n})"
)

// Script is one compiled script tool, shared by every agent of a world: the definition read from
// the file (name, description, parameters) and the compiled program each call runs. It is
// immutable and safe for concurrent use.
type Script struct {
	// Name is the tool's name, as the file's defineTool call gives it (^[a-z][a-z0-9_]*$).
	Name string
	// Description is what the model reads about the tool.
	Description string
	// File is the file name given to Compile; errors and stack positions name it.
	File string
	// Parameters is the JSON Schema of the arguments, as JSON.stringify encoded the definition's
	// parameters object. It compiles (checked at Compile). Callers must not modify it.
	Parameters json.RawMessage

	// program is the wrapped file, compiled once and run by every call in whichever runtime
	// serves it (goja programs are not tied to a runtime).
	program *goja.Program
	// properties are where the definition's properties are written, when the file calls
	// defineTool with an object literal at its top level; errors about one point at it.
	properties map[string]position
	// defined is where the file calls defineTool.
	defined position
}

// definition is what a file's defineTool call declared, as the loader read it.
type definition struct {
	name, description, parameters string
	at                            position
}

// at is where the definition's property is written, or else where defineTool is called.
func (s *Script) at(property string, call position) position {
	if p, ok := s.properties[property]; ok {
		return p
	}
	return call
}

// Compile compiles a tool file once and reads its definition by running its top level in a
// sandboxed loader runtime under DefaultLimits (with the virtual clock at the Unix epoch and
// Math.random returning 0, so loading is deterministic). The file must call defineTool exactly
// once. Problems are an *Error positioned at the offending place: ErrSyntax for a file that does
// not parse, ErrDefinition for a bad or missing definition (at the property at fault when the
// file passes an object literal), and the runtime kinds (ErrRuntime, ErrTimeout,
// ErrStackOverflow) for a top level that fails.
func Compile(file string, src []byte) (*Script, error) {
	if at, ok := firstInvalidUTF8(src); !ok {
		return nil, newError(file, at, ErrSyntax, "the file is not valid UTF-8")
	}
	text := string(src)
	// The raw file must parse and compile on its own: this positions syntax errors exactly and
	// guarantees the wrapped text is the same program in a function (a file cannot close the
	// wrapper early with "})" and run code outside it). Its tree locates the definition.
	tree, _, err := compile(file, text, 0)
	if err != nil {
		return nil, err
	}
	_, program, err := compile(file, wrapperHeader+text+wrapperFooter, len(wrapperHeader))
	if err != nil {
		return nil, err
	}
	s := &Script{File: file, program: program, properties: definitionProperties(tree)}

	w := newWorker(DefaultLimits())
	def, err := w.load(s)
	if err != nil {
		return nil, err
	}
	if err := s.checkDefinition(def); err != nil {
		return nil, err
	}
	s.Name, s.Description, s.Parameters, s.defined = def.name, def.description, json.RawMessage(def.parameters), def.at
	return s, nil
}

// compile parses and compiles src in strict mode (shift: see syntaxError). Source maps are
// disabled: goja would otherwise follow a "//# sourceMappingURL=" comment and read that file
// from the host's disk. goja's compiler panics on what it considers unreachable; such a panic
// is reported as a syntax error rather than taking the host down. A raw text (shift 0) is first
// refused if it nests too deeply for goja's recursion (checkNesting); callers compile the raw
// text before its wrapped form.
func compile(file, src string, shift int) (tree *ast.Program, program *goja.Program, err error) {
	defer func() {
		if p := recover(); p != nil {
			tree, program, err = nil, nil, newError(file, position{}, ErrSyntax, fmt.Sprintf("the compiler failed: %v", p))
		}
	}()
	if shift == 0 {
		// The wrapped text is a checked raw text inside one more function, so it is checked once.
		if err := checkNesting(file, src); err != nil {
			return nil, nil, err
		}
	}
	tree, err = parser.ParseFile(nil, file, src, 0, parser.WithDisableSourceMaps)
	if err != nil {
		return nil, nil, syntaxError(file, err, shift)
	}
	program, err = goja.CompileAST(tree, true)
	if err != nil {
		return nil, nil, syntaxError(file, err, shift)
	}
	return tree, program, nil
}

// definitionProperties finds where the first top-level defineTool({...}) call of a file writes
// each property of its object literal (none when the file builds the definition otherwise).
func definitionProperties(tree *ast.Program) map[string]position {
	for _, stmt := range tree.Body {
		expr, ok := stmt.(*ast.ExpressionStatement)
		if !ok {
			continue
		}
		call, ok := expr.Expression.(*ast.CallExpression)
		if !ok || len(call.ArgumentList) == 0 {
			continue
		}
		if callee, ok := call.Callee.(*ast.Identifier); !ok || callee.Name != "defineTool" {
			continue
		}
		literal, ok := call.ArgumentList[0].(*ast.ObjectLiteral)
		if !ok {
			return nil
		}
		found := make(map[string]position, len(literal.Value))
		for _, prop := range literal.Value {
			var key string
			var idx int
			switch p := prop.(type) {
			case *ast.PropertyKeyed:
				k, ok := p.Key.(*ast.StringLiteral)
				if !ok || p.Computed {
					continue
				}
				key, idx = k.Value.String(), int(k.Idx)
			case *ast.PropertyShort:
				key, idx = p.Name.Name.String(), int(p.Name.Idx)
			default:
				continue
			}
			if _, dup := found[key]; !dup {
				at := tree.File.Position(idx - tree.File.Base())
				found[key] = position{at.Line, at.Column}
			}
		}
		return found
	}
	return nil
}

// firstInvalidUTF8 reports where src stops being UTF-8, or ok when it is valid throughout.
func firstInvalidUTF8(src []byte) (at position, ok bool) {
	if utf8.Valid(src) {
		return position{}, true
	}
	at = position{line: 1, column: 1}
	for len(src) > 0 {
		r, size := utf8.DecodeRune(src)
		if r == utf8.RuneError && size <= 1 {
			return at, false
		}
		if r == '\n' {
			at.line, at.column = at.line+1, 1
		} else {
			at.column++
		}
		src = src[size:]
	}
	return at, false
}

// checkDefinition applies the rules the loader cannot express in JavaScript: the name's shape,
// a description, and a parameters schema the tool registry will accept.
func (s *Script) checkDefinition(def definition) error {
	if !validToolName(def.name) {
		return newError(s.File, s.at("name", def.at), ErrDefinition,
			fmt.Sprintf("name %q must match ^[a-z][a-z0-9_]*$ (at most 64 characters)", def.name))
	}
	if strings.TrimSpace(def.description) == "" {
		return newError(s.File, s.at("description", def.at), ErrDefinition, "description must be a non-empty string")
	}
	probe := schemaProbe{spec: tools.Spec{Name: def.name, Description: def.description, Parameters: json.RawMessage(def.parameters)}}
	if _, err := tools.NewHandle(probe); err != nil {
		return newError(s.File, s.at("parameters", def.at), ErrDefinition,
			"parameters is not a usable JSON Schema: "+schemaProblems(err))
	}
	return nil
}

// schemaProblems renders why a schema does not compile on one line: the failing places of a
// metaschema validation, sorted, or the error's own text.
func schemaProblems(err error) string {
	var invalid *jsonschema.SchemaValidationError
	var tree *jsonschema.ValidationError
	if !errors.As(err, &invalid) || !errors.As(invalid.Err, &tree) {
		if _, detail, found := strings.Cut(err.Error(), "parameters schema: "); found {
			return detail
		}
		return err.Error()
	}
	var problems []string
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out := e.BasicOutput()
			if out.Error != nil {
				problems = append(problems, "at '"+out.InstanceLocation+"': "+out.Error.String())
			}
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(tree)
	slices.Sort(problems)
	return strings.Join(slices.Compact(problems), "; ")
}

// validToolName reports whether name matches ^[a-z][a-z0-9_]*$ and fits the 64 characters
// model providers accept.
func validToolName(name string) bool {
	if name == "" || len(name) > 64 || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for i := 1; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// errProbeOnly is what schemaProbe returns if anything ever executes it.
var errProbeOnly = errors.New("a schema probe cannot run")

// schemaProbe is a tools.Tool that exists only so tools.NewHandle can compile a script's
// parameters exactly as the registry will when the script tool is registered.
type schemaProbe struct{ spec tools.Spec }

var _ tools.Tool = schemaProbe{}

// Spec implements tools.Tool.
func (p schemaProbe) Spec() tools.Spec { return p.spec }

// Execute implements tools.Tool; a probe is never registered, so it refuses to run.
func (p schemaProbe) Execute(*tools.ExecContext, json.RawMessage) (tools.Result, error) {
	return tools.Result{}, errProbeOnly
}

// load runs a script's top level once in w and reads its definition. The worker is not pooled:
// Compile is rare (once per file per world) and a loader that ran untrusted top-level code is
// dropped with the call.
func (w *worker) load(s *Script) (definition, error) {
	w.begin(s, nil, nil, loaderEnv(), modeLoad)
	if _, err := w.call(context.Background()); err != nil {
		return definition{}, err
	}
	return w.loaded, nil
}
