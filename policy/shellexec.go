package policy

import (
	"slices"
	"strings"
)

// Programs that take a command in an option and run it (tar -I, split --filter, git rebase
// -x): the command is scanned as what runs it reads it, so a deny of the program it runs
// catches it. A computed argument where such an option could stand makes the line unknown.

// execOption is one option whose value a program runs: as shell code (run by /bin/sh or
// $SHELL), or as a program and its arguments split on blanks (rsync -e).
type execOption struct {
	name  string // "--to-command"; a short option is "-I"
	shell bool   // the value is shell code; otherwise a command line split into words
	// prefix is stripped from the value first; a value without it runs nothing
	// (--checkpoint-action=exec=CMD).
	prefix string
	// optional: the value can only be attached (man --html[=BROWSER], -H[BROWSER]); alone, the
	// option runs a default program, and the next word is not its value.
	optional bool
}

// longExec finds the exec option an abbreviated long option names ("--use-c" for
// --use-compress-program), as getopt accepts any unambiguous prefix; ok is false when name
// abbreviates none of opts.
func longExec(name string, opts []execOption) (execOption, bool) {
	if len(name) < 3 { // "--" and one letter abbreviate too many options to be one of these
		return execOption{}, false
	}
	for _, o := range opts {
		if strings.HasPrefix(o.name, name) {
			return o, true
		}
	}
	return execOption{}, false
}

// runValue scans the value of an exec option.
func (s *shellScan) runValue(prog string, o execOption, val shellArg, ctx shellCtx) {
	origin := "the " + prog + " " + o.name + " command"
	if !val.static {
		s.fail("%s is computed (%s)", origin, val.text())
		return
	}
	v, ok := strings.CutPrefix(val.val, o.prefix)
	if !ok {
		return
	}
	if o.shell {
		s.shellCode(staticArg(v), ctx, origin)
		return
	}
	s.splitCommand(origin, v, ctx)
}

// splitCommand runs v split into words the way a program without a shell splits it (rsync -e,
// sort --compress-program): a word needing a shell's quoting or expansion makes the line
// unknown.
func (s *shellScan) splitCommand(origin, v string, ctx shellCtx) {
	if strings.ContainsAny(v, "\"'\\$`*?[{~;&|<>()") {
		s.fail("%s holds characters whose meaning depends on how it is split (%s)", origin, v)
		return
	}
	var argv []shellArg
	for _, w := range strings.Fields(v) {
		argv = append(argv, staticArg(w))
	}
	s.nest(argv, ctx)
}

// tarExec are GNU tar's options that run a command: through /bin/sh -c, with -d appended for
// decompression (-I), for each extracted file (--to-command), at checkpoints
// (--checkpoint-action=exec=), at the end of each volume (-F).
var tarExec = []execOption{
	{name: "--use-compress-program", shell: true},
	{name: "--to-command", shell: true},
	{name: "--checkpoint-action", shell: true, prefix: "exec="},
	{name: "--info-script", shell: true},
	{name: "--new-volume-script", shell: true},
	{name: "--rsh-command", shell: true},
}

// tarShortValues are tar's short options whose value is the next word (or the rest of the
// cluster): -I and -F run their value.
const tarShortValues = "bCfFgHIKLNTVX"

// tar scans GNU tar's arguments: its traditional first word (cvf, without a dash, whose
// value letters take the following words in order), short clusters and long options, which
// may come anywhere. A remote archive (-f host:file) runs rsh on the remote host.
func (s *shellScan) tar(args []shellArg, ctx shellCtx) {
	var pending []byte // value letters of the traditional cluster waiting for their words
	forceLocal := slices.ContainsFunc(args, func(a shellArg) bool { return a.static && a.val == "--force-local" })
	value := func(letter byte, val shellArg) {
		switch letter {
		case 'I':
			s.runValue("tar", execOption{name: "-I", shell: true}, val, ctx)
		case 'F':
			s.runValue("tar", execOption{name: "-F", shell: true}, val, ctx)
		case 'f':
			s.tarArchive(val, forceLocal)
		}
	}
	for i := 0; i < len(args) && !s.failed(); i++ {
		a := args[i]
		if len(pending) > 0 {
			value(pending[0], a)
			pending = pending[1:]
			continue
		}
		v := a.val
		switch {
		case !a.static:
			if a.mayBeOption() {
				s.fail("an argument of tar is computed and could be an option that runs a command (%s)", a.text())
			}
		case v == "--":
			return
		case i == 0 && v != "" && v[0] != '-':
			for j := 0; j < len(v); j++ {
				if strings.IndexByte(tarShortValues, v[j]) >= 0 {
					pending = append(pending, v[j])
				}
			}
		case strings.HasPrefix(v, "--"):
			name, val, eq := strings.Cut(v, "=")
			if name == "--file" || (len(name) > 3 && strings.HasPrefix("--file", name)) {
				if eq {
					s.tarArchive(staticArg(val), forceLocal)
				} else if i+1 < len(args) {
					i++
					s.tarArchive(args[i], forceLocal)
				}
				continue
			}
			o, ok := longExec(name, tarExec)
			switch {
			case !ok:
			case eq:
				s.runValue("tar", o, staticArg(val), ctx)
			case i+1 < len(args):
				i++
				s.runValue("tar", o, args[i], ctx)
			}
		case len(v) > 1 && v[0] == '-':
			for j := 1; j < len(v); j++ {
				if strings.IndexByte(tarShortValues, v[j]) < 0 {
					continue
				}
				if j+1 < len(v) {
					value(v[j], staticArg(v[j+1:]))
				} else if i+1 < len(args) {
					i++
					value(v[j], args[i])
				}
				break
			}
		}
	}
}

// tarArchive checks tar's archive name: a name with a colon before any slash names a remote
// archive, which tar reaches by running rsh (unless --force-local).
func (s *shellScan) tarArchive(val shellArg, forceLocal bool) {
	switch host, _, remote := strings.Cut(val.val, ":"); {
	case forceLocal:
	case !val.static && !strings.Contains(val.val, "/"):
		s.fail("the tar archive name is computed and could name a remote archive, which tar reaches through rsh (%s)", val.text())
	case remote && !strings.Contains(host, "/"):
		s.fail("tar reaches the remote archive %s by running rsh there", val.val)
	}
}

// splitExec: split --filter runs its value with $SHELL -c for each piece.
var splitExec = []execOption{{name: "--filter", shell: true}}

// sortExec: sort --compress-program runs a program (with -d to decompress), without a shell.
var sortExec = []execOption{{name: "--compress-program"}}

// manExec: man runs its pager and HTML browser through a shell.
var manExec = []execOption{{name: "--pager", shell: true}, {name: "--html", shell: true, optional: true}}

// zipExec: zip -T runs its -TT test command with system().
var zipExec = []execOption{{name: "--unzip-command", shell: true}}

// rsyncExec: rsync -e runs its remote shell, split into words without a shell.
var rsyncExec = []execOption{{name: "--rsh"}}

// execOptions scans a program that runs the value of some of its options (long options by
// unambiguous prefix; shorts maps a short option's letter to its long option). A computed
// argument that could be one of them (--filter=CMD fits in one word) makes the line unknown.
func (s *shellScan) execOptions(prog string, args []shellArg, long []execOption, shorts map[byte]string, ctx shellCtx) {
	for i := 0; i < len(args) && !s.failed(); i++ {
		a := args[i]
		v := a.val
		switch {
		case !a.static:
			if a.mayBeOption() {
				s.fail("an argument of %s is computed and could be an option that runs a command (%s)", prog, a.text())
			}
		case v == "--":
			return
		case strings.HasPrefix(v, "--"):
			name, val, eq := strings.Cut(v, "=")
			o, ok := longExec(name, long)
			switch {
			case !ok:
			case eq:
				s.runValue(prog, o, staticArg(val), ctx)
			case o.optional:
			case i+1 < len(args):
				i++
				s.runValue(prog, o, args[i], ctx)
			}
		case len(v) > 1 && v[0] == '-':
			// A cluster of short options (-ix): the first exec letter takes the rest of the
			// cluster, or the next word, as its value.
			j := strings.IndexFunc(v[1:], func(r rune) bool { return r < 0x80 && shorts[byte(r)] != "" })
			if j < 0 {
				continue
			}
			letter, attached := v[1+j], v[2+j:]
			o, _ := longExec(shorts[letter], long)
			switch {
			case attached != "":
				s.runValue(prog, o, staticArg(attached), ctx)
			case o.optional:
			case i+1 < len(args):
				i++
				s.runValue(prog, o, args[i], ctx)
			}
		default:
			if prog == "rsync" && remotePath(v) {
				s.addOpaque(ProgramKey("ssh", ""), whyRemote) // rsync reaches v through ssh
			}
		}
	}
}

// remotePath reports whether an rsync operand names another host (host:path, host::module,
// rsync://).
func remotePath(v string) bool {
	if strings.HasPrefix(v, "rsync://") {
		return true
	}
	host, _, ok := strings.Cut(v, ":")
	return ok && host != "" && !strings.Contains(host, "/")
}

// gitExec are the options of git subcommands that run a command: with sh -c (rebase --exec,
// difftool --extcmd, grep --open-files-in-pager, filter-branch's filters, the pack programs a
// local transport runs), or the words that follow (bisect run).
var gitExec = map[string][]execOption{
	"rebase":   {{name: "--exec", shell: true}},
	"difftool": {{name: "--extcmd", shell: true}},
	"grep":     {{name: "--open-files-in-pager", shell: true}},
	"filter-branch": {{name: "--env-filter", shell: true}, {name: "--tree-filter", shell: true},
		{name: "--index-filter", shell: true}, {name: "--parent-filter", shell: true},
		{name: "--msg-filter", shell: true}, {name: "--commit-filter", shell: true},
		{name: "--tag-name-filter", shell: true}},
	"clone":     {{name: "--upload-pack", shell: true}},
	"fetch":     {{name: "--upload-pack", shell: true}},
	"pull":      {{name: "--upload-pack", shell: true}},
	"ls-remote": {{name: "--upload-pack", shell: true}},
	"push":      {{name: "--receive-pack", shell: true}, {name: "--exec", shell: true}},
	"archive":   {{name: "--exec", shell: true}},
}

// gitShortExec maps the short forms of gitExec options, by subcommand.
var gitShortExec = map[string]map[byte]string{
	"rebase":   {'x': "--exec"},
	"difftool": {'x': "--extcmd"},
	"grep":     {'O': "--open-files-in-pager"},
	"clone":    {'u': "--upload-pack"},
}

// gitSubcommand scans a git subcommand's arguments: --output writes, the options above run
// commands, bisect run and submodule foreach run the words after them.
func (s *shellScan) gitSubcommand(sub string, args []shellArg, ctx shellCtx) {
	if gitOutputCommands[sub] {
		s.checkOptions("git "+sub, "git", &gitOutputRule, args)
	}
	if opts := gitExec[sub]; opts != nil {
		s.execOptions("git "+sub, args, opts, gitShortExec[sub], ctx)
	}
	switch {
	case sub == "bisect" && len(args) > 1 && args[0].static && args[0].val == "run":
		s.nest(args[1:], ctx)
	case sub == "submodule":
		for i, a := range args {
			if a.static && a.val == "foreach" {
				rest := args[i+1:]
				for len(rest) > 0 && rest[0].static && (rest[0].val == "--recursive" || rest[0].val == "--quiet" || rest[0].val == "-q") {
					rest = rest[1:]
				}
				s.joined(shDialect, "the git submodule foreach command", rest, ctx)
				break
			}
		}
	}
}
