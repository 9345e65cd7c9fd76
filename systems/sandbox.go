package systems

import (
	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/sandbox"
	"github.com/warrenhq/warren/tools"
)

// defaultBoundary is the boundary of a profile built without one (an embedder's or a test's):
// the host ceiling's defaults.
var defaultBoundary = sandbox.Ceiling(sandbox.Spec{})

// stageBoundary is the boundary an agent's commands run under in stage.
func stageBoundary(p *components.Profile, stage int32) sandbox.Boundary {
	if int(stage) < len(p.Sandbox) {
		return p.Sandbox[stage]
	}
	return defaultBoundary
}

// commands returns the agent's sandbox manager, making it on the agent's first command with the
// boundary of its current stage (sync_stage points it at every later stage).
func (h *Host) commands(d *components.AgentData, p *components.Profile) *sandbox.Manager {
	if d.Sandbox == nil {
		if h.Sandbox == nil {
			h.Sandbox = sandbox.Probe()
		}
		d.Sandbox = sandbox.NewManager(d.Workdir, h.Sandbox, stageBoundary(p, d.Tools.Stage))
	}
	return d.Sandbox
}

// closeSandbox is reap's sandbox teardown: every process the agent started, background ones
// included, is killed, and the manager's private folders are removed.
func closeSandbox(_ *components.Identity, d *components.AgentData) {
	if d.Sandbox == nil {
		return
	}
	_ = d.Sandbox.Close()
	d.Sandbox = nil
}

// warnDegraded logs a sandbox degradation note once per distinct warning: the trace has it for
// every command, the operator's log needs it once.
func (h *Host) warnDegraded(n tools.Note) {
	if h.Log == nil || n.Fn != "sandbox" || n.OK {
		return
	}
	if h.warned == nil {
		h.warned = map[string]bool{}
	}
	if h.warned[n.Err] {
		return
	}
	h.warned[n.Err] = true
	h.Log.Warn().Str("sandbox", n.Err).Msg("commands run under a weaker sandbox than configured")
}
