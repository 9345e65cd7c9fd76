package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// ErrPlanFileNotPlain refuses a write while a plan is drafted when the plan file is not a plain
// file of its own: a symbolic link (the write would land where it points, another workdir file),
// a hard link (another name shares its content) or anything else. The read-only floor lets
// exactly one file through, and only that file.
var ErrPlanFileNotPlain = errors.New("the plan file is not a plain file of its own")

// checkPlanFile returns nil when the agent drafts no plan, or when its plan file, in root, is
// missing (a write makes it) or a regular file with no other name; otherwise an error wrapping
// ErrPlanFileNotPlain that says what is there.
func checkPlanFile(ec *ExecContext, root *os.Root) error {
	if !ec.InPlanMode() {
		return nil
	}
	rel, err := confinePath(ec.Workdir, ec.PlanFile)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPlanFileNotPlain, err)
	}
	info, err := root.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("%w: %s: %w", ErrPlanFileNotPlain, ec.PlanFile, bareError(err))
	case info.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%w: %s is a symbolic link, and a write would land where it points", ErrPlanFileNotPlain, ec.PlanFile)
	case !info.Mode().IsRegular():
		return fmt.Errorf("%w: %s is a %s", ErrPlanFileNotPlain, ec.PlanFile, info.Mode().Type())
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		return fmt.Errorf("%w: %s has %d names (a hard link), and a write would change the others too", ErrPlanFileNotPlain, ec.PlanFile, st.Nlink)
	}
	return nil
}
