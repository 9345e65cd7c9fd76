package testenv

import (
	"os"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// FIFOOpened runs fn and reports whether it opened the FIFO at path. A writer of the test's own
// frees an fn that blocks opening the FIFO to read, so a host that opens it is caught rather than
// hung. The writer's open can only complete once a reader has opened, so any open inotify saw by
// the time fn returns means fn opened the FIFO (inotify may merge the two events into one); the
// test's own reader, which frees the writer otherwise, opens only after the count.
func FIFOOpened(t testing.TB, path string, fn func()) bool {
	t.Helper()
	in, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(in)
	if _, err := unix.InotifyAddWatch(in, path, unix.IN_OPEN); err != nil {
		t.Fatal(err)
	}
	freed := make(chan error)
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0) // waits for a reader
		if err == nil {
			err = f.Close()
		}
		freed <- err
	}()
	fn()
	opened := false
	buf := make([]byte, 64<<10)
	if n, err := unix.Read(in, buf); err == nil && n >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[0]))
		opened = ev.Mask&unix.IN_OPEN != 0
	}
	r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0) // the reader that frees the writer
	if err != nil {
		t.Fatal(err)
	}
	if err := <-freed; err != nil {
		t.Fatal(err)
	}
	_ = r.Close()
	return opened
}
