package policy

import "slices"

// Lines that change how bash finds or reads the commands that follow are unanalysable: the keys
// of what follows would name programs other than the ones that run. A key for such a change
// would be no help either, since a rule allowing it would allow whatever it makes run. So the
// scan refuses, with the reason, every line that (Leviath's floor, and the second outside
// review's classes):
//
//   - sets a variable bash reads to look a command up or to choose how it parses (lookupVars),
//     or an option variable of a program the scan models (optionVars), in any form: NAME=V,
//     NAME+=V, a[i]=V, declare, export, read, env NAME=V, ${NAME:=V}, unset;
//   - declares a nameref (declare -n, local -n, typeset -n): setting one name sets another;
//   - binds a command name (hash -p NAME, alias NAME=VALUE, enable NAME, enable -f) or turns on
//     a shell option outside shellFlagsKept and shoptKept (set -o posix, shopt -s
//     expand_aliases, shopt -s extglob, ...);
//   - runs a string or a file as code where the scan would have to take the shell's word for it
//     (eval, source and ., trap with a handler).
//
// Expansions in command position were unanalysable before (see [ShellKeys]).

// lookupVars are the variables bash reads to decide what a command word runs, which folder cd
// goes to, or how it parses the line, with why.
var lookupVars = map[string]string{
	"PATH":                "chooses which program a command name runs",
	"BASH_CMDS":           "is bash's table of command paths (what hash -p sets): an entry makes a name run another program",
	"BASH_ALIASES":        "is bash's alias table: an entry makes a command word run other code",
	"EXECIGNORE":          "makes bash skip programs when it looks a command name up, so that another one runs",
	"CDPATH":              "makes cd go to another folder than the line names",
	"POSIXLY_CORRECT":     "puts bash in POSIX mode, where aliases expand, and changes where programs stop reading options (sed --sandbox)",
	"BASH_COMPAT":         "changes how bash parses and runs the line",
	"BASH_LOADABLES_PATH": "chooses the shared library enable -f loads a builtin from",
	"BASHOPTS":            "sets bash's options, such as alias expansion, for the shells the line starts",
	"SHELLOPTS":           "sets bash's options, such as POSIX mode, for the shells the line starts",
}

// optionVars are the variables a program the scan models reads its options from, where one
// option runs a command (zip -TT, man -P, tar --to-command, rsync -e, parallel's commands): the
// scan reads options on the line, not in a variable's value.
var optionVars = map[string]string{
	"ZIPOPT":             "holds zip's options, and zip -TT runs a command",
	"ZIP":                "holds zip's options, and zip -TT runs a command",
	"UNZIP":              "holds unzip's options",
	"UNZIPOPT":           "holds unzip's options",
	"MANOPT":             "holds man's options, and man -P and -H run commands",
	"MANROFFOPT":         "holds the options man gives groff, whose -U lets a page run commands",
	"TAR_OPTIONS":        "holds tar's options, and tar --to-command and -I run commands",
	"GREP_OPTIONS":       "holds grep's options",
	"RSYNC_RSH":          "is the command rsync runs to reach another host",
	"RSYNC_CONNECT_PROG": "is a command rsync runs to reach a daemon",
	"PARALLEL":           "holds GNU parallel's options, which can name the commands it runs",
	"PARALLEL_SHELL":     "is the shell GNU parallel runs its commands with",
	"VALGRIND_OPTS":      "holds valgrind's options",
	"PERF_EXEC_PATH":     "is where perf finds its helper programs",
	"PERF_CONFIG":        "names perf's configuration file, which names programs perf runs",
	"SUDO_EDITOR":        "is the editor sudoedit runs",
}

// bindingVar says why setting name makes the line unanalysable, "" when it does not.
func bindingVar(name string) string {
	if why, ok := lookupVars[name]; ok {
		return why
	}
	return optionVars[name]
}

// LookupVariables lists, sorted, the variables a line may not set if its keys are to be known:
// those bash reads to find commands or parse lines, and the option variables of modelled
// programs. The list is informational (docs are checked against it).
func LookupVariables() []string {
	var names []string
	for name := range lookupVars {
		names = append(names, name)
	}
	for name := range optionVars {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// shellFlagsKept are the set flags a line may turn on or off with its keys still known: they
// stop on errors, trace, or refuse globs and clobbering, none of which changes what runs.
const shellFlagsKept = "eufxCvn"

// setOptionsKept are the set -o names of shellFlagsKept, and pipefail.
var setOptionsKept = []string{"errexit", "nounset", "noglob", "xtrace", "noclobber", "verbose", "noexec", "pipefail"}

// shoptKept are the shopt options a line may set or unset with its keys still known: they change
// what globs match and how patterns compare, never how a line parses or what a name runs.
var shoptKept = []string{"dotglob", "failglob", "globasciiranges", "globstar", "inherit_errexit", "nocaseglob", "nocasematch", "nullglob"}
