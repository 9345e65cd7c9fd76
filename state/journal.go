package state

import (
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Effect is one side-effecting call in the effect journal: its intent, written (and synced)
// before the call runs, and its result once it returned.
type Effect struct {
	// Tick is when the call started.
	Tick uint64 `json:"tick"`
	// Done is set once the call returned; Result is then what it returned (the caller's own
	// encoding).
	Done   bool            `json:"done,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	// Expect, journaled with the intent of an exactly-once tool's call, is what its effect will
	// be (the caller's own encoding): a resume checks it to tell whether the call happened.
	Expect json.RawMessage `json:"expect,omitempty"`
}

// KeyedEffect is one effect journal entry to write.
type KeyedEffect struct {
	Key    string
	Effect Effect
}

// PutEffects writes entries (intents, or results) in one synced transaction and returns once they
// are on disk: a call whose intent is missing after a crash never ran.
func (d *Dir) PutEffects(entries []KeyedEffect) error {
	raws := make([][]byte, len(entries))
	for i, e := range entries {
		raw, err := json.Marshal(e.Effect)
		if err != nil {
			return err
		}
		raws[i] = raw
	}
	return d.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketEffects)
		for i, e := range entries {
			if err := b.Put([]byte(e.Key), raws[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// Effects reads the effect journal: the calls started and not yet filed at a commit.
func (d *Dir) Effects() (map[string]Effect, error) {
	out := map[string]Effect{}
	err := d.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketEffects).ForEach(func(k, v []byte) error {
			var e Effect
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("%w: the effect journal's entry %q does not read: %v", ErrNotState, k, err)
			}
			out[string(k)] = e
			return nil
		})
	})
	return out, err
}

// Commit records c as the last durable tick boundary and drops from the effect journal the calls
// filed since the last commit (their results are in the recording now), in one synced
// transaction. The caller has made the trace and the recording durable up to c's lengths first.
func (d *Dir) Commit(c Commit, filed []string) error {
	raw, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return d.db.Update(func(tx *bolt.Tx) error {
		eff := tx.Bucket(bucketEffects)
		for _, k := range filed {
			if err := eff.Delete([]byte(k)); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(keyCommit, raw)
	})
}
