package sandbox

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// workRootOutsideTmp makes a run's work root under /var/tmp (the contained modes replace /tmp,
// which would hide the other workdirs without the work root's cover), searchable by the uid
// commands run as, and removed at the end.
func workRootOutsideTmp(t *testing.T) string {
	t.Helper()
	root, err := os.MkdirTemp("/var/tmp", "warren-work-root-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	return resolved(root)
}

// agentManager is a manager for the agent whose workdir is root/rel, told the work root.
func agentManager(t *testing.T, m Mode, caps *Capabilities, root, rel string) *Manager {
	t.Helper()
	mgr := NewManager(filepath.Join(root, rel), caps, testBoundary(m, nil))
	mgr.SetWorkRoot(root)
	t.Cleanup(func() {
		if err := mgr.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return mgr
}

// TestAgentsCannotReadEachOther: with the work root outside /tmp, an agent's command reads
// neither a sibling's files (by a relative or an absolute path) nor its parent's, in the
// contained modes; a parent still reads its child's, which lie inside its own workdir. In none
// mode, which contains nothing, every agent reads every workdir.
func TestAgentsCannotReadEachOther(t *testing.T) {
	t.Parallel()
	for _, m := range allModes {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			caps := requireMode(t, m)
			root := workRootOutsideTmp(t)
			a := agentManager(t, m, caps, root, "g/a")
			b := agentManager(t, m, caps, root, "g/b")
			child := agentManager(t, m, caps, root, "g/a/agents/1")
			secret, childNote := rand.Text(), rand.Text()
			run := func(mgr *Manager, line string) Outcome {
				t.Helper()
				o, err := mgr.Run(context.Background(), line)
				if err != nil {
					t.Fatalf("Run(%q): %v", line, err)
				}
				return o
			}
			if o := run(a, "echo "+secret+" > secret.txt"); o.ExitCode != 0 {
				t.Fatalf("a could not write its secret: %+v", o)
			}
			if o := run(child, "echo "+childNote+" > note.txt"); o.ExitCode != 0 {
				t.Fatalf("the child could not write its note: %+v", o)
			}
			for _, tc := range []struct {
				who  string
				mgr  *Manager
				line string
			}{
				{"a sibling, by a relative path", b, "cat ../a/secret.txt"},
				{"a sibling, by an absolute path", b, "cat " + filepath.Join(root, "g/a/secret.txt")},
				{"a sibling, listing", b, "ls -A ../a; ls -A " + filepath.Join(root, "g")},
				{"a sibling, through /proc/self/root", b, "cat /proc/self/root" + filepath.Join(root, "g/a/secret.txt")},
				{"the child, its parent's file", child, "cat ../../secret.txt; cat " + filepath.Join(root, "g/a/secret.txt")},
			} {
				o := run(tc.mgr, tc.line)
				leaked := strings.Contains(string(o.Output), secret)
				if m.contains() && leaked {
					t.Errorf("%s read a's secret: %q", tc.who, o.Output)
				}
				if !m.contains() && tc.who != "a sibling, listing" && !leaked {
					t.Errorf("mode none contains nothing, yet %s did not read the secret: %q", tc.who, o.Output)
				}
			}
			if o := run(a, "cat agents/1/note.txt"); !strings.Contains(string(o.Output), childNote) {
				t.Errorf("the parent cannot read its child's file: %q", o.Output)
			}
			if m.contains() {
				// What b sees of the root: its own workdir alone.
				if o := run(b, "ls -A "+root+"; ls -A "+filepath.Join(root, "g")); strings.Fields(output(o))[0] != "g" || slices.Contains(strings.Fields(output(o)), "a") {
					t.Errorf("b sees in the work root: %q", o.Output)
				}
			}
		})
	}
}

// TestMountTableShowsOnlyTheView: a contained command's /proc/self/mountinfo and /proc/mounts
// list the view's own mounts, each once, and nothing the view covers: no host mount under a
// hidden folder, under /tmp, /dev or /proc, no path of the manager's private directory (where
// bwrap mode stages its sources on a root host), and every bind's root (the source's path in its
// file system) is the path it is mounted at. Mode none shows the host's table as it is.
func TestMountTableShowsOnlyTheView(t *testing.T) {
	hiddenDir := filepath.Join(workRootOutsideTmp(t), "hidden")
	coveredMounts := map[string]string{} // source name: mount point
	if os.Geteuid() == 0 {
		// Host mounts only covered paths hold: under a hidden folder and under the host's /tmp.
		for source, dir := range map[string]string{"warren-hidden-" + rand.Text(): filepath.Join(hiddenDir, "m"), "warren-tmp-" + rand.Text(): filepath.Join(t.TempDir(), "m")} {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if !mountHostTmpfs(t, source, dir) {
				break
			}
			coveredMounts[source] = dir
		}
	} else {
		t.Log("not root: no host mount of the test's own under the covered paths (the host's own /proc and /dev mounts still are)")
	}
	hostPoints := hostMountPoints()
	for _, m := range allModes {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			mgr := newTestManager(t, m, func(b *Boundary) { b.Hidden = append(b.Hidden, hiddenDir) })
			o, err := mgr.Run(context.Background(), "cat /proc/self/mountinfo; echo ==; cat /proc/mounts")
			if err != nil || o.ExitCode != 0 {
				t.Fatalf("Run: %+v, %v", o, err)
			}
			info, mounts, _ := strings.Cut(string(o.Output), "==\n")
			if !m.contains() {
				for _, p := range hostPoints {
					if !strings.Contains(info, " "+p+" ") {
						t.Errorf("mode none does not show the host's mount at %s", p)
					}
				}
				return
			}
			for source := range coveredMounts {
				if strings.Contains(info, source) || strings.Contains(mounts, source) {
					t.Errorf("the host mount %s, which the view covers, is listed", source)
				}
			}
			if mgr.private != "" && strings.Contains(string(o.Output), mgr.private) {
				t.Errorf("the manager's private directory %s is listed", mgr.private)
			}
			checkMountTable(t, info, mgr.workdir)
		})
	}
}

// checkMountTable checks a contained command's mountinfo (coveredMountProblems and
// bindRootProblems).
func checkMountTable(t *testing.T, info, workdir string) {
	t.Helper()
	for _, p := range append(coveredMountProblems(info, workdir), bindRootProblems(info)...) {
		t.Error(p)
	}
}

// viewDevices are the entries the view mounts in /dev.
var viewDevices = []string{"null", "zero", "full", "random", "urandom", "tty", "pts", "shm"}

// mountLines yields each mountinfo line with its root and mount point.
func mountLines(info string, yield func(line, root, point string)) {
	for line := range strings.Lines(info) {
		if f := strings.Fields(line); len(f) > 4 {
			yield(strings.TrimSpace(line), unescapeMountField(f[3]), unescapeMountField(f[4]))
		}
	}
}

// coveredMountProblems lists what a mountinfo shows beyond a contained view: a mount under /proc,
// one under /dev that is not the view's, one under /tmp that is not the workdir, or more than one
// (stacked over what it covers) where the view mounts its own.
func coveredMountProblems(info, workdir string) []string {
	var problems []string
	seen := map[string]int{}
	mountLines(info, func(line, _, point string) {
		seen[point]++
		dev, inDev := strings.CutPrefix(point, "/dev/")
		switch {
		case strings.HasPrefix(point, "/proc/"):
			problems = append(problems, "a mount under /proc: "+line)
		case inDev && !slices.Contains(viewDevices, dev):
			problems = append(problems, "a mount under /dev that is not the view's: "+line)
		case strings.HasPrefix(point, "/tmp/") && point != workdir:
			problems = append(problems, "a mount under the private /tmp that is not the workdir: "+line)
		}
	})
	for _, p := range []string{"/", "/dev", "/proc", "/tmp", "/dev/shm", "/dev/pts", workdir} {
		if seen[p] != 1 {
			problems = append(problems, fmt.Sprintf("%d mounts at %s, where the view mounts one", seen[p], p))
		}
	}
	return problems
}

// bindRootProblems lists the mounts whose root (the path of the mount's source in its file
// system) is not the path it is mounted at, which would tell the command where a bind's source
// is on the host; allowed besides: a file system's own root, /dev/null over hidden files, the
// devices at their own names, bwrap's root, and a cgroup above the command's cgroup namespace.
func bindRootProblems(info string) []string {
	var problems []string
	mountLines(info, func(line, root, point string) {
		dev, inDev := strings.CutPrefix(point, "/dev/")
		switch {
		case root == "/", root == point, point == "/", root == "/null", inDev && root == "/"+dev, strings.Trim(root, "/.") == "":
		default:
			problems = append(problems, fmt.Sprintf("a mount whose root %s is not the path it is mounted at: %s", root, line))
		}
	})
	return problems
}
