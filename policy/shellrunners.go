package policy

import (
	"path/filepath"
	"slices"
	"strings"
)

// More wrappers: programs that run the command following their options (setpriv, unshare,
// strace, valgrind, ...), added to prefixWrappers, and the ones whose arguments need more than
// a wrapSpec (script, sg, runuser, setarch, strace -o, valgrind's options, perf, ip).

func init() {
	for name, spec := range map[string]*wrapSpec{
		"setpriv": {opts: optSpec{short: "dhV", long: []string{"dump", "nnp", "no-new-privs",
			"ambient-caps=", "inh-caps=", "bounding-set=", "ruid=", "euid=", "rgid=", "egid=", "reuid=",
			"regid=", "clear-groups", "keep-groups", "init-groups", "groups=", "securebits=", "pdeathsig=",
			"selinux-label=", "apparmor-profile=", "landlock-access=", "landlock-rule=", "reset-env",
			"help", "version"}}, noRun: []string{"-d", "--dump"}},
		"unshare": {opts: optSpec{short: "m::u::i::n::p::U::C::T::frcR:w:S:G:hV", long: []string{
			"mount?", "uts?", "ipc?", "net?", "pid?", "user?", "cgroup?", "time?", "fork", "map-user=",
			"map-group=", "map-root-user", "map-current-user", "map-auto", "map-users=", "map-groups=",
			"kill-child?", "mount-proc?", "mount-binfmt?", "propagation=", "setgroups=", "keep-caps",
			"root=", "wd=", "setuid=", "setgid=", "monotonic=", "boottime=", "help", "version"}},
			shell: true, chdir: []string{"-w", "--wd"}, reroot: []string{"-R", "--root"}},
		"nsenter": {opts: optSpec{short: "at:m::u::i::n::p::C::U::T::S:G:r::w::W:FZhV", long: []string{
			"all", "target=", "mount?", "uts?", "ipc?", "net?", "pid?", "cgroup?", "user?", "time?",
			"setuid=", "setgid=", "preserve-credentials", "root?", "wd?", "wdns=", "no-fork",
			"follow-context", "help", "version"}}, shell: true, chdir: []string{"-w", "--wd", "-W", "--wdns"},
			reroot: []string{"-r", "--root"}},
		"chrt": {opts: optSpec{short: "bdfiorRT:P:D:ampvhV", long: []string{"batch", "deadline", "fifo",
			"idle", "other", "rr", "reset-on-fork", "sched-runtime=", "sched-period=", "sched-deadline=",
			"all-tasks", "max", "pid", "verbose", "help", "version"}}, operands: 1,
			noRun: []string{"-m", "--max", "-p", "--pid"}},
		"prlimit": {opts: optSpec{short: "c::d::e::f::i::l::m::n::q::r::s::t::u::v::x::y::p:o:hV",
			long: []string{"pid=", "output=", "noheadings", "raw", "verbose", "help", "version", "core?",
				"data?", "nice?", "fsize?", "sigpending?", "memlock?", "rss?", "nofile?", "msgqueue?",
				"rtprio?", "stack?", "cpu?", "nproc?", "as?", "locks?", "rttime?"}},
			noRun: []string{"-p", "--pid"}},
		"fakeroot": {opts: optSpec{short: "l:i:s:ub:hv", long: []string{"lib=", "faked=",
			"unknown-is-real", "fd-base=", "help", "version"}}, shell: true},
		"linux32":          {opts: setarchOptions, shell: true},
		"linux64":          {opts: setarchOptions, shell: true},
		"i386":             {opts: setarchOptions, shell: true},
		"x86_64":           {opts: setarchOptions, shell: true},
		"uname26":          {opts: setarchOptions, shell: true},
		"catchsegv":        {},
		"dbus-run-session": {opts: optSpec{long: []string{"config-file=", "help", "version"}}},
		"systemd-run": {opts: optSpec{short: "hqPGtdE:p:u:r", long: []string{"help", "version", "user",
			"system", "scope", "unit=", "property=", "description=", "slice=", "slice-inherit",
			"remain-after-exit", "send-sighup", "service-type=", "uid=", "gid=", "working-directory=",
			"same-dir", "nice=", "setenv=", "pty", "pipe", "quiet", "wait", "collect", "machine=", "host=",
			"on-active=", "on-boot=", "on-startup=", "on-unit-active=", "on-unit-inactive=",
			"on-calendar=", "on-clock-change", "on-timezone-change", "timer-property=",
			"path-property=", "socket-property=", "no-block", "no-ask-password"}}},
	} {
		prefixWrappers[name] = spec
	}
}

var setarchOptions = optSpec{short: "BFILRSTXZ3vhV", long: []string{"32bit", "fdpic-funcptrs",
	"short-inode", "addr-compat-layout", "addr-no-randomize", "whole-seconds", "sticky-timeouts",
	"read-implies-exec", "mmap-page-zero", "3gb", "4gb", "uname-2.6", "verbose", "list", "help",
	"version"}}

// unmodelledRunners run a command given in their arguments in ways this check does not model
// (their own option grammars, command strings, shells of their choosing): any argument but a
// lone --help or --version makes the line unknown.
var unmodelledRunners = []string{"bwrap", "firejail", "proot", "nsjail", "minijail0",
	"systemd-nspawn", "chpst", "envdir", "envuidgid", "setuidgid", "softlimit", "setlock",
	"lxc-attach", "lxc-execute", "schroot", "cgexec", "runcon", "numactl", "cpulimit", "faketime",
	"rlwrap", "xvfb-run", "dbus-launch", "ssh-agent", "hyperfine", "entr", "chronic", "ifne",
	"pee", "sem", "retry", "watchexec", "nodemon", "mpirun", "mpiexec", "srun", "trickle",
	"torsocks", "proxychains", "proxychains4", "tsocks", "daemonize", "start-stop-daemon",
	"timelimit", "flatpak-spawn", "xterm", "x-terminal-emulator", "gnome-terminal", "konsole",
	"openvt", "dtach", "abduco", "uftrace", "rr", "ltrace"}

// runner scans the programs of this file that need more than a wrapSpec; handled is false for
// any other program.
func (s *shellScan) runner(prog string, args []shellArg, ctx shellCtx) (handled bool) {
	switch prog {
	case "script":
		s.scriptCmd(args, ctx)
	case "sg":
		s.sg(args, ctx)
	case "runuser":
		s.runuser(args, ctx)
	case "setarch":
		if len(args) > 0 && args[0].static && !strings.HasPrefix(args[0].val, "-") {
			args = args[1:] // the architecture
		}
		s.prefixWrapper(prog, &wrapSpec{opts: setarchOptions, shell: true, noRun: []string{"--list"}}, args, ctx)
	case "strace":
		s.strace(args, ctx)
	case "valgrind":
		s.valgrind(args, ctx)
	case "perf":
		s.perf(args, ctx)
	case "ip":
		s.ip(args, ctx)
	case "tar":
		s.tar(args, ctx)
	case "split":
		s.execOptions(prog, args, splitExec, nil, ctx)
	case "sort":
		s.execOptions(prog, args, sortExec, nil, ctx)
	case "man":
		s.execOptions(prog, args, manExec, map[byte]string{'P': "--pager", 'H': "--html"}, ctx)
	case "zip":
		s.execOptions(prog, args, zipExec, map[byte]string{}, ctx)
		for i, a := range args {
			if a.static && a.val == "-TT" && i+1 < len(args) {
				s.runValue(prog, execOption{name: "-TT", shell: true}, args[i+1], ctx)
			}
		}
	case "rsync":
		s.execOptions(prog, args, rsyncExec, map[byte]string{'e': "--rsh"}, ctx)
	case "sdiff", "diff3":
		s.execOptions(prog, args, diffExec, nil, ctx)
	case "cpio":
		s.cpio(args, ctx)
	case "capsh":
		s.capsh(args, ctx)
	case "newgrp":
		s.shellVar = true // newgrp starts the user's login shell, reading standard input
		s.stdinCodeAs(shDialect, prog, ctx, false)
	default:
		if isDynamicLoader(prog) {
			s.loader(prog, args, ctx)
			return true
		}
		if !slices.Contains(unmodelledRunners, prog) {
			return false
		}
		if len(args) > 0 && !(len(args) == 1 && args[0].static && (args[0].val == "--help" || args[0].val == "--version")) {
			s.fail("%s runs a command in a way this check does not model", prog)
		}
	}
	return true
}

var scriptSpec = optSpec{short: "I:O:B:T:t::m:ac:efE:o:qhV", long: []string{"log-in=", "log-out=",
	"log-io=", "log-timing=", "timing?", "logging-format=", "append", "command=", "return", "flush",
	"force", "echo=", "output-limit=", "quiet", "help", "version"}}

// scriptCmd scans util-linux script: -c runs its string with $SHELL -c, and without it an
// interactive $SHELL reads standard input; the log files (the operand, typescript by default,
// -I/-O/-B/-T) are written.
func (s *shellScan) scriptCmd(args []shellArg, ctx shellCtx) {
	var command *shellArg
	logged := false
	rest, _ := s.options("script", args, &scriptSpec, func(opt string, val shellArg) {
		switch opt {
		case "-c", "--command":
			command = &val
		case "-I", "-O", "-B", "-T", "--log-in", "--log-out", "--log-io", "--log-timing":
			logged = logged || opt == "-O" || opt == "--log-out" || opt == "-B" || opt == "--log-io"
			s.writeFile("script", val)
		}
	})
	if s.failed() {
		return
	}
	switch {
	case len(rest) > 0:
		s.writeFile("script", rest[0])
	case !logged:
		s.writeFile("script", staticArg("typescript"))
	}
	if command != nil {
		s.shellCode(*command, ctx, "the script -c command")
		return
	}
	s.shellVar = true
	s.stdinCodeAs(shDialect, "script", ctx, true)
}

// sg group [-c] command: the command string runs with /bin/sh -c.
func (s *shellScan) sg(args []shellArg, ctx shellCtx) {
	if len(args) > 0 && args[0].static && args[0].val == "-" {
		args = args[1:]
	}
	if len(args) < 2 || !args[0].single {
		if len(args) == 1 {
			s.stdinCodeAs(shDialect, "sg", ctx, false)
		}
		return
	}
	args = args[1:]
	if args[0].static && args[0].val == "-c" {
		args = args[1:]
	}
	s.joined(shDialect, "the sg command", args, ctx)
}

var runuserSpec = optSpec{short: "u:mpw:g:G:lc:fs:PhV", long: []string{"user=", "preserve-environment",
	"whitelist-environment=", "group=", "supp-group=", "login", "command=", "session-command=",
	"fast", "shell=", "pty", "help", "version"}}

// runuser: with -u USER it runs the command that follows directly; otherwise, like su, the
// user's shell runs -c's string (or standard input).
func (s *shellScan) runuser(args []shellArg, ctx shellCtx) {
	var command *shellArg
	direct := false
	nested := s.cwd
	rest, _ := s.options("runuser", args, &runuserSpec, func(opt string, val shellArg) {
		switch opt {
		case "-u", "--user":
			direct = true
		case "-c", "--command", "--session-command":
			command = &val
		case "-s", "--shell":
			s.chosenShell("runuser", val)
		case "-l", "--login":
			nested = unknownCwd("runuser's login shell starts in the target user's home folder")
		}
	})
	if s.failed() {
		return
	}
	s.withCwd(nested, func() {
		switch {
		case direct:
			s.nest(rest, ctx)
		case command != nil:
			s.codeArgAs(shDialect, *command, ctx, "the runuser -c command")
		case len(rest) > 1:
			s.fail("runuser hands the words after the user name to the shell")
		default:
			s.stdinCodeAs(shDialect, "runuser", ctx, false)
		}
	})
}

// chosenShell checks a shell an option chooses (su -s, runuser -s): only a bash or POSIX sh
// reads code the way this check does.
func (s *shellScan) chosenShell(prog string, val shellArg) {
	base := val.val[strings.LastIndexByte(val.val, '/')+1:]
	if !val.static || !slices.Contains([]string{"bash", "sh", "dash"}, base) {
		s.fail("%s runs the shell %s, whose syntax this check does not read", prog, val.text())
	}
}

var straceSpec = optSpec{short: "a:b:cCdDfFhiI:kno:O:p:P:qrs:S:tTu:U:vVwxX:yzZe:E:", long: []string{
	"output=", "trace=", "signal=", "status=", "abbrev=", "verbose=", "raw=", "read=", "write=",
	"quiet?", "silence?", "decode-fds?", "decode-pids?", "kvm=", "inject=", "fault=", "trace-path=",
	"attach=", "detach-on=", "summary-only", "summary", "summary-wall-clock", "summary-syscall-overhead",
	"summary-sort-by=", "summary-columns=", "follow-forks", "output-separately", "seccomp-bpf",
	"string-limit=", "columns=", "env=", "user=", "argv0=", "secontext?", "instruction-pointer",
	"stack-trace", "syscall-times?", "syscall-number", "daemonize?", "absolute-timestamps?",
	"relative-timestamps?", "timestamps?", "no-abbrev", "const-print-style=", "kill-on-exit",
	"help", "version", "debug", "tips?", "output-append-mode", "decode-fds"}}

// strace runs the command after its options; -o FILE writes FILE, and -o '|cmd' or '!cmd'
// pipes the trace into a command run by /bin/sh; -E sets a variable for the command.
func (s *shellScan) strace(args []shellArg, ctx shellCtx) {
	rest, _ := s.options("strace", args, &straceSpec, func(opt string, val shellArg) {
		switch opt {
		case "-o", "--output":
			if v, ok := strings.CutPrefix(val.val, "|"); ok && val.static {
				s.shellCode(staticArg(v), ctx, "the strace -o command")
			} else if v, ok := strings.CutPrefix(val.val, "!"); ok && val.static {
				s.shellCode(staticArg(v), ctx, "the strace -o command")
			} else {
				s.writeFile("strace", val)
			}
		case "-E", "--env":
			name, _, _ := strings.Cut(val.val, "=")
			if !val.static {
				s.fail("the strace -E variable is computed (%s)", val.text())
				return
			}
			s.envName(name)
		}
	})
	if !s.failed() {
		s.nest(rest, ctx)
	}
}

// valgrindWrites are valgrind's options whose value is a file it writes.
var valgrindWrites = []string{"--log-file", "--xml-file", "--xtree-memory-file",
	"--callgrind-out-file", "--massif-out-file", "--cachegrind-out-file", "--dhat-out-file"}

// valgrind takes --name[=value] options (every value attached), then the program.
func (s *shellScan) valgrind(args []shellArg, ctx shellCtx) {
	for i, a := range args {
		switch {
		case !a.static:
			if a.mayBeOption() {
				s.fail("an option of valgrind is computed (%s)", a.text())
			} else {
				s.nest(args[i:], ctx)
			}
			return
		case a.val == "--":
			s.nest(args[i+1:], ctx)
			return
		case a.val == "-v" || a.val == "-q" || a.val == "-h" || a.val == "-d":
		case strings.HasPrefix(a.val, "--"):
			name, val, eq := strings.Cut(a.val, "=")
			switch {
			case name == "--db-command" || name == "--db-attach":
				s.fail("valgrind %s runs a debugger command", name)
				return
			case slices.Contains(valgrindWrites, name) && eq:
				s.writeFile("valgrind", staticArg(val))
			}
		case strings.HasPrefix(a.val, "-"):
			s.fail("valgrind has an option this check does not know (%s)", a.val)
			return
		default:
			s.nest(args[i:], ctx)
			return
		}
	}
}

// perfRunners are the perf subcommands that run a command given after their options.
var perfRunners = []string{"stat", "record", "trace", "mem", "c2c", "kmem", "kvm", "lock", "sched",
	"timechart", "ftrace", "top", "bench", "test", "script", "daemon", "iostat", "kwork"}

// perf SUB [options] [--] command: with "--" the words after it are the command; without it
// the options cannot be told from the command, so a word that is not an option makes the line
// unknown.
func (s *shellScan) perf(args []shellArg, ctx shellCtx) {
	for len(args) > 0 && args[0].static && strings.HasPrefix(args[0].val, "-") && args[0].val != "--" {
		if strings.HasPrefix(args[0].val, "--exec-path") {
			s.fail("perf --exec-path runs perf's helper programs from another folder")
			return
		}
		args = args[1:] // perf's own options, all flags or with attached values
	}
	if len(args) == 0 {
		return
	}
	if !args[0].static {
		s.fail("the perf subcommand is computed (%s)", args[0].text())
		return
	}
	for _, a := range args[1:] {
		name, _, _ := strings.Cut(a.val, "=")
		switch {
		case !a.static && a.mayBeOption():
			s.fail("an option of perf %s is computed (%s)", args[0].val, a.text())
			return
		case name == "--objdump" || name == "--addr2line" || name == "--exec-path":
			s.fail("perf %s %s runs the program it names", args[0].val, name)
			return
		case args[0].val == "script" && (a.val == "-s" || strings.HasPrefix(a.val, "--script") || strings.HasPrefix(a.val, "-s")):
			s.fail("perf script -s runs a script file, whose content the line does not show")
			return
		}
	}
	if !slices.Contains(perfRunners, args[0].val) {
		return
	}
	rest := args[1:]
	if n := slices.IndexFunc(rest, func(a shellArg) bool { return a.static && a.val == "--" }); n >= 0 {
		s.nest(rest[n+1:], ctx)
		return
	}
	for _, a := range rest {
		if !a.static || !strings.HasPrefix(a.val, "-") {
			s.fail("perf %s runs a command after its options; write \"--\" before it so the command can be told from option values", args[0].val)
			return
		}
	}
}

// ip [options] netns exec NAME command (and vrf exec NAME command) runs a command; ip matches
// abbreviated objects and verbs, so any word that could abbreviate "exec" without that exact
// form, or a batch file (-b, -batch) of ip commands, makes the line unknown.
func (s *shellScan) ip(args []shellArg, ctx shellCtx) {
	for i, a := range args {
		switch {
		case !a.static:
			s.fail("an argument of ip is computed (%s)", a.text())
			return
		case a.val == "-b" || strings.HasPrefix(a.val, "-ba") || a.val == "-batch":
			s.fail("ip -batch runs ip commands from a file, which the line does not show")
			return
		case a.val != "" && strings.HasPrefix("exec", a.val):
			if i > 0 && (args[i-1].val == "netns" || args[i-1].val == "vrf") && i+1 < len(args) && args[i+1].single {
				s.nest(args[i+2:], ctx)
				return
			}
			s.fail("ip %s may run a command (ip netns exec NAME command); write the object and verb in full", a.val)
			return
		}
	}
}

// diffExec: sdiff and diff3 run the program --diff-program names instead of diff.
var diffExec = []execOption{{name: "--diff-program"}}

// cpio runs --rsh-command (and rsh for a remote archive, host:file, unless --force-local).
func (s *shellScan) cpio(args []shellArg, ctx shellCtx) {
	s.execOptions("cpio", args, []execOption{{name: "--rsh-command", shell: true}}, nil, ctx)
	forceLocal := slices.ContainsFunc(args, func(a shellArg) bool { return a.static && a.val == "--force-local" })
	for i, a := range args {
		v := a.val
		if name, val, eq := strings.Cut(v, "="); eq && (name == "--file" || name == "-F") {
			v = val
		} else if (v == "-F" || v == "-I" || v == "-O" || v == "--file") && i+1 < len(args) {
			v = args[i+1].val
		} else {
			continue
		}
		if host, _, remote := strings.Cut(v, ":"); remote && !strings.Contains(host, "/") && !forceLocal {
			s.fail("cpio reaches the remote archive %s by running rsh there", v)
			return
		}
	}
}

// isDynamicLoader reports whether prog is the dynamic loader (ld.so, ld-linux-x86-64.so.2,
// ld-musl-x86_64.so.1), which runs the program named after its options.
func isDynamicLoader(prog string) bool {
	return prog == "ld.so" || (strings.HasPrefix(prog, "ld-") || strings.HasPrefix(prog, "ld64.")) && strings.Contains(prog, ".so")
}

var loaderSpec = optSpec{long: []string{"list", "verify", "inhibit-cache", "library-path=",
	"glibc-hwcaps-prepend=", "glibc-hwcaps-mask=", "inhibit-rpath=", "audit=", "preload=", "argv0=",
	"list-tunables", "list-diagnostics", "help", "version"}}

// loader scans the dynamic loader run as a program: it runs the executable after its options,
// and --preload and --audit load code of their own (the key is then opaque).
func (s *shellScan) loader(prog string, args []shellArg, ctx shellCtx) {
	runs := true
	rest, _ := s.options(prog, args, &loaderSpec, func(opt string, _ shellArg) {
		switch opt {
		case "--preload", "--audit", "--library-path":
			s.addOpaque(ProgramKey(prog, ""), whyLoadsCode)
		case "--list", "--verify", "--list-tunables", "--list-diagnostics", "--help", "--version":
			runs = false
		}
	})
	if !s.failed() && runs {
		s.nest(rest, ctx)
	}
}

// capsh runs /bin/bash (or its --shell=) with the arguments after "--", and itself again with
// those after "==".
func (s *shellScan) capsh(args []shellArg, ctx shellCtx) {
	shell := "bash"
	for i, a := range args {
		switch v := a.val; {
		case !a.static:
			s.fail("an argument of capsh is computed (%s)", a.text())
			return
		case v == "--":
			s.add(ProgramKey(shell, "")) // posixShell reads the arguments in the shell's dialect
			s.posixShell(shell, args[i+1:], ctx)
			return
		case v == "==":
			s.nest(append([]shellArg{staticArg("capsh")}, args[i+1:]...), ctx)
			return
		case strings.HasPrefix(v, "--chroot="):
			s.fail("capsh --chroot runs the rest under another root, where the line's paths name other files")
			return
		case strings.HasPrefix(v, "--shell="):
			s.chosenShell("capsh", staticArg(strings.TrimPrefix(v, "--shell=")))
			shell = filepath.Base(strings.TrimPrefix(v, "--shell="))
		case strings.HasPrefix(v, "--") || v == "-h":
		default:
			s.fail("capsh has an argument this check does not know (%s)", v)
			return
		}
	}
}
