package policy

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// run scans one simple command given as the words its program receives, and gives its keys.
// Besides multi-command programs and the read-only programs of readOnlyRules, it knows:
//
//   - shells (bash, sh, dash, ash, rbash, posh, yash): -c "string" (flags combined as -lc, -ec,
//     -o opt, --) is parsed as a line; reading commands from standard input parses a static
//     here-document or here-string, counts a file (sh < f) as a script, and is ok=false
//     otherwise (a pipe: curl ... | sh); a script operand gives only the shell's key, like any
//     program running a file. zsh, ksh, mksh, fish, csh and tcsh are not parsed: their
//     expansions can run code where bash's cannot, so -c or standard input makes the line
//     ok=false.
//   - env (-i, -u NAME, -C DIR, -S STRING, NAME=V), sudo/sudoedit (options with values, -e
//     FILE gives a redirect key per file, -s/-i without a command read standard input), doas,
//     pkexec, su (-c STRING), nice, ionice, timeout DURATION, nohup, setsid, unbuffer,
//     stdbuf, chroot DIR, taskset MASK, time (-o FILE writes), command (-v/-V only query),
//     builtin, exec (-a NAME), flock FILE (cmd or -c STRING), watch (joins its arguments and
//     parses them, as it runs them with sh -c; -x runs them directly), busybox and toybox
//     (the applet).
//   - xargs: the command (echo by default) with arguments appended at run time, so a wrapper,
//     shell or subcommand that would come from the input makes the line ok=false; with -I R or
//     -i, a word holding R is not static. parallel: the command before ::: is joined and
//     parsed as it runs under a shell, a word holding { is not static, {= =} (Perl) and a
//     missing command (input lines are commands) are ok=false. find: -exec, -execdir, -ok and
//     -okdir commands up to ; or + ({} is not static), -delete gives shell:find -delete, and
//     -fprint, -fprint0, -fls and -fprintf FILE give redirect keys; a computed argument that
//     is not a predicate's value is ok=false (it could be -delete).
//   - eval, source and ., trap with a handler, alias NAME=VALUE, hash -p and enable NAME are
//     ok=false (they bind names or run code no rule may allow; shellbinds.go), and so is fc
//     (it re-runs history); mapfile -C and compgen/complete -C (the callback is parsed; -F
//     gives the function's key; -W with a substitution is ok=false), set and shopt (only
//     options that leave parsing alone keep the keys known), declaration builtins, read,
//     mapfile, printf -v, getopts, wait -p, unset, let, test and [.
func (s *shellScan) run(args []shellArg, ctx shellCtx) {
	if s.failed() || len(args) == 0 {
		return
	}
	if !args[0].static {
		s.fail("the program name is computed (%s)", args[0].text())
		return
	}
	prog := s.program(args[0].val)
	rest := args[1:]
	switch spec, multi := multiCommands[prog]; {
	case prog == "":
		return
	case multi:
		s.multi(prog, spec, rest, ctx)
		return
	case prog == "make":
		s.make(rest)
		return
	}
	s.programKey(prog, rest)
	if rule := readOnlyRules[prog]; rule != nil {
		s.checkOptions(prog, prog, rule, rest)
		return
	}
	if spec := prefixWrappers[prog]; spec != nil {
		s.prefixWrapper(prog, spec, rest, ctx)
		return
	}
	if s.runner(prog, rest, ctx) {
		return
	}
	switch prog {
	case "bash", "sh", "dash", "ash", "rbash", "posh":
		s.posixShell(prog, rest, ctx)
	case "zsh", "ksh", "ksh93", "mksh", "fish", "csh", "tcsh", "yash":
		s.opaqueShell(prog, rest, ctx)
	case "env":
		s.env(rest, ctx)
	case "sudo", "sudoedit", "doas", "pkexec":
		s.sudo(prog, rest, ctx)
	case "su":
		s.su(rest, ctx)
	case "flock":
		s.flock(rest, ctx)
	case "watch":
		s.watch(rest, ctx)
	case "xargs":
		s.xargs(rest, ctx)
	case "parallel":
		s.parallel(rest, ctx)
	case "find":
		s.find(rest, ctx)
	case "busybox", "toybox":
		if len(rest) > 0 && rest[0].static && strings.HasPrefix(rest[0].val, "-") {
			if rest[0].val == "--install" {
				s.add(ProgramKey(prog, "--install"))
			}
			return
		}
		s.nest(rest, ctx)
	case "eval":
		s.fail("eval runs a string as code, and a line that uses eval is never analysed (whatever the string shows, a rule must not allow it)")
	case "source":
		s.fail("%s runs a file as code in this shell, where it can change what every later command runs", sourceName(rest))
	case "trap":
		s.trap(rest)
	case "alias":
		s.alias(rest, ctx)
	case "hash":
		s.hash(rest)
	case "fc":
		s.fail("fc re-runs commands from the shell history, which the line does not show")
	case "cd", "pushd", "popd":
		if !ctx.external {
			s.chdir(prog, rest)
		}
	default:
		s.builtin(prog, rest, ctx)
	}
}

func skipDashDash(args []shellArg) []shellArg {
	if len(args) > 0 && args[0].static && args[0].val == "--" {
		return args[1:]
	}
	return args
}

// wrapSpec describes a wrapper that runs the command following its options and operands.
type wrapSpec struct {
	opts     optSpec
	operands int      // operands before the command (timeout's duration)
	noRun    []string // options after which it runs nothing (command -v, ionice -p)
	writes   []string // options whose value is a file it writes (time -o)
	// shell: without a command it starts $SHELL (or /bin/sh), reading standard input; with
	// interactive set, as an interactive shell (chroot runs "$SHELL -i").
	shell, interactive bool
	// chdir are options whose value is the folder the command runs in (unshare --wd), and
	// reroot options that run it under another root (unshare --root); rootOperand says that the
	// first operand is the new root (chroot).
	chdir, reroot []string
	rootOperand   bool
}

var prefixWrappers = map[string]*wrapSpec{
	"nice": {opts: optSpec{short: "n:", long: []string{"adjustment=", "help", "version"}}},
	"ionice": {opts: optSpec{short: "c:hn:P:p:tu:V", long: []string{"class=", "classdata=", "pid=",
		"pgid=", "uid=", "ignore", "help", "version"}},
		noRun: []string{"-p", "-P", "-u", "--pid", "--pgid", "--uid"}},
	"timeout": {opts: optSpec{short: "fk:ps:v", long: []string{"foreground", "kill-after=",
		"preserve-status", "signal=", "verbose", "help", "version"}}, operands: 1},
	"nohup":    {opts: optSpec{long: []string{"help", "version"}}},
	"setsid":   {opts: optSpec{short: "cfw", long: []string{"ctty", "fork", "wait", "help", "version"}}},
	"unbuffer": {opts: optSpec{short: "p"}},
	"stdbuf": {opts: optSpec{short: "e:i:o:", long: []string{"input=", "output=", "error=", "help",
		"version"}}},
	"chroot": {opts: optSpec{long: []string{"userspec=", "groups=", "skip-chdir", "help", "version"}},
		operands: 1, shell: true, interactive: true, rootOperand: true},
	"taskset": {opts: optSpec{short: "achpV", long: []string{"all-tasks", "cpu-list", "pid", "help",
		"version"}}, operands: 1, noRun: []string{"-p", "--pid"}},
	"time": {opts: optSpec{short: "af:o:pqvV", long: []string{"append", "format=", "output=",
		"portability", "quiet", "verbose", "help", "version"}}, writes: []string{"-o", "--output"}},
	"command": {opts: optSpec{short: "pVv"}, noRun: []string{"-v", "-V"}},
	"builtin": {},
	"exec":    {opts: optSpec{short: "a:cl"}},
}

func (s *shellScan) prefixWrapper(prog string, spec *wrapSpec, args []shellArg, ctx shellCtx) {
	if prog == "nice" && len(args) > 0 && args[0].static && len(args[0].val) > 1 &&
		args[0].val[0] == '-' && strings.Trim(args[0].val[1:], "+-0123456789") == "" {
		args = args[1:] // nice -10: the historical adjustment form
	}
	runs := true
	nested := s.cwd // where the wrapped command runs
	rest, _ := s.options(prog, args, &spec.opts, func(opt string, val shellArg) {
		if slices.Contains(spec.noRun, opt) {
			runs = false
		}
		if slices.Contains(spec.writes, opt) {
			s.writeFile(prog, val)
		}
		switch {
		case slices.Contains(spec.reroot, opt):
			nested = cwdSet{unknown: prog + " " + opt + " runs the command under another root", reroot: true}
		case slices.Contains(spec.chdir, opt) && val.static && val.val != "":
			nested = nested.to(val.val)
		case slices.Contains(spec.chdir, opt):
			nested = unknownCwd(prog + " " + opt + " runs the command in a folder the line does not show")
		}
	})
	if s.failed() || len(rest) < spec.operands || !runs {
		return
	}
	if spec.rootOperand {
		nested = cwdSet{unknown: prog + " runs the command under another root", reroot: true}
	}
	for _, o := range rest[:spec.operands] {
		if !o.single {
			s.fail("an operand of %s is computed and may not be one word (%s)", prog, o.text())
			return
		}
	}
	if rest = rest[spec.operands:]; len(rest) == 0 {
		if spec.shell {
			s.shellVar = true
			s.withCwd(nested, func() { s.stdinCodeAs(shDialect, prog, ctx, spec.interactive) })
		}
		return
	}
	if prog == "builtin" || prog == "command" {
		s.nestShell(rest, ctx) // the shell's own builtin (command cd changes the shell's folder)
		return
	}
	s.withCwd(nested, func() { s.nest(rest, ctx) })
}

var envSpec = optSpec{short: "0C:iS:u:v", long: []string{"ignore-environment", "null", "unset=",
	"chdir=", "split-string=", "debug", "block-signal?", "default-signal?", "ignore-signal?",
	"list-signal-handling", "help", "version"}}

func (s *shellScan) env(args []shellArg, ctx shellCtx) {
	var split *shellArg
	nested := s.cwd
	rest, _ := s.options("env", args, &envSpec, func(opt string, val shellArg) {
		switch opt {
		case "-u", "--unset":
			s.varWord("env", val, (*shellScan).envName)
		case "-S", "--split-string":
			split = &val
		case "-C", "--chdir":
			nested = nested.to(val.val) // val is static: options() takes only a single word
			if !val.static {
				nested = unknownCwd("env -C runs the command in a computed folder")
			}
		}
	})
	if s.failed() {
		return
	}
	s.withCwd(nested, func() {
		if split != nil {
			s.envSplit(*split, rest, ctx)
			return
		}
		if len(rest) > 0 && rest[0].static && rest[0].val == "-" {
			rest = rest[1:] // env - is env -i
		}
		rest = s.assignments(rest)
		s.nest(rest, ctx)
	})
}

// assignments gives the keys of the NAME=VALUE words at the start of args (env, sudo) and
// returns the words after them.
func (s *shellScan) assignments(args []shellArg) []shellArg {
	for len(args) > 0 && args[0].static && strings.Contains(args[0].val, "=") {
		name, value, _ := strings.Cut(args[0].val, "=")
		s.envName(name)
		if !cleanValue(value) && syntax.ValidName(name) {
			s.markVar(name, varUntrusted)
		}
		args = args[1:]
	}
	return args
}

// envSplit runs env -S STRING: the string's words, then the remaining arguments.
func (s *shellScan) envSplit(split shellArg, rest []shellArg, ctx shellCtx) {
	if !split.static || strings.ContainsAny(split.val, "$\\") {
		s.fail("the env -S string is computed or uses env's own escapes (%s)", split.text())
		return
	}
	argv := []shellArg{staticArg("env")}
	for w, err := range s.parser.WordsSeq(strings.NewReader(split.val)) {
		if err != nil {
			s.fail("the env -S string does not parse: %v", err)
			return
		}
		v, static, _ := s.literal(w, ctx)
		if !static {
			s.fail("the env -S string is computed (%s)", split.val)
			return
		}
		argv = append(argv, staticArg(v))
	}
	s.nest(append(argv, rest...), ctx)
}

var sudoSpecs = map[string]*optSpec{
	"sudo": {short: "Aa:BbC:c:D:Eeg:Hh::iKklNnPp:R:r:SsT:t:U:u:Vv", long: []string{"askpass",
		"background", "bell", "close-from=", "chdir=", "preserve-env?", "edit", "group=", "set-home",
		"help", "host=", "login", "remove-timestamp", "reset-timestamp", "list", "non-interactive",
		"preserve-groups", "prompt=", "chroot=", "role=", "stdin", "shell", "type=",
		"command-timeout=", "other-user=", "user=", "version", "validate"}},
	"doas":   {short: "C:Lnsu:"},
	"pkexec": {long: []string{"user=", "disable-internal-agent", "keep-cwd", "help", "version"}},
}

func (s *shellScan) sudo(prog string, args []shellArg, ctx shellCtx) {
	spec := sudoSpecs[prog]
	edit, shell := false, prog == "pkexec"
	if spec == nil { // sudoedit
		spec, edit = sudoSpecs["sudo"], true
	}
	nested := s.cwd
	if prog == "pkexec" {
		nested = unknownCwd("pkexec runs the command in the target user's home folder")
	}
	rest, _ := s.options(prog, args, spec, func(opt string, val shellArg) {
		switch opt {
		case "-e", "--edit":
			edit = true
		case "-s", "--shell":
			shell = true
		case "-i", "--login", "--keep-cwd":
			shell = shell || opt != "--keep-cwd"
			if opt == "--keep-cwd" {
				nested = s.cwd
			} else {
				nested = unknownCwd(prog + " " + opt + " runs the command in the target user's home folder")
			}
		case "-D", "--chdir":
			nested = nested.to(val.val)
			if !val.static {
				nested = unknownCwd(prog + " " + opt + " runs the command in a computed folder")
			}
		case "-R", "--chroot":
			nested = cwdSet{unknown: prog + " " + opt + " runs the command under another root", reroot: true}
		}
	})
	if s.failed() {
		return
	}
	rest = s.assignments(rest)
	s.withCwd(nested, func() {
		switch {
		case edit:
			for _, a := range rest {
				s.writeFile(prog, a)
			}
		case len(rest) == 0 && shell:
			s.shellVar = true // sudo -s runs $SHELL; -i the target user's shell
			s.stdinCodeAs(shDialect, prog, ctx, false)
		default:
			s.nest(rest, ctx)
		}
	})
}

var suSpec = optSpec{short: "c:fG:g:lmPps:w:", long: []string{"command=", "session-command=",
	"fast", "group=", "supp-group=", "login", "preserve-environment", "pty", "shell=",
	"whitelist-environment=", "help", "version"}}

// su permutes its options; the first operand is the user and any further one goes to the
// shell, which this check does not follow.
func (s *shellScan) su(args []shellArg, ctx shellCtx) {
	var command *shellArg
	user := false
	nested := s.cwd
	login := func() { nested = unknownCwd("su's login shell starts in the target user's home folder") }
	for rest := args; len(rest) > 0; {
		var end bool
		rest, end = s.options("su", rest, &suSpec, func(opt string, val shellArg) {
			switch opt {
			case "-c", "--command", "--session-command":
				command = &val
			case "-s", "--shell":
				s.chosenShell("su", val)
			case "-l", "--login":
				login()
			}
		})
		switch {
		case s.failed():
			return
		case len(rest) == 0:
			continue
		case rest[0].static && rest[0].val == "-" && !end:
			login()
		case user || end && len(rest) > 1:
			s.fail("su hands the words after the user name to the shell")
			return
		default:
			user = true
		}
		rest = rest[1:]
	}
	s.withCwd(nested, func() {
		if command != nil {
			s.codeArgAs(shDialect, *command, ctx, "the su -c command")
			return
		}
		s.stdinCodeAs(shDialect, "su", ctx, false)
	})
}

var flockSpec = optSpec{short: "c:E:eFhnosuVw:x", long: []string{"shared", "exclusive", "unlock",
	"nonblock", "nb", "close", "no-fork", "timeout=", "wait=", "conflict-exit-code=", "command=",
	"verbose", "help", "version"}}

func (s *shellScan) flock(args []shellArg, ctx shellCtx) {
	var command *shellArg
	rest, _ := s.options("flock", args, &flockSpec, func(opt string, val shellArg) {
		if opt == "-c" || opt == "--command" {
			command = &val
		}
	})
	if s.failed() || len(rest) == 0 {
		return
	}
	if !rest[0].single {
		s.fail("the lock of flock is computed (%s)", rest[0].text())
		return
	}
	rest = rest[1:]
	if command == nil && len(rest) > 1 && rest[0].static && (rest[0].val == "-c" || rest[0].val == "--command") {
		command = &rest[1]
	}
	if command != nil {
		s.shellCode(*command, ctx, "the flock -c command")
		return
	}
	s.nest(rest, ctx)
}

var watchSpec = optSpec{short: "bCcd::eghn:pq:rtwx", long: []string{"beep", "color", "no-color",
	"differences?", "errexit", "chgexit", "interval=", "precise", "equexit=", "no-rerun",
	"no-title", "no-wrap", "exec", "help", "version"}}

func (s *shellScan) watch(args []shellArg, ctx shellCtx) {
	direct := false
	rest, _ := s.options("watch", args, &watchSpec, func(opt string, _ shellArg) {
		direct = direct || opt == "-x" || opt == "--exec"
	})
	switch {
	case s.failed():
	case direct:
		s.nest(rest, ctx)
	default:
		s.joined(shDialect, "the command watch runs", rest, ctx)
	}
}

var xargsSpec = optSpec{short: "0a:d:E:e::I:i::L:l::n:oP:prs:tx", long: []string{"arg-file=",
	"delimiter=", "eof?", "replace?", "max-lines?", "max-args=", "max-procs=", "max-chars=",
	"interactive", "no-run-if-empty", "null", "open-tty", "process-slot-var=", "verbose", "exit",
	"show-limits", "help", "version"}}

func (s *shellScan) xargs(args []shellArg, ctx shellCtx) {
	replace := ""
	rest, _ := s.options("xargs", args, &xargsSpec, func(opt string, val shellArg) {
		switch opt {
		case "-I", "-i", "--replace":
			if replace = val.val; !val.static {
				s.fail("the xargs replacement string is computed (%s)", val.text())
			} else if replace == "" {
				replace = "{}"
			}
		case "--process-slot-var":
			s.varWord("xargs", val, func(s *shellScan, name string) { s.setVar(name, true) })
		}
	})
	if s.failed() {
		return
	}
	if len(rest) == 0 {
		rest = []shellArg{staticArg("echo")}
	}
	if replace == "" {
		rest = append(rest[:len(rest):len(rest)], runtimeArg)
	} else {
		rest, ctx = withToken(rest, ctx, replace)
	}
	s.nest(rest, ctx)
}

var parallelSpec = optSpec{short: "0a:C:d:E:I:j:kL:mn:N:P:qrS:s:uvX", long: []string{"jobs=",
	"keep-order", "arg-file=", "colsep=", "delimiter=", "null", "halt=", "dry-run", "tag",
	"ungroup", "line-buffer", "group", "bar", "progress", "eta", "no-notice", "will-cite",
	"verbose", "joblog=", "results=", "res=", "timeout=", "retries=", "delay=", "memfree=",
	"load=", "quote", "xargs", "max-args=", "max-replace-args=", "max-lines=", "max-procs=",
	"no-run-if-empty", "sshlogin=", "tmpdir=", "workdir=", "wd=", "shuf", "nice=", "silent", "help",
	"version"}}

func (s *shellScan) parallel(args []shellArg, ctx shellCtx) {
	replace := "{"
	rest, _ := s.options("parallel", args, &parallelSpec, func(opt string, val shellArg) {
		switch opt {
		case "-I":
			if replace = val.val; !val.static || replace == "" {
				s.fail("the parallel replacement string is computed or empty (%s)", val.text())
			}
		case "--joblog", "--results", "--res":
			s.writeFile("parallel", val)
		case "--workdir", "--wd":
			s.fail("parallel --workdir runs the commands in a folder of its choosing")
		}
	})
	if s.failed() {
		return
	}
	if n := slices.IndexFunc(rest, func(a shellArg) bool {
		return a.static && (a.val == ":::" || a.val == "::::" || a.val == ":::+" || a.val == "::::+")
	}); n >= 0 {
		rest = rest[:n]
	}
	var sb strings.Builder
	for _, a := range rest {
		if !a.static || strings.Contains(a.val, "{=") {
			s.fail("the command parallel runs is computed or holds Perl code (%s)", a.text())
			return
		}
		sb.WriteString(a.val)
		sb.WriteByte(' ')
	}
	if sb.Len() == 0 {
		s.fail("parallel runs its input lines as commands")
		return
	}
	if !strings.Contains(sb.String(), "{") && !strings.Contains(sb.String(), replace) {
		sb.WriteString("{}") // parallel appends the argument
	}
	ctx.tokens = append(ctx.tokens[:len(ctx.tokens):len(ctx.tokens)], "{", replace)
	s.shellVar = true // GNU parallel runs its commands in $SHELL (or the shell it was started from)
	s.add(ProgramKey("sh", ""))
	s.codeAs(shDialect, sb.String(), ctx, "the command parallel runs")
}

// findValues are the find predicates whose next word is their value, which may be computed.
var findValues = []string{"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename",
	"-regex", "-iregex", "-lname", "-ilname", "-type", "-xtype", "-user", "-group", "-uid", "-gid",
	"-perm", "-size", "-mtime", "-atime", "-ctime", "-mmin", "-amin", "-cmin", "-newer",
	"-anewer", "-cnewer", "-samefile", "-inum", "-links", "-maxdepth", "-mindepth", "-fstype",
	"-context", "-printf", "-used", "-regextype", "-files0-from"}

func (s *shellScan) find(args []shellArg, ctx shellCtx) {
	for i := 0; i < len(args) && !s.failed(); i++ {
		a := args[i]
		if !a.static {
			if i == 0 || !args[i-1].static || !slices.Contains(findValues, args[i-1].val) {
				s.fail("an argument of find is computed and could be an action such as -delete (%s)", a.text())
			}
			continue
		}
		switch a.val {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && !(args[j].static && (args[j].val == ";" ||
				args[j].val == "+" && args[j-1].static && args[j-1].val == "{}")) {
				j++
			}
			cmd, cctx := withToken(args[i+1:j], ctx, "{}")
			nested := s.cwd
			if strings.HasSuffix(a.val, "dir") {
				nested = unknownCwd("find " + a.val + " runs the command in the folder of each file it finds")
			}
			s.withCwd(nested, func() { s.nest(cmd, cctx) })
			i = j
		case "-delete":
			s.add(ProgramKey("find", "-delete"))
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			if i+1 < len(args) {
				s.writeFile("find", args[i+1])
			}
			i++
			if a.val == "-fprintf" {
				i++
			}
		}
	}
}

// sourceName names a source command in messages: "source FILE", or "source" alone.
func sourceName(args []shellArg) string {
	if args = skipDashDash(args); len(args) > 0 {
		return "source " + args[0].text()
	}
	return "source"
}
