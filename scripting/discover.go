package scripting

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Discover compiles every *.js file directly in dir (not in subdirectories), in file-name
// order, so a blueprint's tools load the same way on every machine. A missing dir is no tools
// and no error. Every problem is reported, not just the first: the errors of all files (each an
// *Error positioned in its file), plus ErrDuplicate for a tool name an earlier file already
// defined, joined with errors.Join. On any problem the result is nil: a blueprint's tools load
// whole or not at all.
func Discover(dir string) ([]*Script, error) {
	entries, err := os.ReadDir(dir) // sorted by file name
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discover script tools: %w", err)
	}
	var scripts []*Script
	var problems []error
	definedBy := make(map[string]string)
	for _, entry := range entries {
		if !strings.HasSuffix(entry.Name(), ".js") || !isRegularFile(dir, entry) {
			continue
		}
		file := filepath.Join(dir, entry.Name())
		src, err := os.ReadFile(file)
		if err != nil {
			problems = append(problems, fmt.Errorf("discover script tools: %w", err))
			continue
		}
		s, err := Compile(file, src)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		if first, taken := definedBy[s.Name]; taken {
			problems = append(problems, newError(file, s.at("name", s.defined), ErrDuplicate,
				fmt.Sprintf("tool name %q is already defined by %s", s.Name, first)))
			continue
		}
		definedBy[s.Name] = file
		scripts = append(scripts, s)
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	return scripts, nil
}

// isRegularFile reports whether entry is a regular file, following a symbolic link.
func isRegularFile(dir string, entry fs.DirEntry) bool {
	if entry.Type().IsRegular() {
		return true
	}
	if entry.Type()&fs.ModeSymlink == 0 {
		return false
	}
	info, err := os.Stat(filepath.Join(dir, entry.Name()))
	return err == nil && info.Mode().IsRegular()
}
