package runview

// Sample is the run at the end of one tick, for live charts: its agents by phase (PhaseNames
// order), and, so far, its agents, events, model turns, tool calls, tool errors and tokens. Only
// ticks with events have samples. Once the series is longer than Options.MaxSeries, each sample
// stands for several ticks and is the last of them: Tick is that last tick, and every value, a
// count so far or the phases at that tick, is what it was then.
type Sample struct {
	Tick       int64          `json:"tick"`
	Phases     [numPhases]int `json:"phases"`
	Agents     int            `json:"agents"`
	Events     int64          `json:"events"`
	ModelTurns int64          `json:"model_turns"`
	ToolCalls  int64          `json:"tool_calls"`
	ToolErrors int64          `json:"tool_errors"`
	Tokens     int64          `json:"tokens"`
}

// series keeps at most MaxSeries samples by halving its resolution: when full, neighbours merge
// pairwise into the later one, and from then on each stored sample spans twice as many ticks.
// All samples but the last span exactly span ticks (with events); the last spans lastSpan,
// filling up to span before a new one starts, so the resolution stays even across the series.
type series struct {
	samples  []Sample
	span     int
	lastSpan int
	cur      int64 // the open tick, whose sample is taken when a later tick starts
	open     bool
}

func (s *series) init() { s.span = 1 }

// advance closes the open tick when an event of a later tick comes, before the event applies.
func (s *series) advance(v *View, tick int64) {
	if s.open && tick > s.cur {
		s.push(v.opts.MaxSeries, v.sample(s.cur))
	}
	if !s.open || tick > s.cur {
		s.cur, s.open = tick, true
	}
}

// finish closes the last tick at the end event: no event will come after it.
func (s *series) finish(v *View) {
	if s.open {
		s.push(v.opts.MaxSeries, v.sample(s.cur))
		s.open = false
	}
}

// push adds the sample of a closed tick. The stored samples stay under maxLen, so that with the
// open tick's sample Series never returns more than maxLen.
func (s *series) push(maxLen int, smp Sample) {
	if n := len(s.samples); n > 0 && s.lastSpan < s.span {
		s.samples[n-1] = smp
		s.lastSpan++
		return
	}
	s.samples = append(s.samples, smp)
	s.lastSpan = 1
	if len(s.samples) < maxLen {
		return
	}
	n := len(s.samples)
	merged := s.samples[:0]
	for i := 1; i < n; i += 2 {
		merged = append(merged, s.samples[i])
	}
	if n%2 == 1 {
		merged = append(merged, s.samples[n-1])
	} else {
		s.lastSpan += s.span
	}
	s.samples = merged
	s.span *= 2
}

// sample is the View's state now, as the sample of tick.
func (v *View) sample(tick int64) Sample {
	return Sample{Tick: tick, Phases: v.phaseN, Agents: len(v.agents), Events: v.progress.Events,
		ModelTurns: v.turns, ToolCalls: v.calls, ToolErrors: v.toolErrors, Tokens: v.tokens}
}

// Series returns the per-tick samples, oldest first, the open tick's (the run's latest, still
// live) last.
func (v *View) Series() []Sample {
	v.mu.RLock()
	defer v.mu.RUnlock()
	s := &v.series
	out := make([]Sample, len(s.samples), len(s.samples)+1)
	copy(out, s.samples)
	if s.open {
		out = append(out, v.sample(s.cur))
	}
	return out
}
