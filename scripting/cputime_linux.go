package scripting

import "golang.org/x/sys/unix"

// threadClock is the CPU-time clock of the calling OS thread, which its owner reads from another
// goroutine (the watchdog) while the thread is locked to the call (runtime.LockOSThread). Only
// the time that thread spends running counts: another process keeping the machine's cores busy,
// or the scheduler leaving the call waiting, never moves it.
type threadClock int32

// currentThreadClock returns the clock of the calling thread: Linux's per-thread CPU clock id
// for its thread id (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)), which clock_gettime reads for
// any thread of the process.
func currentThreadClock() threadClock {
	const perThread, sched = 4, 2
	return threadClock(^int32(unix.Gettid())<<3 | perThread | sched)
}

// elapsed returns the CPU time the thread has used, in nanoseconds; ok is false when the clock
// cannot be read (the thread is gone).
func (c threadClock) elapsed() (int64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(int32(c), &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}
