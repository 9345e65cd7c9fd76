package policy

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// ErrBadSafeCommand reports a safe-command entry that is not "program" or "program
// subcommand"; config loaders wrap it so a typo in the safe list is a load error rather than an
// entry that silently never matches.
var ErrBadSafeCommand = errors.New("invalid safe command")

// ShippedSafeCommands is the built-in list of commands that only read, so agents may run them
// without asking. Each entry is checked against what ShellKeys reports: the options that would
// make one of them write or run a program give keys of their own that no safe entry covers
// (date --set, file -C, tree -o FILE, tree -R, rg --pre, rg --hostname-bin, git log|diff|show
// --output FILE), and a computed argument that could be such an option makes the line
// ok=false.
//
// Left out on purpose, because they can write files: sort (-o), uniq (OUTPUT operand), tee,
// sed (-i, w), cp, mv, touch, hostname (NAME sets the host name), less/more (they edit and
// log). Left out because they run other programs: find (-exec, -delete), xargs, env, make,
// awk (system), sed (e), watch, time, nice, command. Programs that configure themselves from
// the repository still do so: git reads hooks, fsmonitor, pagers and diff drivers from the
// repository's config, which the line does not show.
var ShippedSafeCommands = []string{
	"[", "basename", "cat", "cd", "cmp", "date", "df", "diff", "dirname", "du", "echo",
	"egrep", "false", "fgrep", "file", "grep", "head", "id", "ls", "md5sum", "nproc", "printf",
	"pwd", "readlink", "realpath", "rg", "sha1sum", "sha256sum", "stat", "tail", "test", "tree",
	"true", "type", "uname", "wc", "which", "whoami",
	"git blame", "git diff", "git log", "git ls-files", "git rev-parse", "git show", "git status",
}

// SafeKeys is a set of safe commands: shell keys that need no prompt. It is immutable after
// NewSafeKeys and safe for concurrent use.
type SafeKeys struct {
	programs map[string]bool // "cat", "git": every key of the program
	commands map[string]bool // "git status": that subcommand only
	entries  []string
}

var _ Coverer = (*SafeKeys)(nil)

// NewSafeKeys builds the set from lists of entries, typically ShippedSafeCommands and the
// user's additions ("make test", "git stash"). An entry is a plain program name, or a
// program of MultiCommandPrograms and one subcommand; anything else is an error wrapping
// ErrBadSafeCommand that says why.
func NewSafeKeys(lists ...[]string) (*SafeKeys, error) {
	s := &SafeKeys{programs: make(map[string]bool), commands: make(map[string]bool)}
	for _, list := range lists {
		for _, e := range list {
			if err := checkSafeEntry(e); err != nil {
				return nil, err
			}
			if strings.Contains(e, " ") {
				s.commands[e] = true
			} else {
				s.programs[e] = true
			}
		}
	}
	for e := range s.programs {
		s.entries = append(s.entries, e)
	}
	for e := range s.commands {
		s.entries = append(s.entries, e)
	}
	slices.Sort(s.entries)
	return s, nil
}

// safeMeta are characters a program or subcommand ShellKeys reports never contains unquoted
// meaning, so an entry holding one is a mistake.
const safeMeta = "/$`'\"\\;|&<>(){}*?#!~"

func checkSafeEntry(e string) error {
	prog, sub, hasSub := strings.Cut(e, " ")
	why := ""
	switch {
	case e == "":
		why = "it is empty"
	case !validName(prog) || strings.ContainsAny(prog, safeMeta) || prog[0] == '-' || prog == "." || prog == "..":
		why = "the program must be a plain name, without a path, blank, quote or shell character"
	case hasSub && !isMultiCommand(prog):
		why = fmt.Sprintf("%s takes no subcommand: its arguments are not part of its key; write %q", prog, prog)
	case hasSub && (!validName(sub) || strings.ContainsAny(sub, safeMeta[1:]) || sub[0] == '-'):
		why = "the subcommand must be one plain word that is not an option"
	default:
		return nil
	}
	return fmt.Errorf("%w %q: %s", ErrBadSafeCommand, e, why)
}

// Covers reports whether key is safe. Entry "cat" covers shell:cat; entry "git status" covers
// shell:git status only; entry "git" covers shell:git and every shell:git <sub>. Never
// covered: keys that are not shell keys, redirects, environment assignments, path keys
// (shell:./ls) and action keys (shell:find -delete, shell:date --set), whatever the list says.
func (s *SafeKeys) Covers(key string) bool {
	if !IsShellKey(key) || IsRedirectKey(key) || IsEnvKey(key) {
		return false
	}
	rest := key[len(shellPrefix):]
	prog, sub, hasSub := strings.Cut(rest, " ")
	switch {
	case strings.HasPrefix(sub, "-"):
		return false
	case s.programs[prog]:
		return !hasSub || isMultiCommand(prog)
	default:
		return hasSub && s.commands[rest]
	}
}

// Entries returns the set's entries, sorted.
func (s *SafeKeys) Entries() []string { return slices.Clone(s.entries) }

// multiSpec is what ShellKeys knows of a multi-command program: the global options before its
// subcommand, and those that make it run code the line shows only as configuration.
type multiSpec struct {
	opts    optSpec
	actions map[string]string // option → the action key's subcommand part (git -c → "-c")
}

// multiCommands are the programs whose first operand after their global options is a
// subcommand that becomes part of the key. An option before the subcommand that is not listed
// here makes the line ok=false, since it might take the next word as its value.
var multiCommands = map[string]*multiSpec{
	"git": {opts: optSpec{short: "C:c:hpPv", long: []string{"git-dir=", "work-tree=", "namespace=",
		"super-prefix=", "config-env=", "exec-path?", "list-cmds=", "paginate", "no-pager", "bare",
		"no-replace-objects", "no-lazy-fetch", "no-optional-locks", "no-advice", "literal-pathspecs",
		"glob-pathspecs", "noglob-pathspecs", "icase-pathspecs", "html-path", "man-path",
		"info-path", "version", "help", "attr-source="}},
		actions: map[string]string{"-c": "-c", "--config-env": "-c", "--exec-path": "--exec-path"}},
	"docker": {opts: optSpec{short: "c:DH:hl:v", long: []string{"config=", "context=", "debug",
		"host=", "log-level=", "tls", "tlscacert=", "tlscert=", "tlskey=", "tlsverify", "help", "version"}}},
	"podman": {opts: optSpec{short: "c:hrv", long: []string{"connection=", "url=", "identity=",
		"log-level=", "root=", "runroot=", "storage-driver=", "storage-opt=", "cgroup-manager=",
		"events-backend=", "hooks-dir=", "module=", "network-cmd-path=", "network-config-dir=",
		"runtime=", "runtime-flag=", "tmpdir=", "volumepath=", "ssh=", "conmon=", "imagestore=",
		"db-backend=", "remote", "syslog", "debug", "help", "version"}}},
	"kubectl": {opts: optSpec{short: "hn:s:v:", long: []string{"namespace=", "context=", "cluster=",
		"user=", "kubeconfig=", "server=", "token=", "as=", "as-group=", "as-uid=", "v=",
		"request-timeout=", "cache-dir=", "certificate-authority=", "client-certificate=",
		"client-key=", "profile=", "profile-output=", "tls-server-name=", "username=", "password=",
		"log-dir=", "log-file=", "vmodule=", "insecure-skip-tls-verify", "match-server-version",
		"warnings-as-errors", "disable-compression", "help"}}},
	"npm": {opts: optSpec{short: "C:dghqsvwy", long: []string{"prefix=", "workspace=", "userconfig=",
		"registry=", "cache=", "loglevel=", "global", "silent", "quiet", "verbose", "yes",
		"workspaces", "json", "version", "help"}}},
	"pnpm": {opts: optSpec{short: "C:F:ghrsvw", long: []string{"dir=", "filter=", "reporter=",
		"loglevel=", "recursive", "workspace-root", "silent", "global", "version", "help"}}},
	"yarn": {opts: optSpec{short: "hsv", long: []string{"cwd=", "modules-folder=", "cache-folder=",
		"mutex=", "network-timeout=", "use-yarnrc=", "silent", "verbose", "offline",
		"frozen-lockfile", "non-interactive", "version", "help"}}},
	"go": {opts: optSpec{short: "C:"}},
	"cargo": {opts: optSpec{short: "C:hqVvZ:", long: []string{"config=", "color=", "explain=",
		"verbose", "quiet", "frozen", "locked", "offline", "version", "list", "help"}},
		actions: map[string]string{"--config": "--config"}},
	"apt":     {opts: aptOptions, actions: aptActions},
	"apt-get": {opts: aptOptions, actions: aptActions},
	"pip":     {opts: pipOptions},
	"pip3":    {opts: pipOptions},
	"systemctl": {opts: optSpec{short: "afH:hiln:M:o:p:qrs:t:", long: []string{"type=", "state=",
		"property=", "host=", "machine=", "lines=", "output=", "root=", "job-mode=", "signal=",
		"kill-whom=", "user", "system", "global", "all", "full", "quiet", "no-pager", "no-block",
		"no-legend", "now", "force", "recursive", "failed", "runtime", "no-ask-password",
		"no-reload", "plain", "ignore-inhibitors", "dry-run", "value", "help", "version"}}},
	"brew": {opts: optSpec{short: "dhqv", long: []string{"verbose", "debug", "quiet", "version",
		"help", "prefix", "cellar", "repository", "cache", "env", "config"}}},
	"gh":        {opts: optSpec{short: "h", long: []string{"help", "version"}}},
	"helm":      {opts: optSpec{short: "hn:", long: helmLong}},
	"terraform": {opts: optSpec{long: []string{"help", "version"}}},
}

var (
	aptOptions = optSpec{short: "c:dfhmo:qsSt:uVvy", long: []string{"option=", "config-file=",
		"target-release=", "yes", "assume-yes", "quiet", "simulate", "dry-run", "download-only",
		"fix-broken", "no-install-recommends", "install-suggests", "ignore-missing", "reinstall",
		"purge", "help", "version"}}
	aptActions = map[string]string{"-o": "-o", "--option": "-o", "-c": "-c", "--config-file": "-c"}
	pipOptions = optSpec{short: "hqVv", long: []string{"log=", "proxy=", "retries=", "timeout=",
		"exists-action=", "trusted-host=", "cert=", "client-cert=", "cache-dir=", "python=",
		"use-feature=", "use-deprecated=", "keyring-provider=", "root-user-action=", "isolated",
		"require-virtualenv", "no-input", "no-cache-dir", "disable-pip-version-check", "no-color",
		"debug", "verbose", "quiet", "version", "help"}}
	helmLong = []string{"kube-context=", "kubeconfig=", "namespace=", "registry-config=",
		"repository-cache=", "repository-config=", "burst-limit=", "kube-apiserver=",
		"kube-as-group=", "kube-as-user=", "kube-ca-file=", "kube-token=", "kube-tls-server-name=",
		"qps=", "debug", "kube-insecure-skip-tls-verify", "help"}
)

// MultiCommandPrograms lists the programs whose key carries a subcommand: their first operand
// after their global options (shell:git push, for git -C dir push). make is among them with a
// difference: each of its targets gives a key (shell:make test, shell:make lint) and its
// NAME=VALUE overrides give environment keys. Subcommands are keyed as written: aliases and
// abbreviations the program itself resolves (npm i, git config aliases) are other keys. It is
// informational: changing it changes nothing.
var MultiCommandPrograms = func() []string {
	list := []string{"make"}
	for prog := range multiCommands {
		list = append(list, prog)
	}
	slices.Sort(list)
	return list
}()

func isMultiCommand(prog string) bool { return multiCommands[prog] != nil || prog == "make" }

// multi gives the key of a multi-command program.
func (s *shellScan) multi(prog string, spec *multiSpec, args []shellArg) {
	if prog == "cargo" && len(args) > 0 && args[0].static && strings.HasPrefix(args[0].val, "+") {
		args = args[1:] // cargo +nightly build: the toolchain
	}
	rest, _ := s.options(prog, args, &spec.opts, func(opt string, val shellArg) {
		if action, ok := spec.actions[opt]; ok && (opt != "--exec-path" || val.static) {
			s.add(ProgramKey(prog, action))
		}
	})
	switch {
	case s.failed():
	case len(rest) == 0:
		s.add(ProgramKey(prog, ""))
	case !rest[0].static:
		s.fail("the %s subcommand is computed (%s)", prog, rest[0].text())
	case !validName(rest[0].val):
		s.fail("%q cannot be a %s subcommand", rest[0].val, prog)
	default:
		s.add(ProgramKey(prog, rest[0].val))
		if prog == "git" && gitOutputCommands[rest[0].val] {
			s.checkOptions("git "+rest[0].val, "git", &gitOutputRule, rest[1:])
		}
	}
}

var makeSpec = optSpec{short: "BC:dE:ef:hiI:j::kl::Lno:O::pqrRsStvwW:", long: []string{
	"always-make", "directory=", "debug?", "environment-overrides", "eval=", "file=", "makefile=",
	"help", "ignore-errors", "include-dir=", "jobs?", "keep-going", "load-average?", "max-load?",
	"check-symlink-times", "just-print", "dry-run", "recon", "old-file=", "assume-old=",
	"output-sync?", "print-data-base", "question", "no-builtin-rules", "no-builtin-variables",
	"silent", "quiet", "no-silent", "stop", "no-keep-going", "touch", "trace", "version",
	"print-directory", "no-print-directory", "what-if=", "new-file=", "assume-new=",
	"warn-undefined-variables", "shuffle?", "jobserver-style="}}

// makeActions are make's options that choose other rules than the Makefile's own: a safe
// "make test" must not cover make -f other.mk test.
var makeActions = map[string]string{"-f": "-f", "--file": "-f", "--makefile": "-f",
	"-C": "-C", "--directory": "-C", "-E": "--eval", "--eval": "--eval", "-I": "-I", "--include-dir": "-I"}

// make gives one key per target, shell:make without any, and an environment key per override.
func (s *shellScan) make(args []shellArg) {
	targets := false
	rest := args
	for len(rest) > 0 && !s.failed() {
		var end bool
		rest, end = s.options("make", rest, &makeSpec, func(opt string, _ shellArg) {
			if action, ok := makeActions[opt]; ok {
				s.add(ProgramKey("make", action))
			}
		})
		for len(rest) > 0 && !s.failed() {
			a, prev := rest[0], shellArg{}
			if used := len(args) - len(rest); used > 0 {
				prev = args[used-1]
			}
			rest = rest[1:]
			name, _, assigns := strings.Cut(a.val, "=")
			switch {
			case !a.static:
				s.fail("an argument of make is computed (%s)", a.text())
			case isJobCount(prev, a.val):
			case assigns:
				s.envName(strings.TrimRight(name, ":+?!"))
			case validName(a.val):
				s.add(ProgramKey("make", a.val))
				targets = true
			default:
				s.fail("%q cannot be a make target key", a.val)
			}
			if !end {
				break
			}
		}
	}
	if !targets {
		s.add(ProgramKey("make", ""))
	}
}

// isJobCount reports whether v is the count of a preceding make -j or -l.
func isJobCount(prev shellArg, v string) bool {
	p := prev.val
	if !prev.static || v == "" || strings.Trim(v, "0123456789.") != "" {
		return false
	}
	return p == "--jobs" || p == "--load-average" || p == "--max-load" ||
		len(p) > 1 && p[0] == '-' && p[1] != '-' && (p[len(p)-1] == 'j' || p[len(p)-1] == 'l')
}

func (s *shellScan) envName(name string) {
	switch {
	case !validName(name):
		s.fail("%q cannot be a variable key", name)
	case name == "SHELLOPTS" || name == "BASHOPTS":
		s.fail("%s sets a child shell's options, such as history expansion", name)
	default:
		s.add(EnvKey(name))
	}
}

// optionRule lists, for a program that only reads unless told otherwise, the options that make
// it write a file or run a program, and the options whose value is the next word (so that a
// computed value there is not taken for an option).
type optionRule struct {
	shortValues   string            // short options whose value is attached or the next word
	shortOptional string            // short options whose value can only be attached
	longValues    []string          // long options whose value follows '=' or is the next word
	actions       map[string]string // option ("-s", "--set") → the action key's subcommand part
	writes        []string          // options whose value is a file they write
}

var readOnlyRules = map[string]*optionRule{
	"rg": {shortValues: "ABCEMTdefgjmrt", longValues: []string{"regexp", "file", "glob", "iglob",
		"type", "type-not", "after-context", "before-context", "context", "max-count",
		"max-columns", "threads", "replace", "encoding", "max-depth", "sort", "sortr", "color",
		"colors", "type-add", "type-clear", "max-filesize", "path-separator", "context-separator",
		"field-match-separator", "field-context-separator", "engine", "dfa-size-limit",
		"regex-size-limit", "ignore-file", "pre-glob", "pre", "hostname-bin"},
		actions: map[string]string{"--pre": "--pre", "--hostname-bin": "--hostname-bin"}},
	"date": {shortValues: "dfrs", shortOptional: "I", longValues: []string{"date", "file", "reference", "set"},
		actions: map[string]string{"-s": "--set", "--set": "--set"}},
	"file": {shortValues: "efFmP", longValues: []string{"exclude", "exclude-quiet", "files-from",
		"separator", "magic-file", "parameter"}, actions: map[string]string{"-C": "-C", "--compile": "-C"}},
	"tree": {shortValues: "HILPT", longValues: []string{"charset", "filelimit", "timefmt", "sort",
		"hintro", "houtro"}, actions: map[string]string{"-R": "-R"}, writes: []string{"-o"}},
}

var gitOutputRule = optionRule{shortValues: "GLnOS", longValues: []string{"max-count", "skip",
	"since", "after", "until", "before", "author", "committer", "grep", "grep-reflog",
	"min-parents", "max-parents", "encoding"}, writes: []string{"--output"}}

// gitOutputCommands are the git subcommands whose --output FILE writes a file.
var gitOutputCommands = map[string]bool{"log": true, "show": true, "diff": true, "whatchanged": true,
	"diff-tree": true, "diff-index": true, "diff-files": true, "range-diff": true, "format-patch": true}

// checkOptions scans the arguments of a program that reads unless an option says otherwise.
// Long options match by unambiguous prefix, as GNU getopt accepts them.
func (s *shellScan) checkOptions(prog, keyProg string, rule *optionRule, args []shellArg) {
	for i := 0; i < len(args) && !s.failed(); i++ {
		a := args[i]
		if !a.static {
			if a.mayBeOption() && (i == 0 || !rule.takesValue(args[i-1])) {
				s.fail("an argument of %s is computed and could be an option that writes or runs a program (%s)", prog, a.text())
			}
			continue
		}
		v := a.val
		switch {
		case v == "--":
			return
		case len(v) < 2 || v[0] != '-':
		case v[1] == '-':
			name, val, eq := strings.Cut(v[2:], "=")
			for opt, action := range rule.actions {
				if abbreviates(name, opt) {
					s.add(ProgramKey(keyProg, action))
				}
			}
			for _, opt := range rule.writes {
				if len(name) >= 2 && abbreviates(name, opt) {
					if eq {
						s.writeFile(prog, staticArg(val))
					} else if i+1 < len(args) {
						i++
						s.writeFile(prog, args[i])
					}
				}
			}
			if !eq && slices.Contains(rule.longValues, name) {
				i++
			}
		default:
			i = s.shortCluster(prog, keyProg, rule, args, i)
		}
	}
}

// shortCluster scans one cluster of short options (-abc) and returns the index of the last word
// it used.
func (s *shellScan) shortCluster(prog, keyProg string, rule *optionRule, args []shellArg, i int) int {
	v := args[i].val
	for j := 1; j < len(v); j++ {
		if v[j] >= 0x80 {
			continue // not an option letter
		}
		opt := shortOptNames[v[j]]
		if action, ok := rule.actions[opt]; ok {
			s.add(ProgramKey(keyProg, action))
		}
		switch {
		case slices.Contains(rule.writes, opt):
			if j+1 < len(v) {
				s.writeFile(prog, staticArg(v[j+1:]))
			} else if i+1 < len(args) {
				i++
				s.writeFile(prog, args[i])
			}
			return i
		case strings.IndexByte(rule.shortOptional, v[j]) >= 0:
			return i
		case strings.IndexByte(rule.shortValues, v[j]) >= 0:
			if j+1 == len(v) {
				i++
			}
			return i
		}
	}
	return i
}

func (r *optionRule) takesValue(prev shellArg) bool {
	p := prev.val
	switch {
	case !prev.static || len(p) < 2 || p[0] != '-':
		return false
	case p[1] == '-':
		return slices.Contains(r.longValues, p[2:])
	default:
		return len(p) == 2 && strings.IndexByte(r.shortValues, p[1]) >= 0
	}
}

// abbreviates reports whether the long option name (without dashes) is a prefix of opt
// ("--set").
func abbreviates(name, opt string) bool {
	return name != "" && strings.HasPrefix(opt, "--") && strings.HasPrefix(opt[2:], name)
}

func (s *shellScan) writeFile(prog string, a shellArg) {
	switch {
	case !a.static:
		s.fail("the file %s writes is computed (%s)", prog, a.text())
	case a.val == "":
		s.fail("%s writes a file with an empty name", prog)
	case a.val != "/dev/null":
		s.add(RedirectKey(a.val))
	}
}

// shortOptNames holds "-x" for every ASCII byte, so option callbacks get names without
// allocating.
var shortOptNames = func() (names [128]string) {
	for c := range names {
		names[c] = "-" + string(rune(c))
	}
	return names
}()

// optSpec describes a program's options as its getopt call does.
type optSpec struct {
	short string   // "x" a flag, "x:" takes a value, "x::" takes an optional attached value
	long  []string // "name" a flag, "name=" takes a value, "name?" takes an optional "=value"
}

// options consumes the options at the start of args and returns the words from the first
// operand on; end reports that "--" ended the options. onOpt sees each option ("-u",
// "--user") with its value (the zero shellArg when it has none). An unknown option, or a
// computed word that could be one, fails: read wrongly, an option's value could be taken for
// the wrapped program or the other way round.
func (s *shellScan) options(prog string, args []shellArg, spec *optSpec, onOpt func(opt string, val shellArg)) (rest []shellArg, end bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static {
			if a.mayBeOption() {
				s.fail("an argument of %s that could be an option is computed (%s)", prog, a.text())
				return nil, false
			}
			return args[i:], false
		}
		v := a.val
		switch {
		case v == "--":
			return args[i+1:], true
		case len(v) < 2 || v[0] != '-':
			return args[i:], false
		case v[1] == '-':
			name, val, eq := strings.Cut(v[2:], "=")
			kind, known := longKind(spec.long, name)
			switch {
			case !known:
				s.fail("%s has an option this check does not know (--%s)", prog, name)
			case kind == '=' && !eq:
				if i+1 >= len(args) || !args[i+1].single {
					s.fail("the value of %s --%s is missing or computed", prog, name)
					return nil, false
				}
				i++
				onOpt(v, args[i])
			case kind == 0 && eq:
				s.fail("%s --%s takes no value", prog, name)
			case eq:
				onOpt(v[:2+len(name)], staticArg(val))
			default:
				onOpt(v, shellArg{})
			}
		default:
			i = s.shortOptions(prog, args, i, spec.short, onOpt)
		}
		if s.failed() {
			return nil, false
		}
	}
	return nil, false
}

// shortOptions reads one cluster of short options and returns the index of the last word used.
func (s *shellScan) shortOptions(prog string, args []shellArg, i int, short string, onOpt func(string, shellArg)) int {
	v := args[i].val
	for j := 1; j < len(v); j++ {
		k := strings.IndexByte(short, v[j])
		if k < 0 || v[j] == ':' || v[j] >= 0x80 {
			s.fail("%s has an option this check does not know (-%c)", prog, v[j])
			return i
		}
		opt := shortOptNames[v[j]] // ASCII: the spec holds nothing else
		switch {
		case strings.HasPrefix(short[k+1:], "::"):
			onOpt(opt, staticArg(v[j+1:]))
			return i
		case strings.HasPrefix(short[k+1:], ":"):
			switch {
			case j+1 < len(v):
				onOpt(opt, staticArg(v[j+1:]))
			case i+1 < len(args) && args[i+1].single:
				i++
				onOpt(opt, args[i])
			default:
				s.fail("the value of %s %s is missing or computed", prog, opt)
			}
			return i
		default:
			onOpt(opt, shellArg{})
		}
	}
	return i
}

// longKind finds a long option: kind is '=' when it takes a value, '?' when the value is
// optional, 0 for a flag.
func longKind(long []string, name string) (kind byte, known bool) {
	for _, opt := range long {
		base := strings.TrimRight(opt, "=?")
		if base == name {
			if len(base) < len(opt) {
				return opt[len(base)], true
			}
			return 0, true
		}
	}
	return 0, false
}

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
//     (the applet), hash -p PATH NAME (NAME then runs PATH).
//   - xargs: the command (echo by default) with arguments appended at run time, so a wrapper,
//     shell or subcommand that would come from the input makes the line ok=false; with -I R or
//     -i, a word holding R is not static. parallel: the command before ::: is joined and
//     parsed as it runs under a shell, a word holding { is not static, {= =} (Perl) and a
//     missing command (input lines are commands) are ok=false. find: -exec, -execdir, -ok and
//     -okdir commands up to ; or + ({} is not static), -delete gives shell:find -delete, and
//     -fprint, -fprint0, -fls and -fprintf FILE give redirect keys; a computed argument that
//     is not a predicate's value is ok=false (it could be -delete).
//   - eval (arguments joined and parsed), source and . (key shell:source: a file runs unseen,
//     so only a grant or a permission can cover it; /dev/stdin reads standard input), trap
//     (the handler is parsed), alias (each value is parsed with the arguments that follow it
//     at use), fc (ok=false: it re-runs history), mapfile -C and compgen/complete -C (the
//     callback is parsed; -F gives the function's key; -W with a substitution is ok=false),
//     set and shopt (turning on history expansion or set -k is ok=false), declaration
//     builtins, read, mapfile, printf -v, getopts, unset, let, test and [.
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
		s.multi(prog, spec, rest)
		return
	case prog == "make":
		s.make(rest)
		return
	}
	s.add(ProgramKey(prog, ""))
	if rule := readOnlyRules[prog]; rule != nil {
		s.checkOptions(prog, prog, rule, rest)
		return
	}
	if spec := prefixWrappers[prog]; spec != nil {
		s.prefixWrapper(prog, spec, rest, ctx)
		return
	}
	switch prog {
	case "bash", "sh", "dash", "ash", "rbash", "posh", "yash":
		s.posixShell(prog, rest, ctx)
	case "zsh", "ksh", "ksh93", "mksh", "fish", "csh", "tcsh":
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
		s.joined("the eval string", skipDashDash(rest), ctx)
	case "source":
		if rest = skipDashDash(rest); len(rest) > 0 {
			s.script(prog, rest[0], ctx)
		}
	case "trap":
		s.trap(rest, ctx)
	case "alias":
		s.alias(rest, ctx)
	case "hash":
		s.hash(rest, ctx)
	case "fc":
		s.fail("fc re-runs commands from the shell history, which the line does not show")
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
	shell    bool     // without a command it starts an interactive shell (chroot)
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
		operands: 1, shell: true},
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
	rest, _ := s.options(prog, args, &spec.opts, func(opt string, val shellArg) {
		if slices.Contains(spec.noRun, opt) {
			runs = false
		}
		if slices.Contains(spec.writes, opt) {
			s.writeFile(prog, val)
		}
	})
	if s.failed() || len(rest) < spec.operands || !runs {
		return
	}
	for _, o := range rest[:spec.operands] {
		if !o.single {
			s.fail("an operand of %s is computed and may not be one word (%s)", prog, o.text())
			return
		}
	}
	if rest = rest[spec.operands:]; len(rest) == 0 {
		if spec.shell {
			s.stdinCode(prog, ctx)
		}
		return
	}
	s.nest(rest, ctx)
}

// shellFlags are the single-letter options of bash and POSIX shells that take no value.
// Missing on purpose: -H (history expansion) and -i (interactive, which turns it on), under
// which !! and !word run lines the scan did not see as commands, and -k, under which NAME=VALUE
// arguments become environment assignments.
const shellFlags = "abefhlmnprtuvxBCDEPT"

var shellLongFlags = []string{"--login", "--noprofile", "--norc", "--posix", "--restricted",
	"--verbose", "--debugger", "--dump-strings", "--dump-po-strings", "--noediting",
	"--pretty-print", "--wordexp"}

func (s *shellScan) posixShell(prog string, args []shellArg, ctx shellCtx) {
	command, stdin, i := false, false, 0
scan:
	for ; i < len(args); i++ {
		a := args[i]
		if !a.static {
			if command || !a.mayBeOption() {
				break // the -c string or the script
			}
			s.fail("an option of %s is computed (%s)", prog, a.text())
			return
		}
		switch v := a.val; {
		case v == "--" || v == "-":
			i++
			break scan
		case v == "--version" || v == "--help":
			return
		case v == "--rcfile" || v == "--init-file":
			i++
		case strings.HasPrefix(v, "--"):
			if !slices.Contains(shellLongFlags, v) {
				s.fail("%s has an option this check does not know (%s)", prog, v)
				return
			}
		case len(v) > 1 && (v[0] == '-' || v[0] == '+'):
			for _, c := range v[1:] {
				switch {
				case c == 'c':
					command = true
				case c == 's':
					stdin = true
				case c == 'o' || c == 'O':
					if i++; i < len(args) && (!args[i].static || args[i].val == "histexpand" || args[i].val == "keyword") {
						s.fail("%s -o %s may turn on history expansion or keyword assignments, which the scan cannot follow", prog, args[i].text())
						return
					}
				case !strings.ContainsRune(shellFlags, c):
					s.fail("%s has an option this check does not know (-%c)", prog, c)
					return
				}
			}
		default:
			break scan
		}
	}
	operands := args[min(i, len(args)):]
	switch {
	case command:
		if len(operands) > 0 {
			s.codeArg(operands[0], ctx, "the "+prog+" -c string")
		}
	case stdin || len(operands) == 0:
		s.stdinCode(prog, ctx)
	default:
		s.script(prog, operands[0], ctx)
	}
}

func (s *shellScan) opaqueShell(prog string, args []shellArg, ctx shellCtx) {
	script := false
	for _, a := range args {
		v := a.val
		switch {
		case !a.static:
			s.fail("an argument of %s is computed (%s)", prog, a.text())
			return
		case strings.HasPrefix(v, "--") && strings.Contains(v, "command"),
			len(v) > 1 && (v[0] == '-' || v[0] == '+') && v[1] != '-' && strings.ContainsRune(v, 'c'):
			s.fail("%s runs a command string, and %s syntax is not analysed", prog, prog)
			return
		case v != "--" && v != "-" && !strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "+"):
			script = true
		}
	}
	if !script && ctx.stdin.kind != stdinFile {
		s.fail("%s reads commands from standard input, and %s syntax is not analysed", prog, prog)
	}
}

// codeArg parses a word that a program runs as shell code.
func (s *shellScan) codeArg(a shellArg, ctx shellCtx, origin string) {
	if !a.static {
		s.fail("%s is computed (%s)", origin, a.text())
		return
	}
	s.code(a.val, ctx, origin)
}

// joined parses words a program joins with spaces and runs as shell code.
func (s *shellScan) joined(origin string, args []shellArg, ctx shellCtx) {
	var sb strings.Builder
	for i, a := range args {
		if !a.static {
			s.fail("%s is computed (%s)", origin, a.text())
			return
		}
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(a.val)
	}
	if sb.Len() > 0 {
		s.code(sb.String(), ctx, origin)
	}
}

// stdinCode scans what a shell reading its commands from standard input would run.
func (s *shellScan) stdinCode(prog string, ctx shellCtx) {
	switch ctx.stdin.kind {
	case stdinText:
		s.code(ctx.stdin.text, inner(ctx), "the here-document "+prog+" reads")
	case stdinUnknown:
		s.fail("%s reads commands from standard input, which the line does not show", prog)
	}
}

// script checks the file a shell or source runs: only the program's own key speaks for it.
func (s *shellScan) script(prog string, a shellArg, ctx shellCtx) {
	switch v := a.val; {
	case !a.static:
		s.fail("the script %s runs is computed (%s)", prog, a.text())
	case v == "/dev/stdin" || v == "/dev/fd/0" || v == "/proc/self/fd/0":
		s.stdinCode(prog, ctx)
	case strings.HasPrefix(v, "/dev/fd/") || strings.HasPrefix(v, "/proc/") || isNetworkPath(v):
		s.fail("%s runs %s, whose content the line does not show", prog, v)
	}
}

var envSpec = optSpec{short: "0C:iS:u:v", long: []string{"ignore-environment", "null", "unset=",
	"chdir=", "split-string=", "debug", "block-signal?", "default-signal?", "ignore-signal?",
	"list-signal-handling", "help", "version"}}

func (s *shellScan) env(args []shellArg, ctx shellCtx) {
	var split *shellArg
	rest, _ := s.options("env", args, &envSpec, func(opt string, val shellArg) {
		switch opt {
		case "-u", "--unset":
			s.varWord("env", val, (*shellScan).envName)
		case "-S", "--split-string":
			split = &val
		}
	})
	if s.failed() {
		return
	}
	if split != nil {
		s.envSplit(*split, rest, ctx)
		return
	}
	if len(rest) > 0 && rest[0].static && rest[0].val == "-" {
		rest = rest[1:] // env - is env -i
	}
	rest = s.assignments(rest)
	s.nest(rest, ctx)
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
	rest, _ := s.options(prog, args, spec, func(opt string, _ shellArg) {
		switch opt {
		case "-e", "--edit":
			edit = true
		case "-s", "--shell", "-i", "--login":
			shell = true
		}
	})
	if s.failed() {
		return
	}
	rest = s.assignments(rest)
	switch {
	case edit:
		for _, a := range rest {
			s.writeFile(prog, a)
		}
	case len(rest) == 0 && shell:
		s.stdinCode(prog, ctx)
	default:
		s.nest(rest, ctx)
	}
}

var suSpec = optSpec{short: "c:fG:g:lmPps:w:", long: []string{"command=", "session-command=",
	"fast", "group=", "supp-group=", "login", "preserve-environment", "pty", "shell=",
	"whitelist-environment=", "help", "version"}}

// su permutes its options; the first operand is the user and any further one goes to the
// shell, which this check does not follow.
func (s *shellScan) su(args []shellArg, ctx shellCtx) {
	var command *shellArg
	user := false
	for rest := args; len(rest) > 0; {
		var end bool
		rest, end = s.options("su", rest, &suSpec, func(opt string, val shellArg) {
			if opt == "-c" || opt == "--command" || opt == "--session-command" {
				command = &val
			}
		})
		switch {
		case s.failed():
			return
		case len(rest) == 0:
			continue
		case rest[0].static && rest[0].val == "-" && !end:
		case user || end && len(rest) > 1:
			s.fail("su hands the words after the user name to the shell")
			return
		default:
			user = true
		}
		rest = rest[1:]
	}
	if command != nil {
		s.codeArg(*command, ctx, "the su -c command")
		return
	}
	s.stdinCode("su", ctx)
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
		s.codeArg(*command, ctx, "the flock -c command")
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
		s.joined("the command watch runs", rest, ctx)
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
	"no-run-if-empty", "sshlogin=", "tmpdir=", "workdir=", "shuf", "nice=", "silent", "help",
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
	s.code(sb.String(), ctx, "the command parallel runs")
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
			s.nest(cmd, cctx)
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

func (s *shellScan) trap(args []shellArg, ctx shellCtx) {
	if len(args) > 0 && args[0].static && strings.HasPrefix(args[0].val, "-") && args[0].val != "-" {
		if args[0].val != "--" {
			return // -l, -p: listings
		}
		args = args[1:]
	}
	if len(args) < 2 || args[0].static && args[0].val == "-" {
		return // a reset
	}
	s.codeArg(args[0], inner(ctx), "the trap handler")
}

// alias parses each value with the arguments that follow the alias where it is used.
func (s *shellScan) alias(args []shellArg, ctx shellCtx) {
	for _, a := range args {
		if !a.static {
			s.fail("an alias definition is computed (%s)", a.text())
			return
		}
		if name, value, ok := strings.Cut(a.val, "="); ok && !strings.HasPrefix(a.val, "-") {
			s.code(value+` "$@"`, inner(ctx), "the alias "+name)
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
