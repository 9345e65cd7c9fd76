package warren

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/warrenhq/warren/state"
)

// TestEffectJournalGroups: intents asked for at once are written in groups, every Intent returns
// with its intent on disk, results handed to Done are on disk
// once the journal settles, and a commit drops the filed ones. Run under -race in CI.
func TestEffectJournalGroups(t *testing.T) {
	d, err := state.Create(filepath.Join(t.TempDir(), "run"), state.Meta{Host: "test", Launch: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	j := newEffectJournal(d, 0, 0)
	const calls = 200
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := j.Intent(fmt.Sprintf("tool\x00a\x00c%d", i), 1, nil); err != nil {
				t.Error(err)
				return
			}
			eff, err := d.Effects()
			if err != nil {
				t.Error(err)
				return
			}
			if _, ok := eff[fmt.Sprintf("tool\x00a\x00c%d", i)]; !ok {
				t.Errorf("call %d runs before its intent is on disk", i)
			}
			var result []byte
			if i%2 == 0 {
				result = []byte(`{"OK":true}`)
			}
			j.Done(fmt.Sprintf("tool\x00a\x00c%d", i), 1, result)
		}()
	}
	wg.Wait()
	j.settle()
	eff, err := d.Effects()
	if err != nil {
		t.Fatal(err)
	}
	done := 0
	for _, e := range eff {
		if e.Done {
			done++
		}
	}
	if len(eff) != calls || done != calls/2 {
		t.Errorf("%d effects, %d done; want %d and %d", len(eff), done, calls, calls/2)
	}
	for i := range calls / 2 {
		j.Filed(fmt.Sprintf("tool\x00a\x00c%d", i))
	}
	if err := d.Commit(state.Commit{Ticks: 2}, j.takeFiled()); err != nil {
		t.Fatal(err)
	}
	if eff, _ = d.Effects(); len(eff) != calls/2 {
		t.Errorf("%d effects after the commit, want %d", len(eff), calls/2)
	}
	j.close()
	if err := j.Intent("late", 3, nil); err != nil {
		t.Fatal(err)
	}
	j.Done("late", 3, []byte(`{}`)) // after the run: dropped, never a panic
	if eff, _ = d.Effects(); eff["late"].Done {
		t.Error("a result handed over after the journal closed was written")
	}
}
