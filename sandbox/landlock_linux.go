package sandbox

import (
	"fmt"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// landlockDevices are the device files a command may write and use ioctls on.
var landlockDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx"}

// enforceLandlock restricts the calling thread (and what it execs) to reading and executing
// under /, writing only under lp's paths. It handles every file system right and IPC scope this
// go-landlock knows, in best-effort mode: on an older kernel the rights it lacks stay
// unrestricted. With ABI 6+ the command cannot signal or reach the abstract unix sockets of
// processes outside its domain (the namespace init included); with ABI 9+ it cannot connect to
// pathname unix sockets created outside it (such as /run/docker.sock). The network is left to the
// network namespace.
func enforceLandlock(lp *landlockPlan) error {
	cfg := landlock.Config{HandledAccessFS: landlock.V11.HandledAccessFS, Scoped: landlock.V11.Scoped}.BestEffort()
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.PathAccess(llsys.AccessFSIoctlDev, "/dev"),
		landlock.RWDirs(append(lp.WritableDirs, "/dev/pts")...).WithRefer().IgnoreIfMissing(),
		landlock.RWFiles(landlockDevices...).WithIoctlDev().IgnoreIfMissing(),
	}
	if len(lp.WritableFiles) > 0 {
		rules = append(rules, landlock.RWFiles(lp.WritableFiles...).IgnoreIfMissing())
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil || fd < 0 {
		return err
	}
	defer unix.Close(fd)
	return llsys.LandlockRestrictSelf(fd, flags) // no_new_privs is already set (execPlan)
}

// probeLandlock reads the kernel's Landlock ABI. The namespace mode asks for file reparenting
// ("refer", ABI 2), without which best-effort go-landlock would enforce nothing, so ABI 1 counts
// as missing.
func probeLandlock() (int, Support) {
	abi, err := llsys.LandlockGetABIVersion()
	switch {
	case err != nil:
		return 0, Support{Reason: fmt.Sprintf("the kernel has no Landlock (%v): it needs Linux 5.19+ built with CONFIG_SECURITY_LANDLOCK and landlock in the lsm= boot list", err)}
	case abi < 2:
		return abi, Support{Reason: fmt.Sprintf("Landlock ABI %d lacks file reparenting: it needs ABI 2 (Linux 5.19+)", abi)}
	}
	return abi, Support{Available: true}
}
