package mcpdemo

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
)

func TestKVStoreConcurrentClientsSortedList(t *testing.T) {
	store := newKVStore()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 50 {
				store.set(fmt.Sprintf("k%03d", i*8+w), strconv.Itoa(w))
			}
		})
	}
	wg.Wait()
	entries := store.list()
	if len(entries) != 400 {
		t.Fatalf("list has %d entries, want 400", len(entries))
	}
	for i, e := range entries {
		if want := fmt.Sprintf("k%03d", i); e.Key != want {
			t.Fatalf("entry %d key = %q, want %q (list must be sorted)", i, e.Key, want)
		}
	}
	if _, err := store.get("absent"); !errors.Is(err, ErrNotFound) {
		t.Errorf("get(absent) error = %v, want ErrNotFound", err)
	}
}

func BenchmarkKVSetGet(b *testing.B) {
	store := newKVStore()
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = "key-" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			key := keys[i%len(keys)]
			store.set(key, "value")
			if _, err := store.get(key); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}
