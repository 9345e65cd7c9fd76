package policy

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// varUse records how the line treats a variable, to find values bash evaluates as code.
type varUse uint8

const (
	// varUntrusted: the line gives the variable a value it does not show, or one holding
	// [, $ or ` (enough for an array subscript that runs a command).
	varUntrusted varUse = 1 << iota
	// varEvaluated: bash evaluates the variable's value as an expression or a name.
	varEvaluated
	// varAssigned: the line itself gives the variable a value (clean or not).
	varAssigned
)

// numericVars are the variables bash keeps as numbers whatever the line does: evaluating one the
// line does not set runs nothing.
var numericVars = []string{"BASHPID", "BASH_ARGC", "BASH_SUBSHELL", "EPOCHSECONDS", "EUID", "GROUPS",
	"HISTCMD", "LINENO", "OPTIND", "PIPESTATUS", "PPID", "RANDOM", "SECONDS", "SHLVL", "SRANDOM", "UID"}

// bashSetVars are the variables bash itself sets from data the line does not show (the match of
// [[ =~ ]], the folder cd went to, the text of the line or of the command running, ...), so a
// value the line gives them does not last: bash evaluating one may run code from that data.
var bashSetVars = []string{"BASH_ARGV", "BASH_ARGV0", "BASH_COMMAND", "BASH_EXECUTION_STRING",
	"BASH_LINENO", "BASH_REMATCH", "BASH_SOURCE", "COMP_LINE", "COMP_WORDS", "COPROC", "DIRSTACK",
	"FUNCNAME", "MAPFILE", "OLDPWD", "OPTARG", "PWD", "READLINE_LINE", "REPLY"}

// assign scans an assignment; integer is set under declare -i, whose values bash evaluates.
func (s *shellScan) assign(a *syntax.Assign, ctx shellCtx, integer bool) {
	if a.Index != nil {
		s.arith(a.Index, ctx)
	}
	clean := true
	if a.Value != nil {
		if integer {
			s.arithWord(a.Value, ctx) // scans its substitutions too
		} else {
			s.word(a.Value, ctx)
		}
		clean = cleanWord(a.Value)
	}
	if a.Array != nil {
		for _, e := range a.Array.Elems {
			s.arith(e.Index, ctx)
			if e.Value != nil {
				s.word(e.Value, ctx)
				clean = clean && cleanWord(e.Value)
			}
		}
	}
	s.setVar(a.Name.Value, clean)
}

// cleanValue reports whether a value is harmless if bash evaluates it: no array subscript,
// expansion or substitution.
func cleanValue(v string) bool { return !strings.ContainsAny(v, "[$`") }

// cleanWord reports whether every value a word can take is clean: its text is, and its only
// expansions are braces ({1..9}), arithmetic and numeric parameters ($#, ${#x}), which give
// numbers. Globs give file names, which anyone who can write a file chooses.
func cleanWord(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if !cleanValue(p.Value) || strings.ContainsAny(p.Value, "*?") {
				return false
			}
		case *syntax.SglQuoted:
			if p.Dollar || !cleanValue(p.Value) {
				return false
			}
		case *syntax.DblQuoted:
			if p.Dollar || !cleanWord(&syntax.Word{Parts: p.Parts}) {
				return false
			}
		case *syntax.ArithmExp:
		case *syntax.ParamExp:
			if !numericParam(p) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func numericParam(p *syntax.ParamExp) bool {
	if p.Length && p.Exp == nil && p.Repl == nil && p.Slice == nil {
		return true
	}
	if p.Param == nil {
		return false
	}
	switch p.Param.Value {
	case "#", "?", "$", "!":
		return p.Exp == nil && p.Repl == nil && p.Slice == nil && !p.Excl
	}
	return false
}

func (s *shellScan) setVar(name string, clean bool) {
	if !syntax.ValidName(name) {
		s.fail("%q is not a variable name", name)
		return
	}
	s.envKey(name)
	s.markVar(name, varAssigned)
	if !clean {
		s.markVar(name, varUntrusted)
	}
}

// nameOperand checks a variable name a builtin receives as a string (read, unset, printf -v,
// declare): bash evaluates a subscript in it, which can run commands.
func (s *shellScan) nameOperand(prog, name string) bool {
	if strings.ContainsRune(name, '[') {
		s.fail("%s names the array element %q; bash evaluates its subscript, which can run commands", prog, name)
		return false
	}
	if !syntax.ValidName(name) {
		s.fail("%s: %q is not a variable name", prog, name)
		return false
	}
	return true
}

func (s *shellScan) markVar(name string, use varUse) {
	if s.vars == nil {
		s.vars = make(map[string]varUse)
	}
	s.vars[name] |= use
}

// evalRead records that bash evaluates the value of name as an expression or a name.
func (s *shellScan) evalRead(name string) {
	if name == "" {
		return
	}
	switch {
	case name == "#" || name == "?" || name == "$" || name == "!":
		return // numbers
	case !syntax.ValidName(name):
		s.fail("bash evaluates $%s as an expression or a name, and its value is not on the line", name)
		return
	}
	s.markVar(name, varEvaluated)
}

// checkEvaluated fails the line when bash evaluates, as an expression or a name, the value of a
// variable whose value the line does not show to be harmless: one it sets to a value it does not
// show or that holds code, one bash sets itself from data (bashSetVars), or one the line never
// sets at all (whose value comes from outside the line), unless bash keeps it a number
// (numericVars). The first such name in sort order is reported.
func (s *shellScan) checkEvaluated() {
	var worst, why string
	for name, use := range s.vars {
		if use&varEvaluated == 0 || (worst != "" && name > worst) {
			continue
		}
		switch {
		case use&varUntrusted != 0:
			worst, why = name, "the line gives it a value it does not show or that holds code"
		case slices.Contains(bashSetVars, name):
			worst, why = name, "bash sets it from data the line does not show"
		case use&varAssigned == 0 && !slices.Contains(numericVars, name):
			worst, why = name, "the line does not set it, so its value is not on the line"
		}
	}
	if worst != "" {
		s.fail("bash evaluates the value of %s as an expression or a name, and %s", worst, why)
	}
}

func (s *shellScan) envName(name string) {
	switch {
	case !validName(name):
		s.fail("%q cannot be a variable key", name)
	case name == "SHELLOPTS" || name == "BASHOPTS":
		s.fail("%s sets a child shell's options, such as history expansion", name)
	default:
		s.envKey(name)
	}
}

// varWord checks a word naming a variable a builtin sets, and passes the name to set.
func (s *shellScan) varWord(prog string, a shellArg, set func(*shellScan, string)) {
	if !a.static {
		s.fail("%s sets a variable whose name is computed (%s)", prog, a.text())
		return
	}
	if s.nameOperand(prog, a.val) {
		set(s, a.val)
	}
}
