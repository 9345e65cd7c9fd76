package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/warrenhq/warren"
)

// stateCheckMemory is how much more address space than it starts with the child checking a
// state directory may use (stateCheckCmd): a state.db is read and copied once, so a real one
// needs far less; a forged one that sends the reader round a cycle of pages meets the limit.
const stateCheckMemory = 2 << 30

// stateCheckTimeout bounds the child's time: the check reads the file once.
const stateCheckTimeout = 2 * time.Minute

// stateCheckCmd is the hidden command host resume and host state inspect run in a child process
// first: it limits its own address space, then reads the directory's state.db whole and
// rebuilds it (warren.CheckState).
type stateCheckCmd struct {
	Dir string `arg:"" help:"The state directory."`
}

func (s *stateCheckCmd) Run(e *env) error {
	var used uint64
	if statm, err := os.ReadFile("/proc/self/statm"); err == nil {
		_, _ = fmt.Sscan(string(statm), &used) // pages of address space in use
		used *= uint64(os.Getpagesize())
	}
	var limit unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_AS, &limit); err != nil {
		fmt.Fprintf(e.stderr, "host: state check %s: limiting memory: %v\n", s.Dir, err)
		return errBadInput
	}
	if want := used + stateCheckMemory; limit.Cur == unix.RLIM_INFINITY || limit.Cur > want {
		limit.Cur = min(want, limit.Max) // lowering the soft limit needs no privilege
	}
	if err := unix.Setrlimit(unix.RLIMIT_AS, &limit); err != nil {
		fmt.Fprintf(e.stderr, "host: state check %s: limiting memory: %v\n", s.Dir, err)
		return errBadInput
	}
	if err := warren.CheckState(s.Dir); err != nil {
		fmt.Fprintf(e.stderr, "%v\n", err)
		return errBadInput
	}
	return nil
}

// checkStateApart runs the state check in a child process of this binary (stateCheckCmd): nil
// when the directory's database read whole; otherwise an error saying why, wrapping
// warren.ErrNotState when the child found it damaged, ran out of its memory or time, or crashed.
func checkStateApart(ctx context.Context, dir string) error {
	self, err := os.Executable()
	if err != nil || testing.Testing() {
		return nil // no host binary to run (a test runs this in-process): OpenResume checks in-process
	}
	ctx, cancel := context.WithTimeout(ctx, stateCheckTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, "state", "check", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if err == nil {
		return nil
	}
	why := strings.TrimSpace(stderr.String())
	switch {
	case strings.Contains(why, warren.ErrNotState.Error()) || strings.Contains(why, "in use by another process"):
		return errors.New(why) // the check's own error, whole
	case strings.Contains(why, "out of memory"):
		why = fmt.Sprintf("reading it took more than %d GiB", stateCheckMemory>>30)
	case ctx.Err() != nil:
		why = fmt.Sprintf("reading it took more than %v", stateCheckTimeout)
	default:
		why = fmt.Sprintf("reading it failed (%v): %s", err, why)
	}
	return fmt.Errorf("%w: %s/state.db is damaged: %s", warren.ErrNotState, dir, why)
}
