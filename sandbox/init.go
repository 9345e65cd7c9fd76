package sandbox

import (
	"os"

	"github.com/moby/sys/reexec"
)

// The re-exec entry points: the host starts its own binary under these argv[0] names (through
// /proc/self/exe, so a binary replaced on disk meanwhile does not matter).
const (
	// initEntry is pid 1 of a namespace-mode command's pid namespace: it assembles the
	// command's root, starts the exec trampoline, reaps, and reports how the command ended.
	initEntry = "warren-sandbox-init"
	// execEntry is the exec trampoline: it lowers the rlimits (and in namespace mode enforces
	// Landlock and seccomp) on its own thread, then replaces itself with the command (/bin/bash,
	// or bwrap in bwrap mode).
	execEntry = "warren-sandbox-exec"
	// reaperEntry is none mode's reaper: the child subreaper that starts the command's shell on
	// the host and kills what the command left when it ends or the host goes.
	reaperEntry = "warren-sandbox-reaper"
)

// Init runs the sandbox's re-exec entry point when this process was started as one, and exits;
// otherwise it marks every descriptor the process inherited above stderr close-on-exec (so that
// none reaches a command, whatever mode it runs in) and returns. main() and the TestMain of every
// package whose tests run commands call it first thing: a binary that does not would start its
// own main again where the sandbox expected its helper (Probe then reports the contained modes
// unavailable), and would pass its inherited descriptors on to none-mode commands.
func Init() {
	if reexec.Init() {
		// The entry points exit themselves; this only guards against one that returns.
		os.Exit(0)
	}
	markInheritedCloseOnExec()
}
