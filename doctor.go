package warren

import "github.com/warrenhq/warren/sandbox"

// SandboxReport is what this machine offers for containing agents' commands and what a host
// config's sandbox ceiling becomes here (host doctor), so an operator learns before a run, not
// at an agent's first command, whether commands will run contained, degraded or not at all.
type SandboxReport struct {
	// Machine has one line per mechanism (namespaces, bwrap, Landlock, seccomp, rlimits), then
	// one per mode saying what that mode contains here and what it is missing.
	Machine []string
	// Ceiling is the host config's sandbox ceiling: what commands run under at most.
	Ceiling sandbox.Boundary
	// Effective is what commands run under here, unless Refused is set; Degraded, when set,
	// says why it is less than Ceiling (the ceiling's on_unavailable is warn).
	Effective sandbox.Boundary
	Degraded  string
	// Refused, when set, says why commands are refused here (the ceiling's mechanism is
	// missing and its on_unavailable is error).
	Refused error
}

// CheckSandbox probes this machine (once a process: tens of milliseconds, running a command
// through each contained mode) and resolves host's sandbox ceiling against it; nil host means
// the built-in default config.
func CheckSandbox(host *HostConfig) *SandboxReport {
	if host == nil {
		host = DefaultHostConfig()
	}
	caps := sandbox.Probe()
	r := &SandboxReport{Machine: caps.Report(), Ceiling: host.SandboxCeiling()}
	r.Effective, r.Degraded, r.Refused = caps.Effective(r.Ceiling)
	return r
}
