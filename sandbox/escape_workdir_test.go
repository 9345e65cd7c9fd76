//go:build linux

package sandbox

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// The attempts on the manager's own handling of the workdir's path (issue 12, item 2): the host
// (root on a root host) makes the workdir, hands it over and binds it, so a path shaped by an
// agent must not lead it elsewhere. A parent agent's commands can write the folder holding its
// child's workdir; here a parent of the run's agent (asParent) plants a link there before the
// child's first command, or swaps the folder between two of its commands. The manager refuses
// in every mode, none included: it is the host's own walk, not the command's boundary, that
// stops them.

// asParent runs line (a template, "" for none) as the run's parent agent: a manager of its own on
// r.parent, in the attempt's mode and boundary, told the same work root. It must succeed: the
// parent's commands prepare the attempt.
func (r *escapeRun) asParent(b Boundary, line string) {
	if line == "" {
		return
	}
	mgr := NewManager(r.parent, r.suite.caps, b)
	mgr.SetWorkRoot(escapeWorkRoot(r))
	defer mgr.Close()
	line = r.expand(line)
	if o, err := mgr.Run(context.Background(), line); err != nil || o.ExitCode != 0 {
		r.t.Fatalf("the parent's command %q: %v, exit %d: %q", line, err, o.ExitCode, o.Output)
	}
}

// escapeChild makes the run's agent a child: its workdir {V}/root/g/p/agents/1 (not made yet),
// its parent's {V}/root/g/p, and a sibling's {V}/root/g/s holding secret.txt (the token), all the
// command uid's, as the agents' workdirs are.
func escapeChild(r *escapeRun) {
	root := escapeWorkRoot(r)
	r.file(filepath.Join(root, "g", "s", "secret.txt"), r.token, 0o600)
	r.parent = filepath.Join(root, "g", "p")
	if err := os.Mkdir(r.parent, 0o755); err != nil {
		r.t.Fatal(err)
	}
	r.own(r.parent)
	r.workdir = filepath.Join(r.parent, "agents", "1")
}

// escapeSiblingSecret is the sibling's secret file.
func escapeSiblingSecret(r *escapeRun) string {
	return filepath.Join(escapeWorkRoot(r), "g", "s", "secret.txt")
}

// escapeFileChanged reports path gone, or holding other than content.
func escapeFileChanged(path, content string) string {
	if data, err := os.ReadFile(path); err != nil || string(data) != content {
		return fmt.Sprintf("%s now holds %.60q (%v)", path, data, err)
	}
	return ""
}

// escapeFolderChanged reports a folder that no longer belongs to uid, or holds other than names.
func escapeFolderChanged(dir string, uid int, names ...string) string {
	var st syscall.Stat_t
	if err := syscall.Lstat(dir, &st); err != nil {
		return fmt.Sprintf("%s is gone: %v", dir, err)
	}
	if int(st.Uid) != uid {
		return fmt.Sprintf("%s was handed to uid %d", dir, st.Uid)
	}
	entries, err := os.ReadDir(dir)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if err != nil || !slices.Equal(got, names) {
		return fmt.Sprintf("the host made %q in %s (%v)", got, dir, err)
	}
	return ""
}

// workdirAttempts are the attempts on the workdir's path.
func workdirAttempts() []escapeCase {
	return []escapeCase{
		// A workdir template that leaves the run's root gives an agent no workdir; a manager
		// made with "" took the host's current directory, handed it over and ran there.
		// The modes share the directory: one at a time, so that each sees its own doing.
		{name: "workdir-empty-host-cwd", claim: claimEveryMode, refused: ErrSetup, exclusive: "host-cwd",
			setup: func(r *escapeRun) {
				cwd, err := os.Getwd()
				if err != nil {
					r.t.Fatal(err)
				}
				r.extra = cwd
				r.t.Cleanup(func() { _ = os.Remove(filepath.Join(cwd, "escaped-"+r.token)) })
			},
			workdir: func(*escapeRun) string { return "" },
			line:    "echo {T} > escaped-{T}",
			check: func(r *escapeRun, _ Outcome) string {
				var st syscall.Stat_t
				if err := syscall.Lstat(r.extra, &st); err == nil && int(st.Uid) != os.Getuid() {
					_ = os.Lchown(r.extra, os.Getuid(), os.Getgid()) // put back at once
					return fmt.Sprintf("the host's current directory %s was handed to uid %d", r.extra, st.Uid)
				}
				return escapeCreated(filepath.Join(r.extra, "escaped-"+r.token))
			}},
		// The parent replaces the folder its child's workdir is made in with a link to a host
		// folder: MkdirAll made {X}/1 there, as root, and none mode ran the command in it.
		{name: "workdir-link-to-host-dir", claim: claimEveryMode, refused: ErrSetup, workRoot: escapeWorkRoot,
			setup: func(r *escapeRun) {
				escapeChild(r)
				r.extra = filepath.Join(r.visibleDir(), "host")
				r.hostFile(filepath.Join(r.extra, "precious"), r.token, 0o644)
			},
			parent: "ln -s {X} agents",
			line:   "echo escaped > ../precious; echo escaped > here",
			check: func(r *escapeRun, _ Outcome) string {
				return cmp.Or(escapeFolderChanged(r.extra, os.Getuid(), "precious"), escapeFileChanged(filepath.Join(r.extra, "precious"), r.token))
			}},
		// Every workdir belongs to the command uid, so a link to a sibling's passed the check
		// that a folder reached through a link must already belong to it.
		{name: "workdir-link-to-sibling", claim: claimEveryMode, refused: ErrSetup, workRoot: escapeWorkRoot, setup: escapeChild,
			parent: "mkdir agents && ln -s {V}/root/g/s agents/1",
			line:   "cat secret.txt; echo escaped > secret.txt",
			check: func(r *escapeRun, o Outcome) string {
				return cmp.Or(escapePrintedToken(r, o), escapeFileChanged(escapeSiblingSecret(r), r.token))
			}},
		// Between two of the child's commands the parent renames the folder holding the child's
		// workdir and makes a fresh one at the same path: the path was pinned, not the folder.
		{name: "workdir-swap-between-commands", claim: claimEveryMode, refused: ErrSetup, workRoot: escapeWorkRoot, setup: escapeChild,
			prelude: "echo first > mark",
			between: "mv agents agents.old && mkdir -p agents/1",
			line:    "echo {T} > mark",
			check: func(r *escapeRun, _ Outcome) string {
				return escapeCreated(filepath.Join(r.parent, "agents", "1", "mark"))
			}},
	}
}
