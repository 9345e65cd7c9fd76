package policy

import (
	"slices"
	"strings"
)

// shellFlags are the single-letter options of bash and POSIX shells that take no value.
// Missing on purpose: -H (history expansion) and -i (interactive, which turns it on), under
// which !! and !word run lines the scan did not see as commands, and -k, under which NAME=VALUE
// arguments become environment assignments.
const shellFlags = "abefhlmnprtuvxBCDEPT"

var shellLongFlags = []string{"--login", "--noprofile", "--norc", "--posix", "--restricted",
	"--verbose", "--debugger", "--dump-strings", "--dump-po-strings", "--noediting",
	"--pretty-print", "--wordexp"}

func (s *shellScan) posixShell(prog string, args []shellArg, ctx shellCtx) {
	d := shDialect
	if prog == "bash" || prog == "rbash" {
		d = bashDialect
	}
	command, stdin, login, i := false, false, false, 0
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
			login = login || v == "--login"
		case len(v) > 1 && (v[0] == '-' || v[0] == '+'):
			for _, c := range v[1:] {
				switch {
				case c == 'c':
					command = true
				case c == 's':
					stdin = true
				case c == 'l':
					login = true
				case c == 'o' || c == 'O':
					kept := setOptionsKept
					if c == 'O' {
						kept = shoptKept
					}
					if i++; i < len(args) && (!args[i].static || !slices.Contains(kept, args[i].val)) {
						s.fail("%s -%c %s changes how the shell parses or runs its commands (only %s keep the keys known)", prog, c, args[i].text(), strings.Join(kept, ", "))
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
	if login {
		s.addOpaque(ProgramKey(prog, ""), whyLogin)
	}
	operands := args[min(i, len(args)):]
	switch {
	case command:
		if len(operands) > 0 {
			s.codeArgAs(d, operands[0], ctx, "the "+prog+" -c string")
		}
	case stdin || len(operands) == 0:
		s.stdinCodeAs(d, prog, ctx, false)
	default:
		s.scriptAs(d, prog, operands[0], ctx)
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

// codeArg parses a word that bash runs as shell code.
func (s *shellScan) codeArg(a shellArg, ctx shellCtx, origin string) {
	s.codeArgAs(bashDialect, a, ctx, origin)
}

// codeArgAs parses a word that a shell of dialect d runs as code.
func (s *shellScan) codeArgAs(d dialect, a shellArg, ctx shellCtx, origin string) {
	if !a.static {
		s.fail("%s is computed (%s)", origin, a.text())
		return
	}
	s.codeAs(d, a.val, ctx, origin)
}

// shellCode parses a word a program hands to $SHELL (or /bin/sh without one, which is what a
// sandboxed command has): both dialects, the shell's own key shell:sh, and the line must not
// choose the shell (see shellScan.shellVar).
func (s *shellScan) shellCode(a shellArg, ctx shellCtx, origin string) {
	s.shellVar = true
	s.add(ProgramKey("sh", ""))
	s.codeArgAs(shDialect, a, ctx, origin)
}

// joined parses words a program joins with spaces and runs as shell code of dialect d.
func (s *shellScan) joined(d dialect, origin string, args []shellArg, ctx shellCtx) {
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
		if d == shDialect {
			s.add(ProgramKey("sh", "")) // watch, sg and git submodule foreach run sh -c
		}
		s.codeAs(d, sb.String(), ctx, origin)
	}
}

// stdinCodeAs scans what a shell of dialect d reading its commands from standard input would
// run. An interactive shell (chroot's "$SHELL -i", script's) expands history: a '!' in its
// input could run an earlier line, so such input is not analysed. A file on standard input
// (sh < f) runs unseen: the program's key is opaque.
func (s *shellScan) stdinCodeAs(d dialect, prog string, ctx shellCtx, interactive bool) {
	switch ctx.stdin.kind {
	case stdinText:
		if interactive && strings.ContainsRune(ctx.stdin.text, '!') {
			s.fail("the interactive shell %s starts expands history, and its input holds '!'", prog)
			return
		}
		s.codeAs(d, ctx.stdin.text, inner(ctx), "the here-document "+prog+" reads")
	case stdinFile:
		s.addOpaque(ProgramKey(prog, ""), whyShellFile)
	case stdinUnknown:
		s.fail("%s reads commands from standard input, which the line does not show", prog)
	}
}

// scriptAs checks the file a shell of dialect d or source runs: its content is unseen, so the
// program's key is opaque.
func (s *shellScan) scriptAs(d dialect, prog string, a shellArg, ctx shellCtx) {
	switch v := a.val; {
	case !a.static:
		s.fail("the script %s runs is computed (%s)", prog, a.text())
	case v == "/dev/stdin" || v == "/dev/fd/0" || v == "/proc/self/fd/0":
		s.stdinCodeAs(d, prog, ctx, false)
	case strings.HasPrefix(v, "/dev/fd/") || strings.HasPrefix(v, "/proc/") || isNetworkPath(v):
		s.fail("%s runs %s, whose content the line does not show", prog, v)
	default:
		s.addOpaque(ProgramKey(prog, ""), whyShellFile)
	}
}

func (s *shellScan) trap(args []shellArg) {
	if len(args) > 0 && args[0].static && strings.HasPrefix(args[0].val, "-") && args[0].val != "-" {
		if args[0].val != "--" {
			return // -l, -p: listings
		}
		args = args[1:]
	}
	switch {
	case len(args) < 2 || args[0].static && (args[0].val == "-" || args[0].val == ""):
		// a reset, an ignored signal, or a listing of one signal's handler
	default:
		s.fail("trap sets a handler (%s) that runs as code when the signal comes, and a line that sets one is never analysed", args[0].text())
	}
}

// alias refuses a definition: the alias would make a later command word run its value, from the
// next line on, and an alias bash expands is text no scan can follow into the words after it.
// Listing aliases (alias, alias -p, alias NAME) is fine.
func (s *shellScan) alias(args []shellArg, _ shellCtx) {
	for _, a := range args {
		if !a.static || strings.Contains(a.val, "=") {
			s.fail("alias defines a command word (%s), and a line that binds one is never analysed", a.text())
			return
		}
	}
}
