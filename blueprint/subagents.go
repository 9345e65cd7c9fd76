package blueprint

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/warrenhq/warren/internal/tomlfile"
)

// Limits and defaults of the [subagents] table and of fan_out stages. The
// ceilings keep a typo from turning into an effectively unbounded tree or
// fan-out; the host applies its own, usually tighter, caps on top.
const (
	// DefaultMaxChildDepth is how many levels below an agent its sub-agent
	// tree may reach when the blueprint does not say.
	DefaultMaxChildDepth = 3
	// MaxChildDepthCeiling is the largest max_child_depth accepted.
	MaxChildDepthCeiling = 64
	// MaxChildrenCeiling is the largest max_children accepted.
	MaxChildrenCeiling = 1_000_000
	// DefaultMaxWorkers is how many fan-out workers run at once when the
	// stage does not say; MaxWorkersCeiling is the largest accepted.
	DefaultMaxWorkers = 8
	MaxWorkersCeiling = 100_000
	// DefaultMaxItems is how many work items a fan-out takes in all when
	// the stage does not say; MaxItemsCeiling is the largest accepted.
	DefaultMaxItems = 1000
	MaxItemsCeiling = 10_000_000
	// DefaultMergeChars is the size, in characters, of a fan-out's merged
	// result when the stage does not say; MinMergeChars leaves every worker
	// some room, MergeCharsCeiling bounds what lands in the conversation.
	DefaultMergeChars = 16_000
	MinMergeChars     = 256
	MergeCharsCeiling = 10_000_000
	// FanOutTool is the tool a fan_out stage runs; the stage must advertise
	// it, so the ordinary tool gate (and its permissions) applies.
	FanOutTool = "fan_out"
)

// validFailurePolicies lists the accepted on_worker_failure values, sorted,
// for messages.
const validFailurePolicies = "continue, fail_all"

// Subagents are a blueprint's limits on the sub-agent trees of its agents,
// compiled from the optional [subagents] table with defaults filled in.
type Subagents struct {
	// MaxChildDepth is how many levels below an agent of this blueprint its
	// subtree may reach (0: it may not spawn at all). The host's absolute
	// depth cap applies as well.
	MaxChildDepth int
	// MaxChildren is how many live children an agent may have at once; 0
	// means the host's cap.
	MaxChildren int
	// Detached says that agents of this blueprint, spawned as children,
	// keep running when their parent ends instead of being killed with it.
	Detached bool
	// Spawnable are the scenario blueprint keys an agent of this blueprint
	// may spawn, sorted; nil means any, an empty list none.
	Spawnable []string
}

// MaySpawn reports whether an agent of this blueprint may spawn a child of
// the scenario blueprint key, the check spawn_agent and fan_out make before
// the host's caps.
func (s *Subagents) MaySpawn(key string) bool {
	if s.Spawnable == nil {
		return true
	}
	_, ok := slices.BinarySearch(s.Spawnable, key)
	return ok
}

// FanOut is a compiled [stages.fan_out] table: the stage splits its work
// into items read from a file and runs one worker agent per item, merging
// their results into the agent's conversation. The stage's model is not
// called.
type FanOut struct {
	// Blueprint is the scenario blueprint key workers are spawned from.
	Blueprint string
	// ItemsFile is a local relative path in the agent's workdir holding the
	// items: a JSON array of strings, or one item per non-empty line.
	ItemsFile string
	// MaxWorkers is how many workers run at once; MaxItems how many items
	// are taken in all; MergeChars the size of the merged result, shared
	// fairly among the workers' results.
	MaxWorkers, MaxItems, MergeChars int
	// FailAll (on_worker_failure = "fail_all") makes one failed worker fail
	// the stage and kill the rest; otherwise the others continue.
	FailAll bool
}

// SpawnRef is one place a blueprint names a scenario blueprint key. Only
// the scenario knows its keys, so the scenario loader checks each reference
// and uses Where to point at it.
type SpawnRef struct {
	// Key is the blueprint key as written.
	Key string
	// Where is "file:line:col: key.path", the prefix tomlfile puts on an
	// error at that value (for example
	// "worker.toml:4:15: subagents.spawnable[0]"), so that
	// Where + ": " + message reads like every other blueprint error.
	Where string
}

// SpawnKeys returns the scenario blueprint keys the blueprint names, sorted
// and without duplicates: what the scenario must define for it to load.
func (b *Blueprint) SpawnKeys() []string {
	keys := make([]string, 0, len(b.SpawnRefs))
	for _, ref := range b.SpawnRefs {
		keys = append(keys, ref.Key)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// fileSubagents is the [subagents] table as written.
type fileSubagents struct {
	MaxChildDepth *int     `toml:"max_child_depth"`
	MaxChildren   *int     `toml:"max_children"`
	Detached      bool     `toml:"detached"`
	Spawnable     []string `toml:"spawnable"`
}

// fileFanOut is a [stages.fan_out] table as written.
type fileFanOut struct {
	Blueprint       string `toml:"blueprint"`
	ItemsFile       string `toml:"items_file"`
	MaxWorkers      *int   `toml:"max_workers"`
	MaxItems        *int   `toml:"max_items"`
	OnWorkerFailure string `toml:"on_worker_failure"`
	MergeChars      *int   `toml:"merge_chars"`
}

// intIn returns v checked against lo..hi, or def when the key is absent.
func (c *compiler) intIn(path string, v *int, lo, hi, def int) int {
	if v == nil {
		return def
	}
	if *v < lo || *v > hi {
		c.errorf(path, "%w: %d; valid: %d to %d", ErrOutOfRange, *v, lo, hi)
	}
	return *v
}

// where renders path's position the way tomlfile prefixes an error there.
func (c *compiler) where(path string) string {
	line, col, _ := c.doc.Pos(path)
	e := tomlfile.Error{File: c.doc.File, Line: line, Column: col, Key: path}
	return strings.TrimSuffix(e.Error(), ": ")
}

// spawnRef records a blueprint key named at path, reporting an empty one;
// ok is false when the key is empty.
func (c *compiler) spawnRef(path, key string) (ok bool) {
	if key == "" {
		c.errorf(path, "%w %q; a blueprint key names an entry of the scenario's [blueprints] table", ErrInvalidName, key)
		return false
	}
	c.refs = append(c.refs, SpawnRef{Key: key, Where: c.where(path)})
	return true
}

// subagents compiles the [subagents] table.
func (c *compiler) subagents(raw *fileSubagents) Subagents {
	sa := Subagents{
		MaxChildDepth: c.intIn("subagents.max_child_depth", raw.MaxChildDepth, 0, MaxChildDepthCeiling, DefaultMaxChildDepth),
		MaxChildren:   c.intIn("subagents.max_children", raw.MaxChildren, 1, MaxChildrenCeiling, 0),
		Detached:      raw.Detached,
	}
	if raw.Spawnable == nil && !c.present("subagents.spawnable") {
		return sa
	}
	if !c.within("subagents.spawnable", len(raw.Spawnable), MaxListEntries, "entries", "subagents.spawnable") {
		return sa
	}
	sa.Spawnable = make([]string, 0, len(raw.Spawnable))
	first := make(map[string]int, len(raw.Spawnable))
	for j, key := range raw.Spawnable {
		path := tomlfile.JoinIndex("subagents.spawnable", j)
		if prev, dup := first[key]; dup {
			c.errorf(path, "%w %q; already listed as %s: list each blueprint once", ErrDuplicateBlueprint, key, tomlfile.JoinIndex("subagents.spawnable", prev))
			continue
		}
		first[key] = j
		if c.spawnRef(path, key) {
			sa.Spawnable = append(sa.Spawnable, key)
		}
	}
	slices.Sort(sa.Spawnable)
	return sa
}

// fanOut compiles stage st's [stages.fan_out] table at path; st's tools
// must already be compiled, and c.sub the blueprint's Subagents.
func (c *compiler) fanOut(path string, raw *fileFanOut, st *Stage) *FanOut {
	fo := &FanOut{
		Blueprint:  raw.Blueprint,
		ItemsFile:  raw.ItemsFile,
		MaxWorkers: c.intIn(path+".max_workers", raw.MaxWorkers, 1, MaxWorkersCeiling, DefaultMaxWorkers),
		MaxItems:   c.intIn(path+".max_items", raw.MaxItems, 1, MaxItemsCeiling, DefaultMaxItems),
		MergeChars: c.intIn(path+".merge_chars", raw.MergeChars, MinMergeChars, MergeCharsCeiling, DefaultMergeChars),
	}
	switch {
	case !c.tools.has(FanOutTool):
		c.errorf(path, "%w; the host does not offer the fan_out tool (valid tools: %s)", ErrFanOutUnavailable, c.tools.valid)
	case !st.Advertises(FanOutTool):
		c.errorf(path, "%w; a fan_out stage runs the fan_out tool: add \"fan_out\" to available_tools", ErrFanOutUnavailable)
	}
	if c.sub.MaxChildDepth == 0 {
		c.errorf(path, "%w: subagents.max_child_depth is 0, and fan_out workers are children one level below the agent; set it to 1 or more", ErrNotSpawnable)
	}
	if key := path + ".blueprint"; raw.Blueprint == "" && !c.present(key) {
		c.errorf(key, "%w; name the scenario blueprint key workers are spawned from", ErrMissingKey)
	} else if c.spawnRef(key, raw.Blueprint) && !c.sub.MaySpawn(raw.Blueprint) {
		c.errorf(key, "%w: %q is not in subagents.spawnable (%s), and fan_out workers are the agent's children", ErrNotSpawnable, raw.Blueprint, listOrNone(c.sub.Spawnable))
	}
	switch key := path + ".items_file"; {
	case raw.ItemsFile == "" && !c.present(key):
		c.errorf(key, "%w; name the file in the agent's workdir that lists the work items", ErrMissingKey)
	case !filepath.IsLocal(raw.ItemsFile):
		c.errorf(key, "%w %q; valid: a relative path inside the agent's workdir, without \"..\"", ErrNotLocalPath, raw.ItemsFile)
	}
	switch onFailure := raw.OnWorkerFailure; {
	case onFailure == "fail_all":
		fo.FailAll = true
	case onFailure == "continue", onFailure == "" && !c.present(path+".on_worker_failure"):
		// The default: the other workers carry on.
	default:
		c.errorf(path+".on_worker_failure", "%w %q; valid: %s", ErrUnknownFailurePolicy, onFailure, validFailurePolicies)
	}
	return fo
}
