package sandbox

import (
	"slices"
	"strings"
)

// ShellPath is the shell every mode runs a command line with. The permission gate judges a line
// by parsing it as bash (policy.ShellKeys), so the executor must be bash too: dash, Debian's
// /bin/sh, reads $'...', [[ ]], (( )) and <<< as other commands than bash does, and a line
// judged as `echo` could run `rm`. No mode falls back to another shell; a machine without bash
// runs no command (Capabilities.Shell, host doctor).
const ShellPath = "/bin/bash"

// shellArgv is the argv that runs line: bash without startup files (a non-interactive -c shell
// reads none, but the flags make it explicit), as "bash" so that it never enters POSIX mode.
func shellArgv(line string) []string {
	return []string{"bash", "--noprofile", "--norc", "-c", line}
}

// ShellArgv is the argv every mode executes ShellPath with to run line, so that a test can run a
// line exactly as the sandbox does (the policy package's dialect test does, under a stub
// environment that records what ran).
func ShellArgv(line string) []string { return shellArgv(line) }

// shellCodeVars are environment variables from which bash, or a shell it starts, runs code or
// changes how it parses or finds what it runs (POSIXLY_CORRECT turns on POSIX mode and its alias
// expansion, EXECIGNORE hides programs from lookup, CDPATH sends cd elsewhere than the line
// names, which the gate follows), and SHELL, which chooses the shell programs such as script,
// flock -c and split --filter hand their commands to (the gate reads those as bash or POSIX sh):
// they are never passed to a command, whatever allow_env_vars says (the host config refuses them
// at load, so this is the second line).
var shellCodeVars = []string{"BASHOPTS", "BASH_COMPAT", "BASH_ENV", "BASH_LOADABLES_PATH", "CDPATH", "ENV",
	"EXECIGNORE", "POSIXLY_CORRECT", "PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS4", "SHELL", "SHELLOPTS"}

// ShellExecutesEnv reports whether bash reads code or options from the variable name: one of
// shellCodeVars, or an exported function (BASH_FUNC_name%%). Such a variable is never passed to
// a command, and config loaders refuse it in allow_env_vars.
func ShellExecutesEnv(name string) bool {
	return slices.Contains(shellCodeVars, name) || strings.HasPrefix(name, "BASH_FUNC_")
}
