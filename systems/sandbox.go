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
// boundary of its current stage (sync_stage points it at every later stage) and the profile's
// work root, which its contained commands see nothing of but the agent's own workdir. An agent
// without a workdir (its workdir template left the run's root) gets none, so nothing runs for
// it: the shell tool and a script's host.shell refuse the call as they do without a sandbox,
// rather than a manager running commands in the host's current directory. It returns the
// interface, so that "none" is a nil CommandRunner and not a nil *Manager inside one.
func (h *Host) commands(d *components.AgentData, p *components.Profile) tools.CommandRunner {
	if d.Workdir == "" {
		return nil
	}
	if d.Sandbox == nil {
		if h.Sandbox == nil {
			h.Sandbox = sandbox.Probe()
		}
		d.Sandbox = sandbox.NewManager(d.Workdir, h.Sandbox, stageBoundary(p, d.Tools.Stage))
		if p.WorkRoot != "" {
			d.Sandbox.SetWorkRoot(p.WorkRoot)
		}
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

// fileOwner is who the file tools hand what they create to, for an agent of p: the host user its
// commands run as, when the agent may run commands (see runsCommands) and that user is not the
// host's own (a root host runs commands as an unprivileged uid); nil otherwise, which leaves
// files to the host's user and never probes the machine for agents that run no command.
func (h *Host) fileOwner(p *components.Profile) *tools.FileOwner {
	if h.runsCommands == nil {
		h.runsCommands = map[*components.Profile]bool{}
	}
	runs, seen := h.runsCommands[p]
	if !seen {
		runs = runsCommands(p)
		h.runsCommands[p] = runs
	}
	if !runs {
		return nil
	}
	if h.Sandbox == nil {
		h.Sandbox = sandbox.Probe()
	}
	c := h.Sandbox
	if c.CommandUID == c.UID && c.CommandGID == c.GID {
		return nil
	}
	if h.owner == nil {
		h.owner = &tools.FileOwner{UID: c.CommandUID, GID: c.CommandGID}
	}
	return h.owner
}

// runsCommands reports whether an agent of p may run commands: some stage advertises a tool
// that runs them (tools.CommandUser: the shell tool, or a script tool through host.shell), or
// its blueprint sets dynamic_tools, whose scripts may call host.shell too.
func runsCommands(p *components.Profile) bool {
	if p.Blueprint.DynamicTools {
		return true
	}
	for i := range p.Blueprint.Stages {
		reg := p.Registry(int32(i))
		for _, name := range p.Blueprint.Stages[i].AvailableTools {
			if h, ok := reg.Lookup(name); ok {
				if cu, ok := h.Tool().(tools.CommandUser); ok && cu.UsesCommands() {
					return true
				}
			}
		}
	}
	return false
}
