package policy

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
)

// Keys name what a call touches, so that permissions, grants and safe commands can speak about
// less than a whole tool. A call of any tool but shell has one key, the tool's name. A shell
// line has one key per thing it does:
//
//	shell:<program>        a simple command ("shell:ls")
//	shell:<program> <sub>  a command of a multi-command program ("shell:git push")
//	shell:><path>          an output redirect to path ("shell:>notes.txt"; ">>" too)
//	shell:<NAME>=          an environment assignment ("shell:LD_PRELOAD=")
//
// Permission entries, grants and launch flags may name a key or a tool.

// ShellTool is the name of the shell tool, whose calls have shell keys.
const ShellTool = "shell"

// shellPrefix starts every shell key.
const shellPrefix = "shell:"

// ProgramKey is the key of a simple command; sub is "" unless the program is one whose first
// argument selects a command (git, docker, ...).
func ProgramKey(program, sub string) string {
	if sub == "" {
		return shellPrefix + program
	}
	return shellPrefix + program + " " + sub
}

// RedirectKey is the key of an output redirect to target, which should be in the form
// CleanTarget gives (the scan writes every target so).
func RedirectKey(target string) string { return shellPrefix + ">" + target }

// CleanTarget is the canonical form of a redirect target, in which redirect keys are written
// and compared: the shortest lexical equivalent (path.Clean: "//etc/passwd", "/etc/./passwd"
// and "/usr/../etc/passwd" are all "/etc/passwd", "./notes.txt" is "notes.txt"), with the links
// the kernel makes taken as the kernel takes them: /proc/self/root/etc/passwd (and
// /proc/PID/root, /proc/thread-self/root) is /etc/passwd. It is lexical otherwise: a symlink on
// the way can still lead elsewhere, which only the sandbox bounds. A target ShellKeys resolves
// against the folder a cd of the line went to is keyed relative to the workdir instead; one it
// cannot resolve (through a descriptor, /proc/self/cwd) is returned as path.Clean gives it.
func CleanTarget(target string) string {
	if target == "" {
		return ""
	}
	if abs, rel, why := resolveTarget(target); why == "" {
		if abs != "" {
			return abs
		}
		return rel
	}
	return path.Clean(target)
}

// EnvKey is the key of an environment assignment to name.
func EnvKey(name string) string { return shellPrefix + name + "=" }

// IsShellKey reports whether k is a shell key (rather than a tool name).
func IsShellKey(k string) bool { return strings.HasPrefix(k, shellPrefix) }

// IsRedirectKey reports whether k is an output redirect key. A redirect writes a file: it is
// never safe, and it makes a shell call subject to write_file's permission too.
func IsRedirectKey(k string) bool { return strings.HasPrefix(k, shellPrefix+">") }

// IsEnvKey reports whether k is an environment assignment key.
func IsEnvKey(k string) bool {
	return IsShellKey(k) && !IsRedirectKey(k) && strings.HasSuffix(k, "=") && !strings.Contains(k, " ")
}

// KeyProgram returns the program of a command key ("git" for "shell:git push"), or "" for a
// redirect, an environment assignment or a key that is not a shell key.
func KeyProgram(k string) string {
	if !IsShellKey(k) || IsRedirectKey(k) || IsEnvKey(k) {
		return ""
	}
	rest := k[len(shellPrefix):]
	if i := strings.IndexByte(rest, ' '); i >= 0 {
		return rest[:i]
	}
	return rest
}

// ErrUnknownName reports a permission entry, grant or launch flag whose name is neither a tool
// the host knows nor a well-formed shell key: it could never match a call, so it can only be a
// mistake.
var ErrUnknownName = errors.New("unknown tool or key")

// CheckName reports whether name can carry a permission: a tool in known, or a shell key with
// something after the prefix. The error says what would be valid.
func CheckName(name string, known []string) error {
	switch {
	case IsRedirectKey(name) && CleanTarget(name[len(shellPrefix)+1:]) != name[len(shellPrefix)+1:]:
		return fmt.Errorf("%w %q; redirect keys are compared in canonical form: write %q", ErrUnknownName, name, RedirectKey(CleanTarget(name[len(shellPrefix)+1:])))
	case IsShellKey(name) && len(name) > len(shellPrefix):
		return nil
	case IsShellKey(name):
		return fmt.Errorf("%w %q; a shell key names a program (\"shell:rm\"), a subcommand (\"shell:git push\"), a redirect (\"shell:>out.txt\") or an assignment (\"shell:PATH=\")", ErrUnknownName, name)
	case slices.Contains(known, name):
		return nil
	}
	return fmt.Errorf("%w %q; valid: a tool the host knows (%s) or a shell key such as \"shell:rm\"", ErrUnknownName, name, strings.Join(known, ", "))
}

// TableProblem is one problem of a permission table: the entry's name and what is wrong with it.
type TableProblem struct {
	Name string
	Err  error
}

// ParseTable validates a permission table as blueprints and host configs write it (name ->
// "allow" | "ask" | "deny"): every value must parse, and every name must pass check. It returns
// the valid entries and every problem, in sorted name order so reports do not depend on map
// iteration. An entry with a bad name is reported for its name alone.
func ParseTable(raw map[string]string, check func(name string) error) (map[string]Verdict, []TableProblem) {
	if len(raw) == 0 {
		return nil, nil
	}
	out := make(map[string]Verdict, len(raw))
	var problems []TableProblem
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		v, err := ParseVerdict(raw[name])
		if err != nil {
			problems = append(problems, TableProblem{Name: name, Err: err})
		}
		if nameErr := check(name); nameErr != nil {
			problems = append(problems, TableProblem{Name: name, Err: nameErr})
			continue
		}
		if err == nil {
			out[name] = v
		}
	}
	return out, problems
}
