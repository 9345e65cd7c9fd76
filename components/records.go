package components

import (
	"slices"

	"github.com/warrenhq/warren/memory"
)

// FinalRecord is what remains of an agent after reaping: compact, kept for queries and the run
// summary once the entity and everything it held are gone.
type FinalRecord struct {
	ID       uint64
	Name     string
	Group    string
	Index    int32
	Status   StatusKind
	Reason   string
	Stage    string
	Output   string
	Tick     uint64
	Counters Counters
	ByTool   ToolCounts
	// Results is what the agent's tool results showed of the scenario's result expectations
	// (nil when its profile watched none).
	Results []ResultSeen
	// Parent is the id of the agent that spawned this one (0: top level); Depth its depth in
	// the agent tree (0: top level).
	Parent uint64
	Depth  uint8
	// Spend is what the agent's live model turns cost.
	Spend Spend
	// Memory is the agent's memory at the end (nil when empty), for expectations.
	Memory []memory.Entry
}

// Records is the store of final records, in reap order, with lookup by agent id. A nil *Records
// keeps nothing: Add drops the record, and the getters report none.
type Records struct {
	list []FinalRecord
	byID map[uint64]int32
}

// Add stores r.
func (rs *Records) Add(r FinalRecord) {
	if rs == nil {
		return
	}
	if rs.byID == nil {
		rs.byID = map[uint64]int32{}
	}
	rs.byID[r.ID] = int32(len(rs.list))
	rs.list = append(rs.list, r)
}

// Get returns the record of agent id.
func (rs *Records) Get(id uint64) (*FinalRecord, bool) {
	if rs == nil {
		return nil, false
	}
	i, ok := rs.byID[id]
	if !ok {
		return nil, false
	}
	return &rs.list[i], true
}

// All returns every record in reap order (read-only).
func (rs *Records) All() []FinalRecord {
	if rs == nil {
		return nil
	}
	return rs.list
}

// Len returns how many agents have been reaped.
func (rs *Records) Len() int {
	if rs == nil {
		return 0
	}
	return len(rs.list)
}

// Image returns the records as data, in the order they were added, sharing nothing with them.
func (rs *Records) Image() []FinalRecord {
	if rs == nil {
		return nil
	}
	out := make([]FinalRecord, len(rs.list))
	for i, r := range rs.list {
		r.ByTool, r.Results = slices.Clone(r.ByTool), slices.Clone(r.Results)
		out[i] = r
	}
	return out
}

// RestoreRecords returns the records list holds, in its order.
func RestoreRecords(list []FinalRecord) *Records {
	rs := &Records{}
	for _, r := range list {
		rs.Add(r)
	}
	return rs
}
