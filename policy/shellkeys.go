package policy

import (
	"fmt"
	"slices"
	"strings"
	"sync"

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
//     contributes, is on shellScan.run in shellwrappers.go). Programs that run other code in ways
//     this check cannot see are opaque: python -c, perl -e, awk, ssh, strace, make recipes,
//     npm scripts, a script file given to bash, and variables whose values programs run later
//     (BASH_ENV, PAGER, GIT_SSH_COMMAND, LD_PRELOAD, PS4). Only their own key speaks for them,
//     none is on the shipped safe list, and a deny on a program they run does not catch them.
//   - A line that changes how bash finds or reads what follows is ok=false (see shellbinds.go):
//     setting a variable of [LookupVariables] (PATH, BASH_CMDS, BASH_ALIASES, POSIXLY_CORRECT,
//     option variables such as ZIPOPT), a nameref, hash -p, alias NAME=VALUE, enable NAME, set
//     and shopt options that change parsing (set -o posix, shopt -s expand_aliases), eval,
//     source and ., and trap with a handler. No rule may allow such a line.
//   - bash evaluates some values as code: an array subscript inside arithmetic, [[ -eq ]],
//     test -v, declare -i, ${!x} and ${x@P}. Such a place may only read a variable the line
//     itself sets to a clean value, or one bash keeps a number ($#, RANDOM, LINENO, ...):
//     command output there, a variable the line sets to a value it does not show (or one
//     holding [, $ or `), one bash sets from data (BASH_REMATCH, PWD, OLDPWD,
//     BASH_EXECUTION_STRING), one the line never sets, positional parameters ($1, $@, $_), a
//     glob, and an expansion that puts other text there (${x/a/b}, ${x:-v}, ${x@E}) all make
//     the line ok=false.
//   - Nesting of wrappers and command strings is bounded by 32 levels; a NUL byte (which bash
//     drops) or a carriage return (which bash, unlike the parser, keeps inside a word) makes
//     the line ok=false.
func ShellKeys(line string) (keys []string, ok bool) {
	a := analyze(line, false)
	return a.Keys, a.Why == ""
}

// ShellKeysExplained is [ShellKeys] with the reason a line has no keys, for messages: "does
// not parse: <parser message>", "the program name is computed ($cmd)", ... why is "" when the
// line's keys are known.
func ShellKeysExplained(line string) (keys []string, why string) {
	a := analyze(line, false)
	return a.Keys, a.Why
}

// ShellLine is what the gate learns of one command line: its keys, the keys among them whose
// programs run code the analysis cannot read, and why the keys are unknown when they are.
type ShellLine struct {
	// Keys are the line's keys, sorted and de-duplicated (see [ShellKeys]); nil when the line
	// has none or they are unknown.
	Keys []string
	// Opaque are the keys of Keys whose programs run code the line does not show, sorted by key,
	// one per key (see [Opacity]); nil when there are none.
	Opaque []Opacity
	// Why is "" when the keys are known, else the first reason they are not.
	Why string
}

// Opacity marks a key whose program runs code the analysis cannot read: an interpreter, a
// shell running a script file, a build tool running recipes, git running hooks and repository
// configuration, a program from a path outside the system folders. The key still stands for
// the call, but it cannot be shown to avoid any program, so wherever a layer denies a shell key
// such a key is denied too unless a permission names it (see [Resolver.Decide]); no safe key
// covers it.
type Opacity struct {
	// Key is the opaque key ("shell:python3").
	Key string
	// Why says what runs unseen, after the key's subject ("runs code in its own language, …"):
	// a fixed phrase, so that marking a key costs nothing; Reason is the sentence.
	Why string
}

// Reason is the sentence for messages: the key's subject and Why ("python3 runs code in its
// own language, …", "PATH names code or a path to code …").
func (o Opacity) Reason() string { return OpacityReason(o.Key, o.Why) }

// OpacityReason is Opacity{key, why}.Reason(): the program, subcommand, path or variable the key
// names, then why.
func OpacityReason(key, why string) string {
	subject := strings.TrimPrefix(key, shellPrefix)
	if IsEnvKey(key) {
		subject = strings.TrimSuffix(subject, "=")
	}
	return subject + " " + why
}

// AnalyzeShell parses one command line (bash syntax) as [ShellKeys] does and also reports which
// keys run code the line does not show. It is safe for concurrent use.
func AnalyzeShell(line string) ShellLine { return analyze(line, true) }

// analyze scans line; the opaque keys are reported only when opaque is set.
func analyze(line string, opaque bool) ShellLine {
	s := scanPool.Get().(*shellScan)
	defer s.release()
	s.code(line, shellCtx{}, "")
	s.checkEvaluated()
	if s.shellVar && slices.Contains(s.keys, EnvKey("SHELL")) {
		s.fail("the line sets SHELL and hands code to $SHELL, which would run it in a shell of the line's choosing")
	}
	if s.why != "" {
		return ShellLine{Why: s.why}
	}
	if len(s.keys) == 0 {
		return ShellLine{}
	}
	slices.Sort(s.keys)
	out := ShellLine{Keys: slices.Clone(slices.Compact(s.keys))}
	if opaque && len(s.opaque) > 0 {
		slices.SortStableFunc(s.opaque, func(a, b Opacity) int { return strings.Compare(a.Key, b.Key) })
		out.Opaque = slices.Clone(slices.CompactFunc(s.opaque, func(a, b Opacity) bool { return a.Key == b.Key }))
	}
	return out
}

// maxShellDepth bounds nested wrappers and command strings (bash -c "sudo env sh -c ..."), so
// that a hostile line cannot make the scan recurse without end.
const maxShellDepth = 32

// shellScan collects the keys of one line. It is pooled, with its parser, because the host
// scans a line for every shell call of every agent.
type shellScan struct {
	parser *syntax.Parser // bash: the line itself, and what bash runs
	posix  *syntax.Parser // POSIX sh: what sh, dash and other POSIX shells run
	keys   []string
	opaque []Opacity
	why    string // first reason the line's keys are unknown; "" while they are known
	depth  int
	vars   map[string]varUse
	// shellVar is set once the line hands code to $SHELL (script -c, flock -c): a line that
	// also sets SHELL would run that code in a shell of its own choosing.
	shellVar bool
	// src is the text being parsed (the line, or a string it hands to a shell), for the raw
	// text of here-documents; backquotes counts the `...` substitutions being scanned.
	src        string
	backquotes int
	// substs counts the command and process substitutions being scanned.
	substs int
	// cwd is where the shell may be at the point scanned, cwdFail where it is if the statement
	// just scanned failed (cd may), oldCwd where cd - goes (shellcwd.go); mayChdir reports that
	// the text being parsed holds a cd, pushd or popd anywhere.
	cwd, cwdFail, oldCwd cwdSet
	mayChdir             bool
}

var scanPool = sync.Pool{New: func() any {
	return &shellScan{parser: syntax.NewParser(syntax.Variant(syntax.LangBash)),
		posix: syntax.NewParser(syntax.Variant(syntax.LangPOSIX)),
		cwd:   workdirCwd, cwdFail: workdirCwd, oldCwd: unknownCwd("cd - goes back to a folder from before the line")}
}}

func (s *shellScan) release() {
	if cap(s.keys) > 256 {
		s.keys = nil
	}
	s.keys, s.opaque, s.why, s.depth, s.shellVar = s.keys[:0], s.opaque[:0], "", 0, false
	s.src, s.backquotes, s.substs = "", 0, 0
	s.cwd, s.cwdFail, s.oldCwd, s.mayChdir = workdirCwd, workdirCwd, unknownCwd("cd - goes back to a folder from before the line"), false
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

// addOpaque adds key and marks it opaque: its program runs code the line does not show.
func (s *shellScan) addOpaque(key, why string) {
	s.keys = append(s.keys, key)
	s.opaque = append(s.opaque, Opacity{Key: key, Why: why})
}

// shellCtx is what a command inherits from where it appears.
type shellCtx struct {
	// stdin is what a shell reading commands from standard input would read.
	stdin stdinSource
	// tokens are texts a wrapper replaces at run time (find's {}, xargs -I R, parallel's {):
	// a word holding one is not static.
	tokens []string
	// external is set for a command a wrapper runs as a program of its own (nice cd is not the
	// shell's cd).
	external bool
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

// dialect is how the shell that runs a string reads it.
type dialect uint8

const (
	// bashDialect: bash runs it (the line itself, bash -c, eval, trap handlers).
	bashDialect dialect = iota
	// shDialect: /bin/sh or $SHELL runs it (sh -c, dash -c, watch, tar -I, git aliases), which
	// may be dash or bash depending on the machine: the string is read both ways and the keys of
	// both readings count, so whatever shell runs it, what it runs has a key.
	shDialect
)

// code parses src as bash code and scans it; origin names the string in messages and is ""
// for the line itself.
func (s *shellScan) code(src string, ctx shellCtx, origin string) {
	s.parse(s.parser, src, ctx, origin)
}

// codeAs scans src as the shell of dialect d reads it.
func (s *shellScan) codeAs(d dialect, src string, ctx shellCtx, origin string) {
	s.parse(s.parser, src, ctx, origin)
	if d == shDialect {
		if origin == "" {
			origin = "the line"
		}
		s.parse(s.posix, src, ctx, origin+" (as POSIX sh reads it)")
	}
}

// parse parses src with p and scans it.
func (s *shellScan) parse(p *syntax.Parser, src string, ctx shellCtx, origin string) {
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
	outer, outerChdir := s.src, s.mayChdir
	s.src = src
	defer func() { s.src, s.mayChdir = outer, outerChdir }()
	f, err := p.Parse(strings.NewReader(src), "")
	if err != nil {
		if origin == "" {
			s.fail("does not parse: %v", err)
		} else {
			s.fail("%s does not parse: %v", origin, err)
		}
		return
	}
	s.mayChdir = changesDir(f)
	if origin == "" {
		s.stmts(f.Stmts, ctx)
		return
	}
	// A string handed to a shell runs in a new shell, in the folder the command starts in.
	s.withCwd(s.cwd, func() { s.stmts(f.Stmts, ctx) })
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

// nest runs a wrapped command one level deeper, as a program of its own: a cd there is not the
// shell's.
func (s *shellScan) nest(args []shellArg, ctx shellCtx) {
	ctx.external = true
	s.nestShell(args, ctx)
}

// nestShell runs a command one level deeper in the line's own shell (builtin, command).
func (s *shellScan) nestShell(args []shellArg, ctx shellCtx) {
	if s.enter() {
		s.run(args, ctx)
	}
	s.leave()
}

// stmts scans a list run one after the other: each statement starts where the one before
// left the shell, whether it succeeded or not.
func (s *shellScan) stmts(list []*syntax.Stmt, ctx shellCtx) {
	for i, st := range list {
		if i > 0 {
			s.settle()
		}
		s.stmt(st, ctx)
	}
}

func (s *shellScan) stmt(st *syntax.Stmt, ctx shellCtx) {
	if s.failed() {
		return
	}
	s.cwdFail = s.cwd
	if st.Background || st.Coprocess {
		s.subshell(func() { s.statement(st, ctx) })
		return
	}
	s.statement(st, ctx)
	if st.Negated {
		s.cwd, s.cwdFail = s.cwdFail, s.cwd
	}
}

// statement scans a statement's redirects, in the folder it starts in, and its command.
func (s *shellScan) statement(st *syntax.Stmt, ctx shellCtx) {
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
		s.binary(c, ctx)
	case *syntax.Block:
		s.stmts(c.Stmts, ctx)
	case *syntax.Subshell:
		s.subshell(func() { s.stmts(c.Stmts, ctx) })
	case *syntax.IfClause:
		s.ifClause(c, ctx)
	case *syntax.WhileClause:
		s.repeat(func() {
			s.stmts(c.Cond, ctx)
			s.settle()
			s.stmts(c.Do, ctx)
		})
	case *syntax.ForClause:
		s.repeat(func() {
			s.loop(c.Loop, ctx)
			if c.Select {
				s.markVar("REPLY", varUntrusted) // select reads the answer from standard input
			}
			s.stmts(c.Do, ctx)
		})
	case *syntax.CaseClause:
		s.word(c.Word, ctx)
		before, out := s.cwd, s.cwd // no pattern may match
		for _, item := range c.Items {
			s.cwd, s.cwdFail = before, before
			for _, w := range item.Patterns {
				s.word(w, ctx)
			}
			s.stmts(item.Stmts, ctx)
			s.settle()
			out = out.union(s.cwd)
		}
		s.cwd, s.cwdFail = out, out
	case *syntax.FuncDecl:
		body := s.cwd
		if s.mayChdir {
			body = unknownCwd("the line changes folder, and a function runs in the folder it is called from")
		}
		s.withCwd(body, func() { s.stmt(c.Body, inner(ctx)) })
		if changesDir(c.Body) {
			s.cwd = unknownCwd("a function of the line changes folder when it is called")
			s.cwdFail = s.cwd
		}
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
		s.subshell(func() { s.stmt(c.Stmt, ctx) })
	default:
		s.fail("the line uses %T, which this check does not model", cmd)
	}
}

// binary scans a && b, a || b and pipelines: b runs where a left the shell when a succeeded
// (&&) or failed (||); each part of a pipeline runs in a subshell.
func (s *shellScan) binary(c *syntax.BinaryCmd, ctx shellCtx) {
	switch c.Op {
	case syntax.Pipe, syntax.PipeAll:
		s.subshell(func() { s.stmt(c.X, ctx) })
		ctx.stdin = stdinSource{}
		s.subshell(func() { s.stmt(c.Y, ctx) })
		s.cwdFail = s.cwd
	case syntax.AndStmt:
		s.stmt(c.X, ctx)
		failed := s.cwdFail
		s.stmt(c.Y, ctx)
		s.cwdFail = s.cwdFail.union(failed)
	default: // ||
		s.stmt(c.X, ctx)
		succeeded := s.cwd
		s.cwd = s.cwdFail
		s.stmt(c.Y, ctx)
		s.cwd = s.cwd.union(succeeded)
	}
}

// ifClause scans if, elif and else: each branch starts where its condition left the shell, and
// afterwards the shell may be where any branch left it (or where the last condition left it,
// without an else).
func (s *shellScan) ifClause(c *syntax.IfClause, ctx shellCtx) {
	var out cwdSet
	first := true
	add := func(c cwdSet) {
		if first {
			out, first = c, false
		} else {
			out = out.union(c)
		}
	}
	for ic := c; ic != nil; ic = ic.Else {
		if len(ic.Cond) == 0 { // else
			s.stmts(ic.Then, ctx)
			s.settle()
			add(s.cwd)
			s.cwd, s.cwdFail = out, out
			return
		}
		s.stmts(ic.Cond, ctx)
		succeeded, failed := s.cwd, s.cwdFail
		s.cwdFail = succeeded
		s.stmts(ic.Then, ctx)
		s.settle()
		add(s.cwd)
		s.cwd, s.cwdFail = failed, failed
	}
	add(s.cwd)
	s.cwd, s.cwdFail = out, out
}

// repeat scans a loop's body: when a pass changes the folder, the next starts elsewhere, so the
// body is scanned again with the folder unknown.
func (s *shellScan) repeat(pass func()) {
	s.settle()
	before := s.cwd
	pass()
	s.settle()
	if s.cwd.equal(before) {
		return
	}
	s.cwd = unknownCwd("a loop of the line changes folder")
	s.cwdFail = s.cwd
	pass()
	s.cwd = unknownCwd("a loop of the line changes folder")
	s.cwdFail = s.cwd
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
