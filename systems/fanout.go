package systems

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/ecs"
	"github.com/warrenhq/warren/internal/agenttree"
	"github.com/warrenhq/warren/internal/safepath"
	"github.com/warrenhq/warren/models"
	"github.com/warrenhq/warren/recording"
	"github.com/warrenhq/warren/subagents"
	"github.com/warrenhq/warren/tools"
	"github.com/warrenhq/warren/trace"
)

// Fan-out defaults and bounds.
const (
	defaultFanOutWorkers = 8
	// maxItemsFileBytes bounds the items file a fan-out reads.
	maxItemsFileBytes = 64 << 20
)

// fanOut handles the fan_out tool (and a fan-out stage, whose call the host makes): it reads
// the items, starts the first workers and parks the call until the last worker ends.
func (s *Subagents) fanOut(w *ecs.World, tick uint64, c caller, index int, call models.ToolCall) components.ToolResult {
	args, err := subagents.ParseFanOut(call.Args)
	if err != nil {
		return errResult(err)
	}
	cur := s.maps.cursor.Get(c.e)
	stage := &c.p.Blueprint.Stages[cur.Stage]
	maxItems := s.spawning.MaxFanOutItems
	budget := 0
	mode := "tool"
	if cfg := stage.FanOut; cfg != nil {
		mode = "stage"
		maxItems = min(maxItems, cfg.MaxItems)
		budget = cfg.MergeChars
	}
	items := args.Items
	if args.ItemsFile != "" {
		if items, err = s.itemsFile(tick, c.d, call, args.ItemsFile); err != nil {
			return errResult(fmt.Errorf("fan_out: %w", err))
		}
	}
	switch {
	case len(items) == 0:
		return errResult(fmt.Errorf("fan_out: %w: give at least one item", subagents.ErrNoItems))
	case len(items) > maxItems:
		return errResult(fmt.Errorf("fan_out: %w: %d items, at most %d; split the work into smaller fan-outs", subagents.ErrTooManyItems, len(items), maxItems))
	}
	workers := args.MaxWorkers
	if workers <= 0 {
		workers = defaultFanOutWorkers
	}
	f := &agenttree.FanOut{Parent: c.e, Index: index, CallID: call.ID, Key: args.Blueprint, Items: items,
		MaxWorkers: workers, FailAll: args.OnWorkerFailure == subagents.FailAll, Budget: budget,
		Results: make([]subagents.WorkerResult, len(items))}
	s.run.Trace.FanOutStart(tick, ref(c.id, c.d), call.ID, args.Blueprint, len(items), workers, args.OnWorkerFailure.String(), mode)
	if !s.refill(w, tick, c, f) {
		return parked
	}
	return s.merge(tick, c, f)
}

// itemsFile reads a fan-out's items file (readItems): a file of the workdir is an input from
// outside the world, so a recorded run keeps what it read and a replay reads that instead.
func (s *Subagents) itemsFile(tick uint64, d *components.AgentData, call models.ToolCall, name string) ([]string, error) {
	if s.rec.Tape.Covers(tick) {
		got, err := s.rec.Tape.Items(tick, d.Name, call.ID, name)
		if err != nil {
			s.rec.Fail(err)
			return nil, err
		}
		s.rec.Writer.Items(tick, got) // a resumed run records what it replays
		if got.Err != "" {
			return nil, errors.New(got.Err)
		}
		return got.Items, nil
	}
	items, err := readItems(d.Workdir, name)
	if s.rec.Writer != nil {
		got := recording.Items{Agent: d.Name, CallID: call.ID, File: name, Items: items}
		if err != nil {
			got.Err = err.Error()
		}
		s.rec.Writer.Items(tick, got)
	}
	return items, err
}

// readItems reads a fan-out's items from a file in the workdir: a JSON array of strings, or one
// item per non-empty line. The workdir is opened with no link followed on the way to it
// (tools.OpenWorkdir: a parent's command may have replaced a child's workdir with a link), and
// the file must be a regular one inside it (tools.OpenRegular: a link out of the workdir is
// refused, so no host file is read for the agent, and a FIFO is refused without being opened:
// this runs on the world goroutine). Errors name the file as the agent gave it, never a host path.
func readItems(workdir, name string) ([]string, error) {
	if workdir == "" {
		return nil, errors.New("the agent has no workdir to read the items file from")
	}
	root, err := tools.OpenWorkdir(workdir)
	if err != nil {
		return nil, fmt.Errorf("items file %s: %w", name, err)
	}
	defer root.Close()
	f, info, err := tools.OpenRegular(root, name)
	if err != nil {
		return nil, fmt.Errorf("items file %s: %w", name, safepath.Bare(err))
	}
	defer f.Close()
	if info.Size() > maxItemsFileBytes {
		return nil, fmt.Errorf("items file %s is larger than %d bytes", name, maxItemsFileBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxItemsFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("items file %s: %w", name, safepath.Bare(err))
	}
	if len(data) > maxItemsFileBytes {
		return nil, fmt.Errorf("items file %s is larger than %d bytes", name, maxItemsFileBytes)
	}
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '[' {
		var items []string
		if err := json.Unmarshal(trimmed, &items); err != nil {
			return nil, fmt.Errorf("items file %s: not a JSON array of strings: %w", name, err)
		}
		return items, nil
	}
	var items []string
	for line := range strings.Lines(string(data)) {
		if line = strings.TrimSpace(line); line != "" {
			items = append(items, line)
		}
	}
	return items, nil
}

// refill starts workers until maxWorkers run or the items run out (or the fan-out stopped). It
// reports whether the fan-out is over: nothing runs and nothing more will start.
func (s *Subagents) refill(w *ecs.World, tick uint64, c caller, f *agenttree.FanOut) bool {
	for !f.Stopped && len(f.Running) < f.MaxWorkers && f.Next < len(f.Items) {
		item := f.Next
		n, err := s.spawnChild(w, tick, c, f.Key, f.Items[item], false, -1, item, f.CallID, true)
		if err != nil {
			if len(f.Running) > 0 && (errors.Is(err, subagents.ErrTooManyChildren) || errors.Is(err, subagents.ErrTooManyAgents)) {
				break // a slot frees when a running worker ends
			}
			f.Stopped, f.Err = true, err
			break
		}
		f.Next++
		nd := agenttree.DataOf(n)
		nd.Fan, nd.Item, nd.Slot = f, item, len(f.Running)
		f.Running = append(f.Running, n.ID)
		f.Results[item] = subagents.WorkerResult{Index: item, Item: f.Items[item], Worker: n.Name}
	}
	return len(f.Running) == 0 && (f.Stopped || f.Next == len(f.Items))
}

// workerEnded files one worker's end into its fan-out: with fail_all a failure stops the rest;
// then the next workers start, or the results are merged into the parent.
func (s *Subagents) workerEnded(w *ecs.World, tick uint64, wr *agenttree.Node, rec *components.FinalRecord) {
	f := wr.Fan
	// Swap-delete in O(1): order does not matter until a kill, which sorts (ids grow with start
	// order); the worker moved into the gap learns its new place.
	if i, last := wr.Slot, len(f.Running)-1; i <= last && f.Running[i] == rec.ID {
		moved := f.Running[last]
		f.Running[i] = moved
		f.Running = f.Running[:last]
		if _, md, ok := s.tree.Node(moved); ok && i < last {
			md.Slot = i
		}
	}
	r := &f.Results[wr.Item]
	r.Status, r.Output, r.Reason = rec.Status.String(), rec.Output, rec.Reason
	switch rec.Status {
	case components.Done:
		f.Done++
	case components.Killed:
		f.Killed++
	default:
		f.Failed++
	}
	c, alive := s.callerOf(w, f.Parent)
	if alive {
		s.run.Trace.WorkerEnd(tick, ref(c.id, c.d), f.CallID, wr.Item, trace.AgentRef{ID: rec.ID, Name: rec.Name}, r.Status)
	}
	if rec.Status != components.Done && f.FailAll && !f.Stopped {
		f.Stopped = true
		reason := "fan_out fail_all: item " + fmt.Sprint(wr.Item) + " (" + rec.Name + ") ended " + rec.Status.String()
		by := trace.AgentRef{ID: rec.ID, Name: rec.Name}
		if alive {
			by = ref(c.id, c.d)
		}
		for _, id := range slices.Sorted(slices.Values(f.Running)) {
			if n, ok := s.tree.Tree.Get(id); ok {
				s.killer.cascade(w, tick, n, by, reason)
			}
		}
	}
	if !alive {
		return // the parent is gone (killed); its workers die with it
	}
	if s.refill(w, tick, c, f) {
		s.settle(tick, c, f.Index, s.merge(tick, c, f))
	}
}

// merge renders the fan-out's results into the parent's call result.
func (s *Subagents) merge(tick uint64, c caller, f *agenttree.FanOut) components.ToolResult {
	// Merge's stopped note names fail_all: a fan-out stopped by a refused spawn (f.Err) says why
	// in its own first line instead.
	text := subagents.Merge(f.Results[:f.Next], len(f.Items), f.Stopped && f.Err == nil, f.Budget)
	if f.Err != nil {
		text = "fan_out stopped: " + f.Err.Error() + "\n" + text
	}
	ok := f.Err == nil && !(f.FailAll && f.Failed+f.Killed > 0)
	notRun := len(f.Items) - f.Next
	s.run.Trace.Merge(tick, ref(c.id, c.d), f.CallID, f.Done, f.Failed, f.Killed, notRun, len(text), ok)
	return components.ToolResult{Content: text, IsError: !ok}
}
