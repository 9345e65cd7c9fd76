package policy

import (
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
		for _, a := range args {
			if !a.static || strings.HasPrefix(a.val, "-") && strings.ContainsRune(a.val, 'f') {
				// enable -f LIBRARY NAME loads NAME, a builtin of any name, from a shared library.
				s.addOpaque(ProgramKey(prog, ""), whyLoadsCode)
				return
			}
		}
	}
}

func (s *shellScan) hash(args []shellArg, ctx shellCtx) {
	var target *shellArg
	s.options("hash", args, &optSpec{short: "dlp:rt"}, func(opt string, val shellArg) {
		if opt == "-p" {
			target = &val
		}
	})
	if target != nil && !s.failed() {
		s.nest([]shellArg{*target, runtimeArg}, ctx)
	}
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

// shellOptions refuses set and shopt lines that turn on history expansion (set -H, set -o
// histexpand, shopt -o -s histexpand), under which !! and !word run lines from the history.
func (s *shellScan) shellOptions(prog string, args []shellArg) {
	for i := 0; i < len(args) && !s.failed(); i++ {
		a := args[i]
		v := a.val
		switch {
		case !a.static && (a.mayBeOption() || prog == "shopt"):
			s.fail("an option of %s is computed (%s)", prog, a.text())
		case prog == "shopt" && v == "histexpand",
			prog == "set" && strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.ContainsRune(v, 'H'):
			s.fail("%s turns on history expansion, which runs lines from the history as commands", prog)
		case prog == "set" && strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.ContainsRune(v, 'k'):
			s.fail("set -k makes NAME=VALUE arguments environment assignments the scan cannot see")
		case prog == "shopt":
		case !a.static || v == "--" || v == "-" || v == "" || v[0] != '-' && v[0] != '+':
			return // set's positional parameters follow
		case strings.ContainsRune(v, 'o') && i+1 < len(args):
			if i++; !args[i].static || args[i].val == "histexpand" || args[i].val == "keyword" {
				s.fail("set -o %s may turn on history expansion or keyword assignments, which the scan cannot follow", args[i].text())
			}
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
				s.nameref(prog, a.Name.Value, a.Value, ctx)
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
	case m.nameref && assigns:
		s.nameref(prog, name, &syntax.Word{Parts: []syntax.WordPart{&syntax.SglQuoted{Value: value}}}, ctx)
	case m.nameref:
		s.markVar(name, varUntrusted)
	case m.integer && assigns:
		s.arithString(prog, staticArg(value), ctx)
	}
}

// nameref scans declare -n NAME=TARGET: setting NAME sets TARGET, reading it reads TARGET.
func (s *shellScan) nameref(prog, name string, target *syntax.Word, ctx shellCtx) {
	s.markVar(name, varUntrusted)
	if target == nil {
		return
	}
	v, static, _ := s.literal(target, ctx)
	if !static {
		s.fail("the target of %s -n %s is computed (%s)", prog, name, wordText(target))
		return
	}
	if s.nameOperand(prog, v) {
		s.setVar(v, true)
	}
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
		s.varNameWord(prog+" -v", a.word, shellCtx{})
	}
}
