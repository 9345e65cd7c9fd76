//go:build !linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// errLinuxOnly is why the contained modes are unavailable outside Linux.
var errLinuxOnly = errors.New("the namespace and bwrap modes need Linux")

// newLaunch prepares the command: outside Linux only mode none exists.
func newLaunch(spec launchSpec) (*launch, error) {
	if spec.boundary.Mode.contains() {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, errLinuxOnly)
	}
	l := &launch{grace: uncontainedGrace, result: noneResult}
	w, err := l.newOutputPipe()
	if err != nil {
		return nil, err
	}
	l.cmd = &exec.Cmd{Path: ShellPath, Args: shellArgv(spec.line), Env: spec.env, Dir: spec.workdir, Stdout: w, Stderr: w}
	return l, nil
}

// noneResult is none mode's result outside Linux: the shell's own wait status.
func noneResult(o *Outcome, state *os.ProcessState, _ [][]byte) { exitFields(o, state) }

// signalTree kills the shell: outside Linux none mode has no process group to kill.
func (l *launch) signalTree() { _ = l.cmd.Process.Kill() }

// endGroup has nothing to end: outside Linux none mode has no process group to kill.
func (l *launch) endGroup() {}

// reapTree reaps the child and marks it finished.
func reapTree(l *launch) {
	_ = l.cmd.Wait()
	l.markFinished()
}

// probeMachine reports the contained modes unavailable outside Linux.
func probeMachine() *Capabilities {
	reason := errLinuxOnly.Error()
	version, shell := "", Support{Reason: "not probed outside Linux"}
	if out, err := exec.Command(ShellPath, "--version").Output(); err == nil {
		version, shell = strings.SplitN(string(out), "\n", 2)[0], Support{Available: true}
	}
	return &Capabilities{
		Shell: shell, ShellVersion: version,
		Namespaces: Support{Reason: reason}, Bwrap: Support{Reason: reason},
		Landlock: Support{Reason: reason}, Seccomp: Support{Reason: reason},
		UID: os.Geteuid(), GID: os.Getegid(), InsideUID: os.Geteuid(), InsideGID: os.Getegid(),
		CommandUID: os.Geteuid(), CommandGID: os.Getegid(),
	}
}

// markInheritedCloseOnExec does nothing outside Linux: only mode none runs there, which contains
// nothing a leaked descriptor would get past.
func markInheritedCloseOnExec() {}

// ChownForCommands has nothing to do outside Linux, where commands run as the host's uid (see
// the Linux version).
func (c *Capabilities) ChownForCommands(string) error { return nil }

// removePrivate removes the manager's private directory by path: only the contained modes make
// one, and outside Linux they never run (the Linux version removes it by descriptor).
func removePrivate(private string) error {
	if err := os.Remove(filepath.Join(private, "root")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.Remove(private); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
