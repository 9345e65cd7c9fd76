package ecs

import (
	"fmt"
	"time"
)

// ClockMode selects how time passes in a world.
type ClockMode uint8

const (
	// Virtual time: ticks are counted, never measured; lanes run a barrier per tick and hand
	// results over in canonical order. Deterministic; the default.
	Virtual ClockMode = iota
	// Wall time: results are applied as they arrive and an idle scheduler sleeps until woken.
	Wall
)

// String returns "virtual" or "wall".
func (m ClockMode) String() string {
	if m == Wall {
		return "wall"
	}
	return "virtual"
}

// ParseClockMode accepts "virtual" or "wall".
func ParseClockMode(s string) (ClockMode, error) {
	switch s {
	case "virtual", "":
		return Virtual, nil
	case "wall":
		return Wall, nil
	}
	return Virtual, fmt.Errorf("clock mode %q: valid modes are virtual, wall", s)
}

// VirtualEpoch is the instant virtual tick 0 stands for. It is fixed so that anything derived
// from the virtual clock (script Date objects, timestamps in tool output) is reproducible.
var VirtualEpoch = time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC)

// ClockConfig configures a Clock.
type ClockConfig struct {
	Mode ClockMode
	// TickLength is how much virtual time one tick stands for (default one second). It only
	// shapes Now in virtual mode.
	TickLength time.Duration
}

// Clock counts ticks and tells the time. In virtual mode Now is VirtualEpoch plus
// tick × TickLength, and a tick is one pass of the scheduler; in wall mode Now is the machine's
// clock and the tick is the number of whole TickLengths since the run started (several passes may
// share a tick, and a limit in ticks is a limit in wall time). Nothing that reaches a trace may
// read the machine's clock, so systems ask this one.
type Clock struct {
	mode   ClockMode
	length time.Duration
	tick   uint64
	start  time.Time // wall mode: when the run started
	// fixed, when set, is what Now reads: the time of the current pass in wall mode, or the
	// recorded one in the replay of a wall-clock run.
	fixed time.Time
}

// NewClock returns a clock at tick 0.
func NewClock(cfg ClockConfig) *Clock {
	if cfg.TickLength <= 0 {
		cfg.TickLength = time.Second
	}
	return &Clock{mode: cfg.Mode, length: cfg.TickLength}
}

// Mode reports virtual or wall.
func (c *Clock) Mode() ClockMode { return c.mode }

// Tick is the current tick number, starting at 0.
func (c *Clock) Tick() uint64 { return c.tick }

// Now is the current time: virtual in virtual mode; in wall mode the machine's at the start of
// the current pass (one time through a pass, so a journal can record it), and the recorded one in
// a wall-clock run's replay.
func (c *Clock) Now() time.Time {
	if !c.fixed.IsZero() {
		return c.fixed
	}
	if c.mode == Wall {
		return time.Now()
	}
	return VirtualEpoch.Add(time.Duration(c.tick) * c.length)
}

// TickAt is the first tick whose time is at or after t: when something due at t (a rate limit's
// refill, a back-off's end) can next be done. A time already passed is the current tick.
func (c *Clock) TickAt(t time.Time) uint64 {
	origin := VirtualEpoch
	if c.mode == Wall {
		origin = c.start
	}
	d := t.Sub(origin)
	if d <= 0 {
		return c.tick
	}
	n := uint64((d + c.length - 1) / c.length)
	return max(n, c.tick)
}

// startWall marks the start of a wall-time run; ticks then count elapsed TickLengths.
func (c *Clock) startWall() {
	if c.start.IsZero() {
		c.start = time.Now()
	}
}

// wallTick is the tick the machine's clock has reached since startWall.
func (c *Clock) wallTick() uint64 { return uint64(time.Since(c.start) / c.length) }

// advance moves to tick t (never backwards).
func (c *Clock) advance(t uint64) {
	if t > c.tick {
		c.tick = t
	}
}
