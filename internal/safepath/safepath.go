// Package safepath opens folders along paths an agent may have shaped, without following a
// symbolic link at any component. The host acts on agents' workdirs as its own user (root on a
// root host), and an agent's commands can replace any folder they may write with a link: a
// parent agent's, the folder holding its child's workdir. So the host walks such a path from /
// one component at a time and refuses a link wherever it finds one; the folder it reaches is
// then used through its descriptor, never through the path again. Both the file tools (package
// tools) and the sandbox manager (package sandbox) open workdirs this way.
//
// The caller resolves the links it trusts once, before the path can be shaped (a run resolves
// its root when it starts: an operator's --workdir or TMPDIR may lie behind a link), so every
// link found on the path later was planted.
package safepath

import (
	"errors"
	"os"
)

// Perm is the mode of the folders Open makes.
const Perm os.FileMode = 0o755

// ErrSymlink: a component of the path is a symbolic link, which a walk never follows: it may have
// been planted to lead the host out of the folder it meant.
var ErrSymlink = errors.New("a symbolic link, which the host does not follow")

// Error says at which component a walk stopped and why. Err is ErrSymlink, syscall.ENOTDIR for
// anything else that is not a folder (a file, a FIFO, a socket), or the system's error without
// a path (syscall.ENOENT for a missing component Open was not asked to make). Path names the
// component, so callers that must not show host paths (the file tools, whose errors reach the
// trace) use Err alone.
type Error struct {
	// Path is the path up to and including the component.
	Path string
	Err  error
}

// Error implements error.
func (e *Error) Error() string { return e.Path + ": " + e.Err.Error() }

// Unwrap gives Err, for errors.Is.
func (e *Error) Unwrap() error { return e.Err }
