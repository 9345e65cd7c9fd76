package scripting

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tdewolff/parse/v2"
	"github.com/tdewolff/parse/v2/js"
)

// goja's parser and compiler are recursive descent over the source and its tree, with no limit
// of their own: a tool file of 300,000 nested brackets, or one expression chaining 300,000
// operators (a+a+…, a.b.b…, !!!…x, if(a)if(a)…), overflows the goroutine's stack, a fatal error
// no recover catches, and kills the host; 300,000 chained unary minus signs took goja 374 s
// before it answered. A dynamic tool is an agent's file, so that is an attack, not a mistake.
//
// Before goja sees a file, checkNesting parses it with tdewolff's JavaScript parser, which counts
// the nesting of statements and of expressions (each chained operator is a level) and stops at
// maxSourceNesting of either, in time linear in the file. A file it accepts is one goja can take:
// goja's recursion follows the same grammar, so its depth is bounded by the same count.

// maxSourceNesting is how deeply a script's statements, or its expressions, may nest: tdewolff's
// own limits (js.NestedStmtLimit and js.NestedExprLimit), which this package reads and never
// changes. At that depth goja needs a few megabytes of stack.
var maxSourceNesting = min(js.NestedStmtLimit, js.NestedExprLimit)

// maxUncheckedSource is the largest file goja may parse when tdewolff rejected it for another
// reason than nesting (a construct one parser knows and the other does not): every level of
// goja's recursion consumes at least one byte of source, so a file this small cannot nest deep
// enough to exhaust the stack, and goja's own message, which points at the place, is the one
// reported. A larger file gets tdewolff's message.
const maxUncheckedSource = 64 << 10

// ErrNesting is the Kind of a script refused because it nests deeper than maxSourceNesting,
// positioned where the limit was reached. It is a syntax error too: errors.Is finds ErrSyntax.
var ErrNesting = fmt.Errorf("%w: the source nests too deeply", ErrSyntax)

// checkNesting refuses src (ErrNesting) when its statements or expressions nest deeper than
// maxSourceNesting. Otherwise it returns nil when goja may parse src: tdewolff accepted it, or
// rejected it for another reason and it is small enough to be safe (maxUncheckedSource); a
// larger file tdewolff rejects is refused with tdewolff's message (ErrSyntax).
func checkNesting(file, src string) error {
	_, err := js.Parse(parse.NewInputString(src), js.Options{})
	if err == nil {
		return nil
	}
	var perr *parse.Error
	if !errors.As(err, &perr) {
		return nil // tdewolff reports every problem as a *parse.Error; goja decides
	}
	at := position{perr.Line, perr.Column}
	if strings.HasPrefix(perr.Message, "too many nested") {
		what := strings.TrimPrefix(perr.Message, "too many nested ")
		return newError(file, at, ErrNesting, fmt.Sprintf(
			"the %s nest deeper than %d levels here (each bracket, block and chained operator is a level); split the code into functions or variables",
			what, maxSourceNesting))
	}
	if len(src) <= maxUncheckedSource {
		return nil
	}
	return newError(file, at, ErrSyntax, perr.Message)
}
