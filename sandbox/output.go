package sandbox

import (
	"io"
	"os"
	"sync"
	"time"
)

// cappedOutput keeps the first max bytes written to it and counts the rest, so a command that
// floods its output costs the host at most max bytes while the pipe keeps draining (a full pipe
// would otherwise block the command).
type cappedOutput struct {
	max     uint64
	kept    []byte
	dropped uint64
}

var _ io.Writer = (*cappedOutput)(nil)

// Write keeps what fits under the cap and counts the rest; it never fails, so the reader keeps
// draining the pipe.
func (c *cappedOutput) Write(p []byte) (int, error) {
	room := c.max - uint64(len(c.kept))
	if uint64(len(p)) <= room {
		c.kept = append(c.kept, p...)
		return len(p), nil
	}
	c.kept = append(c.kept, p[:room]...)
	c.dropped += uint64(len(p)) - room
	return len(p), nil
}

// readBuffers recycles the read buffers of output pipes: one per running command otherwise.
var readBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// drain reads r into out until EOF or until r's read deadline passes (set by whoever decides
// that the writers are gone or no longer worth waiting for), then closes r.
func drain(r *os.File, out *cappedOutput) {
	buf := readBuffers.Get().(*[]byte)
	defer readBuffers.Put(buf)
	defer r.Close()
	for {
		n, err := r.Read(*buf)
		_, _ = out.Write((*buf)[:n])
		if err != nil {
			return
		}
	}
}

// Grace periods for the output pipe once the command's process tree is gone or killed. In
// namespace and bwrap modes every writer is in the dead pid namespace, so EOF is immediate and
// the long grace is only a guard; in none mode a process that left the reaper's tree (by killing
// the reaper, or through another program that started it) may hold the pipe open forever, so its
// output is cut after a short grace.
const (
	containedOutputGrace = 5 * time.Second
	uncontainedGrace     = 200 * time.Millisecond
)
