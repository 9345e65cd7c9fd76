package scripting

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// nestingShapes are the ways a source can drive goja's recursion: brackets, blocks, and
// operators chained in one expression (left- or right-associative, prefix, statement prefixes).
// Each builds a body of n levels to put in a tool's run function.
var nestingShapes = []struct {
	name string
	body func(n int) string
}{
	{"arrays", func(n int) string { return "return " + strings.Repeat("[", n) + strings.Repeat("]", n) }},
	{"parentheses", func(n int) string { return "return " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) }},
	{"object literals", func(n int) string { return "return " + strings.Repeat("{a:", n) + "1" + strings.Repeat("}", n) }},
	{"blocks", func(n int) string { return strings.Repeat("{", n) + strings.Repeat("}", n) }},
	{"functions", func(n int) string {
		return "return " + strings.Repeat("function(){return ", n) + "1" + strings.Repeat("}", n)
	}},
	{"templates", func(n int) string { return "return " + strings.Repeat("`${", n) + "1" + strings.Repeat("}`", n) }},
	{"logical not", func(n int) string { return "return " + strings.Repeat("!", n) + "1" }},
	{"unary minus", func(n int) string { return "return " + strings.Repeat("- ", n) + "1" }},
	{"typeof", func(n int) string { return "return " + strings.Repeat("typeof ", n) + "1" }},
	{"new", func(n int) string { return "return " + strings.Repeat("new ", n) + "Object" }},
	{"conditionals", func(n int) string { return "return " + strings.Repeat("1?", n) + "1" + strings.Repeat(":1", n) }},
	{"assignments", func(n int) string { return "let a; return a" + strings.Repeat("=a", n) }},
	{"exponents", func(n int) string { return "return 1" + strings.Repeat("**1", n) }},
	{"additions", func(n int) string { return "return 1" + strings.Repeat("+1", n) }},
	{"member chain", func(n int) string { return "const a = {}; a.b = a; return a" + strings.Repeat(".b", n) }},
	{"call chain", func(n int) string { return "const f = () => f; return f" + strings.Repeat("()", n) }},
	{"arrows", func(n int) string { return "return " + strings.Repeat("a=>", n) + "1" }},
	{"nested ifs", func(n int) string { return strings.Repeat("if(true)", n) + "return 1" }},
	{"else-if chain", func(n int) string { return "if(false){}" + strings.Repeat("else if(false){}", n) + "return 1" }},
	{"labels", func(n int) string {
		var sb strings.Builder
		for i := range n {
			fmt.Fprintf(&sb, "l%d:", i)
		}
		return sb.String() + "return 1"
	}},
}

// nestedTool is a valid tool file whose run function holds body.
func nestedTool(body string) string {
	return "defineTool({ name: \"deep\", description: \"d\", parameters: { type: \"object\" },\n  run() { " + body + " } });\n"
}

// TestDeepNestingIsRefused: a file nested 300,000 levels deep in any shape (goja's parser or
// compiler overflowed the stack on these, a fatal error that killed the host, or ran for minutes)
// is refused as ErrNesting, positioned on line 2 where the nesting is, naming the limit.
func TestDeepNestingIsRefused(t *testing.T) {
	for _, shape := range nestingShapes {
		t.Run(shape.name, func(t *testing.T) {
			_, err := Compile("deep.js", []byte(nestedTool(shape.body(300_000))))
			var se *Error
			if !errors.As(err, &se) || !errors.Is(err, ErrNesting) || !errors.Is(err, ErrSyntax) {
				t.Fatalf("Compile = %v, want an *Error of kind ErrNesting", err)
			}
			if se.Line != 2 || se.Column < 10 {
				t.Errorf("refused at %d:%d, want inside line 2", se.Line, se.Column)
			}
			if !strings.Contains(se.Message, "nest deeper than 1000 levels here") {
				t.Errorf("message %q does not name the limit", se.Message)
			}
		})
	}
}

// TestNestingBelowTheLimitCompiles: the same shapes 900 levels deep are ordinary (if unusual)
// code: they compile, and the tool runs, so the limit refuses nothing goja can take.
func TestNestingBelowTheLimitCompiles(t *testing.T) {
	for _, shape := range nestingShapes {
		t.Run(shape.name, func(t *testing.T) {
			s, err := Compile("deep.js", []byte(nestedTool(shape.body(900))))
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			if s.Name != "deep" {
				t.Fatalf("tool %q, want deep", s.Name)
			}
		})
	}
}

// TestNestingCheckKeepsGojaMessages: a file with an ordinary syntax error is reported by goja
// (its message and place), whether or not tdewolff's parser also rejects it; a large file that
// tdewolff rejects is refused with tdewolff's message rather than handed to goja unchecked.
func TestNestingCheckKeepsGojaMessages(t *testing.T) {
	_, err := Compile("bad.js", []byte("defineTool({ name: \"x\",\n  run() { return 1 +; } });\n"))
	var se *Error
	if !errors.As(err, &se) || se.Kind != ErrSyntax || se.Line != 2 || !strings.Contains(se.Message, "Unexpected token ;") {
		t.Fatalf("Compile = %#v, want goja's syntax error on line 2", err)
	}
	large := nestedTool("return 1 +;") + "//" + strings.Repeat("x", maxUncheckedSource) + "\n"
	_, err = Compile("large.js", []byte(large))
	if !errors.As(err, &se) || se.Kind != ErrSyntax || se.Line != 2 || errors.Is(err, ErrNesting) {
		t.Fatalf("Compile of a large bad file = %#v, want a syntax error on line 2", err)
	}
}

// FuzzDynamicTool: whatever bytes an agent writes as a tool file, Compile answers with a tool
// or an *Error, never a panic or a fatal stack overflow. The seeds are the shapes that used to
// kill the host, a few thousand levels deep.
func FuzzDynamicTool(f *testing.F) {
	for _, shape := range nestingShapes {
		f.Add([]byte(nestedTool(shape.body(3000))))
	}
	f.Add([]byte(nestedTool("return 1")))
	f.Add([]byte("defineTool({ name: 'r', description: 'd', parameters: JSON.parse('" +
		strings.Repeat(`{"type":"object","properties":{"a":`, 600) + "{}" + strings.Repeat("}}", 600) + "'), run() { return 1 } })"))
	f.Fuzz(func(t *testing.T, src []byte) {
		s, err := Compile("fuzz.js", src)
		var se *Error
		switch {
		case err == nil && s == nil:
			t.Fatal("Compile returned neither a tool nor an error")
		case err != nil && !errors.As(err, &se):
			t.Fatalf("Compile failed with %T %v, want an *Error", err, err)
		}
	})
}
