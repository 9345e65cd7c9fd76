package tools

import (
	"encoding/json"
	"strings"
)

// Effects say what a tool does besides reading its arguments: the gate's read-only floor (read-only
// mode, and a plan being drafted) decides from them, so a tool that declares nothing is assumed to
// do everything.
type Effects uint8

const (
	// EffectReads: the tool reads files or state.
	EffectReads Effects = 1 << iota
	// EffectWrites: the tool writes files or changes state outside the agent's own checklist.
	EffectWrites
	// EffectExecutes: the tool runs programs or code (the shell tool; the gate then judges the
	// command line's own keys).
	EffectExecutes
	// EffectNetwork: the tool reaches the network (reading only, unless EffectWrites is set too).
	EffectNetwork
	// EffectsDeclared marks a declaration, so that "does nothing" (EffectsDeclared alone) differs
	// from "said nothing" (0).
	EffectsDeclared
)

// EffectsUnknown is what a tool that declares nothing gets: everything may happen.
const EffectsUnknown Effects = 0

// Declared reports whether the tool declared its effects.
func (e Effects) Declared() bool { return e&EffectsDeclared != 0 }

// ReadOnly reports whether the effects change nothing: declared, and neither writing nor
// executing (reading and reaching the network to read are fine).
func (e Effects) ReadOnly() bool { return e.Declared() && e&(EffectWrites|EffectExecutes) == 0 }

// String lists the effects ("reads, network"; "none"; "undeclared").
func (e Effects) String() string {
	if !e.Declared() {
		return "undeclared"
	}
	var names []string
	for _, f := range []struct {
		bit  Effects
		name string
	}{{EffectReads, "reads"}, {EffectWrites, "writes"}, {EffectExecutes, "executes"}, {EffectNetwork, "network"}} {
		if e&f.bit != 0 {
			names = append(names, f.name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// Declarer is implemented by a tool that says what it does. Every built-in tool implements it;
// an MCP tool reads when its server's config entry vouches for it (read_only_tools), a script tool what its
// definition says, and a tool that does not implement it is EffectsUnknown.
type Declarer interface {
	// Effects are the tool's effects, the same for every call.
	Effects() Effects
}

// FileWriter is implemented by a tool whose writes go to the one workdir file its arguments name
// (write_file, edit_file): the read-only floor lets such a call through to the plan file while a
// plan is drafted.
type FileWriter interface {
	// WritesFile returns the path a call with args writes ("" when args name none).
	WritesFile(args json.RawMessage) string
}

// Effects returns what the handle's tool declares (EffectsUnknown when it declares nothing).
func (h *Handle) Effects() Effects { return EffectsOf(h.tool) }

// EffectsOf returns what t declares (EffectsUnknown when it declares nothing).
func EffectsOf(t Tool) Effects {
	if d, ok := t.(Declarer); ok {
		return d.Effects()
	}
	return EffectsUnknown
}

const (
	readsOnly = EffectsDeclared | EffectReads
	writes    = EffectsDeclared | EffectReads | EffectWrites
	nothing   = EffectsDeclared
)

// The built-in tools' declarations.
var (
	_ Declarer   = ReadFile{}
	_ Declarer   = ListDir{}
	_ Declarer   = WriteFile{}
	_ Declarer   = EditFile{}
	_ Declarer   = Shell{}
	_ Declarer   = TodoAdd{}
	_ Declarer   = TodoDone{}
	_ Declarer   = TodoList{}
	_ Declarer   = MemorySet{}
	_ Declarer   = MemoryGet{}
	_ Declarer   = AskUserText{}
	_ Declarer   = AskUserChoice{}
	_ Declarer   = AskUserConfirm{}
	_ Declarer   = unattendedStandIn{}
	_ FileWriter = WriteFile{}
	_ FileWriter = EditFile{}
)

// Effects implements Declarer: read_file reads.
func (ReadFile) Effects() Effects { return readsOnly }

// Effects implements Declarer: list_dir reads.
func (ListDir) Effects() Effects { return readsOnly }

// Effects implements Declarer: write_file writes the file it names.
func (WriteFile) Effects() Effects { return writes }

// Effects implements Declarer: edit_file writes the file it names.
func (EditFile) Effects() Effects { return writes }

// Effects implements Declarer: shell runs a command line, whose keys the gate judges.
func (Shell) Effects() Effects { return EffectsDeclared | EffectExecutes }

// Effects implements Declarer: the checklist is the agent's own notes, in memory.
func (TodoAdd) Effects() Effects { return nothing }

// Effects implements Declarer: the checklist is the agent's own notes, in memory.
func (TodoDone) Effects() Effects { return nothing }

// Effects implements Declarer: the checklist is the agent's own notes, in memory.
func (TodoList) Effects() Effects { return nothing }

// Effects implements Declarer: the agent's memory is world data, like the checklist.
func (MemorySet) Effects() Effects { return nothing }

// Effects implements Declarer: reading the agent's memory touches nothing outside the world.
func (MemoryGet) Effects() Effects { return nothing }

// Effects implements Declarer: a question to a person changes nothing.
func (AskUserText) Effects() Effects { return nothing }

// Effects implements Declarer: a question to a person changes nothing.
func (AskUserChoice) Effects() Effects { return nothing }

// Effects implements Declarer: a question to a person changes nothing.
func (AskUserConfirm) Effects() Effects { return nothing }

// Effects implements Declarer: a stand-in declares what the tool it stands in for does.
func (u unattendedStandIn) Effects() Effects { return EffectsOf(u.inner) }

// WritesFile implements FileWriter.
func (WriteFile) WritesFile(args json.RawMessage) string { return pathArg(args) }

// WritesFile implements FileWriter.
func (EditFile) WritesFile(args json.RawMessage) string { return pathArg(args) }

// pathArg is the "path" argument of a file tool call ("" when absent or not a string).
func pathArg(args json.RawMessage) string {
	var a struct {
		Path string `json:"path"`
	}
	_ = json.Unmarshal(args, &a)
	return a.Path
}
