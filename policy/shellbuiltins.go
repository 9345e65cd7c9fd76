package policy

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// builtin scans the builtins that set variables or evaluate names, and gives nothing more for
// any other program: its key was given by run.
func (s *shellScan) builtin(prog string, args []shellArg, ctx shellCtx) {
	untrusted := func(s *shellScan, name string) { s.setVar(name, false) }
	switch prog {
	case "read":
		names := false
		rest, _ := s.options(prog, args, &optSpec{short: "a:d:ei:N:n:p:rst:u:"}, func(opt string, val shellArg) {
			if opt == "-a" {
				names = true
				s.varWord(prog, val, untrusted)
			}
		})
		for _, a := range rest {
			names = true
			s.varWord(prog, a, untrusted)
		}
		if !names {
			s.markVar("REPLY", varUntrusted)
		}
	case "mapfile", "readarray":
		rest, _ := s.options(prog, args, &optSpec{short: "C:c:d:n:O:s:tu:"}, func(opt string, val shellArg) {
			if opt == "-C" {
				s.codeArg(shellArg{word: val.word, val: val.val + ` "$@"`, static: val.static}, inner(ctx), "the "+prog+" callback")
			}
		})
		if len(rest) > 0 {
			s.varWord(prog, rest[0], untrusted)
		} else {
			s.markVar("MAPFILE", varUntrusted)
		}
	case "wait":
		// wait -p NAME sets NAME (to a pid): a subscript in NAME is evaluated. Its operands,
		// pids and job specs ($!, %1), are often computed, which is harmless.
		for i := 0; i < len(args) && !s.failed(); i++ {
			a := args[i]
			switch {
			case a.static && strings.HasPrefix(a.val, "-") && strings.HasSuffix(a.val, "p") && i+1 < len(args):
				i++
				s.varWord(prog, args[i], func(s *shellScan, name string) { s.setVar(name, true) })
			case !a.static && a.mayBeOption() && i+1 < len(args) && (!args[i+1].static || strings.ContainsRune(args[i+1].val, '[')):
				s.fail("an argument of wait is computed and could be -p, making the next one a name bash evaluates (%s)", a.text())
			}
		}
	case "getopts":
		if len(args) > 1 {
			s.varWord(prog, args[1], untrusted)
		}
		s.markVar("OPTARG", varUntrusted)
	case "printf":
		switch {
		case len(args) > 1 && args[0].static && args[0].val == "-v":
			s.varWord(prog, args[1], untrusted)
		case len(args) > 0 && args[0].static && strings.HasPrefix(args[0].val, "-v"):
			s.varWord(prog, staticArg(args[0].val[2:]), untrusted)
		case len(args) > 1 && !args[0].static && args[0].mayBeOption() && (!args[1].static || strings.ContainsRune(args[1].val, '[')):
			s.fail("the first argument of printf is computed and could be -v, making the next one a name bash evaluates (%s)", args[0].text())
		}
	case "unset":
		functions := false
		rest, _ := s.options(prog, args, &optSpec{short: "fnv"}, func(opt string, _ shellArg) {
			functions = functions || opt == "-f"
		})
		for _, a := range rest {
			if !functions {
				s.varWord(prog, a, func(s *shellScan, name string) { s.setVar(name, true) })
			}
		}
	case "let":
		for _, a := range args {
			s.arithString(prog, a, ctx)
		}
	case "declare", "typeset", "local", "export", "readonly":
		var m declMode
		for _, a := range args {
			if !a.static {
				s.fail("an argument of %s is computed (%s)", prog, a.text())
				return
			}
			s.declOperand(prog, a.val, &m, ctx)
		}
	case "test", "[":
		s.testArgs(prog, args)
	case "set", "shopt":
		s.shellOptions(prog, args)
	case "compgen", "complete":
		s.completion(prog, args, ctx)
	case "enable":
		// enable NAME, -n NAME, -d NAME and -f LIBRARY NAME change which builtin, or which
		// program, a command name runs; only the listings (-a, -p, -s) bind nothing.
		for _, a := range args {
			if !a.static || !strings.HasPrefix(a.val, "-") || strings.ContainsAny(a.val, "fnd") {
				s.fail("enable changes what the command name %s runs, and a line that binds one is never analysed", a.text())
				return
			}
		}
	}
}

// hash refuses -p PATH NAME, which binds NAME to the program at PATH: every later run of NAME
// runs it. Looking names up, listing and forgetting (hash NAME, -l, -t, -d, -r) bind nothing.
func (s *shellScan) hash(args []shellArg) {
	s.options("hash", args, &optSpec{short: "dlp:rt"}, func(opt string, val shellArg) {
		if opt == "-p" {
			s.fail("hash -p binds a command name to the program %s, and a line that binds one is never analysed", val.text())
		}
	})
}

// completion scans compgen and complete: -C runs a command, -F calls a function, and -W's
// words are expanded, substitutions included.
func (s *shellScan) completion(prog string, args []shellArg, ctx shellCtx) {
	s.options(prog, args, &optSpec{short: "abcdefgjksuvDEIro:A:G:W:F:C:X:P:S:p"}, func(opt string, val shellArg) {
		switch opt {
		case "-C":
			s.codeArg(shellArg{word: val.word, val: val.val + ` "$@"`, static: val.static}, inner(ctx), "the "+prog+" -C command")
		case "-F":
			s.nest([]shellArg{val, runtimeArg}, ctx)
		case "-W":
			if !val.static || strings.ContainsAny(val.val, "$`") {
				s.fail("the %s -W words are expanded and hold a substitution or are computed (%s)", prog, val.text())
			}
		}
	})
}

// shellOptions refuses set and shopt lines that change how bash parses or runs what follows:
// only the set flags of shellFlagsKept (and -o with their names, or pipefail) and the shopt
// options of shoptKept keep the keys known. set -o posix and shopt -s expand_aliases turn alias
// expansion on, shopt -s extglob and -u interactive_comments change what the next line means,
// set -H and -k make words into history lookups and assignments. A listing or a query (set -o,
// shopt, shopt -q NAME) changes nothing.
func (s *shellScan) shellOptions(prog string, args []shellArg) {
	if prog == "shopt" {
		s.shopt(args)
		return
	}
	for i := 0; i < len(args) && !s.failed(); i++ {
		a := args[i]
		v := a.val
		switch {
		case !a.static && a.mayBeOption():
			s.fail("an option of set is computed (%s)", a.text())
		case !a.static || v == "--" || v == "-" || v == "" || v[0] != '-' && v[0] != '+':
			return // set's positional parameters follow
		}
		for _, c := range v[1:] {
			switch {
			case c == 'o':
				if i+1 >= len(args) {
					return // set -o lists the options
				}
				i++
				if o := args[i]; !o.static || !slices.Contains(setOptionsKept, o.val) {
					s.fail("set -o %s changes how bash parses or runs what follows (only -o %s keep the keys known)", o.text(), strings.Join(setOptionsKept, ", -o "))
					return
				}
			case !strings.ContainsRune(shellFlagsKept, c):
				s.fail("set %c%c changes how bash parses or runs what follows (only set -%s keep the keys known)", v[0], c, shellFlagsKept)
				return
			}
		}
	}
}

// shopt refuses setting or unsetting an option outside shoptKept (or, with -o, a set -o name
// outside setOptionsKept).
func (s *shellScan) shopt(args []shellArg) {
	changes, setNames := false, false
	for _, a := range args {
		v := a.val
		switch {
		case !a.static:
			s.fail("an argument of shopt is computed (%s)", a.text())
			return
		case v == "--":
		case len(v) > 1 && v[0] == '-':
			changes = changes || strings.ContainsAny(v, "su")
			setNames = setNames || strings.ContainsRune(v, 'o')
		case !changes:
			// shopt NAME prints its state
		case setNames && !slices.Contains(setOptionsKept, v), !setNames && !slices.Contains(shoptKept, v):
			s.fail("shopt %s changes how bash parses or runs what follows (only %s keep the keys known)", v, strings.Join(shoptKept, ", "))
			return
		}
	}
}

// declMode is what the options of a declaration builtin say about its operands.
type declMode struct{ functions, print, nameref, integer, operands bool }

func (s *shellScan) declClause(d *syntax.DeclClause, ctx shellCtx) {
	prog := d.Variant.Value
	s.add(ProgramKey(prog, ""))
	var m declMode
	for _, a := range d.Args {
		switch {
		case a.Naked && a.Name == nil:
			s.word(a.Value, ctx)
			v, static, _ := s.literal(a.Value, ctx)
			if !static {
				s.fail("an argument of %s is computed (%s)", prog, wordText(a.Value))
				return
			}
			s.declOperand(prog, v, &m, ctx)
		case a.Naked:
			s.arith(a.Index, ctx)
			s.declOperand(prog, a.Name.Value, &m, ctx)
		default:
			m.operands = true
			s.assign(a, ctx, m.integer)
			if m.integer {
				s.markVar(a.Name.Value, varEvaluated)
			}
			if m.nameref {
				s.nameref(prog, a.Name.Value)
			}
		}
	}
}

// declOperand scans one static operand of declare and its kin: options, NAME or NAME=VALUE.
func (s *shellScan) declOperand(prog, v string, m *declMode, ctx shellCtx) {
	if !m.operands && len(v) > 1 && (v[0] == '-' || v[0] == '+') {
		for _, c := range v[1:] {
			switch c {
			case '-':
				m.operands = true
			case 'f', 'F':
				m.functions = true
			case 'p':
				m.print = true
			case 'n':
				m.nameref = prog != "export" && prog != "readonly" // export -n un-exports
			case 'i':
				m.integer = true
			}
		}
		return
	}
	m.operands = true
	if m.functions || m.print || v == "-" { // local - saves the shell options
		return
	}
	name, value, assigns := strings.Cut(v, "=")
	name = strings.TrimSuffix(name, "+")
	if !s.nameOperand(prog, name) {
		return
	}
	if m.integer { // bash evaluates every value later assigned to it
		s.markVar(name, varEvaluated)
	}
	s.setVar(name, !assigns || cleanValue(value))
	switch {
	case m.nameref:
		s.nameref(prog, name)
	case m.integer && assigns:
		s.arithString(prog, staticArg(value), ctx)
	}
}

// nameref refuses declare -n NAME[=TARGET]: setting NAME sets whatever TARGET names, which a
// later assignment to NAME itself can choose (declare -n p; p=PATH), so no variable the line
// sets could be told.
func (s *shellScan) nameref(prog, name string) {
	s.fail("%s -n makes %s another name for a variable the line may choose, and a line that declares a nameref is never analysed", prog, name)
}

// testArgs checks test and [: test -v evaluates a subscript in the name it is given, so a
// word that may be -v's operand must not hold one, whether written, from command output or
// from a variable the line sets.
func (s *shellScan) testArgs(prog string, args []shellArg) {
	if prog == "[" && len(args) > 0 && args[len(args)-1].static && args[len(args)-1].val == "]" {
		args = args[:len(args)-1]
	}
	for i, a := range args {
		prev := shellArg{static: true}
		if i > 0 {
			prev = args[i-1]
		}
		if (prev.static && prev.val != "-v" && prev.val != "-R") && a.single {
			continue
		}
		if a.static {
			if strings.ContainsRune(a.val, '[') {
				s.fail("%s may take %q as a variable name and evaluate its subscript", prog, a.val)
			}
			continue
		}
		if a.word == nil {
			s.fail("%s receives arguments at run time", prog)
			return
		}
		name, ok := plainParam(a.word)
		if !ok {
			s.fail("%s may take %s as a variable name and evaluate its subscript, and its value (an expansion or a glob) is not on the line", prog, a.text())
			return
		}
		s.evalRead(name)
	}
}

// plainParam reports whether w is exactly $name or ${name}, quoted or not, with no operator: the
// only computed word whose value a name check can know, that of a variable the line sets (to a
// clean value, which splits into no subscript and globs nothing).
func plainParam(w *syntax.Word) (string, bool) {
	if len(w.Parts) != 1 {
		return "", false
	}
	part := w.Parts[0]
	if dq, ok := part.(*syntax.DblQuoted); ok {
		if dq.Dollar || len(dq.Parts) != 1 {
			return "", false
		}
		part = dq.Parts[0]
	}
	p, ok := part.(*syntax.ParamExp)
	if !ok || p.Param == nil || p.Excl || p.Length || p.Width || p.Index != nil || p.Slice != nil || p.Repl != nil || p.Exp != nil || p.Names != 0 {
		return "", false
	}
	return p.Param.Value, true
}
