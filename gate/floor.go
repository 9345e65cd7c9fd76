package gate

import (
	"path/filepath"
	"strings"

	"github.com/warrenhq/warren/policy"
	"github.com/warrenhq/warren/tools"
)

// readOnlyFloor refuses, in read-only mode and while a plan is drafted, every call of a tool that
// does not declare itself read-only (tools.Effects): a tool that declares nothing is assumed to
// write. A file tool may write the plan file while the plan is drafted (tools.FileWriter); a
// shell line passes only if each of its commands is a safe, non-opaque key and each redirect goes
// to the plan file.
func readOnlyFloor(pol *Policy, req *Request, call policy.Call, keys []string, x *Explanation) (Decision, bool) {
	if !pol.ReadOnly() {
		x.step(LayerReadOnly, req.Tool, "pass", "not in read-only mode")
		return Decision{}, false
	}
	deny := func(what string) (Decision, bool) {
		why := "read-only mode: " + what
		if pol.PlanFile != "" {
			why = "the agent is drafting a plan, so everything is read-only except " + pol.PlanFile + ": " + what
		}
		x.step(LayerReadOnly, req.Tool, "deny", what)
		return Decision{Verdict: policy.Deny, Layer: LayerReadOnly, Reason: why, Keys: keys}, true
	}
	effects := req.Handle.Effects()
	switch fw, writesFile := req.Handle.Tool().(tools.FileWriter); {
	case req.Tool == policy.ShellTool:
		if !call.Parsed {
			return deny("the shell line could not be analysed")
		}
		for _, k := range call.Keys {
			switch {
			case policy.IsRedirectKey(k):
				if pol.PlanFile == "" || !isPlanFile(pol.PlanFile, strings.TrimPrefix(k, policy.RedirectKey(""))) {
					return deny("the line redirects output (" + k + ")")
				}
			case opaque(call, k):
				return deny(k + " runs code the line does not show")
			case pol.Safe == nil || !pol.Safe.Covers(k):
				return deny(k + " is not a read-only command")
			}
		}
	case writesFile && pol.PlanFile != "" && isPlanFile(pol.PlanFile, fw.WritesFile(req.Args)):
		x.step(LayerReadOnly, req.Tool, "pass", "it writes the plan file")
		return Decision{}, false
	case writesFile:
		return deny(req.Tool + " writes " + fw.WritesFile(req.Args))
	case !effects.Declared():
		return deny(req.Tool + " does not declare what it does, so it may write")
	case !effects.ReadOnly():
		return deny(req.Tool + " declares that it " + effects.String())
	}
	if x != nil {
		x.step(LayerReadOnly, req.Tool, "pass", "read-only ("+effects.String()+")")
	}
	return Decision{}, false
}

// opaque reports whether key is opaque in the call.
func opaque(call policy.Call, key string) bool {
	for _, o := range call.Opaque {
		if o.Key == key {
			return true
		}
	}
	return false
}

// isPlanFile reports whether path names the plan file (both relative to the workdir).
func isPlanFile(plan, path string) bool {
	return path != "" && filepath.Clean(path) == filepath.Clean(plan)
}
