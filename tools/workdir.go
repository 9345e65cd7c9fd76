package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/warrenhq/warren/internal/safepath"
)

// ErrWorkdirLink: the path of an agent's workdir goes through a symbolic link (the workdir
// itself, or a folder on the way to it). The host resolves its run root once, so every
// workdir's path is free of links when the run makes it; a link found there later was planted,
// typically by a parent agent's command in the folder that holds its child's workdir, and
// following it would let that command point the host, which may be root, at any host folder.
var ErrWorkdirLink = errors.New("the workdir's path goes through a symbolic link, which the host does not follow")

// OpenWorkdir opens the agent workdir at the absolute path dir as an os.Root without following a
// symbolic link at any component of dir, and without blocking: a component that is a link, or
// not a directory (a FIFO planted where a folder was expected), is refused. Everything the host
// does in an agent's workdir goes through the returned root, so no path an agent could have
// shaped leads the host out of the workdir: os.Root refuses ".." and links that leave it. Links
// that stay inside it are followed, which keeps the host inside the agent's own files. The
// errors never name the host path (they reach the trace).
func OpenWorkdir(dir string) (*os.Root, error) {
	return openWorkdirPath(dir, false, nil)
}

// openWorkdirPath is OpenWorkdir, creating the missing folders of dir when create is set (mode
// 0755) and, when owner is set, handing the workdir to owner if this call created it.
func openWorkdirPath(dir string, create bool, owner *FileOwner) (*os.Root, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("%w: the workdir must be an absolute path", ErrNoWorkdir)
	}
	root, err := walkWorkdir(dir, create, owner)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoWorkdir, err)
	}
	return root, nil
}

// walkWorkdir opens the folder at dir along real folders only (safepath.Open: one component at
// a time, a link or anything but a folder refused without blocking), hands it to owner when the
// walk made it, and opens it as an os.Root through the walk's own handle, which names exactly
// that folder whatever happens to the path meanwhile. Its errors never name the host path.
func walkWorkdir(dir string, create bool, owner *FileOwner) (*os.Root, error) {
	d, made, err := safepath.Open(dir, create)
	if err != nil {
		return nil, walkError(err, create)
	}
	defer func() { _ = d.Close() }()
	if made && owner != nil {
		if err := d.Chown(owner.UID, owner.GID); err != nil {
			return nil, fmt.Errorf("cannot hand the workdir to the agent's commands: %w", bareError(err))
		}
	}
	root, err := d.Root()
	if err != nil {
		return nil, fmt.Errorf("cannot open the workdir: %w", bareError(err))
	}
	return root, nil
}

// walkError says why the walk stopped, without the host path safepath's error names: a symbolic
// link (ErrWorkdirLink), something that is not a folder, or the OS's reason.
func walkError(err error, create bool) error {
	var at *safepath.Error
	if errors.As(err, &at) {
		err = at.Err
	}
	switch {
	case errors.Is(err, safepath.ErrSymlink):
		return ErrWorkdirLink
	case create && errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("cannot create the workdir: %w", err)
	}
	return fmt.Errorf("cannot open the workdir: %w", err)
}

// OpenRegular opens the file name inside root for reading, refusing (with ErrNotRegularFile)
// anything but a regular file without ever blocking on it: a FIFO is refused before it is opened,
// and the open itself does not wait for a writer should the name change in between. The info is
// the opened file's own (on a refusal, what was found there). Links inside root are followed;
// links out of it are refused by root.
func OpenRegular(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	return openRegular(root, name, os.O_RDONLY)
}

// openRegular is OpenRegular opening with flag (os.O_RDONLY, os.O_WRONLY or os.O_RDWR).
func openRegular(root *os.Root, name string, flag int) (*os.File, fs.FileInfo, error) {
	info, err := root.Stat(name)
	if err != nil {
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, info, ErrNotRegularFile
	}
	f, err := root.OpenFile(name, flag|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	if info, err = f.Stat(); err != nil || !info.Mode().IsRegular() {
		_ = f.Close()
		if err != nil {
			return nil, nil, err
		}
		return nil, info, ErrNotRegularFile
	}
	return f, info, nil
}

// openForWrite opens the regular file rel inside root for writing (creating it with perm when
// missing), without blocking on a FIFO put in its place and without truncating it yet: the
// caller truncates through the handle, which is checked to be a regular file.
func openForWrite(root *os.Root, rel string, perm fs.FileMode) (*os.File, error) {
	f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|syscall.O_NONBLOCK, perm)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = ErrNotRegularFile
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// OpenDir opens the directory rel inside root for listing. The open itself refuses anything but a
// directory (O_DIRECTORY on Linux), so a FIFO an agent put there cannot block the host, as
// Root.Open would until a writer came. Links inside root are followed; links out of it are
// refused by root.
func OpenDir(root *os.Root, rel string) (*os.File, error) {
	return root.OpenFile(rel, os.O_RDONLY|openDirectory, 0)
}

// soleName reports whether the regular file info has one name only, so that cutting it back
// changes no file elsewhere: a hard link in the workdir to a host file would otherwise let an
// agent have the host truncate that file. The link count is known on Linux; elsewhere it is not,
// and every file counts as shared.
func soleName(info fs.FileInfo) bool {
	n, known := linkCount(info)
	return known && n == 1
}
