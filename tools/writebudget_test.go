package tools

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

func TestWriteBudgetCharge(t *testing.T) {
	type charge struct {
		n       int64
		wantErr string // "" means the charge must pass
	}
	cases := []struct {
		name            string
		perCall, perRun int64
		charges         []charge
		wantSpent       int64
	}{
		{"no ceilings", 0, 0, []charge{{1 << 40, ""}, {7, ""}}, 1<<40 + 7},
		{"per-call refusal", 4096, 0, []charge{
			{4096, ""},
			{5000, "write refused: 5000 bytes exceed the per-call write budget of 4096 bytes"},
			{1, ""},
		}, 4097},
		{"per-run running total", 0, 65536, []charge{
			{30000, ""}, {34336, ""},
			{5000, "write refused: 5000 bytes would exceed the per-run write budget of 65536 bytes (1200 bytes left)"},
			{1200, ""},
			{1, "write refused: 1 bytes would exceed the per-run write budget of 65536 bytes (0 bytes left)"},
			{0, ""},
		}, 65536},
		{"per-call is checked first", 100, 50, []charge{
			{150, "write refused: 150 bytes exceed the per-call write budget of 100 bytes"},
			{60, "write refused: 60 bytes would exceed the per-run write budget of 50 bytes (50 bytes left)"},
			{50, ""},
		}, 50},
		{"negative per-call ceiling refuses every write", -1, 0, []charge{
			{0, "write refused: 0 bytes exceed the per-call write budget of -1 bytes"},
		}, 0},
		{"negative per-run ceiling refuses every write", 0, -5, []charge{
			{0, "write refused: 0 bytes would exceed the per-run write budget of -5 bytes (0 bytes left)"},
		}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := NewWriteBudget(tc.perCall, tc.perRun)
			for i, c := range tc.charges {
				err := b.Charge(c.n)
				if c.wantErr == "" {
					if err != nil {
						t.Fatalf("charge %d (%d bytes): %v", i, c.n, err)
					}
					continue
				}
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("charge %d (%d bytes) = %v, want %q", i, c.n, err, c.wantErr)
				}
				if !errors.Is(err, ErrWriteBudget) {
					t.Fatalf("charge %d: %v does not wrap ErrWriteBudget", i, err)
				}
			}
			if got := b.Spent(); got != tc.wantSpent {
				t.Fatalf("Spent = %d, want %d", got, tc.wantSpent)
			}
			if perCall, perRun := b.Limits(); perCall != tc.perCall || perRun != tc.perRun {
				t.Fatalf("Limits = %d, %d, want %d, %d", perCall, perRun, tc.perCall, tc.perRun)
			}
		})
	}
}

func TestWriteBudgetErrorFields(t *testing.T) {
	b := NewWriteBudget(4096, 10000)
	var be *WriteBudgetError
	if err := b.Charge(5000); !errors.As(err, &be) ||
		*be != (WriteBudgetError{Requested: 5000, Ceiling: CeilingPerCall, Limit: 4096}) {
		t.Fatalf("per-call refusal = %#v", err)
	}
	if err := b.Charge(4000); err != nil {
		t.Fatal(err)
	}
	if err := b.Charge(4000); err != nil {
		t.Fatal(err)
	}
	if err := b.Charge(3000); !errors.As(err, &be) ||
		*be != (WriteBudgetError{Requested: 3000, Ceiling: CeilingPerRun, Limit: 10000, Left: 2000}) {
		t.Fatalf("per-run refusal = %#v", err)
	}
}

func TestWriteBudgetRefusesNegativeCharges(t *testing.T) {
	b := NewWriteBudget(0, 0)
	err := b.Charge(-10)
	wantError(t, err, ErrInvalidArguments, "a write of -10 bytes")
	if errors.Is(err, ErrWriteBudget) || b.Spent() != 0 {
		t.Fatalf("a negative charge was treated as spending: err %v, spent %d", err, b.Spent())
	}
}

func TestWriteBudgetNil(t *testing.T) {
	var b *WriteBudget
	if err := b.Charge(1 << 50); err != nil {
		t.Fatalf("nil budget refused: %v", err)
	}
	b.refund(10)
	if b.Spent() != 0 {
		t.Fatal("nil budget reports spending")
	}
	if perCall, perRun := b.Limits(); perCall != 0 || perRun != 0 {
		t.Fatalf("nil budget Limits = %d, %d", perCall, perRun)
	}
}

// TestWriteBudgetConcurrentCharges races many goroutines against one per-run ceiling: exactly as
// many charges pass as fit, never more (run with -race).
func TestWriteBudgetConcurrentCharges(t *testing.T) {
	const (
		workers   = 32
		perWorker = 200
		size      = 3
		ceiling   = 1000 * size
	)
	b := NewWriteBudget(size, ceiling)
	var passed, refused atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range perWorker {
				err := b.Charge(size)
				switch {
				case err == nil:
					passed.Add(1)
				case errors.Is(err, ErrWriteBudget):
					refused.Add(1)
				default:
					t.Errorf("unexpected error %v", err)
				}
			}
		})
	}
	wg.Wait()
	if passed.Load() != ceiling/size || b.Spent() != ceiling {
		t.Fatalf("passed %d charges, spent %d; want %d charges, %d bytes", passed.Load(), b.Spent(), ceiling/size, ceiling)
	}
	if passed.Load()+refused.Load() != workers*perWorker {
		t.Fatalf("lost charges: %d passed + %d refused != %d", passed.Load(), refused.Load(), workers*perWorker)
	}
}

func TestWriteFileChargesTheBudget(t *testing.T) {
	ec, dir := newWorkdirEC(t)
	ec.Writes = NewWriteBudget(10, 25)
	for i, content := range []string{"0123456789", "abcdefghij"} {
		mustRun(t, WriteFile{}, ec, fmt.Sprintf(`{"path":"f%d.txt","content":%q}`, i, content))
	}
	if ec.Writes.Spent() != 20 {
		t.Fatalf("Spent = %d after two 10-byte writes", ec.Writes.Spent())
	}

	cases := []struct {
		name, args, wantErr string
		path                string // must not exist afterwards
	}{
		{"per-call refusal", `{"path":"sub/big.txt","content":"0123456789A"}`,
			"write refused: 11 bytes exceed the per-call write budget of 10 bytes", "sub"},
		{"per-run refusal", `{"path":"new.txt","content":"123456"}`,
			"write refused: 6 bytes would exceed the per-run write budget of 25 bytes (5 bytes left)", "new.txt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, WriteFile{}, ec, tc.args)
			wantError(t, err, ErrWriteBudget)
			if err.Error() != tc.wantErr {
				t.Fatalf("error %q, want %q", err, tc.wantErr)
			}
			if _, statErr := os.Lstat(filepath.Join(dir, tc.path)); !os.IsNotExist(statErr) {
				t.Fatalf("a refused write created %q", tc.path)
			}
		})
	}

	// A refused overwrite leaves the old content in place.
	_, err := run(t, WriteFile{}, ec, `{"path":"f0.txt","content":"replacement"}`)
	wantError(t, err, ErrWriteBudget)
	if got := readBack(t, filepath.Join(dir, "f0.txt")); got != "0123456789" {
		t.Fatalf("refused write changed the file to %q", got)
	}
	// What is left can still be spent, and an empty write costs nothing.
	mustRun(t, WriteFile{}, ec, `{"path":"f2.txt","content":"12345"}`)
	mustRun(t, WriteFile{}, ec, `{"path":"f3.txt","content":""}`)
	if ec.Writes.Spent() != 25 {
		t.Fatalf("Spent = %d, want 25", ec.Writes.Spent())
	}
}

// TestWriteFileRefundsFailedWrites checks that a write that was charged but then failed on disk is
// given back: the budget counts what was written, not what was attempted.
func TestWriteFileRefundsFailedWrites(t *testing.T) {
	ec, dir := newWorkdirEC(t)
	writeFiles(t, dir, map[string]string{"folder/inside": "y"})
	// A dangling symlink: the target file does not exist, so write_file charges and then fails to
	// create "dangling" as a directory.
	if err := os.Symlink("nowhere", filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	ec.Writes = NewWriteBudget(0, 100)
	cases := []struct{ name, args, fragment string }{
		{"parent cannot be created", `{"path":"dangling/child.txt","content":"0123456789"}`, "cannot create the parent directories of"},
		{"target is a directory", `{"path":"folder","content":"0123456789"}`, "cannot write"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, WriteFile{}, ec, tc.args)
			wantError(t, err, nil, tc.fragment)
			if ec.Writes.Spent() != 0 {
				t.Fatalf("failed write left %d bytes charged", ec.Writes.Spent())
			}
		})
	}
}

func TestEditFileChargesTheBudget(t *testing.T) {
	ec, dir := newWorkdirEC(t)
	writeFiles(t, dir, map[string]string{"a.txt": "hello world"})
	ec.Writes = NewWriteBudget(12, 0)

	mustRun(t, EditFile{}, ec, `{"path":"a.txt","old_string":"world","new_string":"there"}`)
	if ec.Writes.Spent() != int64(len("hello there")) {
		t.Fatalf("Spent = %d, want the size of the new content (%d)", ec.Writes.Spent(), len("hello there"))
	}

	_, err := run(t, EditFile{}, ec, `{"path":"a.txt","old_string":"there","new_string":"everyone"}`)
	wantError(t, err, ErrWriteBudget)
	if want := "write refused: 14 bytes exceed the per-call write budget of 12 bytes"; err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
	if got := readBack(t, filepath.Join(dir, "a.txt")); got != "hello there" {
		t.Fatalf("refused edit changed the file to %q", got)
	}
	// An edit that fails before writing charges nothing.
	_, err = run(t, EditFile{}, ec, `{"path":"a.txt","old_string":"absent","new_string":"x"}`)
	wantError(t, err, ErrNoMatch)
	if ec.Writes.Spent() != 11 {
		t.Fatalf("Spent = %d after a failed edit, want 11", ec.Writes.Spent())
	}
}

// TestParallelWritesShareOneBudget runs write_file from many goroutines against one run budget,
// as the lane workers of one agent do: the files that exist are exactly the writes that passed,
// and the budget is spent by exactly their sizes.
func TestParallelWritesShareOneBudget(t *testing.T) {
	ec, dir := newWorkdirEC(t)
	budget := NewWriteBudget(0, 50)
	h, err := NewHandle(WriteFile{})
	if err != nil {
		t.Fatal(err)
	}
	const writers = 40
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Go(func() {
			call := *ec
			call.Writes = budget
			_, errs[i] = h.Execute(&call, []byte(fmt.Sprintf(`{"path":"f%02d.txt","content":"12345"}`, i)))
		})
	}
	wg.Wait()
	written := 0
	for i, err := range errs {
		_, statErr := os.Stat(filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)))
		switch {
		case err == nil && statErr == nil:
			written++
		case errors.Is(err, ErrWriteBudget) && os.IsNotExist(statErr):
		default:
			t.Fatalf("writer %d: error %v, stat %v", i, err, statErr)
		}
	}
	if written != 10 || budget.Spent() != 50 {
		t.Fatalf("%d files written, %d bytes spent; want 10 files, 50 bytes", written, budget.Spent())
	}
}

func TestWriteBudgetImageKeepsWhatWasSpent(t *testing.T) {
	b := NewWriteBudget(100, 250)
	for _, n := range []int64{90, 80} {
		if err := b.Charge(n); err != nil {
			t.Fatal(err)
		}
	}
	back := RestoreWriteBudget(b.Image())
	if back.Spent() != 170 {
		t.Fatalf("restored budget spent %d, want 170", back.Spent())
	}
	// 80 more fit the run's ceiling exactly; then one byte is refused, as in the original.
	for _, bud := range []*WriteBudget{b, back} {
		if err := bud.Charge(80); err != nil {
			t.Fatalf("charge within the ceiling: %v", err)
		}
		var we *WriteBudgetError
		if err := bud.Charge(1); !errors.As(err, &we) || we.Ceiling != CeilingPerRun {
			t.Fatalf("charge past the run ceiling = %v, want a per-run refusal", err)
		}
	}
	if RestoreWriteBudget(nil) != nil || (*WriteBudget)(nil).Image() != nil {
		t.Error("nil budgets do not round-trip as nil")
	}
}
