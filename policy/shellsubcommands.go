package policy

import (
	"slices"
	"strings"
)

// multiSpec is what ShellKeys knows of a multi-command program: the global options before its
// subcommand, and those that make it run code the line shows only as configuration.
type multiSpec struct {
	opts optSpec
	// actions are the global options that make the program run or read something else than the
	// subcommand alone says (git -c, --exec-path, --git-dir, -C, --paginate): option → the
	// action key's subcommand part (git -c → "-c"), so a safe "git status" never covers them.
	actions map[string]string
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
		actions: map[string]string{"-c": "-c", "--config-env": "-c", "--exec-path": "--exec-path",
			"--git-dir": "--git-dir", "--work-tree": "--work-tree", "-C": "-C", "-p": "--paginate",
			"--paginate": "--paginate"}},
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
func (s *shellScan) multi(prog string, spec *multiSpec, args []shellArg, ctx shellCtx) {
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
		s.multiKey(prog, "")
	case !rest[0].static:
		s.fail("the %s subcommand is computed (%s)", prog, rest[0].text())
	case !validName(rest[0].val):
		s.fail("%q cannot be a %s subcommand", rest[0].val, prog)
	default:
		s.multiKey(prog, rest[0].val)
		if prog == "git" {
			s.gitSubcommand(rest[0].val, rest[1:], ctx)
		}
	}
}

// multiKey gives the key of a multi-command program's subcommand, opaque when the program or the
// subcommand runs code the line does not show (git always; npm run, go test, docker run...).
func (s *shellScan) multiKey(prog, sub string) {
	why := codeRunner(prog)
	if why == "" && sub != "" {
		why = runsPackageCode(prog, sub)
	}
	key := ProgramKey(prog, sub)
	if why == "" {
		s.add(key)
		return
	}
	s.addOpaque(key, why)
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
				s.addOpaque(ProgramKey("make", a.val), whyBuild)
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
		s.addOpaque(ProgramKey("make", ""), whyBuild)
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
