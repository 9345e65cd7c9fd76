// Package storechoice measures the embedded stores issue 16 could keep its state in (bbolt, pebble,
// SQLite through modernc.org/sqlite; all pure Go) on the workloads a state directory has. It is a
// module of its own so that the candidates it measures stay out of the host's go.mod: run it with
//
//	cd docs/measurements/storechoice && go test -run '^$' -bench . -benchtime 3x -count 2
package storechoice

import (
	"database/sql"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	bolt "go.etcd.io/bbolt"
	_ "modernc.org/sqlite"
)

// A snapshot writes one record per agent (a 600-byte encoded agent: components, side store, a
// short conversation) under a key of its id, in one batch, synced; a journal appends small
// records (a tool call's intent and result, ~200 bytes) synced one at a time; resume reads the
// whole snapshot back.
const recSize, journalSize = 600, 200

func blobs(n int) [][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([][]byte, n)
	for i := range out {
		b := make([]byte, recSize)
		for j := range b {
			b[j] = byte('a' + r.IntN(26)) // text-like, compressible as real state is
		}
		out[i] = b
	}
	return out
}

func key(i int) []byte { k := make([]byte, 8); binary.BigEndian.PutUint64(k, uint64(i)); return k }

func dirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

type store interface {
	snapshot(recs [][]byte) error
	journal(rec []byte) error
	readAll() (int, error)
	close()
}

type boltStore struct{ db *bolt.DB }

func (s *boltStore) snapshot(recs [][]byte) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		_ = tx.DeleteBucket([]byte("snap"))
		b, err := tx.CreateBucket([]byte("snap"))
		if err != nil {
			return err
		}
		b.FillPercent = 1
		for i, r := range recs {
			if err := b.Put(key(i), r); err != nil {
				return err
			}
		}
		return nil
	})
}
func (s *boltStore) journal(rec []byte) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("journal"))
		if err != nil {
			return err
		}
		id, _ := b.NextSequence()
		return b.Put(key(int(id)), rec)
	})
}
func (s *boltStore) readAll() (int, error) {
	n := 0
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("snap")).ForEach(func(k, v []byte) error { n += len(v); return nil })
	})
	return n, err
}
func (s *boltStore) close() { s.db.Close() }

type pebbleStore struct {
	db  *pebble.DB
	seq int
}

func (s *pebbleStore) snapshot(recs [][]byte) error {
	b := s.db.NewBatch()
	for i, r := range recs {
		b.Set(append([]byte("s"), key(i)...), r, nil)
	}
	return b.Commit(pebble.Sync)
}
func (s *pebbleStore) journal(rec []byte) error {
	s.seq++
	return s.db.Set(append([]byte("j"), key(s.seq)...), rec, pebble.Sync)
}
func (s *pebbleStore) readAll() (int, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte("s"), UpperBound: []byte("t")})
	if err != nil {
		return 0, err
	}
	n := 0
	for it.First(); it.Valid(); it.Next() {
		n += len(it.Value())
	}
	return n, it.Close()
}
func (s *pebbleStore) close() { s.db.Close() }

type sqliteStore struct{ db *sql.DB }

func (s *sqliteStore) snapshot(recs [][]byte) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	if _, err := tx.Exec("DELETE FROM snap"); err != nil {
		return err
	}
	st, err := tx.Prepare("INSERT INTO snap(id, v) VALUES(?, ?)")
	if err != nil {
		return err
	}
	for i, r := range recs {
		if _, err := st.Exec(i, r); err != nil {
			return err
		}
	}
	return tx.Commit()
}
func (s *sqliteStore) journal(rec []byte) error {
	_, err := s.db.Exec("INSERT INTO journal(v) VALUES(?)", rec)
	return err
}
func (s *sqliteStore) readAll() (int, error) {
	rows, err := s.db.Query("SELECT v FROM snap")
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var v []byte
		rows.Scan(&v)
		n += len(v)
	}
	return n, rows.Err()
}
func (s *sqliteStore) close() { s.db.Close() }

func open(b *testing.B, kind, dir string) store {
	switch kind {
	case "bbolt":
		db, err := bolt.Open(filepath.Join(dir, "state.db"), 0o600, nil)
		if err != nil {
			b.Fatal(err)
		}
		return &boltStore{db: db}
	case "pebble":
		db, err := pebble.Open(dir, &pebble.Options{Logger: quiet{}})
		if err != nil {
			b.Fatal(err)
		}
		return &pebbleStore{db: db}
	default:
		db, err := sql.Open("sqlite", filepath.Join(dir, "state.db")+"?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)")
		if err != nil {
			b.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		for _, q := range []string{"CREATE TABLE snap(id INTEGER PRIMARY KEY, v BLOB)", "CREATE TABLE journal(id INTEGER PRIMARY KEY, v BLOB)"} {
			if _, err := db.Exec(q); err != nil {
				b.Fatal(err)
			}
		}
		return &sqliteStore{db: db}
	}
}

func BenchmarkSnapshot(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		recs := blobs(n)
		for _, kind := range []string{"bbolt", "pebble", "sqlite"} {
			b.Run(fmt.Sprintf("%s/agents=%d", kind, n), func(b *testing.B) {
				dir := b.TempDir()
				s := open(b, kind, dir)
				defer s.close()
				b.ResetTimer()
				for range b.N {
					if err := s.snapshot(recs); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/agent")
				b.ReportMetric(float64(dirSize(dir))/float64(n), "disk-B/agent")
			})
		}
	}
}

func BenchmarkJournal(b *testing.B) {
	rec := blobs(1)[0][:journalSize]
	for _, kind := range []string{"bbolt", "pebble", "sqlite"} {
		b.Run(kind, func(b *testing.B) {
			s := open(b, kind, b.TempDir())
			defer s.close()
			b.ResetTimer()
			for range b.N {
				if err := s.journal(rec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkResumeRead(b *testing.B) {
	const n = 100_000
	recs := blobs(n)
	for _, kind := range []string{"bbolt", "pebble", "sqlite"} {
		b.Run(kind, func(b *testing.B) {
			s := open(b, kind, b.TempDir())
			defer s.close()
			if err := s.snapshot(recs); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if got, err := s.readAll(); err != nil || got != n*recSize {
					b.Fatal(got, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/agent")
		})
	}
}

type quiet struct{}

func (quiet) Infof(string, ...any)      {}
func (quiet) Errorf(string, ...any)     {}
func (quiet) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }
