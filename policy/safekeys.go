package policy

import (
	"errors"
	"fmt"
	"slices"
	"strings"
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
// sed (-i, w), cp, mv, touch, hostname (NAME sets the host name). Left out because they run
// other programs: find (-exec, -delete), xargs, env, make, awk (system), sed (e), watch, time,
// nice, command, and the pagers less, more and man (their ! commands, LESSOPEN, MANPAGER).
// Left out because they run code from configuration an agent can write: every git command (a
// repository's config and attributes name hooks, core.fsmonitor, pagers, diff drivers,
// textconv and clean filters, and even git status or git log -p runs them; git 2.39 has no
// way to turn in-tree attributes off), so a host that trusts its repositories adds the git
// commands it wants to [safe_commands] itself. Every entry is checked to read no executable
// configuration (TestShippedSafeCommandsReadNoCode).
var ShippedSafeCommands = []string{
	"[", "basename", "cat", "cd", "cmp", "date", "df", "diff", "dirname", "du", "echo",
	"egrep", "false", "fgrep", "file", "grep", "head", "id", "ls", "md5sum", "nproc", "printf",
	"pwd", "readlink", "realpath", "rg", "sha1sum", "sha256sum", "stat", "tail", "test", "tree",
	"true", "type", "uname", "wc", "which", "whoami",
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
