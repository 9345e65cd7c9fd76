package policy

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// ShellKeys parses one command line (bash syntax) and returns its keys, sorted and
// de-duplicated, or ok=false when the line does not parse or does something whose target
// cannot be known statically. A line with ok=false yields no keys and is never covered by a
// safe key or a grant. A line of only comments and blanks does nothing: no keys, ok=true.
//
// The rules, which a permission or a grant can rely on:
//
//   - Every simple command gives shell:<program>: the basename of the command word after quote
//     removal ("/usr/bin/rm", `\rm`, `r""m`, `"rm"` and $'\x72m' all give shell:rm). A program of
//     a MultiCommandPrograms entry gives shell:<program> <subcommand>, its first operand after the
//     program's global options; with none it gives shell:<program>. make gives one key per
//     target (shell:make test) and shell:make without one. A command word that a path names
//     outside /bin, /sbin, /usr/bin, /usr/sbin, /usr/local/bin and /usr/local/sbin also gives
//     the path key shell:./ls (relative paths keep a leading ./), so a safe "ls" never covers a
//     program the agent may have written.
//   - A command word that expands (parameters, substitutions, arithmetic, globs, brace
//     expansion, a bare tilde, $"..." translation, zsh/ksh code) is not static: ok=false. So is
//     a computed subcommand, or a computed word before the command of a wrapper.
//   - Every output redirect to a file gives shell:><target> as written after quote removal
//     (>, >>, >|, &>, &>>, <>, n>, and >&word when word is not a descriptor). Writes to /dev/null
//     give no key. Descriptor duplications (2>&1, >&2, >&-) and input redirects give none; a
//     computed target (> $f, > $(cmd), > >(cmd)) makes the line ok=false. A redirect either way
//     to /dev/tcp/... or /dev/udp/... opens a connection and gives a redirect key; a computed
//     input target that could be one (< "$f", but not < <(cmd)) makes the line ok=false.
//   - Every variable the line sets by name gives shell:<NAME>=: assignments (FOO=1 cmd, bare
//     FOO=1, a[i]=x, FOO+=x), export/declare/local/readonly/typeset operands, env NAME=V and
//     env -u NAME, unset, read/mapfile/printf -v/getopts targets, for/select loop variables,
//     arithmetic assignments ((i++)), ${x:=v}, {fd}> redirects, coproc names and make's
//     NAME=VALUE overrides. Variables a builtin sets implicitly (REPLY, OPTARG, PWD) give none.
//   - Commands inside pipelines, lists, subshells, brace groups, if/while/until/for/case,
//     function bodies (declared functions' bodies always count; calling one gives
//     shell:<name>), $( ) and backticks anywhere (arguments, assignments, redirect targets,
//     unquoted here-documents), <( ) and >( ), [[ ]] and (( )) all give their keys. Keywords
//     (time, !, coproc, [[ ]]) are syntax and give no key of their own; time run as a program
//     (\time, command time) is a wrapper with a key. The builtin . gives shell:source.
//   - Wrappers give their own key and the wrapped command's keys (the list, with what each
//     contributes, is on shellScan.run in safekeys.go). Programs that run other code in ways
//     this check cannot see are opaque: python -c, perl -e, awk, ssh, strace, make recipes,
//     npm scripts, a script file given to bash, source FILE, enable -f LIBRARY, and variables
//     whose values programs run later (BASH_ENV, PAGER, GIT_SSH_COMMAND, LD_PRELOAD, PS4).
//     Only their own key speaks for them, none is on the shipped safe list, and a deny on a
//     program they run does not catch them.
//   - bash evaluates some values as code: an array subscript inside arithmetic, [[ -eq ]],
//     test -v, declare -i, ${!x} and ${x@P}. Command output reaching such a place, a variable
//     the line sets to a value it does not show (or one holding [, $ or `) being evaluated, and
//     positional parameters ($1, $@, $_) being evaluated all make the line ok=false.
//   - Nesting of wrappers and command strings is bounded by 32 levels; a NUL byte (which bash
//     drops) or a carriage return (which bash, unlike the parser, keeps inside a word) makes
//     the line ok=false.
func ShellKeys(line string) (keys []string, ok bool) {
	keys, why := ShellKeysExplained(line)
	return keys, why == ""
}

// ShellKeysExplained is [ShellKeys] with the reason a line has no keys, for messages: "does
// not parse: <parser message>", "the program name is computed ($cmd)", ... why is "" when the
// line's keys are known.
func ShellKeysExplained(line string) (keys []string, why string) {
	s := scanPool.Get().(*shellScan)
	defer s.release()
	s.code(line, shellCtx{}, "")
	s.checkEvaluated()
	if s.why != "" {
		return nil, s.why
	}
	if len(s.keys) == 0 {
		return nil, ""
	}
	slices.Sort(s.keys)
	return slices.Clone(slices.Compact(s.keys)), ""
}

// maxShellDepth bounds nested wrappers and command strings (bash -c "sudo env sh -c ..."), so
// that a hostile line cannot make the scan recurse without end.
const maxShellDepth = 32

// shellScan collects the keys of one line. It is pooled, with its parser, because the host
// scans a line for every shell call of every agent.
type shellScan struct {
	parser *syntax.Parser
	keys   []string
	why    string // first reason the line's keys are unknown; "" while they are known
	depth  int
	vars   map[string]varUse
}

// varUse records how the line treats a variable, to find values bash evaluates as code.
type varUse uint8

const (
	// varUntrusted: the line gives the variable a value it does not show, or one holding
	// [, $ or ` (enough for an array subscript that runs a command).
	varUntrusted varUse = 1 << iota
	// varEvaluated: bash evaluates the variable's value as an expression or a name.
	varEvaluated
)

var scanPool = sync.Pool{New: func() any {
	return &shellScan{parser: syntax.NewParser(syntax.Variant(syntax.LangBash))}
}}

func (s *shellScan) release() {
	if cap(s.keys) > 256 {
		s.keys = nil
	}
	s.keys, s.why, s.depth = s.keys[:0], "", 0
	clear(s.vars)
	scanPool.Put(s)
}

func (s *shellScan) fail(format string, args ...any) {
	if s.why == "" {
		s.why = fmt.Sprintf(format, args...)
	}
}

func (s *shellScan) failed() bool { return s.why != "" }

func (s *shellScan) add(key string) { s.keys = append(s.keys, key) }

// shellCtx is what a command inherits from where it appears.
type shellCtx struct {
	// stdin is what a shell reading commands from standard input would read.
	stdin stdinSource
	// tokens are texts a wrapper replaces at run time (find's {}, xargs -I R, parallel's {):
	// a word holding one is not static.
	tokens []string
}

type stdinKind uint8

const (
	stdinUnknown stdinKind = iota // the tool's input, a pipe, a descriptor or a computed text
	stdinText                     // a here-document or here-string whose text is static
	stdinFile                     // a file the line names
)

type stdinSource struct {
	kind stdinKind
	text string
}

// code parses src as shell code and scans it; origin names the string in messages and is ""
// for the line itself.
func (s *shellScan) code(src string, ctx shellCtx, origin string) {
	if s.failed() || !s.enter() {
		return
	}
	defer s.leave()
	if strings.IndexByte(src, 0) >= 0 {
		s.fail("%s contains a NUL byte, which bash drops", orLine(origin))
		return
	}
	if strings.IndexByte(src, '\r') >= 0 {
		s.fail("%s contains a carriage return, which bash reads as part of a word and the parser as a blank", orLine(origin))
		return
	}
	f, err := s.parser.Parse(strings.NewReader(src), "")
	if err != nil {
		if origin == "" {
			s.fail("does not parse: %v", err)
		} else {
			s.fail("%s does not parse: %v", origin, err)
		}
		return
	}
	s.stmts(f.Stmts, ctx)
}

func orLine(origin string) string {
	if origin == "" {
		return "the line"
	}
	return origin
}

func (s *shellScan) enter() bool {
	s.depth++
	if s.depth > maxShellDepth {
		s.fail("wrappers and command strings nest deeper than %d levels", maxShellDepth)
		return false
	}
	return true
}

func (s *shellScan) leave() { s.depth-- }

// nest runs a wrapped command one level deeper.
func (s *shellScan) nest(args []shellArg, ctx shellCtx) {
	if s.enter() {
		s.run(args, ctx)
	}
	s.leave()
}

func (s *shellScan) stmts(list []*syntax.Stmt, ctx shellCtx) {
	for _, st := range list {
		s.stmt(st, ctx)
	}
}

func (s *shellScan) stmt(st *syntax.Stmt, ctx shellCtx) {
	if s.failed() {
		return
	}
	for _, r := range st.Redirs {
		s.redirect(r, ctx)
		if src, ok := s.stdinOf(r, ctx); ok {
			ctx.stdin = src
		}
	}
	if st.Cmd != nil {
		s.command(st.Cmd, ctx)
	}
}

// inner is the context of code that runs apart from where it is written: substitutions,
// function bodies, trap handlers. Their standard input is not the statement's.
func inner(ctx shellCtx) shellCtx { return shellCtx{tokens: ctx.tokens} }

func (s *shellScan) command(cmd syntax.Command, ctx shellCtx) {
	switch c := cmd.(type) {
	case *syntax.CallExpr:
		for _, a := range c.Assigns {
			s.assign(a, ctx, false)
		}
		if len(c.Args) > 0 {
			for _, w := range c.Args {
				s.word(w, ctx)
			}
			s.run(s.args(c.Args, ctx), ctx)
		}
	case *syntax.BinaryCmd:
		s.stmt(c.X, ctx)
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			ctx.stdin = stdinSource{}
		}
		s.stmt(c.Y, ctx)
	case *syntax.Block:
		s.stmts(c.Stmts, ctx)
	case *syntax.Subshell:
		s.stmts(c.Stmts, ctx)
	case *syntax.IfClause:
		for ic := c; ic != nil; ic = ic.Else {
			s.stmts(ic.Cond, ctx)
			s.stmts(ic.Then, ctx)
		}
	case *syntax.WhileClause:
		s.stmts(c.Cond, ctx)
		s.stmts(c.Do, ctx)
	case *syntax.ForClause:
		s.loop(c.Loop, ctx)
		if c.Select {
			s.markVar("REPLY", varUntrusted) // select reads the answer from standard input
		}
		s.stmts(c.Do, ctx)
	case *syntax.CaseClause:
		s.word(c.Word, ctx)
		for _, item := range c.Items {
			for _, w := range item.Patterns {
				s.word(w, ctx)
			}
			s.stmts(item.Stmts, ctx)
		}
	case *syntax.FuncDecl:
		s.stmt(c.Body, inner(ctx))
	case *syntax.ArithmCmd:
		s.arith(c.X, ctx)
	case *syntax.TestClause:
		s.test(c.X, ctx)
	case *syntax.DeclClause:
		s.declClause(c, ctx)
	case *syntax.LetClause:
		s.add(ProgramKey("let", ""))
		for _, e := range c.Exprs {
			s.arith(e, ctx)
		}
	case *syntax.TimeClause:
		if c.Stmt != nil {
			s.stmt(c.Stmt, ctx)
		}
	case *syntax.CoprocClause:
		if c.Name != nil {
			if name, static, _ := s.literal(c.Name, ctx); static {
				s.setVar(name, true)
			} else {
				s.fail("the coproc name is computed")
			}
		}
		s.stmt(c.Stmt, ctx)
	default:
		s.fail("the line uses %T, which this check does not model", cmd)
	}
}

func (s *shellScan) loop(l syntax.Loop, ctx shellCtx) {
	switch l := l.(type) {
	case *syntax.WordIter:
		clean := l.InPos.IsValid() // without "in", the loop walks the positional parameters
		for _, w := range l.Items {
			s.word(w, ctx)
			clean = clean && cleanWord(w)
		}
		s.setVar(l.Name.Value, clean)
	case *syntax.CStyleLoop:
		s.arith(l.Init, ctx)
		s.arith(l.Cond, ctx)
		s.arith(l.Post, ctx)
	}
}

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
	s.add(EnvKey(name))
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
	if name == "@" || name == "*" || name == "_" || (name[0] >= '0' && name[0] <= '9') {
		s.fail("bash evaluates $%s as an expression or a name, and its value is not on the line", name)
		return
	}
	s.markVar(name, varEvaluated)
}

func (s *shellScan) checkEvaluated() {
	var worst string
	for name, use := range s.vars {
		if use == varUntrusted|varEvaluated && (worst == "" || name < worst) {
			worst = name
		}
	}
	if worst != "" {
		s.fail("bash evaluates the value of %s as an expression or a name, and the line gives it a value it does not show or that holds code", worst)
	}
}

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
		s.stmts(p.Stmts, inner(ctx))
	case *syntax.ProcSubst:
		s.stmts(p.Stmts, inner(ctx))
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
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			s.fail("%s takes a variable name from command output; bash evaluates a subscript in it", what)
			return false
		case *syntax.ParamExp:
			if n.Param != nil {
				s.evalRead(n.Param.Value)
			}
		}
		return true
	})
}

// redirect scans one redirection: output to a file gives a key.
func (s *shellScan) redirect(r *syntax.Redirect, ctx shellCtx) {
	if r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc {
		if !quotedDelimiter(r.Word) {
			s.word(r.Hdoc, ctx)
		}
		return
	}
	s.word(r.Word, ctx)
	if r.N != nil && strings.HasPrefix(r.N.Value, "{") {
		s.setVar(strings.Trim(r.N.Value, "{}"), true)
	}
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll,
		syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut:
		s.writeTarget(r.Word, ctx)
	case syntax.DplOut:
		if v, static, _ := s.literal(r.Word, ctx); static && isDescriptor(v) {
			return
		}
		s.writeTarget(r.Word, ctx) // bash's >&file writes file
	case syntax.RdrIn:
		switch v, static, _ := s.literal(r.Word, ctx); {
		case static && isNetworkPath(v):
			s.add(RedirectKey(v))
		case !static && mayBeNetworkPath(v):
			s.fail("the input redirect target is computed and could be a /dev/tcp connection (%s)", wordText(r.Word))
		}
	}
}

// networkDirs are the paths bash turns into connections in a redirection.
var networkDirs = [...]string{"/dev/tcp/", "/dev/udp/"}

// isNetworkPath reports whether bash opens a connection for this redirect target: even for
// reading, that reaches the network, so it gives a redirect key like a write.
func isNetworkPath(v string) bool {
	for _, dir := range networkDirs {
		if strings.HasPrefix(v, dir) {
			return true
		}
	}
	return false
}

// mayBeNetworkPath reports whether a computed target whose static text is prefix could name a
// connection.
func mayBeNetworkPath(prefix string) bool {
	for _, dir := range networkDirs {
		if strings.HasPrefix(dir, prefix) || strings.HasPrefix(prefix, dir) {
			return true
		}
	}
	return false
}

func (s *shellScan) writeTarget(w *syntax.Word, ctx shellCtx) {
	v, static, _ := s.literal(w, ctx)
	switch {
	case !static:
		s.fail("the redirect target is computed (%s)", wordText(w))
	case v == "":
		s.fail("a redirect has an empty target")
	case v != "/dev/null":
		s.add(RedirectKey(v))
	}
}

// isDescriptor reports whether a >& target duplicates or closes a descriptor (2, 2-, -).
func isDescriptor(v string) bool {
	v = strings.TrimSuffix(v, "-")
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

func quotedDelimiter(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.ContainsRune(p.Value, '\\') {
				return true
			}
		}
	}
	return false
}

// stdinOf reports what a redirection makes standard input, if it is one of fd 0.
func (s *shellScan) stdinOf(r *syntax.Redirect, ctx shellCtx) (stdinSource, bool) {
	if r.N != nil && r.N.Value != "0" {
		return stdinSource{}, false
	}
	switch r.Op {
	case syntax.RdrIn, syntax.RdrInOut:
		if _, static, _ := s.literal(r.Word, ctx); static {
			return stdinSource{kind: stdinFile}, true
		}
	case syntax.Hdoc, syntax.DashHdoc:
		if text, ok := heredocText(r); ok {
			return stdinSource{kind: stdinText, text: text}, true
		}
	case syntax.WordHdoc:
		if v, static, _ := s.literal(r.Word, ctx); static {
			return stdinSource{kind: stdinText, text: v + "\n"}, true
		}
	case syntax.DplIn:
	default:
		if r.N == nil {
			return stdinSource{}, false
		}
	}
	return stdinSource{}, true
}

// heredocText returns a here-document's text when no expansion changes it.
func heredocText(r *syntax.Redirect) (string, bool) {
	if r.Hdoc == nil {
		return "", true
	}
	quoted := quotedDelimiter(r.Word)
	var sb strings.Builder
	for _, p := range r.Hdoc.Parts {
		lit, ok := p.(*syntax.Lit)
		if !ok {
			return "", false
		}
		if quoted {
			sb.WriteString(lit.Value)
			continue
		}
		unescape(&sb, lit.Value, "$`\\\n")
	}
	return sb.String(), true
}

// unescape writes v dropping each backslash that quotes one of special (a quoted newline
// disappears with its backslash), as bash does inside double quotes and here-documents.
func unescape(sb *strings.Builder, v, special string) {
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) && strings.IndexByte(special, v[i+1]) >= 0 {
			i++
			if v[i] == '\n' {
				continue
			}
		}
		sb.WriteByte(v[i])
	}
}

// shellArg is one word of a command as the program would receive it.
type shellArg struct {
	word *syntax.Word // nil for arguments a wrapper appends at run time (xargs)
	// val is the word after quote removal when static; otherwise the static text before its
	// first expansion.
	val    string
	static bool // the program receives exactly val
	single bool // the word becomes exactly one argument whatever its value
}

// runtimeArg stands for the arguments xargs appends to its command at run time.
var runtimeArg = shellArg{}

func staticArg(v string) shellArg { return shellArg{val: v, static: true, single: true} }

func (a shellArg) text() string {
	if a.word == nil {
		return "arguments supplied at run time"
	}
	return wordText(a.word)
}

// mayBeOption reports whether the argument could be an option of its program.
func (a shellArg) mayBeOption() bool {
	return strings.HasPrefix(a.val, "-") || (!a.static && a.val == "")
}

func wordText(w *syntax.Word) string {
	var sb strings.Builder
	if err := syntax.NewPrinter().Print(&sb, w); err != nil {
		return "?"
	}
	return sb.String()
}

func (s *shellScan) args(words []*syntax.Word, ctx shellCtx) []shellArg {
	args := make([]shellArg, len(words))
	for i, w := range words {
		v, static, single := s.literal(w, ctx)
		args[i] = shellArg{word: w, val: v, static: static, single: single}
	}
	return args
}

// withToken marks the arguments holding a token a wrapper replaces at run time as not static,
// and returns the context its command runs in.
func withToken(args []shellArg, ctx shellCtx, token string) ([]shellArg, shellCtx) {
	marked := slices.Clone(args)
	for i := range marked {
		if strings.Contains(marked[i].val, token) {
			marked[i].static = false
		}
	}
	ctx.tokens = append(ctx.tokens[:len(ctx.tokens):len(ctx.tokens)], token)
	return marked, ctx
}

// literal evaluates a word as the shell would, without running anything. static reports that
// the word always becomes exactly val (quote removal, escapes and $'...' decoded); otherwise
// val is the static text before the first expansion. single reports that the word always
// becomes one argument. A leading unquoted ~ is kept as written.
func (s *shellScan) literal(w *syntax.Word, ctx shellCtx) (val string, static, single bool) {
	if len(w.Parts) == 1 {
		if lit, ok := w.Parts[0].(*syntax.Lit); ok && !strings.ContainsAny(lit.Value, "\\*?[{") {
			return lit.Value, !hasToken(lit.Value, ctx.tokens), true
		}
	}
	var sb strings.Builder
	single, prefix, braces := true, -1, false
	for _, part := range w.Parts {
		start, partStatic := sb.Len(), true
		switch p := part.(type) {
		case *syntax.Lit:
			braces = braces || strings.ContainsRune(p.Value, '{')
			if !unquotedLit(&sb, p.Value) {
				partStatic, single = false, false
			}
		case *syntax.SglQuoted:
			v := p.Value
			if p.Dollar {
				v, partStatic = decodeANSI(v)
			}
			sb.WriteString(v)
		case *syntax.DblQuoted:
			partStatic = !p.Dollar // $"..." is translated by a message catalogue
			for _, q := range p.Parts {
				if lit, ok := q.(*syntax.Lit); ok {
					unescape(&sb, lit.Value, "$`\"\\\n")
					continue
				}
				partStatic = false
				if pe, ok := q.(*syntax.ParamExp); ok && manyFields(pe) {
					single = false
				}
			}
		case *syntax.ProcSubst:
			sb.WriteString("/dev/fd/") // one path, of a pipe: never an option
			start, partStatic = sb.Len(), false
		default: // unquoted expansions split into any number of fields
			partStatic, single = false, false
		}
		if !partStatic && prefix < 0 {
			prefix = start
		}
	}
	if braces && single && splitsBraces(w) {
		prefix, single = 0, false
	}
	val = sb.String()
	if prefix >= 0 {
		return val[:prefix], false, single
	}
	return val, !hasToken(val, ctx.tokens), single
}

// unquotedLit writes an unquoted literal after quote removal and reports whether it is
// static: glob characters make it a pattern.
func unquotedLit(sb *strings.Builder, v string) bool {
	for j := 0; j < len(v); j++ {
		c := v[j]
		switch c {
		case '\\':
			if j+1 < len(v) {
				j++
				c = v[j]
				if c == '\n' {
					continue
				}
			}
		case '*', '?':
			return false
		case '[':
			if strings.IndexByte(v[j+1:], ']') >= 0 {
				return false
			}
		}
		sb.WriteByte(c)
	}
	return true
}

// decodeANSI decodes $'...' as bash does, cutting at a NUL; \c sequences, which the library
// does not decode as bash does, make the word not static.
func decodeANSI(v string) (string, bool) {
	if strings.Contains(v, `\c`) {
		return "", false
	}
	out, _, err := expand.Format(nil, v, nil)
	if err != nil {
		return "", false
	}
	out, _, _ = strings.Cut(out, "\x00")
	return out, true
}

func manyFields(pe *syntax.ParamExp) bool {
	if pe.Param != nil && (pe.Param.Value == "@" || pe.Param.Value == "*" && pe.Index != nil) {
		return true
	}
	if w, ok := pe.Index.(*syntax.Word); ok && w.Lit() == "@" {
		return true
	}
	return pe.Names == syntax.NamesPrefixWords
}

// splitsBraces reports whether bash brace expansion applies to the word ({a,b}, {1..3}).
func splitsBraces(w *syntax.Word) bool {
	cp := &syntax.Word{Parts: slices.Clone(w.Parts)}
	syntax.SplitBraces(cp) // it reports true for any '{', expansion or not
	return slices.ContainsFunc(cp.Parts, func(p syntax.WordPart) bool {
		_, ok := p.(*syntax.BraceExp)
		return ok
	})
}

func hasToken(v string, tokens []string) bool {
	for _, t := range tokens {
		if strings.Contains(v, t) {
			return true
		}
	}
	return false
}

// systemDirs hold the programs a bare name finds; a program named by another path also gets a
// path key, because a file there may be one the agent wrote.
var systemDirs = map[string]bool{
	"/bin": true, "/sbin": true, "/usr/bin": true, "/usr/sbin": true,
	"/usr/local/bin": true, "/usr/local/sbin": true,
}

// program turns a static command word into the program name of its key, adding a path key for
// a program outside the system directories; "" when it cannot be a key.
func (s *shellScan) program(word string) string {
	if word == "." {
		return "source"
	}
	if strings.HasPrefix(word, "~") && !strings.Contains(word, "/") {
		s.fail("the program name is computed (%s)", word)
		return ""
	}
	if !strings.Contains(word, "/") {
		if !validName(word) || word == ".." {
			s.fail("the program name %q cannot be a key", word)
			return ""
		}
		return word
	}
	clean := path.Clean(word)
	name := path.Base(clean)
	if !validName(clean) || name == "." || name == ".." || name == "/" {
		s.fail("the program path %q cannot be a key", word)
		return ""
	}
	if !systemDirs[path.Dir(clean)] {
		if !path.IsAbs(clean) && !strings.HasPrefix(clean, "../") && !strings.HasPrefix(clean, "~") {
			clean = "./" + clean
		}
		s.add(shellPrefix + clean)
	}
	return name
}

// validName reports whether a program, subcommand or target can stand in a key: no blank,
// control character or '=', and not starting with '>'.
func validName(v string) bool {
	if v == "" || v[0] == '>' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c <= ' ' || c == 0x7f || c == '=' {
			return false
		}
	}
	return true
}
