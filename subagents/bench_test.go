package subagents

import (
	"strconv"
	"testing"
)

// BenchmarkAddChild measures recording one spawned child: CheckSpawn, the name, the node and its
// index entry. "steady" is a running host: 10^5 live sub-agents in the tree while a parent
// spawns waves of 1000 children that end and are forgotten (untimed), so the maps stay sized.
// "growing" only ever adds, so every child also pays for map growth and fresh memory.
func BenchmarkAddChild(b *testing.B) {
	lim := Limits{MaxDepth: 8, MaxChildren: 1000}
	b.Run("steady", func(b *testing.B) {
		tr := NewTree()
		id := uint64(0)
		for range 100 {
			id++
			root := tr.Root(id, "bg-"+strconv.FormatUint(id, 10), 3)
			for range 1000 {
				id++
				tr.AddChild(root, id, 2, false)
			}
		}
		id++
		parent := tr.Root(id, "planner-0", 3)
		b.ReportAllocs()
		for b.Loop() {
			budget, err := tr.CheckSpawn(parent, -1, -1, 0, lim)
			if err != nil {
				b.StopTimer()
				endAgent(tr, parent)
				id++
				parent = tr.Root(id, "planner-"+strconv.FormatUint(id, 10), 3)
				b.StartTimer()
				budget, _ = tr.CheckSpawn(parent, -1, -1, 0, lim)
			}
			id++
			tr.AddChild(parent, id, budget, false)
		}
	})
	b.Run("growing", func(b *testing.B) {
		tr := NewTree()
		id := uint64(1)
		parent := tr.Root(id, "planner-0", 3)
		b.ReportAllocs()
		for b.Loop() {
			budget, err := tr.CheckSpawn(parent, -1, -1, 0, lim)
			if err != nil {
				id++
				parent = tr.Root(id, "planner-"+strconv.FormatUint(id, 10), 3)
				budget, _ = tr.CheckSpawn(parent, -1, -1, 0, lim)
			}
			id++
			tr.AddChild(parent, id, budget, false)
		}
	})
}

// BenchmarkResolve measures resolving a depth-6 descendant's name from its root in a tree of
// about 10^5 nodes: a name walk (one name lookup, six id lookups) and a six-step parent walk.
func BenchmarkResolve(b *testing.B) {
	tr := NewTree()
	root := tr.Root(1, "planner-0", 8)
	id := uint64(1)
	var deepest *Node
	level := []*Node{root}
	for depth := 1; depth <= 6; depth++ {
		var next []*Node
		for _, p := range level {
			for range 7 {
				id++
				budget, _ := tr.CheckSpawn(p, -1, -1, 0, Limits{})
				next = append(next, tr.AddChild(p, id, budget, false))
			}
		}
		level = next
		deepest = next[len(next)/2]
	}
	name := deepest.Name
	b.ReportMetric(float64(tr.Len()), "nodes")
	b.ReportAllocs()
	for b.Loop() {
		if n, err := tr.Resolve(root, name); err != nil || n != deepest {
			b.Fatalf("Resolve(%s) = %v, %v", name, n, err)
		}
	}
}

// BenchmarkEndTree measures ending and forgetting: a root with 1000 children ends and the
// children are killed, per node.
func BenchmarkEndTree(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		tr := NewTree()
		root := tr.Root(1, "r", 3)
		for i := range 1000 {
			tr.AddChild(root, uint64(i+2), 2, false)
		}
		b.StartTimer()
		endAgent(tr, root)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1001, "ns/node")
}

// BenchmarkMerge measures merging 1000 workers' results of 1 to 2000 characters.
func BenchmarkMerge(b *testing.B) {
	results := make([]WorkerResult, 1000)
	for i := range results {
		out := make([]byte, 1+(i*37)%2000)
		for j := range out {
			out[j] = 'a' + byte(j%26)
		}
		results[i] = WorkerResult{Index: i, Worker: "p/" + strconv.Itoa(i+1), Status: "done", Output: string(out)}
	}
	b.ReportAllocs()
	for b.Loop() {
		Merge(results, len(results), false, 0)
	}
}
