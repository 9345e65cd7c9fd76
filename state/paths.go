package state

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ErrUnsafePath is wrapped by the errors of a record of the state directory (state.db, the
// recording's header, a snapshot) that names a path a resume may not take from it: a relative
// path other than the directory's own file, a path that climbs out (../victim/precious.log), a
// file outside the directory the person resuming did not name again, or a link planted in the
// directory that leads out of it. A state directory is input: anyone who can write into it can
// edit what it says, so what it says never decides by itself where a resume writes.
var ErrUnsafePath = errors.New("the state directory names a path a resume may not use")

// Place is where a path a record of the directory names lies, once Confine checked it.
type Place struct {
	// Rel is its name inside the directory, to open through Root; "" when it lies outside.
	Rel string
	// Abs is its absolute path.
	Abs string
}

// Inside reports whether the path is the directory's own file, opened through Root.
func (p Place) Inside() bool { return p.Rel != "" }

// StoredPath is the form a record of the state directory dir keeps path in: own (the directory's fixed name for that file,
// such as TraceFile or WorkDir) when path is that file of the directory, so that the record names
// nothing but a name inside it; else path made absolute (a place the run's command line named,
// which a resume uses only when its command line names it again: Confine).
func StoredPath(dir, path, own string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if dirAbs, err := filepath.Abs(dir); err == nil && abs == filepath.Join(dirAbs, own) {
		return own
	}
	return abs
}

// Confine checks the path stored under key (named in errors, e.g. "state.db meta trace") of a
// record of the directory, whose own form is own (StoredPath), against the rule every path a
// resume takes from the directory follows:
//
//   - own itself (or the absolute path of own in this directory, as an older host wrote it) is
//     the directory's file: opened through Root, where a planted link leads nowhere outside;
//   - any other relative path is refused (a record never names another file of the directory,
//     nor one reached by climbing out of it);
//   - an absolute path elsewhere is a place the run's command line named (host run --trace,
//     --workdir): the resume uses it only when given, the same path the person resuming passes
//     again with flag, equals it; without it, or with another, it is refused.
//
// given (may be "") is that flag's value; when the path is the directory's own, a given path must
// name it too. Every refusal wraps ErrUnsafePath and names the key, the stored value and what
// would be valid.
func (d *Dir) Confine(key, stored, own, flag, given string) (Place, error) {
	var givenAbs string
	if given != "" {
		var err error
		if givenAbs, err = filepath.Abs(given); err != nil {
			return Place{}, fmt.Errorf("%s %s: %w", flag, given, err)
		}
	}
	ownAbs := filepath.Join(d.path, own)
	switch {
	case stored == "":
		return Place{}, fmt.Errorf("%w: %s is empty in %s (valid: %q, the directory's own, or an absolute path the run was given)", ErrUnsafePath, key, d.path, own)
	case strings.ContainsRune(stored, 0):
		return Place{}, fmt.Errorf("%w: %s %q holds a NUL byte", ErrUnsafePath, key, stored)
	case !filepath.IsAbs(stored) && filepath.Clean(stored) != own:
		return Place{}, fmt.Errorf("%w: %s is %q in %s: a relative path there may only be %q, the directory's own file (valid: %q, or an absolute path the run was given with %s)", ErrUnsafePath, key, stored, d.path, own, own, flag)
	case !filepath.IsAbs(stored) || filepath.Clean(stored) == ownAbs:
		if givenAbs != "" && givenAbs != ownAbs {
			return Place{}, fmt.Errorf("%w: %s %s given, but the run in %s keeps it at %s", ErrUnsafePath, flag, given, d.path, ownAbs)
		}
		return Place{Rel: own, Abs: ownAbs}, nil
	}
	abs := filepath.Clean(stored)
	switch {
	case givenAbs == "":
		return Place{}, fmt.Errorf("%w: %s is %s, outside the state directory %s (the run was given it with %s); a resume writes there only when told again: add %s %s", ErrUnsafePath, key, abs, d.path, flag, flag, abs)
	case givenAbs != abs:
		return Place{}, fmt.Errorf("%w: %s %s given, but %s in %s is %s: give the same path the run was given", ErrUnsafePath, flag, given, key, d.path, abs)
	}
	return Place{Abs: abs}, nil
}

// OwnDir makes the directory's own folder rel (a fixed name such as WorkDir) through Root and
// checks that it is a folder of the directory, not a link: a link planted there (work -> /victim)
// would have the run write its agents' files wherever it leads. It returns the folder's path.
func (d *Dir) OwnDir(key, rel string) (string, error) {
	if !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%w: %s %q is not a name inside %s", ErrUnsafePath, key, rel, d.path)
	}
	if err := d.root.MkdirAll(rel, 0o755); err != nil {
		return "", fmt.Errorf("%w: %s %s in %s: %v", ErrUnsafePath, key, rel, d.path, err)
	}
	// Every component, from the directory down: a link on the way is refused even where the
	// root would follow it (one inside the directory leads to another of its files).
	parts := strings.Split(filepath.ToSlash(filepath.Clean(rel)), "/")
	for i := range parts {
		name := filepath.Join(parts[:i+1]...)
		info, err := d.root.Lstat(name)
		if err != nil {
			return "", fmt.Errorf("%w: %s %s in %s: %v", ErrUnsafePath, key, name, d.path, err)
		}
		if !info.IsDir() {
			return "", fmt.Errorf("%w: %s %s in %s is a %s, not a folder (a link planted there would lead the run's writes out of the directory): remove it", ErrUnsafePath, key, name, d.path, info.Mode().Type())
		}
	}
	return filepath.Join(d.path, rel), nil
}
