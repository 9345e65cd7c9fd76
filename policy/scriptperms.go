package policy

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// The host functions a script tool may call, by the names [tool_script_permissions] uses. The
// JavaScript host object spells them in camelCase (host.readFile); log and JSON are not gated
// (a log line only reaches the trace, JSON is the language's own). Each is gated by Layer 3 at
// every call.
const (
	FnReadFile  = "read_file"
	FnWriteFile = "write_file"
	FnListDir   = "list_dir"
	FnShell     = "shell"
	FnHTTPGet   = "http_get"
	FnHTTPPost  = "http_post"
	FnEnv       = "env"
	FnCallTool  = "call_tool"
)

// Layer names a script-permission decision may carry: the layer whose entry set the verdict.
// Like the tool gate's layer names they are stable, since traces carry them.
const (
	LayerScriptHost      = "script:host"      // host [tool_script_permissions]
	LayerScriptBlueprint = "script:blueprint" // the blueprint's [tool_script_permissions]
	LayerScriptDefault   = "script:default"   // the built-in default of the function
)

// Sentinel errors of Layer 3; loaders wrap them so callers can test with errors.Is.
var (
	// ErrBadScriptVerdict reports a [tool_script_permissions] value that is not allow, deny or
	// inherit, or inherit for a function without a built-in tool to inherit from.
	ErrBadScriptVerdict = errors.New("invalid script permission")
	// ErrUnknownScriptFunc reports a [tool_script_permissions] key that names no host function,
	// which could never match a call and so can only be a mistake.
	ErrUnknownScriptFunc = errors.New("unknown script host function")
	// ErrScriptLoosens reports a blueprint [tool_script_permissions] value looser than the
	// host's: a blueprint may only tighten Layer 3, as it may only tighten the tool ceiling.
	ErrScriptLoosens = errors.New("blueprint loosens a script permission")
)

// ScriptVerdict is a [tool_script_permissions] value. The values are ordered from loosest to
// tightest (allow < inherit < deny): inherit is tighter than allow because it can only be as
// open as the built-in tool it follows. The zero value is not a verdict, so a forgotten
// assignment never reads as allow.
type ScriptVerdict uint8

// The script verdicts, loosest first.
const (
	// ScriptAllow lets scripts call the function.
	ScriptAllow ScriptVerdict = iota + 1
	// ScriptInherit lets scripts call the function only while the built-in tool of the same
	// name resolves to allow for the agent in its current stage.
	ScriptInherit
	// ScriptDeny refuses every call of the function.
	ScriptDeny
)

var scriptVerdictNames = [...]string{ScriptAllow: "allow", ScriptInherit: "inherit", ScriptDeny: "deny"}

// String returns the spelling ParseScriptVerdict accepts; an invalid value prints as
// ScriptVerdict(n).
func (v ScriptVerdict) String() string {
	if v >= ScriptAllow && v <= ScriptDeny {
		return scriptVerdictNames[v]
	}
	return "ScriptVerdict(" + strconv.Itoa(int(v)) + ")"
}

// ParseScriptVerdict converts the exact spelling used in configs and blueprints ("allow", "deny"
// or "inherit") into a ScriptVerdict. Anything else is an error wrapping ErrBadScriptVerdict
// that lists the valid values; "ask" gets a word of explanation, since a host call inside a
// running script cannot wait for an answer. Whether inherit suits a given function is checked
// by CheckScriptEntry.
func ParseScriptVerdict(s string) (ScriptVerdict, error) {
	for v := ScriptAllow; v <= ScriptDeny; v++ {
		if scriptVerdictNames[v] == s {
			return v, nil
		}
	}
	return 0, fmt.Errorf("%w %q; valid: allow, deny, inherit%s", ErrBadScriptVerdict, s, askHint(s))
}

// askHint explains why "ask" is not a script verdict.
func askHint(s string) string {
	if s == "ask" {
		return " (a script's host call cannot wait for an answer, so there is no ask)"
	}
	return ""
}

// scriptFunc is what Layer 3 knows about one host function.
type scriptFunc struct {
	name string
	dflt ScriptVerdict
	// inherits: a built-in tool of the same name exists, so inherit is valid.
	inherits bool
	// why the default is what it is, for reasons.
	dfltWhy string
	// mayNot completes "so a script may not ..." in a refusal.
	mayNot string
}

// scriptFuncTable lists the host functions sorted by name; scriptFuncIndex maps a name into it.
var scriptFuncTable = [...]scriptFunc{
	{FnCallTool, ScriptAllow, false, "the called tool passes the full permission gate anyway", "call other tools"},
	{FnEnv, ScriptAllow, false, "the host's [scripting] allow_env already limits which variables a script can read", "read environment variables"},
	{FnHTTPGet, ScriptDeny, false, "a script reaches the network only where the host opts in", "make HTTP GET requests"},
	{FnHTTPPost, ScriptDeny, false, "a script reaches the network only where the host opts in", "make HTTP POST requests"},
	{FnListDir, ScriptInherit, true, "it follows the built-in list_dir tool", "list folders"},
	{FnReadFile, ScriptInherit, true, "it follows the built-in read_file tool", "read files"},
	{FnShell, ScriptInherit, true, "it follows the built-in shell tool", "run commands"},
	{FnWriteFile, ScriptInherit, true, "it follows the built-in write_file tool", "write files"},
}

// validScriptFuncs is the sorted list of host function names, for messages.
const validScriptFuncs = "call_tool, env, http_get, http_post, list_dir, read_file, shell, write_file"

// scriptFuncIndex returns fn's index in scriptFuncTable, or -1. A switch keeps Decide free of
// map lookups and allocations.
func scriptFuncIndex(fn string) int {
	switch fn {
	case FnCallTool:
		return 0
	case FnEnv:
		return 1
	case FnHTTPGet:
		return 2
	case FnHTTPPost:
		return 3
	case FnListDir:
		return 4
	case FnReadFile:
		return 5
	case FnShell:
		return 6
	case FnWriteFile:
		return 7
	}
	return -1
}

// ScriptFuncs returns the names of every gated host function, sorted, for listings and for
// tests that must cover them all. The slice is the caller's.
func ScriptFuncs() []string {
	names := make([]string, len(scriptFuncTable))
	for i := range scriptFuncTable {
		names[i] = scriptFuncTable[i].name
	}
	return names
}

// DefaultScriptVerdict is fn's built-in default, what applies when neither the host nor the
// blueprint names it: inherit for read_file, write_file, list_dir and shell, deny for http_get
// and http_post, allow for env and call_tool. It is 0 for a name that is no host function.
func DefaultScriptVerdict(fn string) ScriptVerdict {
	if i := scriptFuncIndex(fn); i >= 0 {
		return scriptFuncTable[i].dflt
	}
	return 0
}

// CheckScriptEntry reports whether fn = v is a valid [tool_script_permissions] entry: fn a host
// function (else ErrUnknownScriptFunc, listing them), v a verdict, and inherit only for the
// functions with a built-in tool of the same name (else ErrBadScriptVerdict, saying allow or
// deny).
func CheckScriptEntry(fn string, v ScriptVerdict) error {
	i := scriptFuncIndex(fn)
	switch {
	case i < 0:
		return fmt.Errorf("%w %q; valid: %s", ErrUnknownScriptFunc, fn, validScriptFuncs)
	case v < ScriptAllow || v > ScriptDeny:
		return fmt.Errorf("%w %v for %s; valid: %s", ErrBadScriptVerdict, v, fn, validScriptValues(i))
	case v == ScriptInherit && !scriptFuncTable[i].inherits:
		return fmt.Errorf("%w: inherit is not valid for %s, which has no built-in tool of the same name to inherit from; valid: allow, deny", ErrBadScriptVerdict, fn)
	}
	return nil
}

// validScriptValues lists the values function i accepts.
func validScriptValues(i int) string {
	if scriptFuncTable[i].inherits {
		return "allow, deny, inherit"
	}
	return "allow, deny"
}

// ParseScriptTable validates a [tool_script_permissions] table as configs and blueprints write it
// (function -> "allow" | "deny" | "inherit"). It returns the valid entries and every problem in
// sorted name order, so reports do not depend on map iteration; an unknown function is reported
// for its name alone.
func ParseScriptTable(raw map[string]string) (map[string]ScriptVerdict, []TableProblem) {
	if len(raw) == 0 {
		return nil, nil
	}
	out := make(map[string]ScriptVerdict, len(raw))
	var problems []TableProblem
	for _, fn := range slices.Sorted(maps.Keys(raw)) {
		i := scriptFuncIndex(fn)
		if i < 0 {
			problems = append(problems, TableProblem{Name: fn, Err: CheckScriptEntry(fn, 0)})
			continue
		}
		v, err := ParseScriptVerdict(raw[fn])
		if err != nil {
			err = fmt.Errorf("%w %q for %s; valid: %s%s", ErrBadScriptVerdict, raw[fn], fn, validScriptValues(i), askHint(raw[fn]))
		} else {
			err = CheckScriptEntry(fn, v)
		}
		if err != nil {
			problems = append(problems, TableProblem{Name: fn, Err: err})
			continue
		}
		out[fn] = v
	}
	return out, problems
}

// CheckScriptTightening reports every blueprint entry looser than what the host sets for the
// same function (the host's entry, or the built-in default where the host says nothing), in
// sorted name order. Each problem is named by the function and wraps ErrScriptLoosens, naming
// both values, so a loader can position it at the blueprint's entry. An invalid blueprint entry
// is reported as CheckScriptEntry reports it. Host entries are the host loader's to validate; an
// invalid one counts as deny here, so nothing can loosen against it.
func CheckScriptTightening(host, blueprint map[string]ScriptVerdict) []TableProblem {
	var problems []TableProblem
	for _, fn := range slices.Sorted(maps.Keys(blueprint)) {
		b := blueprint[fn]
		if err := CheckScriptEntry(fn, b); err != nil {
			problems = append(problems, TableProblem{Name: fn, Err: err})
			continue
		}
		ceiling, says := hostScriptCeiling(host, fn)
		if b < ceiling {
			problems = append(problems, TableProblem{Name: fn, Err: fmt.Errorf(
				"%w: blueprint [tool_script_permissions] sets %s = %v, but %s, and a blueprint may only tighten it (allow < inherit < deny)",
				ErrScriptLoosens, fn, b, says)})
		}
	}
	return problems
}

// hostScriptCeiling is what the host sets for fn, with the phrase that says so. fn must be a
// host function. An invalid host value counts as deny, the fail-closed reading; NewScriptPermissions
// rejects it anyway.
func hostScriptCeiling(host map[string]ScriptVerdict, fn string) (ScriptVerdict, string) {
	if v, ok := host[fn]; ok {
		if v < ScriptAllow || v > ScriptDeny {
			v = ScriptDeny
		}
		return v, "host [tool_script_permissions] sets " + fn + " = " + v.String()
	}
	v := DefaultScriptVerdict(fn)
	return v, "the host leaves " + fn + " at its default, " + v.String()
}

// scriptRule is the resolved setting of one host function, with every reason it can give
// prebuilt so that Decide never builds a string.
type scriptRule struct {
	verdict ScriptVerdict
	who     string // "host", "blueprint" or "default"
	layer   string
	// allowed and refused are the reasons of an allowed and a refused call. For allow and deny
	// only one is ever used; for inherit the built-in tool picks.
	allowed, refused string
}

// ScriptPermissions is Layer 3: the host's [tool_script_permissions] with a blueprint's
// tightening applied, resolved for every host function once per (host, blueprint). Build it with
// NewScriptPermissions (NewScriptPermissions(nil, nil) gives the defaults). It never changes and
// is safe for concurrent use; deciding a call allocates nothing.
type ScriptPermissions struct {
	rules [len(scriptFuncTable)]scriptRule
}

// Who set a script verdict, as Verdict reports it.
const (
	scriptByHost      = "host"
	scriptByBlueprint = "blueprint"
	scriptByDefault   = "default"
)

// NewScriptPermissions validates both tables and resolves every host function: the blueprint's
// value where it tightens the host's, else the host's value, else the built-in default. Every
// problem is reported together, host entries first, each in sorted order: an unknown function
// wraps ErrUnknownScriptFunc, an invalid value or a misplaced inherit ErrBadScriptVerdict, and
// a blueprint value looser than the host's ErrScriptLoosens. Nil tables say nothing.
func NewScriptPermissions(host map[string]ScriptVerdict, blueprint map[string]ScriptVerdict) (*ScriptPermissions, error) {
	var errs []error
	for _, fn := range slices.Sorted(maps.Keys(host)) {
		if err := CheckScriptEntry(fn, host[fn]); err != nil {
			errs = append(errs, fmt.Errorf("host [tool_script_permissions] entry %q: %w", fn, err))
		}
	}
	for _, p := range CheckScriptTightening(host, blueprint) {
		errs = append(errs, fmt.Errorf("blueprint [tool_script_permissions] entry %q: %w", p.Name, p.Err))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	p := &ScriptPermissions{}
	for i := range scriptFuncTable {
		p.rules[i] = resolveScriptRule(&scriptFuncTable[i], host, blueprint)
	}
	return p, nil
}

// resolveScriptRule picks the setting of one function and prebuilds its reasons. On a tie
// between host and blueprint the host is reported, since the blueprint changed nothing.
func resolveScriptRule(f *scriptFunc, host, blueprint map[string]ScriptVerdict) scriptRule {
	const source = "tool_script_permissions"
	hv, hostSets := host[f.name]
	ceiling, ceilingIs := f.dflt, "the default "+f.dflt.String()
	if hostSets {
		ceiling, ceilingIs = hv, "the host's "+hv.String()
	}
	var r scriptRule
	switch bv, blueprintSets := blueprint[f.name]; {
	case blueprintSets && bv > ceiling:
		r = scriptRule{verdict: bv, who: scriptByBlueprint, layer: LayerScriptBlueprint}
		r.allowed = source + " (blueprint) sets " + f.name + " = " + bv.String() + ", tightening " + ceilingIs
	case hostSets:
		r = scriptRule{verdict: hv, who: scriptByHost, layer: LayerScriptHost}
		r.allowed = source + " (host) sets " + f.name + " = " + hv.String()
	default:
		r = scriptRule{verdict: f.dflt, who: scriptByDefault, layer: LayerScriptDefault}
		r.allowed = "no " + source + " entry sets " + f.name + "; its default is " + f.dflt.String() + ", since " + f.dfltWhy
	}
	says := r.allowed
	switch r.verdict {
	case ScriptDeny:
		r.refused = says + ", so a script may not " + f.mayNot
	case ScriptInherit:
		r.allowed = says + "; inherit: the built-in " + f.name + " resolves to allow for this agent in its current stage"
		r.refused = says + "; inherit: the built-in " + f.name + " does not resolve to allow for this agent in its current stage, so a script may not " + f.mayNot
	}
	return r
}

// Decide says whether fn may run now. builtin reports whether a built-in tool resolves to allow
// for this agent in its current stage (the caller evaluates it at each call, so a stage change
// is seen); it is consulted only for inherit, and a nil builtin counts as "not allow". layer is
// one of the LayerScript* names (the layer whose entry set the verdict) and reason a readable
// sentence naming it; the caller may add the stage's name. An unknown fn is refused.
func (p *ScriptPermissions) Decide(fn string, builtin func(tool string) bool) (allowed bool, layer, reason string) {
	i := scriptFuncIndex(fn)
	if i < 0 {
		return false, LayerScriptDefault, fmt.Sprintf("%q is no host function a script may call; valid: %s", fn, validScriptFuncs)
	}
	r := &p.rules[i]
	switch r.verdict {
	case ScriptAllow:
		return true, r.layer, r.allowed
	case ScriptInherit:
		if builtin != nil && builtin(fn) {
			return true, r.layer, r.allowed
		}
	}
	return false, r.layer, r.refused
}

// Verdict returns fn's resolved verdict and who set it: "host", "blueprint" or "default". For
// a name that is no host function it returns 0 and "".
func (p *ScriptPermissions) Verdict(fn string) (ScriptVerdict, string) {
	i := scriptFuncIndex(fn)
	if i < 0 {
		return 0, ""
	}
	return p.rules[i].verdict, p.rules[i].who
}
