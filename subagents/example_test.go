package subagents_test

import (
	"errors"
	"fmt"

	"github.com/warrenhq/warren/subagents"
)

// ExampleTree shows a top-level agent spawning two children and a grandchild, the addressing
// rule, ending with a cascade, and forgetting.
func ExampleTree() {
	tree := subagents.NewTree()
	lim := subagents.Limits{MaxDepth: 4, MaxChildren: 8, MaxLive: 100}
	planner := tree.Root(1, "planner-0", 2) // its blueprint's max_child_depth is 2

	spawn := func(parent *subagents.Node, id uint64, detached bool) *subagents.Node {
		budget, err := tree.CheckSpawn(parent, 3, -1, 0, lim)
		if err != nil {
			fmt.Println(err)
			return nil
		}
		return tree.AddChild(parent, id, budget, detached)
	}
	coder := spawn(planner, 2, false)
	logger := spawn(planner, 3, true)
	tester := spawn(coder, 4, false)
	fmt.Println(coder.Name, logger.Name, tester.Name, "budget of the grandchild:", tester.Budget)
	spawn(tester, 5, false) // planner-0's budget of 2 allows two levels below it, no more

	_, err := tree.Resolve(coder, "planner-0/2")
	fmt.Println(errors.Is(err, subagents.ErrOutsideSubtree), err)

	// planner-0 ends: its non-detached live children are killed with their subtrees.
	for _, id := range tree.End(planner) {
		child, _ := tree.Get(id)
		for _, victim := range tree.LiveSubtree(child, nil) {
			n, _ := tree.Get(victim)
			tree.End(n)
		}
	}
	_, found := tree.Lookup("planner-0/1/1")
	fmt.Println("nodes held:", tree.Len(), "live sub-agents:", tree.LiveNonRoot(), "grandchild findable:", found)
	tree.End(logger)
	fmt.Println("nodes held once the detached child ended:", tree.Len())
	// Output:
	// planner-0/1 planner-0/2 planner-0/1/1 budget of the grandchild: 0
	// sub-agent depth limit reached: planner-0/1/1 (depth 2) may not spawn sub-agents: its depth budget is spent; do the work yourself
	// true not in your subtree: "planner-0/2" (you may address only yourself and your descendants)
	// nodes held: 1 live sub-agents: 1 grandchild findable: false
	// nodes held once the detached child ended: 0
}

// ExampleMerge shows a fan-out report with a cut output and an item fail_all never started.
func ExampleMerge() {
	results := []subagents.WorkerResult{
		{Index: 0, Worker: "planner-0/1", Status: "done", Output: "README reviewed: two typos fixed."},
		{Index: 1, Worker: "planner-0/2", Status: "failed", Reason: "model error: context window exceeded"},
	}
	fmt.Println(subagents.Merge(results, 3, true, 190)) // 150 for the header and prefixes, 40 for the texts
	// Output:
	// fan_out of 3 items: 1 done, 1 failed, 0 killed (stopped after the first failure: fail_all)
	// [0] done planner-0/1: README reviewed: two…[+13 chars]
	// [1] failed planner-0/2: model error: context…[+16 chars]
	// [2] not run
}
