//go:build !linux

package scripting

import "time"

// threadClock stands in for Linux's per-thread CPU clock on other systems: wall time since the
// process started, so a budget there is a wall-time budget, as it was before issue 14.
type threadClock int32

var processStart = time.Now()

func currentThreadClock() threadClock { return 0 }

func (threadClock) elapsed() (int64, bool) { return int64(time.Since(processStart)), true }
