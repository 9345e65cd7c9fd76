package policy

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// word scans the substitutions inside a word wherever it appears.
func (s *shellScan) word(w *syntax.Word, ctx shellCtx) {
	if w == nil {
		return
	}
	for _, p := range w.Parts {
		s.wordPart(p, ctx)
	}
}

func (s *shellScan) wordPart(p syntax.WordPart, ctx shellCtx) {
	switch p := p.(type) {
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			s.wordPart(q, ctx)
		}
	case *syntax.CmdSubst:
		if p.Backquotes {
			s.backquotes++
			defer func() { s.backquotes-- }()
		}
		s.substs++
		defer func() { s.substs-- }()
		s.subshell(func() { s.stmts(p.Stmts, inner(ctx)) })
	case *syntax.ProcSubst:
		s.substs++
		defer func() { s.substs-- }()
		s.subshell(func() { s.stmts(p.Stmts, inner(ctx)) })
	case *syntax.ArithmExp:
		s.arith(p.X, ctx)
	case *syntax.ParamExp:
		s.paramExp(p, ctx)
	}
}

func (s *shellScan) paramExp(p *syntax.ParamExp, ctx shellCtx) {
	name := ""
	if p.Param != nil {
		name = p.Param.Value
	}
	if p.Excl && p.Names == 0 && p.Index == nil {
		s.evalRead(name) // ${!x}: the value of x names the variable to expand
	}
	s.arith(p.Index, ctx)
	if p.Slice != nil {
		s.arith(p.Slice.Offset, ctx)
		s.arith(p.Slice.Length, ctx)
	}
	if p.Repl != nil {
		s.word(p.Repl.Orig, ctx)
		s.word(p.Repl.With, ctx)
	}
	if p.Exp == nil {
		return
	}
	s.word(p.Exp.Word, ctx)
	switch p.Exp.Op {
	case syntax.AssignUnset, syntax.AssignUnsetOrNull:
		s.setVar(name, p.Exp.Word == nil || cleanWord(p.Exp.Word))
	case syntax.OtherParamOps:
		if p.Exp.Word != nil && p.Exp.Word.Lit() == "P" {
			s.evalRead(name) // prompt expansion runs substitutions in the value
		}
	}
}

// arith scans an arithmetic expression: bash evaluates variables' values inside it.
func (s *shellScan) arith(x syntax.ArithmExpr, ctx shellCtx) {
	switch x := x.(type) {
	case *syntax.Word:
		s.arithWord(x, ctx)
	case *syntax.BinaryArithm:
		switch x.Op {
		case syntax.Assgn:
			s.arithTarget(x.X, ctx, false)
		case syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn, syntax.RemAssgn,
			syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn,
			syntax.AndBoolAssgn, syntax.OrBoolAssgn, syntax.XorBoolAssgn, syntax.PowAssgn:
			s.arithTarget(x.X, ctx, true)
		default:
			s.arith(x.X, ctx)
		}
		s.arith(x.Y, ctx)
	case *syntax.UnaryArithm:
		if x.Op == syntax.Inc || x.Op == syntax.Dec {
			s.arithTarget(x.X, ctx, true)
		} else {
			s.arith(x.X, ctx)
		}
	case *syntax.ParenArithm:
		s.arith(x.X, ctx)
	case *syntax.FlagsArithm:
		s.arith(x.X, ctx)
	}
}

// arithTarget scans the variable an arithmetic assignment sets; reads is set when the old value
// is evaluated too (+=, ++).
func (s *shellScan) arithTarget(x syntax.ArithmExpr, ctx shellCtx, reads bool) {
	if w, ok := x.(*syntax.Word); ok && len(w.Parts) == 1 {
		switch p := w.Parts[0].(type) {
		case *syntax.Lit:
			s.setVar(p.Value, true)
			if reads {
				s.evalRead(p.Value)
			}
			return
		case *syntax.ParamExp:
			if p.Param != nil {
				s.setVar(p.Param.Value, true)
				s.arith(p.Index, ctx)
				if reads {
					s.evalRead(p.Param.Value)
				}
				return
			}
		}
	}
	s.arith(x, ctx)
}

// arithWord scans a word bash evaluates as an arithmetic expression, substitutions included.
func (s *shellScan) arithWord(w *syntax.Word, ctx shellCtx) {
	if len(w.Parts) == 1 {
		if lit, ok := w.Parts[0].(*syntax.Lit); ok {
			if syntax.ValidName(lit.Value) {
				s.evalRead(lit.Value)
			}
			return
		}
	}
	quoted := false
	for _, p := range w.Parts {
		switch p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			quoted = true
		}
		s.arithPart(p, ctx)
	}
	if v, static, _ := s.literal(w, ctx); quoted && static && !s.failed() {
		// A quoted expression is evaluated from its text: parse it as bash would.
		x, err := s.parser.Arithmetic(strings.NewReader(v))
		if err != nil {
			s.fail("the arithmetic expression %q does not parse: %v", v, err)
			return
		}
		if s.enter() {
			s.arith(x, ctx)
		}
		s.leave()
	}
}

// arithString scans a string bash evaluates as an arithmetic expression.
func (s *shellScan) arithString(prog string, a shellArg, ctx shellCtx) {
	if !a.static {
		s.fail("an expression %s evaluates is computed (%s)", prog, a.text())
		return
	}
	x, err := s.parser.Arithmetic(strings.NewReader(a.val))
	if err != nil {
		s.fail("the arithmetic expression %q does not parse: %v", a.val, err)
		return
	}
	if s.enter() {
		s.arith(x, ctx)
	}
	s.leave()
}

func (s *shellScan) arithPart(p syntax.WordPart, ctx shellCtx) {
	switch p := p.(type) {
	case *syntax.CmdSubst:
		s.wordPart(p, ctx)
		s.fail("bash evaluates command output inside arithmetic as an expression, which can run commands")
	case *syntax.ParamExp:
		s.paramExp(p, ctx)
		if p.Param != nil && !p.Length {
			s.evalRead(p.Param.Value)
		}
		s.arithParamOps(p)
		if p.Exp != nil && p.Exp.Word != nil {
			for _, q := range p.Exp.Word.Parts {
				s.arithPart(q, ctx)
			}
		}
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			s.arithPart(q, ctx)
		}
	default:
		s.wordPart(p, ctx)
	}
}

// arithParamOps checks what an expansion inside arithmetic does to the value it expands, which
// bash then evaluates: a replacement, a default or an alternative puts the line's own text
// there, so that text must be clean (no subscript, expansion or substitution, which single
// quotes would hide until then); @E decodes escapes (\x5b is [) and @P expands the value as a
// prompt, so neither is taken; ${!name} is an indirection whose target is not on the line.
func (s *shellScan) arithParamOps(p *syntax.ParamExp) {
	if p.Excl {
		s.fail("bash evaluates an indirect expansion (${!...}) inside arithmetic, and the variable it names is not on the line")
		return
	}
	if p.Repl != nil && p.Repl.With != nil && !cleanWord(p.Repl.With) {
		s.fail("a replacement inside arithmetic puts text that holds a subscript or an expansion into the expression bash evaluates")
		return
	}
	if p.Exp == nil {
		return
	}
	switch p.Exp.Op {
	case syntax.OtherParamOps:
		switch op := p.Exp.Word.Lit(); op {
		case "U", "u", "L":
		default:
			s.fail("the expansion operator @%s inside arithmetic changes the text bash evaluates (escapes, quotes or prompt expansion)", op)
		}
	case syntax.AlternateUnset, syntax.AlternateUnsetOrNull, syntax.DefaultUnset, syntax.DefaultUnsetOrNull,
		syntax.AssignUnset, syntax.AssignUnsetOrNull:
		if p.Exp.Word != nil && !cleanWord(p.Exp.Word) {
			s.fail("a default or alternative value inside arithmetic puts text that holds a subscript or an expansion into the expression bash evaluates")
		}
	}
}

// test scans a [[ ]] expression.
func (s *shellScan) test(x syntax.TestExpr, ctx shellCtx) {
	switch x := x.(type) {
	case *syntax.Word:
		s.word(x, ctx)
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			s.arithOperand(x.X, ctx)
			s.arithOperand(x.Y, ctx)
		default:
			s.test(x.X, ctx)
			s.test(x.Y, ctx)
		}
	case *syntax.UnaryTest:
		w, isWord := x.X.(*syntax.Word)
		if (x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar) && isWord {
			s.word(w, ctx)
			s.varNameWord("[[ -v ]]", w, ctx)
			return
		}
		s.test(x.X, ctx)
	case *syntax.ParenTest:
		s.test(x.X, ctx)
	}
}

func (s *shellScan) arithOperand(x syntax.TestExpr, ctx shellCtx) {
	if w, ok := x.(*syntax.Word); ok {
		s.arithWord(w, ctx)
		return
	}
	s.test(x, ctx)
}

// varNameWord checks a word whose value bash takes as a variable name and evaluates (-v).
func (s *shellScan) varNameWord(what string, w *syntax.Word, ctx shellCtx) {
	v, static, _ := s.literal(w, ctx)
	if static {
		if strings.ContainsRune(v, '[') {
			s.fail("%s names the array element %q; bash evaluates its subscript, which can run commands", what, v)
		}
		return
	}
	name, ok := plainParam(w)
	if !ok {
		s.fail("%s takes a variable name from %s, whose value is not on the line; bash evaluates a subscript in it", what, wordText(w))
		return
	}
	s.evalRead(name)
}
