package policy

import (
	"slices"
	"strings"
)

// ExecOption is one way a program the scan models runs a command or a file that its own key
// does not name: an option, an operand or a form, and what the scan does with it. The list is
// what a reviewer checks the models against; every entry's Example runs rm that way, and a test
// holds the scan to Handling for it (TestExecOptionsAreHandled), so the list cannot claim more
// than the scan does.
type ExecOption struct {
	// Program and Option name the way ("tar", "--to-command"; "find", "-exec").
	Program, Option string
	// Handling is what the scan does: HandledParsed (what runs is scanned and keyed),
	// HandledRefused (the line is unanalysable) or HandledOpaque (the program's key is opaque).
	Handling string
	// Example is a line that runs rm -f victim that way.
	Example string
}

// How the scan handles an ExecOption.
const (
	HandledParsed  = "parsed"
	HandledRefused = "refused"
	HandledOpaque  = "opaque"
)

// ExecOptions lists, sorted by program and option, the ways the modelled programs run
// commands or files. Programs that run code in every run (interpreters, build tools:
// [CodeRunners]) and the option variables of [LookupVariables] are listed there instead.
func ExecOptions() []ExecOption {
	var list []ExecOption
	add := func(prog, opt, handling, example string) {
		list = append(list, ExecOption{Program: prog, Option: opt, Handling: handling, Example: example})
	}
	for _, o := range tarExec {
		v := "rm -f victim"
		if o.prefix != "" {
			v = o.prefix + v
		}
		add("tar", o.name, HandledParsed, "tar -cf a.tar f "+o.name+"='"+v+"'")
	}
	add("tar", "-I", HandledParsed, "tar -I 'rm -f victim' -cf a.tar f")
	add("tar", "-F", HandledParsed, "tar -cf a.tar -F 'rm -f victim' f")
	add("tar", "-f HOST:FILE", HandledRefused, "tar -cf victim:a.tar f")
	for _, p := range []struct {
		prog  string
		opts  []execOption
		short map[byte]string
	}{
		{"split", splitExec, nil}, {"sort", sortExec, nil}, {"zip", zipExec, nil},
		{"man", manExec, map[byte]string{'P': "--pager", 'H': "--html"}},
		{"rsync", rsyncExec, map[byte]string{'e': "--rsh"}}, {"sdiff", diffExec, nil}, {"diff3", diffExec, nil},
	} {
		for _, o := range p.opts {
			add(p.prog, o.name, HandledParsed, p.prog+" "+o.name+"='rm -f victim' a b")
		}
		for letter, long := range p.short {
			if o, _ := longExec(long, p.opts); o.optional { // the value can only be attached
				add(p.prog, "-"+string(letter), HandledParsed, p.prog+" -"+string(letter)+"'rm -f victim' a b")
				continue
			}
			add(p.prog, "-"+string(letter), HandledParsed, p.prog+" -"+string(letter)+" 'rm -f victim' a b")
		}
	}
	add("zip", "-TT", HandledParsed, "zip -T -TT 'rm -f victim' out.zip f")
	add("rsync", "HOST:PATH", HandledOpaque, "rsync f victim:/tmp/")
	add("cpio", "--rsh-command", HandledParsed, "cpio -o --rsh-command='rm -f victim'")
	add("cpio", "-F HOST:FILE", HandledRefused, "cpio -o -F victim:a")
	for sub, opts := range gitExec {
		for _, o := range opts {
			add("git", sub+" "+o.name, HandledParsed, "git "+sub+" "+o.name+"='rm -f victim'")
		}
	}
	add("git", "bisect run", HandledParsed, "git bisect run rm -f victim")
	add("git", "submodule foreach", HandledParsed, "git submodule foreach rm -f victim")
	add("strace", "-o |CMD", HandledParsed, "strace -o '|rm -f victim' true")
	add("strace", "COMMAND", HandledParsed, "strace -f rm -f victim")
	add("valgrind", "--db-command", HandledRefused, "valgrind --db-command='rm -f victim' true")
	add("valgrind", "COMMAND", HandledParsed, "valgrind --tool=none rm -f victim")
	add("perf", "COMMAND", HandledParsed, "perf stat -- rm -f victim")
	add("perf", "--exec-path", HandledRefused, "perf --exec-path=/tmp stat -- true")
	add("perf", "--objdump", HandledRefused, "perf annotate --objdump=./rm")
	add("perf", "script -s", HandledRefused, "perf script -s victim.py")
	add("ip", "netns exec", HandledParsed, "ip netns exec n rm -f victim")
	add("ip", "-batch", HandledRefused, "ip -batch victim")
	add("find", "-exec", HandledParsed, "find . -exec rm -f victim \\;")
	add("find", "-execdir", HandledParsed, "find . -execdir rm -f victim \\;")
	add("find", "-ok", HandledParsed, "find . -ok rm -f victim \\;")
	add("find", "-okdir", HandledParsed, "find . -okdir rm -f victim \\;")
	add("xargs", "COMMAND", HandledParsed, "echo victim | xargs rm -f")
	add("parallel", "COMMAND", HandledParsed, "parallel rm -f ::: victim")
	add("watch", "COMMAND", HandledParsed, "watch -n 1 rm -f victim")
	add("env", "COMMAND", HandledParsed, "env FOO=1 rm -f victim")
	add("env", "-S", HandledParsed, "env -S 'rm -f victim'")
	add("su", "-c", HandledParsed, "su -c 'rm -f victim' root")
	add("runuser", "-c", HandledParsed, "runuser -c 'rm -f victim' root")
	add("runuser", "-u", HandledParsed, "runuser -u root rm -f victim")
	add("sudo", "COMMAND", HandledParsed, "sudo rm -f victim")
	add("sudo", "-s", HandledParsed, "sudo -s <<< 'rm -f victim'")
	add("flock", "-c", HandledParsed, "flock lock -c 'rm -f victim'")
	add("script", "-c", HandledParsed, "script -q -c 'rm -f victim' /dev/null")
	add("sg", "COMMAND", HandledParsed, "sg staff 'rm -f victim'")
	add("capsh", "--", HandledParsed, "capsh -- -c 'rm -f victim'")
	add("busybox", "APPLET", HandledParsed, "busybox rm -f victim")
	add("mapfile", "-C", HandledParsed, "mapfile -C 'rm -f victim' -c 1 < f")
	add("compgen", "-C", HandledParsed, "compgen -C 'rm -f victim' x")
	add("complete", "-C", HandledParsed, "complete -C 'rm -f victim' x")
	add("sed", "e, s///e (without --sandbox first)", HandledOpaque, "sed 's/.*/rm -f victim/e' f")
	add("awk", "system(), | (without --sandbox first)", HandledOpaque, "awk 'BEGIN{system(\"rm -f victim\")}' --sandbox")
	add("bash", "-c", HandledParsed, "bash -c 'rm -f victim'")
	add("bash", "SCRIPT", HandledOpaque, "bash victim.sh")
	add("eval", "STRING", HandledRefused, "eval 'rm -f victim'")
	add("source", "FILE", HandledRefused, "source victim.sh")
	add("trap", "HANDLER", HandledRefused, "trap 'rm -f victim' EXIT")
	add("hash", "-p", HandledRefused, "hash -p /bin/rm ls; ls victim")
	add("alias", "NAME=VALUE", HandledRefused, "alias ls='rm -f'")
	add("enable", "-f", HandledRefused, "enable -f ./victim.so rm")
	for _, prog := range unmodelledRunners {
		add(prog, "COMMAND", HandledRefused, prog+" rm -f victim")
	}
	slices.SortFunc(list, func(a, b ExecOption) int {
		if c := strings.Compare(a.Program, b.Program); c != 0 {
			return c
		}
		return strings.Compare(a.Option, b.Option)
	})
	return list
}
