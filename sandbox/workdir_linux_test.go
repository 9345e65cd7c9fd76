package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/warrenhq/warren/internal/safepath"
)

// The manager's own handling of the workdir's path: the host, root on a root host, creates the
// workdir, hands it over and binds it, so it must never follow a path an agent could have shaped.
// A parent's commands can write the folder holding its child's workdir (agents/<k>), so they can
// put a link there, or swap the folder, before or between the child's commands.

// hostFolder is a folder the host owns, outside every workdir, with one file; unchanged fails t
// unless it still holds exactly that file, with its content, and belongs to the host with its
// mode.
type hostFolder struct{ dir, content string }

func newHostFolder(t *testing.T) hostFolder {
	t.Helper()
	f := hostFolder{dir: filepath.Join(t.TempDir(), "victim"), content: "host data outside every workdir\n"}
	if err := os.Mkdir(f.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.dir, "precious"), []byte(f.content), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f hostFolder) unchanged(t *testing.T) {
	t.Helper()
	folderUnchanged(t, f.dir, os.Getuid(), []string{"precious"}, f.content)
}

// folderUnchanged fails t unless dir belongs to uid with mode 0755 and holds only names, the
// first of which has content.
func folderUnchanged(t *testing.T, dir string, uid int, names []string, content string) {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(dir, &st); err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	if int(st.Uid) != uid || st.Mode&0o7777 != 0o755 {
		t.Errorf("%s now belongs to %d with mode %o, want %d and 755", dir, st.Uid, st.Mode&0o7777, uid)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, names) {
		t.Errorf("%s now holds %q, want %q", dir, got, names)
	}
	if data, err := os.ReadFile(filepath.Join(dir, names[0])); err != nil || string(data) != content {
		t.Errorf("%s/%s now holds %q (%v), want %q", dir, names[0], data, err, content)
	}
}

// refusedForTheLink fails t unless err is ErrSetup naming the link at path.
func refusedForTheLink(t *testing.T, err error, path string) {
	t.Helper()
	if !errors.Is(err, ErrSetup) || !strings.Contains(err.Error(), path+": a symbolic link") {
		t.Errorf("the command: %v, want ErrSetup naming the link at %s", err, path)
	}
}

// TestEmptyWorkdirIsRefused: a manager given no workdir (a workdir template that left the run's
// root gives an agent none) or a relative one runs nothing, in every mode: it would take the
// host's current directory, hand it to the commands' uid and let them write it.
func TestEmptyWorkdirIsRefused(t *testing.T) {
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "precious"), []byte("the host's current directory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(cwd)
	for _, m := range allModes {
		for _, workdir := range []string{"", "relative/workdir"} {
			mgr := NewManager(workdir, requireMode(t, m), testBoundary(m, nil))
			_, err := mgr.Run(context.Background(), "echo escaped > precious; echo escaped > new")
			if !errors.Is(err, ErrSetup) || !strings.Contains(err.Error(), "not an absolute path") {
				t.Errorf("%s, workdir %q: %v, want ErrSetup", m, workdir, err)
			}
			if _, err := mgr.Start(context.Background(), "true"); !errors.Is(err, ErrSetup) {
				t.Errorf("%s, workdir %q: Start: %v, want ErrSetup", m, workdir, err)
			}
			if err := mgr.Close(); err != nil {
				t.Errorf("%s: Close: %v", m, err)
			}
		}
	}
	folderUnchanged(t, cwd, os.Getuid(), []string{"precious"}, "the host's current directory\n")
}

// TestPlantedLinkOnAChildsWorkdirPath: a parent's command replaces the folder holding its child's
// workdir (agents), or the workdir itself (agents/1), with a link to a host folder before the
// child's first command. The child's command is refused, naming the link, and nothing is made,
// handed over or written where the link leads.
func TestPlantedLinkOnAChildsWorkdirPath(t *testing.T) {
	for _, m := range allModes {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			caps := requireMode(t, m)
			for _, tc := range []struct{ name, plant, link string }{
				{"the folder holding the workdir", "ln -s {V} agents", "agents"},
				{"the workdir itself", "mkdir agents && ln -s {V} agents/1", "agents/1"},
			} {
				root, victim := workRootOutsideTmp(t), newHostFolder(t)
				parent := agentManager(t, m, caps, root, "g/p")
				if o, err := parent.Run(context.Background(), strings.ReplaceAll(tc.plant, "{V}", victim.dir)); err != nil || o.ExitCode != 0 {
					t.Fatalf("%s: the parent's command: %+v, %v", tc.name, o, err)
				}
				child := agentManager(t, m, caps, root, "g/p/agents/1")
				_, err := child.Run(context.Background(), "echo escaped > ../precious; echo escaped > precious; echo made > new")
				refusedForTheLink(t, err, filepath.Join(root, "g/p", tc.link))
				victim.unchanged(t)
			}
		})
	}
}

// TestLinkToASiblingWorkdirIsRefused: every agent's workdir belongs to the commands' uid, so a
// link to a sibling's must be refused for being a link, not for its owner: the child's commands
// would otherwise run in the sibling's workdir, read-write.
func TestLinkToASiblingWorkdirIsRefused(t *testing.T) {
	for _, m := range allModes {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			caps := requireMode(t, m)
			root := workRootOutsideTmp(t)
			sibling := agentManager(t, m, caps, root, "g/s")
			if o, err := sibling.Run(context.Background(), "echo sibling-secret > secret"); err != nil || o.ExitCode != 0 {
				t.Fatalf("the sibling's command: %+v, %v", o, err)
			}
			siblingDir := filepath.Join(root, "g", "s")
			parent := agentManager(t, m, caps, root, "g/p")
			if o, err := parent.Run(context.Background(), "mkdir agents && ln -s "+siblingDir+" agents/1"); err != nil || o.ExitCode != 0 {
				t.Fatalf("the parent's command: %+v, %v", o, err)
			}
			child := agentManager(t, m, caps, root, "g/p/agents/1")
			o, err := child.Run(context.Background(), "cat secret; echo overwritten > secret; echo made > new")
			refusedForTheLink(t, err, filepath.Join(root, "g/p/agents/1"))
			if strings.Contains(string(o.Output), "sibling-secret") {
				t.Errorf("the child read the sibling's secret: %q", o.Output)
			}
			owner := os.Getuid() // mode none hands nothing over
			if m.contains() {
				owner = caps.CommandUID
			}
			folderUnchanged(t, siblingDir, owner, []string{"secret"}, "sibling-secret\n")
		})
	}
}

// TestWorkdirReplacedBetweenCommands: between a child's two commands its parent renames the folder
// holding the child's workdir away and makes a fresh one at the same path. The path is the same,
// the folder is not: the second command is refused and runs nowhere.
func TestWorkdirReplacedBetweenCommands(t *testing.T) {
	for _, m := range allModes {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			caps := requireMode(t, m)
			root := workRootOutsideTmp(t)
			parent := agentManager(t, m, caps, root, "g/p")
			child := agentManager(t, m, caps, root, "g/p/agents/1")
			if o, err := child.Run(context.Background(), "echo first > mark"); err != nil || o.ExitCode != 0 {
				t.Fatalf("the child's first command: %+v, %v", o, err)
			}
			if o, err := parent.Run(context.Background(), "mv agents agents.old && mkdir -p agents/1"); err != nil || o.ExitCode != 0 {
				t.Fatalf("the parent's swap: %+v, %v", o, err)
			}
			_, err := child.Run(context.Background(), "echo second > mark")
			if !errors.Is(err, ErrSetup) || !strings.Contains(err.Error(), "was replaced") {
				t.Errorf("the child's second command: %v, want ErrSetup saying its workdir was replaced", err)
			}
			fresh := filepath.Join(root, "g/p/agents/1")
			if entries, err := os.ReadDir(fresh); err != nil || len(entries) != 0 {
				t.Errorf("the fresh folder at the child's path holds %v (%v): the command ran there", entries, err)
			}
			if data, err := os.ReadFile(filepath.Join(root, "g/p/agents.old/1/mark")); err != nil || string(data) != "first\n" {
				t.Errorf("the child's own workdir: mark %q (%v)", data, err)
			}
		})
	}
}

// TestWorkdirThroughALinkIsRefused: a manager's workdir is given resolved (a run resolves its
// root once): a link on its path, even one made before the first command, is refused.
func TestWorkdirThroughALinkIsRefused(t *testing.T) {
	base := t.TempDir()
	target, link := filepath.Join(base, "target"), filepath.Join(base, "link")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, m := range allModes {
		mgr := NewManager(filepath.Join(link, "w"), requireMode(t, m), testBoundary(m, nil))
		_, err := mgr.Run(context.Background(), "touch here")
		_ = mgr.Close()
		refusedForTheLink(t, err, link)
		if entries, err := os.ReadDir(target); err != nil || len(entries) != 0 {
			t.Errorf("%s: the link's target holds %v (%v)", m, entries, err)
		}
	}
}

// TestCloseRemovesOnlyItsOwnPrivateDirectory: Close removes the manager's private directory and
// its root by descriptor, so a link put in the directory's place leads it nowhere: the folder the
// link points to keeps its own empty "root".
func TestCloseRemovesOnlyItsOwnPrivateDirectory(t *testing.T) {
	mgr := NewManager(t.TempDir(), requireMode(t, ModeNamespace), testBoundary(ModeNamespace, nil))
	if _, err := mgr.Run(context.Background(), "true"); err != nil {
		t.Fatal(err)
	}
	private := mgr.private
	if private == "" {
		t.Fatal("namespace mode made no private directory")
	}
	other := t.TempDir()
	if err := os.Mkdir(filepath.Join(other, "root"), 0o755); err != nil {
		t.Fatal(err)
	}
	moved := private + ".moved"
	if err := os.Rename(private, moved); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = os.Remove(filepath.Join(moved, "root"))
		_ = os.Remove(moved)
		_ = os.Remove(private)
	})
	if err := os.Symlink(other, private); err != nil {
		t.Fatal(err)
	}
	if err := mgr.Close(); err == nil || !strings.Contains(err.Error(), private) {
		t.Errorf("Close: %v, want an error naming %s", err, private)
	}
	if info, err := os.Lstat(filepath.Join(other, "root")); err != nil || !info.IsDir() {
		t.Errorf("the folder the link led to lost its root: %v", err)
	}
}

// TestHelpersBindOnlyTheFolderTheHostChecked: the folder at the workdir's path may be swapped
// after the manager's walk and before the helper opens it by path (the namespace init's bind,
// bwrap's staging on a root host, none mode's reaper entering it). Each helper checks the folder
// it opened against the identity in its plan: given another folder's, it refuses to start the
// command; given the right one, the command runs there.
func TestHelpersBindOnlyTheFolderTheHostChecked(t *testing.T) {
	caps := Probe()
	modes := []Mode{ModeNone, ModeNamespace}
	if caps.dropsPrivileges() {
		modes = append(modes, ModeBwrap) // elsewhere bwrap binds the path itself: nothing is staged
	}
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			mgr := newTestManager(t, m, nil)
			// A first command hands the workdir over and makes the private root.
			if _, err := mgr.Run(context.Background(), "true"); err != nil {
				t.Fatal(err)
			}
			root, err := mgr.privateRoot()
			if err != nil {
				t.Fatal(err)
			}
			workdir, other := mgr.workdir, t.TempDir()
			for _, tc := range []struct {
				name    string
				checked string
				refused bool
			}{{"another folder", other, true}, {"the workdir", workdir, false}} {
				dir, _, err := safepath.Open(tc.checked, false)
				if err != nil {
					t.Fatal(err)
				}
				id, err := dir.Identity()
				_ = dir.Close()
				if err != nil {
					t.Fatal(err)
				}
				spec := launchSpec{line: "echo ran > here", workdir: workdir, workdirID: id, boundary: testBoundary(m, nil),
					env: []string{}, caps: requireMode(t, m), root: root}
				l, err := newLaunch(spec)
				if err != nil {
					t.Fatalf("%s: newLaunch: %v", tc.name, err)
				}
				p := &Process{boundary: spec.boundary, stop: make(chan struct{}), done: make(chan struct{})}
				if err := p.start(context.Background(), l); err != nil {
					t.Fatalf("%s: start: %v", tc.name, err)
				}
				o := p.Wait()
				_, statErr := os.Stat(filepath.Join(workdir, "here"))
				switch {
				case tc.refused && (!errors.Is(o.Err, ErrSetup) || !strings.Contains(o.Err.Error(), "is not the folder the host checked")):
					t.Errorf("%s: exit %d, %v, output %q, want ErrSetup: not the folder the host checked", tc.name, o.ExitCode, o.Err, o.Output)
				case tc.refused && statErr == nil:
					t.Errorf("%s: the command ran", tc.name)
				case !tc.refused && (o.Err != nil || o.ExitCode != 0 || statErr != nil):
					t.Errorf("%s: exit %d, %v, output %q (%v), want the command run in the workdir", tc.name, o.ExitCode, o.Err, o.Output, statErr)
				}
			}
		})
	}
}
