package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

func TestRlimitsFor(t *testing.T) {
	got := rlimitsFor(Limits{Timeout: 5, CPUSeconds: 7, OpenFiles: 64})
	want := []rlimitSetting{{unix.RLIMIT_CORE, 0}, {unix.RLIMIT_CPU, 7}, {unix.RLIMIT_NOFILE, 64}}
	if !slices.Equal(got, want) {
		t.Errorf("rlimits %v, want %v", got, want)
	}
}

// TestCloseOnExecExcept: descriptors that are not close-on-exec (as a process inherits them) are
// marked so, but for the ones kept, by close_range and by the /proc walk alike; an exec'd child
// then holds only the kept ones.
func TestCloseOnExecExcept(t *testing.T) {
	open := make([]int, 4)
	for i := range open {
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		open[i] = int(f.Fd())
	}
	leaked := func() {
		for _, fd := range open {
			if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name string
		keep []int
		mark func(keep []int) error
	}{
		{"close_range, nothing kept", nil, closeOnExecExcept},
		{"close_range, one kept", open[1:2], closeOnExecExcept},
		{"close_range, the first and the last kept", []int{open[0], open[3]}, closeOnExecExcept},
		{"close_range, stdio and a repeat in the list", []int{0, 2, open[2], open[2]}, closeOnExecExcept},
		{"walk, two kept", open[1:3], closeOnExecByWalk},
	} {
		leaked()
		if err := tc.mark(tc.keep); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, fd := range open {
			flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
			if err != nil {
				t.Fatal(err)
			}
			if kept := slices.Contains(tc.keep, fd); (flags&unix.FD_CLOEXEC == 0) != kept {
				t.Errorf("%s: descriptor %d close-on-exec %v, kept %v", tc.name, fd, flags&unix.FD_CLOEXEC != 0, kept)
			}
		}
		out, err := exec.Command("sh", "-c", "ls /proc/$$/fd").Output()
		if err != nil {
			t.Fatal(err)
		}
		held := strings.Fields(string(out))
		for _, fd := range open {
			if slices.Contains(held, strconv.Itoa(fd)) != slices.Contains(tc.keep, fd) {
				t.Errorf("%s: a child holds %v, kept %v", tc.name, held, tc.keep)
			}
		}
	}
}

// TestChownForCommands: a path is handed to the command uid, a symlink anywhere on it is
// refused (one a command planted must not redirect the chown), and a host whose commands run as
// its own uid changes nothing.
func TestChownForCommands(t *testing.T) {
	// Any user may chown to itself; root shows the change to another uid (the unprivileged one,
	// where this user namespace maps it: the probe's CommandUID).
	to := Probe().CommandUID
	caps := syntheticCaps(func(c *Capabilities) { c.UID, c.CommandUID, c.CommandGID = to+1, to, os.Getgid() })
	base := resolved(t.TempDir())
	dir, victim := filepath.Join(base, "dir"), filepath.Join(base, "victim")
	for _, p := range []string{filepath.Join(dir, "sub"), victim} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"last": victim, "middle": dir} {
		if err := os.Symlink(target, filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	owner := func(p string) int {
		info, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return int(info.Sys().(*syscall.Stat_t).Uid)
	}
	before := owner(victim)
	for _, tc := range []struct {
		name, path string
		ok         bool
	}{
		{"a folder", filepath.Join(dir, "sub"), true},
		{"a symlink at the end", filepath.Join(base, "last"), false},
		{"a symlink on the way", filepath.Join(base, "middle", "sub"), false},
	} {
		err := caps.ChownForCommands(tc.path)
		if (err == nil) != tc.ok {
			t.Errorf("%s: error %v, want success %v", tc.name, err, tc.ok)
		}
	}
	if got := owner(filepath.Join(dir, "sub")); got != to {
		t.Errorf("the folder belongs to %d, want %d", got, to)
	}
	if got := owner(victim); got != before {
		t.Errorf("the symlink's target changed hands: %d, was %d", got, before)
	}
	same := syntheticCaps(nil)
	if err := same.ChownForCommands(filepath.Join(base, "last")); err != nil {
		t.Errorf("commands running as the host's uid: %v, want nothing done", err)
	}
}

// TestHandOverWorkdir: the workdir is handed to the command uid through the walk's descriptor:
// a link put in its place meanwhile leads the chown nowhere. Commands running as the host's uid
// need nothing handed over.
func TestHandOverWorkdir(t *testing.T) {
	base := resolved(t.TempDir())
	dir, moved, other := filepath.Join(base, "dir"), filepath.Join(base, "moved"), filepath.Join(base, "other")
	for _, d := range []string{dir, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Commands run as another gid (only root may give a folder away, to an id its user namespace
	// maps: the probe's CommandGID, elsewhere the test's own).
	gid := Probe().CommandGID
	caps := syntheticCaps(func(c *Capabilities) { c.UID, c.CommandUID, c.CommandGID = os.Getuid()+1, os.Getuid(), gid })
	m := newManager(dir, caps, Boundary{})
	walked, _, err := m.openWorkdir()
	if err != nil {
		t.Fatal(err)
	}
	defer walked.Close()
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, dir); err != nil {
		t.Fatal(err)
	}
	if err := m.handOverWorkdir(walked); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{moved: gid, other: os.Getgid()} {
		var st syscall.Stat_t
		if err := syscall.Stat(path, &st); err != nil || int(st.Gid) != want {
			t.Errorf("%s has gid %d (%v), want %d", path, st.Gid, err, want)
		}
	}
	if err := newManager(dir, syntheticCaps(nil), Boundary{}).handOverWorkdir(walked); err != nil {
		t.Errorf("commands running as the host's uid: %v, want nothing done", err)
	}
}
