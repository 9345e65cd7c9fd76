package sandbox

import (
	"strings"
	"testing"
)

func TestBwrapArgs(t *testing.T) {
	caps := syntheticCaps(nil)
	spec := launchSpec{line: "echo hi", workdir: "/w", env: []string{"PATH=/bin", "EMPTY="}, caps: caps,
		boundary: Boundary{Mode: ModeBwrap}}
	ops := []mountOp{{"/bin", mountSymlink, false, "usr/bin"}, {"/h", mountHideDir, true, ""}, {"/h/f", mountHideFile, false, ""},
		{"/tmp", mountPrivateTmp, true, ""}, {"/usr", mountHostRO, true, ""}, {"/w", mountWritable, true, ""}}
	joined := strings.Join(bwrapArgs(spec, ops, nil), " ")
	for _, want := range []string{
		"--unshare-all --unshare-user --disable-userns --uid 1001 --gid 1001 --hostname warren-sandbox --die-with-parent --new-session --cap-drop ALL --dev /dev --proc /proc --remount-ro /proc --perms 1777 --tmpfs /dev/shm ",
		"--symlink usr/bin /bin --tmpfs /h --dev-bind /dev/null /h/f --perms 1777 --tmpfs /tmp --ro-bind-try /usr /usr --bind /w /w --remount-ro /h --remount-ro /dev --remount-ro / ",
		"--chdir /w --clearenv --setenv PATH /bin --setenv EMPTY  --seccomp 5 --json-status-fd 6 -- /bin/bash --noprofile --norc -c echo hi",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("bwrap args lack %q:\n%s", want, joined)
		}
	}
	if strings.Contains(joined, "--share-net") {
		t.Errorf("network off but --share-net: %s", joined)
	}
	spec.boundary.Network = true
	spec.caps = syntheticCaps(noSeccomp)
	joined = strings.Join(bwrapArgs(spec, ops, nil), " ")
	if !strings.Contains(joined, "--disable-userns --share-net --uid") || strings.Contains(joined, "--seccomp") {
		t.Errorf("network on, no seccomp: %s", joined)
	}
	// A size cap on the private file systems.
	spec.boundary.Limits.TmpSize = 1 << 20
	joined = strings.Join(bwrapArgs(spec, ops, nil), " ")
	if !strings.Contains(joined, "--perms 1777 --size 1048576 --tmpfs /dev/shm ") || !strings.Contains(joined, "--perms 1777 --size 1048576 --tmpfs /tmp ") {
		t.Errorf("capped /tmp and /dev/shm: %s", joined)
	}
	// On a root host the binds' sources are the staged copies, in the view's order.
	stage := &stagePlan{Dir: "/p/root"}
	ops = append(ops, mountOp{"/x", mountWritable, true, ""})
	joined = strings.Join(bwrapArgs(spec, ops, stage), " ")
	if !strings.Contains(joined, "--ro-bind-try /usr /usr --bind /p/root/0 /w --bind /p/root/1 /x ") || strings.Contains(joined, "--bind /w /w") {
		t.Errorf("staged binds: %s", joined)
	}
}
