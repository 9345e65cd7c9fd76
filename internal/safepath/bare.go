package safepath

import (
	"errors"
	"io/fs"
)

// Bare is err without the path an *fs.PathError adds, keeping the cause. Errors about an agent's
// files reach the agent and the trace, and the path inside a PathError may be a host path (the
// run's root, a resolved link), which neither may see.
func Bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
