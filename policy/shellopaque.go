package policy

import (
	"slices"
	"strings"
)

// Programs that run code the line does not show give opaque keys (see [Opacity]): the code
// they run comes from a file, a string in a language this check does not read, the
// repository's configuration or the network. Their keys stand for the call, but a deny of any
// shell key also denies them unless a permission names them; no safe key covers them.

// Why texts of opaque keys, by kind of program.
const (
	whyInterpreter = "runs code in its own language, from its arguments or a file, which this check does not read"
	whyShellFile   = "runs a script file, whose content the line does not show"
	whyOtherShell  = "is a shell whose syntax this check does not read"
	whyBuild       = "runs commands from its project's files (recipes, scripts, hooks, build code)"
	whyGit         = "runs hooks, aliases, filters, diff drivers and pagers from the repository's configuration, which an agent can write"
	whyRemote      = "runs commands on another host, or programs named in its options or addresses"
	whyInteractive = "runs commands typed into it (editors, debuggers, terminal multiplexers, schedulers), which the line does not show"
	whyPackage     = "runs package maintainer scripts"
	whyPath        = "is a program at a path outside the system folders, which an agent may have written"
	whySed         = "runs shell commands with its e command and s///e, and writes files with w (GNU sed --sandbox refuses both)"
	whyLogin       = "starts a login shell, which runs the profile scripts (/etc/profile, ~/.profile) the line does not show"
	whyCodeVar     = "names code or a path to code that programs run later, which the line does not show"
	whyLoadsCode   = "loads code from a shared library, which the line does not show"
)

// codeVars are variables whose value some program runs or loads later: assigning one gives an
// opaque assignment key. (Variables that choose what a program name runs, PATH among them, make
// the line unanalysable instead: lookupVars.)
var codeVars = []string{"BASH_ENV", "ENV", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT",
	"PAGER", "MANPAGER", "GIT_PAGER", "EDITOR", "VISUAL", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
	"GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "GIT_EXEC_PATH", "GIT_DIR",
	"GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
	"SSH_ASKPASS", "SUDO_ASKPASS", "LESSOPEN", "LESSCLOSE", "PERL5OPT", "PERL5LIB", "PERLLIB",
	"PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "NODE_OPTIONS", "NODE_PATH", "RUBYOPT", "RUBYLIB",
	"BROWSER", "PROMPT_COMMAND", "PS0", "PS1", "PS4", "SHELL",
	"RIPGREP_CONFIG_PATH", "MAKEFLAGS", "MFLAGS", "GNUMAKEFLAGS", "GCONV_PATH", "HOSTALIASES",
	"XDG_CONFIG_HOME", "HOME", "ZDOTDIR", "INPUTRC", "TERMINFO", "GDBHISTFILE", "VIMINIT", "EXINIT",
	"MYVIMRC", "EMACSLOADPATH", "LUA_INIT", "LUA_PATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
	"CLASSPATH", "GOFLAGS", "RUSTC_WRAPPER", "CC", "CXX", "NPM_CONFIG_PREFIX"}

// envKey gives the assignment key of name: opaque for a code variable. A variable bash reads to
// find commands, or a modelled program's option variable, makes the line unanalysable instead
// (see bindingVar).
func (s *shellScan) envKey(name string) {
	if why := bindingVar(name); why != "" {
		s.fail("the line sets %s, which %s", name, why)
		return
	}
	if slices.Contains(codeVars, name) {
		s.addOpaque(EnvKey(name), whyCodeVar)
		return
	}
	s.add(EnvKey(name))
}

// codeRunners are the programs whose every run is opaque, with why.
var codeRunners = map[string]string{}

func init() {
	for why, names := range map[string][]string{
		whyInterpreter: {"awk", "gawk", "mawk", "nawk", "node", "nodejs", "deno", "bun", "irb", "expect",
			"Rscript", "R", "julia", "pwsh", "jshell", "groovy", "scala", "racket", "sbcl", "clisp",
			"ocaml", "erl", "escript", "elixir", "iex", "dc", "m4", "sqlite3", "psql", "mysql",
			"gnuplot", "octave", "java", "jrunscript", "swift", "kotlin", "kotlinc", "clojure", "clj",
			"bb", "raku", "perl6", "ipython", "mongo", "mongosh", "ecl", "gforth", "csi"},
		whyOtherShell: {"zsh", "ksh", "ksh93", "mksh", "fish", "csh", "tcsh", "yash", "osh", "ysh",
			"oil", "xonsh", "elvish", "nu", "ion"},
		whyBuild: {"make", "gmake", "cmake", "ninja", "meson", "scons", "bazel", "bazelisk", "gradle",
			"gradlew", "mvn", "mvnw", "ant", "sbt", "rake", "bundle", "pytest", "py.test", "tox", "nox",
			"npx", "pnpx", "bunx", "uvx", "pipx", "just", "task", "dotnet", "poetry", "pipenv", "uv",
			"pdm", "hatch", "conda", "mamba", "micromamba", "corepack", "volta", "asdf", "mise",
			"direnv", "nix", "nix-shell", "guix", "ansible", "ansible-playbook", "puppet", "salt-call",
			"chef-client", "tcc"},
		whyGit: {"git"},
		whyRemote: {"ssh", "scp", "sftp", "rsh", "rlogin", "mosh", "autossh", "sshpass", "socat", "nc",
			"ncat", "netcat", "ftp", "lftp", "ncftp", "telnet", "nerdctl", "ctr", "crictl", "lxc",
			"incus", "vagrant", "oc", "minikube", "snap", "flatpak"},
		whyInteractive: {"gdb", "lldb", "vim", "vi", "nvim", "ex", "view", "vimdiff", "rvim", "emacs",
			"emacsclient", "tmux", "screen", "byobu", "at", "batch", "crontab", "xdg-open", "mail",
			"mailx", "mutt", "neomutt", "less", "more", "most", "ed", "red", "nano", "pico", "joe",
			"mg", "micro", "vipe", "editor", "pager", "sensible-editor", "sensible-pager",
			"sensible-browser", "x-www-browser", "www-browser"},
		whyPackage: {"dpkg", "rpm"},
		whySed:     {"sed"},
	} {
		for _, name := range names {
			codeRunners[name] = why
		}
	}
}

// versionedInterpreters are interpreters installed under versioned names (python3.11, perl5.36).
var versionedInterpreters = []string{"python", "pypy", "perl", "php", "lua", "luajit", "tclsh", "wish", "guile", "ruby"}

// codeRunner says why every run of prog is opaque, "" when it is not a code runner.
func codeRunner(prog string) string {
	if why, ok := codeRunners[prog]; ok {
		return why
	}
	for _, base := range versionedInterpreters {
		if rest, ok := strings.CutPrefix(prog, base); ok && strings.Trim(rest, "0123456789.") == "" {
			return whyInterpreter
		}
	}
	return ""
}

// runnerSubcommands are the subcommands of multi-command programs that run project or
// package code (scripts, build code, containers, units); "*" marks a program all of whose
// subcommands do except those in harmlessSubcommands.
var runnerSubcommands = map[string][]string{
	"npm":       {"*"},
	"pnpm":      {"*"},
	"yarn":      {"*"},
	"cargo":     {"*"},
	"terraform": {"*"},
	"go":        {"build", "generate", "get", "install", "run", "test", "tool", "vet"},
	"pip":       {"download", "install", "wheel"},
	"pip3":      {"download", "install", "wheel"},
	"docker":    {"build", "buildx", "compose", "container", "create", "exec", "run", "start"},
	"podman":    {"build", "compose", "container", "create", "exec", "run", "start"},
	"kubectl":   {"attach", "debug", "exec", "run"},
	"helm":      {"install", "plugin", "template", "upgrade"},
	"brew":      {"bundle", "install", "irb", "postinstall", "reinstall", "ruby", "sh", "test", "upgrade"},
	"apt":       {"build-dep", "dist-upgrade", "full-upgrade", "install", "purge", "reinstall", "remove", "upgrade", "autoremove"},
	"apt-get":   {"build-dep", "dist-upgrade", "install", "purge", "reinstall", "remove", "upgrade", "autoremove"},
	"systemctl": {"isolate", "kill", "reload", "reload-or-restart", "restart", "start", "stop", "try-restart"},
	"gh":        {"alias", "codespace", "cs", "ext", "extension"},
}

// harmlessSubcommands are the subcommands of a "*" program that only report.
var harmlessSubcommands = map[string][]string{
	"npm":       {"bugs", "docs", "fund", "help", "home", "info", "la", "list", "ll", "ls", "outdated", "ping", "prefix", "repo", "root", "search", "show", "v", "view", "whoami"},
	"pnpm":      {"help", "list", "ls", "outdated", "root", "why"},
	"yarn":      {"help", "info", "list", "outdated", "why"},
	"cargo":     {"help", "locate-project", "metadata", "pkgid", "read-manifest", "search", "tree", "verify-project", "version"},
	"terraform": {"fmt", "help", "version"},
}

// runsPackageCode says why sub of prog is opaque, "" when it is not.
func runsPackageCode(prog, sub string) string {
	subs, ok := runnerSubcommands[prog]
	switch {
	case !ok:
		return ""
	case subs[0] == "*" && !slices.Contains(harmlessSubcommands[prog], sub), slices.Contains(subs, sub):
		return whyBuild
	}
	return ""
}

// CodeRunners lists, sorted, the programs every run of which gives an opaque key, and the
// multi-command programs some of whose subcommands do ("npm *", "go run"). Shells given a
// script file, source, make targets and programs from paths outside the system folders are
// opaque too. The list is informational (docs are checked against it).
func CodeRunners() []string {
	var list []string
	for name := range codeRunners {
		list = append(list, name)
	}
	for _, base := range versionedInterpreters {
		list = append(list, base+"*")
	}
	for prog, subs := range runnerSubcommands {
		for _, sub := range subs {
			list = append(list, prog+" "+sub)
		}
	}
	slices.Sort(list)
	return list
}

// programKey gives the program key of prog: opaque when prog is a code runner (sed and awk
// given --sandbox first, where GNU sed and gawk refuse to run commands or touch files, are not).
func (s *shellScan) programKey(prog string, args []shellArg) {
	why := codeRunner(prog)
	if (prog == "sed" || prog == "awk" || prog == "gawk") && sandboxed(args) {
		why = ""
	}
	if why == "" {
		s.add(ProgramKey(prog, ""))
		return
	}
	s.addOpaque(ProgramKey(prog, ""), why)
}

// sandboxed reports whether --sandbox is the program's first argument. Further on it may not be
// an option at all: awk takes the words after its program text as the program's arguments, sed
// stops reading options at the first operand when POSIXLY_CORRECT is set, and mawk (Debian's
// awk) has no --sandbox and refuses to run. First, it is an option to every one of them.
func sandboxed(args []shellArg) bool {
	return len(args) > 0 && args[0].static && args[0].val == "--sandbox"
}
