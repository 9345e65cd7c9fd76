package tools

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// ErrWriteBudget: a write was refused because it would break a write ceiling (per call or per
// run). The refused write changed nothing and was not charged.
var ErrWriteBudget = errors.New("write budget exceeded")

// Spellings of the two write ceilings, as WriteBudgetError.Ceiling and the refusal messages give
// them.
const (
	// CeilingPerCall bounds the bytes one write may put on disk.
	CeilingPerCall = "per-call"
	// CeilingPerRun bounds the bytes all writes of one agent run may put on disk together.
	CeilingPerRun = "per-run"
)

// WriteBudget is the write ceilings in effect for one agent run and what the run has spent of
// them. One budget is shared by every call of the run (through ExecContext.Writes) rather than
// copied per batch, because the running total has to survive across every batch the run makes: a
// per-run budget that reset per batch would bound nothing.
//
// A WriteBudget is safe for concurrent use: the lane workers of one agent may write in parallel,
// and Charge settles the race with a compare-and-swap, so two writes that each fit but together do
// not can never both pass. A nil *WriteBudget is the headless state (no budget configured): it
// charges nothing and never refuses.
type WriteBudget struct {
	perCall, perRun int64
	spent           atomic.Int64
}

// NewWriteBudget returns a budget with the given ceilings in bytes; 0 means no ceiling of that
// kind. A negative ceiling refuses every write, so a corrupt configuration fails safe instead of
// meaning "unlimited" (configuration loaders should reject negatives before they get here).
func NewWriteBudget(perCall, perRun int64) *WriteBudget {
	return &WriteBudget{perCall: perCall, perRun: perRun}
}

// WriteBudgetError is the refusal Charge returns. It wraps ErrWriteBudget and carries the numbers,
// so the policy trace can record which ceiling refused and by how much; its message is the text
// the agent reads:
//
//	write refused: 5000 bytes exceed the per-call write budget of 4096 bytes
//	write refused: 5000 bytes would exceed the per-run write budget of 65536 bytes (1200 bytes left)
type WriteBudgetError struct {
	// Requested is the size of the refused write, in bytes.
	Requested int64
	// Ceiling is CeilingPerCall or CeilingPerRun: the ceiling that refused.
	Ceiling string
	// Limit is that ceiling, in bytes.
	Limit int64
	// Left is what the run had left of its per-run ceiling when the write was refused; 0 for a
	// per-call refusal.
	Left int64
}

// Error returns the refusal as the agent reads it.
func (e *WriteBudgetError) Error() string {
	if e.Ceiling == CeilingPerCall {
		return fmt.Sprintf("write refused: %d bytes exceed the per-call write budget of %d bytes", e.Requested, e.Limit)
	}
	return fmt.Sprintf("write refused: %d bytes would exceed the per-run write budget of %d bytes (%d bytes left)",
		e.Requested, e.Limit, e.Left)
}

// Unwrap returns ErrWriteBudget, so callers test refusals with errors.Is.
func (e *WriteBudgetError) Unwrap() error { return ErrWriteBudget }

// Charge spends n bytes of the budget if both ceilings allow it, atomically; otherwise it spends
// nothing and returns a *WriteBudgetError. The per-call ceiling is checked first: Charge is one
// call's write. Charge before writing, so a refused write leaves the file untouched. A negative n
// is refused with ErrInvalidArguments (a write never has a negative size). A nil budget charges
// nothing and returns nil.
func (b *WriteBudget) Charge(n int64) error {
	if b == nil {
		return nil
	}
	if n < 0 {
		return fmt.Errorf("%w: a write of %d bytes", ErrInvalidArguments, n)
	}
	if b.perCall != 0 && n > b.perCall {
		return &WriteBudgetError{Requested: n, Ceiling: CeilingPerCall, Limit: b.perCall}
	}
	if b.perRun == 0 {
		b.spent.Add(n)
		return nil
	}
	for {
		spent := b.spent.Load()
		if left := b.perRun - spent; n > left {
			return &WriteBudgetError{Requested: n, Ceiling: CeilingPerRun, Limit: b.perRun, Left: max(left, 0)}
		}
		if b.spent.CompareAndSwap(spent, spent+n) {
			return nil
		}
	}
}

// refund gives back n bytes charged for a write that then failed, keeping the total equal to what
// was actually written. A nil budget ignores it.
func (b *WriteBudget) refund(n int64) {
	if b != nil {
		b.spent.Add(-n)
	}
}

// Spent returns the bytes charged so far this run (0 for a nil budget).
func (b *WriteBudget) Spent() int64 {
	if b == nil {
		return 0
	}
	return b.spent.Load()
}

// Limits returns the ceilings the budget was made with (0 = none; both 0 for a nil budget), for
// reports and the trace header.
func (b *WriteBudget) Limits() (perCall, perRun int64) {
	if b == nil {
		return 0, 0
	}
	return b.perCall, b.perRun
}

// WriteBudgetImage is a WriteBudget as data, for a snapshot of the world: its ceilings and what
// the run spent.
type WriteBudgetImage struct {
	PerCall, PerRun, Spent int64
}

// Image returns the budget as data (nil for nil). Call it when no write is being charged (at a
// tick boundary every charged call has returned or been refunded).
func (b *WriteBudget) Image() *WriteBudgetImage {
	if b == nil {
		return nil
	}
	return &WriteBudgetImage{PerCall: b.perCall, PerRun: b.perRun, Spent: b.spent.Load()}
}

// RestoreWriteBudget returns the budget img holds (nil for nil).
func RestoreWriteBudget(img *WriteBudgetImage) *WriteBudget {
	if img == nil {
		return nil
	}
	b := NewWriteBudget(img.PerCall, img.PerRun)
	b.spent.Store(img.Spent)
	return b
}
