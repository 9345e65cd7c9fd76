package policy

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A relative redirect target is opened in the folder the command runs in, which the line may
// have changed (cd /etc && echo x > passwd writes /etc/passwd). So the scan follows the folder
// the shell is in through the line, as the set of folders it may be in (cd may fail: cd /etc;
// echo x > passwd writes passwd in one of two folders), and keys a relative target once per
// folder, relative to the workdir ("sub/notes.txt", "../up.txt") or absolute ("/etc/passwd"). A
// redirect key thus names the file as the workdir sees it, which is what a person approving it
// reads it as. Where the folder cannot be known (cd "$d", cd with no folder, cd -, a loop that
// changes folder, a wrapper's chroot), a relative target makes the line unanalysable; under
// another root (chroot DIR, unshare --root) an absolute one does too. Folders are followed
// lexically, as bash's cd -L does: a symbolic link inside the workdir can still lead elsewhere,
// which only the sandbox bounds.

// maxCwdDirs bounds the folders followed at once; a line that may be in more is unanalysable.
const maxCwdDirs = 8

// cwdSet is where the shell may be at a point of the line: folders relative to the workdir (""
// is the workdir itself) or absolute, sorted; or unknown, with why.
type cwdSet struct {
	dirs    []string
	unknown string
	// reroot is set under another root (chroot): absolute paths are unknown too.
	reroot bool
}

// workdirCwd is where every line starts: the workdir.
var workdirCwd = cwdSet{dirs: []string{""}}

// unknownCwd is a folder the scan cannot know, with why.
func unknownCwd(why string) cwdSet { return cwdSet{unknown: why} }

// union is where the shell may be when it may have taken either way.
func (c cwdSet) union(o cwdSet) cwdSet {
	switch {
	case c.unknown != "":
		return c
	case o.unknown != "":
		return o
	}
	dirs := append(slices.Clone(c.dirs), o.dirs...)
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	if len(dirs) > maxCwdDirs {
		return unknownCwd("the line may be in more than 8 folders")
	}
	return cwdSet{dirs: dirs, reroot: c.reroot || o.reroot}
}

func (c cwdSet) equal(o cwdSet) bool {
	return c.unknown == o.unknown && c.reroot == o.reroot && slices.Equal(c.dirs, o.dirs)
}

// to is the set after cd target (static, lexical) from each folder of c.
func (c cwdSet) to(target string) cwdSet {
	if c.unknown != "" {
		return c
	}
	out := cwdSet{reroot: c.reroot}
	for _, d := range c.dirs {
		out.dirs = append(out.dirs, joinDir(d, target))
	}
	slices.Sort(out.dirs)
	out.dirs = slices.Compact(out.dirs)
	return out
}

// joinDir is folder target reached from folder dir, lexically ("" for the workdir).
func joinDir(dir, target string) string {
	if path.IsAbs(target) {
		return path.Clean(target)
	}
	j := path.Clean(path.Join(dir, target))
	if j == "." {
		return ""
	}
	return j
}

// withCwd scans with the shell in c, then puts the scan's folders back: a wrapped program or a
// shell it starts cannot change the folder of the line's shell.
func (s *shellScan) withCwd(c cwdSet, scan func()) {
	saved, fail, old := s.cwd, s.cwdFail, s.oldCwd
	s.cwd, s.cwdFail, s.oldCwd = c, c, unknownCwd("cd - goes back to a folder from before the line")
	scan()
	s.cwd, s.cwdFail, s.oldCwd = saved, fail, old
}

// subshell scans code that runs in a copy of the shell: ( ), $( ), <( ), a pipeline's parts, a
// background job. Its cd changes nothing after it.
func (s *shellScan) subshell(scan func()) { s.withCwd(s.cwd, scan) }

// settle makes the folder after a statement the one the next starts in, whether the statement
// succeeded or failed.
func (s *shellScan) settle() {
	s.cwd = s.cwd.union(s.cwdFail)
	s.cwdFail = s.cwd
}

// chdir scans cd and pushd run by the line's shell: the folder becomes the target's, or stays
// if cd fails; popd, cd with no folder ($HOME), cd ~, a computed folder and cd -P through ..
// make it unknown. cd - goes back to the folder before the last cd of the line.
func (s *shellScan) chdir(prog string, args []shellArg) {
	before := s.cwd
	physical := false
	for len(args) > 0 && args[0].static && len(args[0].val) > 1 && args[0].val[0] == '-' {
		v := args[0].val
		args = args[1:]
		if v == "--" {
			break
		}
		if strings.Trim(v[1:], "LPe@") != "" {
			s.cwd = unknownCwd(prog + " " + v + " is an option this check does not follow")
			s.cwdFail = before
			return
		}
		physical = physical || strings.ContainsRune(v, 'P')
	}
	var next cwdSet
	switch {
	case prog == "popd":
		next = unknownCwd("popd goes back to a folder of the directory stack")
	case len(args) == 0:
		next = unknownCwd(prog + " with no folder goes to $HOME (or swaps the directory stack)")
	case !args[0].static:
		next = unknownCwd(prog + " goes to a computed folder (" + args[0].text() + ")")
	case args[0].val == "-" && prog == "cd":
		next = s.oldCwd
	case strings.HasPrefix(args[0].val, "~") || strings.HasPrefix(args[0].val, "+") || strings.HasPrefix(args[0].val, "-"):
		next = unknownCwd(prog + " " + args[0].val + " goes to a folder the line does not name")
	case physical && slices.Contains(strings.Split(args[0].val, "/"), ".."):
		next = unknownCwd(prog + " -P " + args[0].val + " resolves symbolic links before ..")
	default:
		next = before.to(args[0].val)
	}
	s.oldCwd = before
	s.cwd, s.cwdFail = next, before
}

// changesDir reports whether code could change the shell's folder: a cd, pushd or popd by name
// (directly or through builtin or command). The scan uses it to know whether a function body
// may run in another folder than where it is declared.
func changesDir(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(n syntax.Node) bool {
		if found {
			return false
		}
		if c, ok := n.(*syntax.CallExpr); ok {
			for _, w := range c.Args {
				switch w.Lit() {
				case "builtin", "command", "--":
					continue
				case "cd", "pushd", "popd":
					found = true
				}
				break
			}
		}
		return true
	})
	return found
}

// targetKey gives the redirect key of a file the line writes (or, for a connection, opens): v
// resolved from each folder the shell may be in (see resolveTarget). what names the target in
// messages ("the redirect target").
func (s *shellScan) targetKey(v string) {
	if strings.HasPrefix(v, "~") { // the home folder, wherever the shell is: keyed as written
		if s.cwd.reroot {
			s.fail("%s is written under another root than the workdir's (%s)", v, s.cwd.unknown)
			return
		}
		s.add(RedirectKey(path.Clean(v)))
		return
	}
	abs, rel, why := resolveTarget(v)
	switch {
	case why != "":
		s.fail("%s: %s", v, why)
	case abs != "" && s.cwd.reroot:
		s.fail("%s is written under another root than the workdir's (%s)", v, s.cwd.unknown)
	case abs != "":
		if abs != "/dev/null" {
			s.add(RedirectKey(abs))
		}
	case s.cwd.unknown != "":
		s.fail("the relative target %s is opened in a folder this check cannot know: %s", v, s.cwd.unknown)
	default:
		for _, d := range s.cwd.dirs {
			key := joinDir(d, rel)
			if key == "" {
				key = "."
			}
			if magic := magicAbove(key); magic != "" {
				s.fail("%s climbs out of the workdir toward %s, whose files are links the kernel resolves", v, magic)
				return
			}
			s.add(RedirectKey(key))
		}
	}
}

// magicAbove reports the magic folder (proc, dev) a relative path that climbs out of the workdir
// names next, "" when it names none: enough .. reach /proc, where the root and folder of a
// process are links.
func magicAbove(rel string) string {
	parts := strings.Split(rel, "/")
	i := 0
	for i < len(parts) && parts[i] == ".." {
		i++
	}
	if i > 0 && i < len(parts) && (parts[i] == "proc" || parts[i] == "dev") {
		return parts[i]
	}
	return ""
}

// resolveTarget resolves a written path as the kernel would, lexically but for the links the
// kernel itself makes: /proc/PID/root and /proc/PID/task/TID/root lead to the root (so
// /proc/self/root/etc/passwd is /etc/passwd), /proc/self/cwd (and thread-self's) to the folder
// the command runs in, and a path through a descriptor (/proc/PID/fd/N/..., /dev/fd/N/...,
// /dev/stdout/...), another process's folder or map_files cannot be known (why says so). .. is
// taken after those links, as the kernel does. abs is the absolute result, or rel the result
// relative to the command's folder.
func resolveTarget(v string) (abs, rel, why string) {
	if v == "" {
		return "", "", "the target is empty"
	}
	absolute := strings.HasPrefix(v, "/")
	var stack []string
	for _, c := range strings.Split(v, "/") {
		switch c {
		case "", ".":
			continue
		case "..":
			switch {
			case len(stack) > 0 && stack[len(stack)-1] != "..":
				stack = stack[:len(stack)-1]
			case !absolute:
				stack = append(stack, "..")
			}
			continue
		}
		stack = append(stack, c)
		if !absolute {
			continue
		}
		switch kind := procLink(stack); kind {
		case "root":
			stack = stack[:0]
		case "cwd":
			stack, absolute = stack[:0], false
		case "":
		default:
			return "", "", kind
		}
	}
	if absolute {
		return "/" + strings.Join(stack, "/"), "", ""
	}
	if len(stack) == 0 {
		return "", ".", ""
	}
	return "", strings.Join(stack, "/"), ""
}

// procLink says what the absolute path stack (its components) is when it ends at a link the
// kernel resolves: "root", "cwd" (the command's own folder), "" for none, or why it cannot be
// followed.
func procLink(stack []string) string {
	n := len(stack)
	switch {
	case n >= 3 && stack[0] == "dev" && stack[1] == "fd":
		return "a path through a descriptor's file (/dev/fd/N/...) cannot be known"
	case n >= 3 && stack[0] == "dev" && (stack[1] == "stdin" || stack[1] == "stdout" || stack[1] == "stderr"):
		return "a path through a descriptor's file (/dev/" + stack[1] + "/...) cannot be known"
	case n < 3 || stack[0] != "proc" || !procProcess(stack[1]):
		return ""
	}
	self := stack[1] == "self" || stack[1] == "thread-self"
	link := stack[2]
	if n >= 5 && stack[2] == "task" {
		link = stack[4]
	} else if stack[2] == "task" {
		return ""
	}
	last := n == 3 || (stack[2] == "task" && n == 5)
	switch {
	case link == "root" && last:
		return "root"
	case link == "cwd" && last && self:
		return "cwd"
	case link == "cwd" && last:
		return "the folder of another process (/proc/" + stack[1] + "/cwd) cannot be known"
	case (link == "fd" || link == "map_files") && n > 3 && !(n == 4 && link == "fd"):
		return "a path through a descriptor's file (/proc/" + stack[1] + "/" + link + "/...) cannot be known"
	case link == "exe" || link == "ns":
		return "/proc/" + stack[1] + "/" + link + " is a link the kernel resolves"
	}
	return ""
}

// procProcess reports whether a /proc entry names a process: self, thread-self or a pid.
func procProcess(name string) bool {
	if name == "self" || name == "thread-self" {
		return true
	}
	return name != "" && strings.Trim(name, "0123456789") == ""
}
