// Package sandboxwire connects agents to the sandbox: each agent's sandbox manager (made on its
// first command, pointed at its stage's boundary), who the file tools hand created files to, and
// the operator's warning when commands run under a weaker sandbox than configured. It is a world
// resource, used by tool dispatch, sync_stage and reap, and tested without a world.
package sandboxwire

import (
	"github.com/rs/zerolog"

	"github.com/warrenhq/warren/components"
	"github.com/warrenhq/warren/sandbox"
	"github.com/warrenhq/warren/tools"
)

// Wiring is the world's sandbox wiring. It is touched only by the world's goroutine.
type Wiring struct {
	caps *sandbox.Capabilities
	log  *zerolog.Logger
	// warned holds the degradation warnings already logged.
	warned map[string]bool
	// runsCommands says, per profile, whether its blueprint offers a tool that runs commands;
	// owner is the file owner of the agents that do (see FileOwner).
	runsCommands map[*components.Profile]bool
	owner        *tools.FileOwner
}

// New returns the wiring for a machine offering caps (nil: probed on first use, so a world whose
// agents run no command never probes), logging degradations to log (nil: not logged).
func New(caps *sandbox.Capabilities, log *zerolog.Logger) *Wiring {
	return &Wiring{caps: caps, log: log, warned: map[string]bool{}, runsCommands: map[*components.Profile]bool{}}
}

// capabilities returns what this machine offers, probing it once.
func (w *Wiring) capabilities() *sandbox.Capabilities {
	if w.caps == nil {
		w.caps = sandbox.Probe()
	}
	return w.caps
}

// defaultBoundary is the boundary of a profile built without one (an embedder's or a test's):
// the host ceiling's defaults.
var defaultBoundary = sandbox.Ceiling(sandbox.Spec{})

// StageBoundary is the boundary an agent of p runs its commands under in stage.
func StageBoundary(p *components.Profile, stage int32) sandbox.Boundary {
	if int(stage) < len(p.Sandbox) {
		return p.Sandbox[stage]
	}
	return defaultBoundary
}

// Runner returns the agent's sandbox manager, making it on the agent's first command with the
// boundary of its current stage (sync_stage points it at every later stage) and the profile's
// work root, which its contained commands see nothing of but the agent's own workdir. An agent
// without a workdir (its workdir template left the run's root) gets none, so nothing runs for
// it: the shell tool and a script's host.shell refuse the call as they do without a sandbox,
// rather than a manager running commands in the host's current directory. It returns the
// interface, so that "none" is a nil CommandRunner and not a nil *Manager inside one.
func (w *Wiring) Runner(d *components.AgentData, p *components.Profile) tools.CommandRunner {
	if d.Workdir == "" {
		return nil
	}
	if d.Sandbox == nil {
		d.Sandbox = sandbox.NewManager(d.Workdir, w.capabilities(), StageBoundary(p, d.Tools.Stage))
		if p.WorkRoot != "" {
			d.Sandbox.SetWorkRoot(p.WorkRoot)
		}
	}
	return d.Sandbox
}

// Close is reap's sandbox teardown: every process the agent started, background ones included,
// is killed, and the manager's private folders are removed.
func Close(_ *components.Identity, d *components.AgentData) {
	if d.Sandbox == nil {
		return
	}
	_ = d.Sandbox.Close()
	d.Sandbox = nil
}

// WarnDegraded logs a sandbox degradation note once per distinct warning: the trace has it for
// every command, the operator's log needs it once.
func (w *Wiring) WarnDegraded(n tools.Note) {
	if w.log == nil || n.Fn != "sandbox" || n.OK || w.warned[n.Err] {
		return
	}
	w.warned[n.Err] = true
	w.log.Warn().Str("sandbox", n.Err).Msg("commands run under a weaker sandbox than configured")
}

// FileOwner is who the file tools hand what they create to, for an agent of p: the host user its
// commands run as, when the agent may run commands (see RunsCommands) and that user is not the
// host's own (a root host runs commands as an unprivileged uid); nil otherwise, which leaves
// files to the host's user and never probes the machine for agents that run no command.
func (w *Wiring) FileOwner(p *components.Profile) *tools.FileOwner {
	runs, seen := w.runsCommands[p]
	if !seen {
		runs = RunsCommands(p)
		w.runsCommands[p] = runs
	}
	if !runs {
		return nil
	}
	c := w.capabilities()
	if c.CommandUID == c.UID && c.CommandGID == c.GID {
		return nil
	}
	if w.owner == nil {
		w.owner = &tools.FileOwner{UID: c.CommandUID, GID: c.CommandGID}
	}
	return w.owner
}

// RunsCommands reports whether an agent of p may run commands: some stage advertises a tool
// that runs them (tools.CommandUser: the shell tool, or a script tool through host.shell), or
// its blueprint sets dynamic_tools, whose scripts may call host.shell too.
func RunsCommands(p *components.Profile) bool {
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
